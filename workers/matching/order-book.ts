/**
 * The fast order book run by each pair worker (the reference it is checked against lives in
 * test/matching/reference-book.ts).
 *
 * Layout, chosen so that a million resting orders are a handful of typed arrays, not a million
 * objects, and so that matching reads memory in order:
 * - Orders live in 24-byte records of one buffer (id and open quantity as float64, user as int32,
 *   seen through two views). Records come in chunks of 8 (192 bytes, three cache lines); each
 *   price level owns a doubly linked list of chunks and appends its orders to its tail chunk, so a
 *   level's FIFO is its chunks in order and, inside a chunk, its records in order. A sweep thus
 *   reads consecutive memory instead of chasing one pointer per maker into a random record (which
 *   costs a cache and TLB miss per fill in a deep book). A cancelled or filled record is marked by
 *   an open quantity of 0 and skipped; a chunk returns to the free stack when its last open order
 *   leaves, so a chunk holds at least one open order and memory is bounded by 8 records per order.
 * - An order id finds its record in O(1) through a direct-mapped window over recent ids (`win`,
 *   see `find`), with a hash (`older`) for the few resting orders the window has moved past. A
 *   fill or cancel of a window order touches no index at all. Any ids work; ids given in sequence
 *   (as the exchange does) are the ones that stay in the window.
 * - Levels live in slots of their own arrays (`lPrice`, `lTotal`, `lHead`, `lTail`, `lSide`).
 *   Each side keeps its level slots sorted by price in an Int32Array with the BEST level LAST (bids
 *   ascending, asks descending), so the best price is O(1), consuming the best level is a pop, and
 *   a new level near the touch moves only the few entries above it. Price-to-level lookup is a
 *   direct-mapped window per side (`price & mask`, two cells per level slot) backed by an integer
 *   hash for prices whose cell is taken, so any price range works (no fixed ladder).
 * - Levels touched by a command are marked dirty and reported once each, with their final total,
 *   when the command ends; emptied levels are unlinked at once and their slots recycled then.
 *
 * Every quantity and price is an integer below 2^53 (see src/protocol/pair/engine.ts), so plain number arithmetic is
 * exact here; the one division (cutting a fill to a market-buy budget) is done in BigInt.
 */

import {
  type BookEvents,
  BUY,
  DONE_CANCELLED,
  DONE_MMP,
  DONE_REMAINDER,
  DONE_SELF_TRADE,
  type DoneReason,
  ERR_AMEND_TOO_SMALL,
  ERR_BELOW_MIN_NOTIONAL,
  ERR_DUPLICATE_ID,
  ERR_INSUFFICIENT_FUNDS,
  ERR_MMP_FROZEN,
  ERR_NO_LIQUIDITY,
  ERR_ORDER_NOT_FOUND,
  ERR_QUOTE_LEVELS,
  ERR_WOULD_TAKE,
  FLAG_MMP,
  FLAG_POST_ONLY,
  FLAG_QUOTE,
  KEPT_FLAGS,
  MAX_BUDGET,
  MAX_QUOTE_LEVELS,
  type MatchingBook,
  OK,
  PENDING,
  QUOTE_KEPT,
  type ResultCode,
  SELL,
  type Side,
  STP_CANCEL_TAKER,
  STP_MASK,
  TIF_FOK,
  TIF_IOC,
  TIF_MASK,
} from "../../src/protocol/pair/engine.ts";
import { IdIndex } from "./id-index.ts";
import { MmpState } from "./mmp.ts";

const NIL = -1;

/** An order record: 24 bytes, float64 words 0-1 (id, open quantity) and int32 word 4 (user). */
const RECORD_BYTES = 24;
/** Words per record in the float64 and the int32 view, and each field's word. */
const F64_WORDS = 3;
const I32_WORDS = 6;
const F_ID = 0;
const F_LEFT = 1;
const I_USER = 4;
/** The order's KEPT_FLAGS (protected, quote, self-trade mode). */
const I_FLAGS = 5;
/** Records per chunk, a power of two (slot = chunk * CHUNK + position). */
const CHUNK = 8;
const CHUNK_SHIFT = 3;
/** Chunk metadata, int32 words per chunk. */
const CHUNK_META = 8;
/** The first position that may still hold an open order. */
const C_HEAD = 0;
/** Positions appended so far. */
const C_FILL = 1;
/** Open orders in the chunk (a chunk with none is freed). */
const C_LIVE = 2;
const C_PREV = 3;
const C_NEXT = 4;
const C_LEVEL = 5;
/**
 * Id window cells per record slot. Ids are assigned in sequence (by the exchange, across pairs), so
 * a window four times the record capacity keeps nearly every resting order of a deep book out of
 * the hash (workload (b): 24% more ops/s than with one cell per slot, where a fifth of the resting
 * orders ended up hashed). It costs 16 bytes per record slot.
 */
const WINDOW_PER_RECORD = 4;
/** A chunk down to this many open orders after a cancel is merged with a neighbour when they fit. */
const MERGE_BELOW = CHUNK / 2;

export class OrderBook implements MatchingBook {
  private readonly ev: BookEvents;

  // Order records, by slot: id `of64[s * F64_WORDS + F_ID]`, open quantity
  // `of64[s * F64_WORDS + F_LEFT]` (0 once it left the book), user `oi32[s * I32_WORDS + I_USER]`.
  private of64: Float64Array;
  private oi32: Int32Array;
  /** 1 when the slot's order is indexed in `older` instead of `win`. */
  private oHashed: Uint8Array;
  private live = 0;
  private merges = 0;
  /** The highest order id seen: a larger id cannot be a duplicate. */
  private maxId = 0;

  // Chunks of records: metadata `cMeta[c * CHUNK_META + C_*]`, and a stack of free chunks.
  private cMeta: Int32Array;
  private cFree: Int32Array;
  private cFreeTop = 0;
  private cCap: number;

  // Order id -> slot. `win[id & winMask]` is the slot of the newest order id that maps to that
  // cell; entries are never cleared, so a lookup checks that the slot still holds that id, open.
  // When a new id takes a cell whose order still rests, that order moves to `older` (a hash).
  private win: Int32Array;
  private winMask: number;
  private readonly older = new IdIndex(64);

  // Level slots.
  private lPrice: Float64Array;
  private lTotal: Float64Array;
  private lHead: Int32Array;
  private lTail: Int32Array;
  private lSide: Uint8Array;
  private lDirty: Uint8Array;
  private lEmpty: Uint8Array;
  /** 1 for an empty level left in place inside its side (see removeLevel). */
  private lParked: Uint8Array;
  private lFree: Int32Array;
  private lFreeTop = 0;
  private lCap: number;

  // Per side: sorted level slots (best last) and price -> level slot.
  private readonly sorted: [Int32Array, Int32Array];
  private readonly count = [0, 0];
  /** Parked (empty, in place) levels per side, included in `count`. */
  private readonly parked = [0, 0];
  // Price -> level slot, per side, the same way as ids: `pWin[side][price & pMask]` holds the
  // level whose price owns that cell (cleared when the level goes), and a level whose cell another
  // price took lives in `pOlder[side]`. A book spanning fewer ticks than the window never hashes.
  private readonly pWin: [Int32Array, Int32Array];
  private pMask: number;
  private readonly pOlder: [IdIndex, IdIndex] = [new IdIndex(16), new IdIndex(16)];
  /** 1 when the level is indexed in `pOlder` instead of `pWin`. */
  private lHashed: Uint8Array;

  // Levels changed by the current command.
  private dirty: Int32Array;
  private dirtyCount = 0;

  // Market-maker protection (docs/API.md 8.10): settings, window and freeze per user; the open protected
  // orders of each user (ids), kept only for users that have any.
  private readonly mmp = new Map<number, MmpState>();
  private readonly protectedIds = new Map<number, Set<number>>();
  /** Command time (ms) of the command being run. */
  private now = 0;
  /** Set by `match` when it stopped because of the taker's self-trade mode or its MMP trigger. */
  private stopReason = 0;
  /** Set by `match` when an MMP trigger cancelled orders under its walk: it restarts at the best level. */
  private restart = false;
  // The quote being collected by quoteLevel.
  private qUser = 0;
  private qTime = 0;
  private qWant = 0;
  private qN = 0;
  private readonly qLevels = new Float64Array(MAX_QUOTE_LEVELS * 2 * 4 + 4);

  /**
   * The pair's minimum order value (docs/API.md 20.5) in ticks × lots (0n: none): a market order
   * that would take less is refused. `minNotionalNum` is the same value as a number when it is at
   * most MAX_BUDGET (compared in plain numbers), else -1 (compared in BigInt).
   */
  private readonly minNotional: bigint;
  private readonly minNotionalNum: number;

  constructor(events: BookEvents, initialCapacity = 1024, minNotional = 0n) {
    this.ev = events;
    this.minNotional = minNotional;
    this.minNotionalNum = minNotional <= BigInt(MAX_BUDGET) ? Number(minNotional) : -1;
    const chunks = Math.max(2, Math.ceil(initialCapacity / CHUNK));
    const n = chunks * CHUNK;
    this.cCap = chunks;
    this.cMeta = new Int32Array(chunks * CHUNK_META);
    this.cFree = new Int32Array(chunks);
    for (let i = 0; i < chunks; i++) this.cFree[i] = chunks - 1 - i;
    this.cFreeTop = chunks;
    const mem = new ArrayBuffer(n * RECORD_BYTES);
    this.of64 = new Float64Array(mem);
    this.oi32 = new Int32Array(mem);
    this.oHashed = new Uint8Array(n);
    let w = 16;
    while (w < n * WINDOW_PER_RECORD) w *= 2;
    this.win = new Int32Array(w).fill(NIL);
    this.winMask = w - 1;

    const m = 256;
    this.lCap = m;
    this.lPrice = new Float64Array(m);
    this.lTotal = new Float64Array(m);
    this.lHead = new Int32Array(m);
    this.lTail = new Int32Array(m);
    this.lSide = new Uint8Array(m);
    this.lDirty = new Uint8Array(m);
    this.lEmpty = new Uint8Array(m);
    this.lParked = new Uint8Array(m);
    this.lFree = new Int32Array(m);
    for (let i = 0; i < m; i++) this.lFree[i] = m - 1 - i;
    this.lFreeTop = m;
    this.sorted = [new Int32Array(m), new Int32Array(m)];
    this.dirty = new Int32Array(m);
    this.lHashed = new Uint8Array(m);
    this.pWin = [new Int32Array(m * 2).fill(NIL), new Int32Array(m * 2).fill(NIL)];
    this.pMask = m * 2 - 1;
  }

  // ---------------------------------------------------------------- commands

  limit(
    orderId: number,
    user: number,
    side: Side,
    price: number,
    qty: number,
    flags = 0,
    time = 0,
  ): ResultCode {
    if (orderId > this.maxId) this.maxId = orderId;
    else if (this.find(orderId) !== NIL) return ERR_DUPLICATE_ID;
    this.now = time;
    // Flags are read once per command; a plain GTC order takes the path it always took.
    if (flags !== 0) return this.limitFlagged(orderId, user, side, price, qty, flags);
    const left = this.match(orderId, user, side, qty, side === BUY ? price : -price, -1, 0);
    if (left > 0) {
      this.rest(orderId, user, side, price, left, 0);
      this.ev.rested(orderId, user, side, price, left);
    }
    this.flushLevels();
    return OK;
  }

  market(
    orderId: number,
    user: number,
    side: Side,
    qty: number,
    budget: number,
    flags = 0,
    time = 0,
  ): ResultCode {
    this.now = time;
    const stp = flags & STP_MASK;
    const opp = side === BUY ? SELL : BUY;
    let useBudget = side === BUY && budget >= 0;
    // Pre-walk the other users' orders: is there liquidity, and can the budget pay for it all?
    let need: number;
    if (useBudget && budget > MAX_BUDGET) {
      // A budget past 2^52 (a balance of more than 2^52 ticks × lots): the walk's products and sum
      // need not be exact doubles, so the walk is costed in BigInt. Once it fits, the match (which
      // fills exactly the walk's orders) needs no budget: nothing in it can be cut.
      need = this.walkCostExact(opp, user, qty, BigInt(budget));
      useBudget = false;
    } else need = this.walkCost(opp, user, qty, useBudget ? budget : -1);
    if (need === -1) return ERR_NO_LIQUIDITY;
    if (need === -2) return ERR_INSUFFICIENT_FUNDS;
    if (this.minNotional > 0n && !this.walkReaches(opp, user, qty)) return ERR_BELOW_MIN_NOTIONAL;
    const left = this.match(orderId, user, side, qty, Number.POSITIVE_INFINITY, useBudget ? budget : -1, stp);
    if (left > 0) this.ev.done(orderId, user, side, this.endReason(), left);
    this.flushLevels();
    return OK;
  }

  cancel(orderId: number, reason: DoneReason = DONE_CANCELLED): ResultCode {
    const o = this.find(orderId);
    if (o === NIL) return ERR_ORDER_NOT_FOUND;
    const left = this.of64[o * F64_WORDS + F_LEFT];
    const side = this.lSide[this.cMeta[(o >> CHUNK_SHIFT) * CHUNK_META + C_LEVEL]] as Side;
    const user = this.oi32[o * I32_WORDS + I_USER];
    this.unlinkOrder(o);
    this.mergeSparse(o >> CHUNK_SHIFT);
    this.ev.done(orderId, user, side, reason, left);
    this.flushLevels();
    return OK;
  }

  reduce(orderId: number, by: number): ResultCode {
    const o = this.find(orderId);
    if (o === NIL) return ERR_ORDER_NOT_FOUND;
    const left = this.of64[o * F64_WORDS + F_LEFT];
    if (!(by >= 1) || left - by <= 0) return ERR_AMEND_TOO_SMALL;
    const lvl = this.cMeta[(o >> CHUNK_SHIFT) * CHUNK_META + C_LEVEL];
    const price = this.lPrice[lvl];
    this.ev.amended(
      orderId,
      this.oi32[o * I32_WORDS + I_USER],
      this.lSide[lvl] as Side,
      price,
      price,
      left,
      left - by,
    );
    // The record stays where it is: the order keeps its place in the level's FIFO.
    this.of64[o * F64_WORDS + F_LEFT] = left - by;
    this.lTotal[lvl] -= by;
    this.markDirty(lvl);
    this.flushLevels();
    return OK;
  }

  move(orderId: number, price: number, delta: number, flags: number, time = 0): ResultCode {
    this.now = time;
    const o = this.find(orderId);
    if (o === NIL) return ERR_ORDER_NOT_FOUND;
    const left = this.of64[o * F64_WORDS + F_LEFT];
    const newLeft = left + delta;
    if (newLeft <= 0) return ERR_AMEND_TOO_SMALL;
    const lvl = this.cMeta[(o >> CHUNK_SHIFT) * CHUNK_META + C_LEVEL];
    const side = this.lSide[lvl] as Side;
    if ((flags & FLAG_POST_ONLY) !== 0 && this.wouldTake(side, price)) return ERR_WOULD_TAKE;
    const user = this.oi32[o * I32_WORDS + I_USER];
    const oldPrice = this.lPrice[lvl];
    this.ev.amended(orderId, user, side, oldPrice, price, left, newLeft);
    if (price === oldPrice && this.lTotal[lvl] === left) {
      // Alone in its level, so already at its back; nothing opposite reaches a price it rested
      // at. Changing the quantity in place also keeps the level slot (unlinking would drop the
      // level and re-create it, reporting one price twice).
      this.of64[o * F64_WORDS + F_LEFT] = newLeft;
      this.lTotal[lvl] = newLeft;
      this.markDirty(lvl);
      this.ev.rested(orderId, user, side, price, newLeft);
      this.flushLevels();
      return OK;
    }
    // At a new price the old level may be dropped: it is on the order's own side, which neither
    // matching nor the new level (another price) touches again in this command.
    this.unlinkOrder(o);
    this.mergeSparse(o >> CHUNK_SHIFT);
    const kept = this.oi32[o * I32_WORDS + I_FLAGS];
    const rest = this.match(orderId, user, side, newLeft, side === BUY ? price : -price, -1, kept);
    if (rest > 0) {
      if (this.stopReason !== 0) this.ev.done(orderId, user, side, this.endReason(), rest);
      else {
        this.rest(orderId, user, side, price, rest, kept);
        this.ev.rested(orderId, user, side, price, rest);
      }
    }
    this.flushLevels();
    return OK;
  }

  // ---------------------------------------------------------------- quotes and MMP

  quoteBegin(user: number, levels: number, time: number): ResultCode | typeof PENDING {
    this.qUser = user;
    this.qTime = time;
    this.qWant = levels;
    this.qN = 0;
    return levels > 0 ? PENDING : this.runQuote();
  }

  quoteLevel(orderId: number, side: Side, price: number, qty: number): ResultCode | typeof PENDING {
    if (this.qWant === 0) return ERR_QUOTE_LEVELS;
    const i = this.qN++;
    if (i < MAX_QUOTE_LEVELS * 2) {
      const q = this.qLevels;
      q[i * 4] = orderId;
      q[i * 4 + 1] = side;
      q[i * 4 + 2] = price;
      q[i * 4 + 3] = qty;
    }
    if (this.qN < this.qWant) return PENDING;
    this.qWant = 0;
    return this.runQuote();
  }

  private runQuote(): ResultCode {
    const user = this.qUser;
    const n = this.qN;
    const q = this.qLevels;
    this.now = this.qTime;
    if (n > MAX_QUOTE_LEVELS * 2) return ERR_QUOTE_LEVELS;
    for (let i = 0; i < n; i++) {
      const side = q[i * 4 + 1];
      if ((side !== BUY && side !== SELL) || !(q[i * 4 + 3] >= 1)) return ERR_QUOTE_LEVELS;
    }
    if (n > 0 && this.isFrozen(user)) return ERR_MMP_FROZEN;
    for (let i = 0; i < n; i++) {
      const id = q[i * 4];
      if (this.find(id) !== NIL) return ERR_DUPLICATE_ID;
      for (let j = 0; j < i; j++) if (q[j * 4] === id) return ERR_DUPLICATE_ID;
    }
    // The user's open quote orders, ids ascending, and which level keeps each.
    const old: number[] = [];
    const ids = this.protectedIds.get(user);
    if (ids !== undefined) {
      for (const id of ids) {
        if ((this.oi32[this.find(id) * I32_WORDS + I_FLAGS] & FLAG_QUOTE) !== 0) old.push(id);
      }
      old.sort((a, b) => a - b);
    }
    const keptBy = new Float64Array(n);
    const used = new Uint8Array(old.length);
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < old.length; k++) {
        if (used[k] === 1) continue;
        const o = this.find(old[k]);
        const lvl = this.cMeta[(o >> CHUNK_SHIFT) * CHUNK_META + C_LEVEL];
        if (
          this.lSide[lvl] === q[i * 4 + 1] &&
          this.lPrice[lvl] === q[i * 4 + 2] &&
          this.of64[o * F64_WORDS + F_LEFT] === q[i * 4 + 3]
        ) {
          used[k] = 1;
          keptBy[i] = old[k];
          break;
        }
      }
    }
    for (let k = 0; k < old.length; k++) {
      if (used[k] === 1) continue;
      const o = this.find(old[k]);
      const side = this.lSide[this.cMeta[(o >> CHUNK_SHIFT) * CHUNK_META + C_LEVEL]] as Side;
      const left = this.of64[o * F64_WORDS + F_LEFT];
      this.unlinkOrder(o);
      this.mergeSparse(o >> CHUNK_SHIFT);
      this.ev.done(old[k], user, side, DONE_CANCELLED, left);
    }
    for (let i = 0; i < n; i++) {
      const id = q[i * 4];
      if (keptBy[i] !== 0) {
        this.ev.quoted(user, i, keptBy[i], QUOTE_KEPT);
        continue;
      }
      const side = q[i * 4 + 1] as Side;
      const price = q[i * 4 + 2];
      if (this.wouldTake(side, price)) {
        this.ev.quoted(user, i, id, ERR_WOULD_TAKE);
        continue;
      }
      if (id > this.maxId) this.maxId = id;
      this.rest(id, user, side, price, q[i * 4 + 3], FLAG_QUOTE | FLAG_MMP);
      this.ev.rested(id, user, side, price, q[i * 4 + 3]);
      this.ev.quoted(user, i, id, OK);
    }
    this.flushLevels();
    return OK;
  }

  mmpSet(user: number, intervalSeconds: number, qtyLimit: number, frozenSeconds: number): ResultCode {
    let st = this.mmp.get(user);
    if (st === undefined) {
      st = new MmpState();
      this.mmp.set(user, st);
    }
    st.set(intervalSeconds, qtyLimit, frozenSeconds);
    return OK;
  }

  mmpReset(user: number): ResultCode {
    this.mmp.get(user)?.reset();
    this.ev.mmp(user, 0, 0);
    return OK;
  }

  private isFrozen(user: number): boolean {
    const st = this.mmp.get(user);
    return st?.isFrozen(this.now) === true;
  }

  /** Why `match` stopped early, as the taker's `done` reason (DONE_REMAINDER when it did not). */
  private endReason(): DoneReason {
    return this.stopReason === 0 ? DONE_REMAINDER : (this.stopReason as DoneReason);
  }

  private protect(user: number, orderId: number): void {
    let ids = this.protectedIds.get(user);
    if (ids === undefined) {
      ids = new Set();
      this.protectedIds.set(user, ids);
    }
    ids.add(orderId);
  }

  /**
   * Counts a protected fill of `user`; on a trigger cancels every open protected order of the user
   * (`done` DONE_MMP, ids ascending), reports `mmp`, and tells `match` to restart its walk. True on
   * a trigger.
   */
  private countFill(user: number, qty: number): boolean {
    const st = this.mmp.get(user);
    if (st === undefined || !st.add(qty, this.now)) return false;
    const ids = this.protectedIds.get(user);
    if (ids !== undefined && ids.size > 0) {
      const list = [...ids].sort((a, b) => a - b);
      for (const id of list) {
        const o = this.find(id);
        const side = this.lSide[this.cMeta[(o >> CHUNK_SHIFT) * CHUNK_META + C_LEVEL]] as Side;
        const left = this.of64[o * F64_WORDS + F_LEFT];
        this.unlinkOrder(o);
        this.ev.done(id, user, side, DONE_MMP, left);
      }
      this.restart = true;
    }
    this.ev.mmp(user, 1, st.frozenUntil);
    return true;
  }

  // ---------------------------------------------------------------- queries

  bestBid(): number {
    const n = this.count[BUY];
    return n === 0 ? -1 : this.lPrice[this.sorted[BUY][n - 1]];
  }

  bestAsk(): number {
    const n = this.count[SELL];
    return n === 0 ? -1 : this.lPrice[this.sorted[SELL][n - 1]];
  }

  size(): number {
    return this.live;
  }

  levels(side: Side, depth: number, prices: Float64Array, totals: Float64Array): number {
    const arr = this.sorted[side];
    const max = Math.min(depth, prices.length, totals.length);
    let k = 0;
    for (let i = this.count[side] - 1; i >= 0 && k < max; i--) {
      const l = arr[i];
      if (this.lParked[l] === 1) continue;
      prices[k] = this.lPrice[l];
      totals[k] = this.lTotal[l];
      k++;
    }
    return k;
  }

  remaining(orderId: number): number {
    const o = this.find(orderId);
    return o === NIL ? -1 : this.of64[o * F64_WORDS + F_LEFT];
  }

  /** Layout counters, for tests and benchmarks: chunks in use, orders in the hash, merges so far. */
  layoutStats(): { chunks: number; hashed: number; merges: number } {
    return { chunks: this.cCap - this.cFreeTop, hashed: this.older.size, merges: this.merges };
  }

  /** Number of price levels on one side. */
  depth(side: Side): number {
    return this.count[side] - this.parked[side];
  }

  // ---------------------------------------------------------------- flagged limit orders

  /** A limit order with flags (post-only, IOC, FOK): off the plain GTC path on purpose. */
  private limitFlagged(
    orderId: number,
    user: number,
    side: Side,
    price: number,
    qty: number,
    flags: number,
  ): ResultCode {
    if ((flags & FLAG_MMP) !== 0 && this.isFrozen(user)) return ERR_MMP_FROZEN;
    if ((flags & FLAG_POST_ONLY) !== 0 && this.wouldTake(side, price)) return ERR_WOULD_TAKE;
    const tif = flags & TIF_MASK;
    const key = side === BUY ? price : -price;
    const stop = (flags & STP_MASK) !== 0;
    if (tif === TIF_FOK && this.available(side === BUY ? SELL : BUY, user, qty, key, stop) < qty) {
      this.ev.done(orderId, user, side, DONE_REMAINDER, qty);
      return OK;
    }
    const kept = flags & KEPT_FLAGS;
    const left = this.match(orderId, user, side, qty, key, -1, kept);
    if (left > 0) {
      if (this.stopReason !== 0) this.ev.done(orderId, user, side, this.endReason(), left);
      else if (tif === TIF_IOC || tif === TIF_FOK) this.ev.done(orderId, user, side, DONE_REMAINDER, left);
      else {
        this.rest(orderId, user, side, price, left, kept);
        this.ev.rested(orderId, user, side, price, left);
      }
    }
    this.flushLevels();
    return OK;
  }

  /** True when an order on `side` at `price` reaches the best opposite order (any user's). */
  private wouldTake(side: Side, price: number): boolean {
    if (side === BUY) {
      const ask = this.bestAsk();
      return ask !== -1 && ask <= price;
    }
    const bid = this.bestBid();
    return bid !== -1 && bid >= price;
  }

  /**
   * Lots that other users' orders on side `opp` hold at keys up to `limitKey` (see `match`),
   * counted until `qty` is reached.
   */
  private available(opp: Side, user: number, qty: number, limitKey: number, stopAtOwn: boolean): number {
    const arr = this.sorted[opp];
    const meta = this.cMeta;
    let got = 0;
    for (let i = this.count[opp] - 1; i >= 0 && got < qty; i--) {
      const lvl = arr[i];
      const price = this.lPrice[lvl];
      if ((opp === SELL ? price : -price) > limitKey) break;
      for (let c = this.lHead[lvl]; c !== NIL && got < qty; c = meta[c * CHUNK_META + C_NEXT]) {
        const end = meta[c * CHUNK_META + C_FILL];
        for (let pos = meta[c * CHUNK_META + C_HEAD]; pos < end && got < qty; pos++) {
          const o = (c << CHUNK_SHIFT) + pos;
          const open = this.of64[o * F64_WORDS + F_LEFT];
          if (open === 0) continue;
          if (this.oi32[o * I32_WORDS + I_USER] !== user) got += open;
          else if (stopAtOwn) return got;
        }
      }
    }
    return got;
  }

  // ---------------------------------------------------------------- matching

  /**
   * Matches an incoming order against the opposite side while the best opposite level's key
   * (price for asks against a buy, -price for bids against a sell, compared as "at most") allows.
   * `limitKey` is `price` for a buy and `-price` for a sell (Infinity for market orders).
   * `budget` (>= 0) caps the notional a market buy may spend. Returns the quantity left.
   */
  private match(
    takerId: number,
    user: number,
    side: Side,
    qty: number,
    limitKey: number,
    budget: number,
    takerFlags: number,
  ): number {
    this.stopReason = 0;
    this.restart = false;
    const opp = side === BUY ? SELL : BUY;
    const arr = this.sorted[opp];
    const ev = this.ev;
    const lPrice = this.lPrice;
    let left = qty;
    let budgetLeft = budget;
    while (left > 0) {
      const n = this.count[opp];
      if (n === 0) break;
      const lvl = arr[n - 1];
      const price = lPrice[lvl];
      if ((opp === SELL ? price : -price) > limitKey) break;
      let c = this.lHead[lvl];
      while (c !== NIL && left > 0) {
        // Read before the chunk can be freed by its last fill.
        const meta = this.cMeta;
        const nextChunk = meta[c * CHUNK_META + C_NEXT];
        const end = meta[c * CHUNK_META + C_FILL];
        let pos = meta[c * CHUNK_META + C_HEAD];
        for (; pos < end && left > 0; pos++) {
          const o = (c << CHUNK_SHIFT) + pos;
          const f64 = this.of64;
          const makerLeft = f64[o * F64_WORDS + F_LEFT];
          if (makerLeft === 0) continue;
          const makerUser = this.oi32[o * I32_WORDS + I_USER];
          const makerId = f64[o * F64_WORDS + F_ID];
          if (makerUser === user) {
            const stp = takerFlags & STP_MASK;
            if (stp !== STP_CANCEL_TAKER) {
              this.unlinkOrder(o);
              ev.done(makerId, user, opp, DONE_SELF_TRADE, makerLeft);
            }
            if (stp === 0) continue;
            this.stopReason = DONE_SELF_TRADE;
            return left;
          }
          let fill = Math.min(left, makerLeft);
          let last = false;
          if (budget >= 0) {
            let cost = price * fill;
            if (!(cost <= budgetLeft)) {
              // Cut the fill to what the budget still pays for; both operands are safe integers.
              fill = Number(BigInt(budgetLeft) / BigInt(price));
              if (fill === 0) return left;
              cost = price * fill;
              last = true;
            }
            budgetLeft -= cost;
          }
          left -= fill;
          ev.trade(takerId, user, side, makerId, makerUser, price, fill, left, makerLeft - fill);
          const makerFlags = this.oi32[o * I32_WORDS + I_FLAGS];
          if (makerLeft === fill) this.unlinkOrder(o);
          else {
            f64[o * F64_WORDS + F_LEFT] = makerLeft - fill;
            this.lTotal[lvl] -= fill;
            this.markDirty(lvl);
            // Positions before `pos` are all closed now: start there next time.
            meta[c * CHUNK_META + C_HEAD] = pos;
          }
          if (((makerFlags | takerFlags) & FLAG_MMP) !== 0) {
            if ((makerFlags & FLAG_MMP) !== 0) this.countFill(makerUser, fill);
            if ((takerFlags & FLAG_MMP) !== 0 && this.countFill(user, fill)) {
              this.stopReason = DONE_MMP;
              return left;
            }
            // Orders under this walk may be gone: start again from the best level.
            if (this.restart) break;
          }
          if (last) return left;
          if (makerLeft !== fill) break;
        }
        if (this.restart) {
          this.restart = false;
          break;
        }
        c = nextChunk;
      }
    }
    return left;
  }

  /**
   * Walks the other users' orders on side `opp` for up to `qty` lots. Returns -1 when there are
   * none, -2 when `budget` (>= 0) cannot pay for the walk, otherwise the lots available.
   * Products that are not safe integers exceed every budget (budget <= 2^52), so the comparison
   * stays exact.
   */
  private walkCost(opp: Side, user: number, qty: number, budget: number): number {
    const arr = this.sorted[opp];
    const meta = this.cMeta;
    let got = 0;
    let cost = 0;
    for (let i = this.count[opp] - 1; i >= 0 && got < qty; i--) {
      const lvl = arr[i];
      const price = this.lPrice[lvl];
      for (let c = this.lHead[lvl]; c !== NIL && got < qty; c = meta[c * CHUNK_META + C_NEXT]) {
        const end = meta[c * CHUNK_META + C_FILL];
        for (let pos = meta[c * CHUNK_META + C_HEAD]; pos < end && got < qty; pos++) {
          const o = (c << CHUNK_SHIFT) + pos;
          const open = this.of64[o * F64_WORDS + F_LEFT];
          if (open === 0 || this.oi32[o * I32_WORDS + I_USER] === user) continue;
          const f = Math.min(open, qty - got);
          got += f;
          if (budget < 0) {
            // No budget to check: one order of another user is enough to know there is liquidity.
            return got;
          }
          cost += price * f;
          if (!(cost <= budget)) return -2;
        }
      }
    }
    return got === 0 ? -1 : got;
  }

  /**
   * Whether walking the other users' orders on side `opp` for up to `qty` lots (the walk of
   * walkCost, what a market order takes at submission) is worth at least the pair's minimum order
   * value. Exact: while the sum is below a minimum of at most MAX_BUDGET every product and partial
   * sum is an exact integer, and a product that is not exact exceeds it; a larger minimum is summed
   * in BigInt. Stops as soon as the minimum is reached.
   */
  private walkReaches(opp: Side, user: number, qty: number): boolean {
    const arr = this.sorted[opp];
    const meta = this.cMeta;
    const min = this.minNotionalNum;
    let got = 0;
    let cost = 0;
    let exact = 0n;
    for (let i = this.count[opp] - 1; i >= 0 && got < qty; i--) {
      const lvl = arr[i];
      const price = this.lPrice[lvl];
      for (let c = this.lHead[lvl]; c !== NIL && got < qty; c = meta[c * CHUNK_META + C_NEXT]) {
        const end = meta[c * CHUNK_META + C_FILL];
        for (let pos = meta[c * CHUNK_META + C_HEAD]; pos < end && got < qty; pos++) {
          const o = (c << CHUNK_SHIFT) + pos;
          const open = this.of64[o * F64_WORDS + F_LEFT];
          if (open === 0 || this.oi32[o * I32_WORDS + I_USER] === user) continue;
          const f = Math.min(open, qty - got);
          got += f;
          if (min >= 0) {
            cost += price * f;
            if (cost >= min) return true;
          } else {
            exact += BigInt(price) * BigInt(f);
            if (exact >= this.minNotional) return true;
          }
        }
      }
    }
    return false;
  }

  /** walkCost for a `budget` past MAX_BUDGET: the same walk, its cost summed exactly in BigInt. */
  private walkCostExact(opp: Side, user: number, qty: number, budget: bigint): number {
    const arr = this.sorted[opp];
    const meta = this.cMeta;
    let got = 0;
    let cost = 0n;
    for (let i = this.count[opp] - 1; i >= 0 && got < qty; i--) {
      const lvl = arr[i];
      const price = BigInt(this.lPrice[lvl]);
      for (let c = this.lHead[lvl]; c !== NIL && got < qty; c = meta[c * CHUNK_META + C_NEXT]) {
        const end = meta[c * CHUNK_META + C_FILL];
        for (let pos = meta[c * CHUNK_META + C_HEAD]; pos < end && got < qty; pos++) {
          const o = (c << CHUNK_SHIFT) + pos;
          const open = this.of64[o * F64_WORDS + F_LEFT];
          if (open === 0 || this.oi32[o * I32_WORDS + I_USER] === user) continue;
          const f = Math.min(open, qty - got);
          got += f;
          cost += price * BigInt(f);
          if (cost > budget) return -2;
        }
      }
    }
    return got === 0 ? -1 : got;
  }

  // ---------------------------------------------------------------- book structure

  /** Appends a new order to its price level's tail chunk, creating the level or chunk when needed. */
  private rest(orderId: number, user: number, side: Side, price: number, left: number, flags: number): void {
    let lvl = this.levelOf(side, price);
    if (lvl === NIL) lvl = this.addLevel(side, price);
    else if (this.lParked[lvl] === 1) {
      this.lParked[lvl] = 0;
      this.parked[side]--;
    }
    let c = this.lTail[lvl];
    if (c === NIL || this.cMeta[c * CHUNK_META + C_FILL] === CHUNK) c = this.addChunk(lvl);
    const meta = this.cMeta;
    const pos = meta[c * CHUNK_META + C_FILL];
    meta[c * CHUNK_META + C_FILL] = pos + 1;
    meta[c * CHUNK_META + C_LIVE]++;
    const o = (c << CHUNK_SHIFT) + pos;
    const f64 = this.of64;
    f64[o * F64_WORDS + F_ID] = orderId;
    f64[o * F64_WORDS + F_LEFT] = left;
    this.oi32[o * I32_WORDS + I_USER] = user;
    this.oi32[o * I32_WORDS + I_FLAGS] = flags;
    if ((flags & FLAG_MMP) !== 0) this.protect(user, orderId);
    this.lTotal[lvl] += left;
    this.markDirty(lvl);
    this.live++;
    // Index the order in the window; a still-open order owning the cell moves to `older`.
    const cell = orderId & this.winMask;
    const occ = this.win[cell];
    if (occ !== NIL && occ !== o && f64[occ * F64_WORDS + F_LEFT] > 0 && this.oHashed[occ] === 0) {
      const occId = f64[occ * F64_WORDS + F_ID];
      if ((occId & this.winMask) === cell) {
        this.older.set(occId, occ);
        this.oHashed[occ] = 1;
      }
    }
    this.win[cell] = o;
  }

  /** The slot of an open order, or NIL. */
  private find(orderId: number): number {
    const o = this.win[orderId & this.winMask];
    if (o !== NIL && this.of64[o * F64_WORDS + F_ID] === orderId && this.of64[o * F64_WORDS + F_LEFT] > 0)
      return o;
    return this.older.size === 0 ? NIL : this.older.get(orderId);
  }

  /** Takes an order out of its level (the level's total drops by its open quantity). */
  private unlinkOrder(o: number): void {
    const c = o >> CHUNK_SHIFT;
    const meta = this.cMeta;
    const lvl = meta[c * CHUNK_META + C_LEVEL];
    this.lTotal[lvl] -= this.of64[o * F64_WORDS + F_LEFT];
    this.of64[o * F64_WORDS + F_LEFT] = 0;
    if ((this.oi32[o * I32_WORDS + I_FLAGS] & FLAG_MMP) !== 0) {
      this.protectedIds.get(this.oi32[o * I32_WORDS + I_USER])?.delete(this.of64[o * F64_WORDS + F_ID]);
    }
    this.markDirty(lvl);
    this.live--;
    if (this.oHashed[o] === 1) {
      this.older.delete(this.of64[o * F64_WORDS + F_ID]);
      this.oHashed[o] = 0;
    }
    if (--meta[c * CHUNK_META + C_LIVE] > 0) return;
    // The chunk's last open order left: unlink the chunk from its level and free it.
    const prev = meta[c * CHUNK_META + C_PREV];
    const next = meta[c * CHUNK_META + C_NEXT];
    if (prev === NIL) this.lHead[lvl] = next;
    else meta[prev * CHUNK_META + C_NEXT] = next;
    if (next === NIL) this.lTail[lvl] = prev;
    else meta[next * CHUNK_META + C_PREV] = prev;
    this.cFree[this.cFreeTop++] = c;
    if (this.lHead[lvl] === NIL) this.removeLevel(lvl);
  }

  /**
   * Cancels leave holes in chunks. When a chunk that lost an order is down to a few open ones and
   * fits, with a neighbour, in one chunk, the two are merged: their open records move, in FIFO
   * order, to the front of the earlier chunk and the later one is freed. Chunks thus stay dense, so
   * a sweep reads few cache lines per fill. Not called while matching iterates over chunks.
   */
  private mergeSparse(c: number): void {
    const meta = this.cMeta;
    const live = meta[c * CHUNK_META + C_LIVE];
    if (live === 0 || live > MERGE_BELOW) return;
    const prev = meta[c * CHUNK_META + C_PREV];
    if (prev !== NIL && meta[prev * CHUNK_META + C_LIVE] + live <= CHUNK) {
      this.merge(prev, c);
      return;
    }
    const next = meta[c * CHUNK_META + C_NEXT];
    if (next !== NIL && meta[next * CHUNK_META + C_LIVE] + live <= CHUNK) this.merge(c, next);
  }

  /** Moves the open records of chunk `a` and then of `b` (its successor) to the front of `a`; frees `b`. */
  private merge(a: number, b: number): void {
    const meta = this.cMeta;
    let w = a << CHUNK_SHIFT;
    w = this.pack(a, w);
    w = this.pack(b, w);
    const n = w - (a << CHUNK_SHIFT);
    meta[a * CHUNK_META + C_HEAD] = 0;
    meta[a * CHUNK_META + C_FILL] = n;
    meta[a * CHUNK_META + C_LIVE] = n;
    const next = meta[b * CHUNK_META + C_NEXT];
    meta[a * CHUNK_META + C_NEXT] = next;
    if (next === NIL) this.lTail[meta[a * CHUNK_META + C_LEVEL]] = a;
    else meta[next * CHUNK_META + C_PREV] = a;
    this.cFree[this.cFreeTop++] = b;
    this.merges++;
  }

  /** Copies chunk `c`'s open records to slots from `w` on (never past them), re-indexing each. */
  private pack(c: number, w: number): number {
    const f64 = this.of64;
    const i32 = this.oi32;
    const end = (c << CHUNK_SHIFT) + this.cMeta[c * CHUNK_META + C_FILL];
    for (let o = (c << CHUNK_SHIFT) + this.cMeta[c * CHUNK_META + C_HEAD]; o < end; o++) {
      const open = f64[o * F64_WORDS + F_LEFT];
      if (open === 0) continue;
      if (o !== w) {
        const id = f64[o * F64_WORDS + F_ID];
        f64[w * F64_WORDS + F_ID] = id;
        f64[w * F64_WORDS + F_LEFT] = open;
        i32[w * I32_WORDS + I_USER] = i32[o * I32_WORDS + I_USER];
        i32[w * I32_WORDS + I_FLAGS] = i32[o * I32_WORDS + I_FLAGS];
        f64[o * F64_WORDS + F_LEFT] = 0;
        if (this.oHashed[o] === 1) {
          this.oHashed[o] = 0;
          this.oHashed[w] = 1;
          this.older.set(id, w);
        } else this.win[id & this.winMask] = w;
      }
      w++;
    }
    return w;
  }

  /** Links a fresh chunk at the tail of a level. */
  private addChunk(lvl: number): number {
    if (this.cFreeTop === 0) this.growChunks();
    const c = this.cFree[--this.cFreeTop];
    const meta = this.cMeta;
    const tail = this.lTail[lvl];
    meta[c * CHUNK_META + C_HEAD] = 0;
    meta[c * CHUNK_META + C_FILL] = 0;
    meta[c * CHUNK_META + C_LIVE] = 0;
    meta[c * CHUNK_META + C_PREV] = tail;
    meta[c * CHUNK_META + C_NEXT] = NIL;
    meta[c * CHUNK_META + C_LEVEL] = lvl;
    if (tail === NIL) this.lHead[lvl] = c;
    else meta[tail * CHUNK_META + C_NEXT] = c;
    this.lTail[lvl] = c;
    return c;
  }

  /** The level slot of a price on one side, or NIL. */
  private levelOf(side: Side, price: number): number {
    const lvl = this.pWin[side][price & this.pMask];
    if (lvl !== NIL && this.lPrice[lvl] === price) return lvl;
    const older = this.pOlder[side];
    return older.size === 0 ? NIL : older.get(price);
  }

  private addLevel(side: Side, price: number): number {
    if (this.lFreeTop === 0) this.growLevels();
    const lvl = this.lFree[--this.lFreeTop];
    this.lPrice[lvl] = price;
    this.lTotal[lvl] = 0;
    this.lHead[lvl] = NIL;
    this.lTail[lvl] = NIL;
    this.lSide[lvl] = side;
    this.lEmpty[lvl] = 0;
    const win = this.pWin[side];
    const cell = price & this.pMask;
    const occ = win[cell];
    if (occ !== NIL) {
      this.pOlder[side].set(this.lPrice[occ], occ);
      this.lHashed[occ] = 1;
    }
    win[cell] = lvl;
    // Insert into the sorted array: key ascending, best (largest key) last.
    const arr = this.sorted[side];
    const n = this.count[side];
    const key = side === BUY ? price : -price;
    let lo = 0;
    let hi = n;
    // Fast path: the new level is the new best or next to it.
    if (n > 0 && this.keyOf(arr[n - 1]) < key) lo = n;
    else {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (this.keyOf(arr[mid]) < key) lo = mid + 1;
        else hi = mid;
      }
    }
    if (lo < n) arr.copyWithin(lo + 1, lo, n);
    arr[lo] = lvl;
    this.count[side] = n + 1;
    return lvl;
  }

  /**
   * A level lost its last order. At the top of its side it is unlinked at once (with any parked
   * levels it uncovers), so the best level is never empty. Inside the book it is parked instead:
   * it keeps its place in the sorted array (no memmove deep in a large book) and is reused if an
   * order arrives at its price; parked levels are dropped when they surface or by `compact`.
   */
  private removeLevel(lvl: number): void {
    const side = this.lSide[lvl] as Side;
    const arr = this.sorted[side];
    let n = this.count[side];
    this.markDirty(lvl);
    if (arr[n - 1] !== lvl) {
      this.lParked[lvl] = 1;
      this.parked[side]++;
      if (this.parked[side] > 1024 && this.parked[side] * 2 > n) this.compact(side);
      return;
    }
    this.dropLevel(side, lvl);
    n--;
    while (n > 0 && this.lParked[arr[n - 1]] === 1) {
      this.dropLevel(side, arr[n - 1]);
      this.parked[side]--;
      n--;
    }
    this.count[side] = n;
  }

  /**
   * Forgets an empty level's price. A level changed by the current command is recycled when the
   * command's levels flush (its final total, 0, is still to be reported); others at once.
   */
  private dropLevel(side: Side, lvl: number): void {
    if (this.lHashed[lvl] === 1) {
      this.pOlder[side].delete(this.lPrice[lvl]);
      this.lHashed[lvl] = 0;
    } else this.pWin[side][this.lPrice[lvl] & this.pMask] = NIL;
    this.lParked[lvl] = 0;
    if (this.lDirty[lvl] === 1) this.lEmpty[lvl] = 1;
    else this.lFree[this.lFreeTop++] = lvl;
  }

  /** Removes every parked level of a side in one pass (amortised O(1) per parked level). */
  private compact(side: Side): void {
    const arr = this.sorted[side];
    const n = this.count[side];
    let w = 0;
    for (let r = 0; r < n; r++) {
      const lvl = arr[r];
      if (this.lParked[lvl] === 1) this.dropLevel(side, lvl);
      else arr[w++] = lvl;
    }
    this.count[side] = w;
    this.parked[side] = 0;
  }

  private keyOf(lvl: number): number {
    return this.lSide[lvl] === BUY ? this.lPrice[lvl] : -this.lPrice[lvl];
  }

  private markDirty(lvl: number): void {
    if (this.lDirty[lvl] === 0) {
      this.lDirty[lvl] = 1;
      this.dirty[this.dirtyCount++] = lvl;
    }
  }

  /** Reports every level the command changed, ordered by side then price, and recycles empties. */
  private flushLevels(): void {
    const d = this.dirty;
    const n = this.dirtyCount;
    // Insertion sort: a command touches few levels.
    for (let i = 1; i < n; i++) {
      const v = d[i];
      const side = this.lSide[v];
      const price = this.lPrice[v];
      let j = i - 1;
      while (
        j >= 0 &&
        (this.lSide[d[j]] > side || (this.lSide[d[j]] === side && this.lPrice[d[j]] > price))
      ) {
        d[j + 1] = d[j];
        j--;
      }
      d[j + 1] = v;
    }
    for (let i = 0; i < n; i++) {
      const lvl = d[i];
      this.lDirty[lvl] = 0;
      // A quote may empty a level and open a new one at the same price (the sort keeps the older
      // first): only the last of them is reported, with the final total.
      const next = i + 1 < n ? d[i + 1] : NIL;
      if (next === NIL || this.lPrice[next] !== this.lPrice[lvl] || this.lSide[next] !== this.lSide[lvl])
        this.ev.level(this.lSide[lvl] as Side, this.lPrice[lvl], this.lTotal[lvl]);
      if (this.lEmpty[lvl] === 1) {
        this.lEmpty[lvl] = 0;
        this.lFree[this.lFreeTop++] = lvl;
      }
    }
    this.dirtyCount = 0;
  }

  // ---------------------------------------------------------------- growth

  private growChunks(): void {
    const old = this.cCap;
    const cap = old * 2;
    this.cMeta = grow(this.cMeta, cap * CHUNK_META);
    this.cFree = grow(this.cFree, cap);
    // The free stack is empty when we grow; push the new chunks, lowest on top.
    for (let i = cap - 1; i >= old; i--) this.cFree[this.cFreeTop++] = i;
    this.cCap = cap;
    const records = cap * CHUNK;
    const mem = new ArrayBuffer(records * RECORD_BYTES);
    new Uint8Array(mem).set(new Uint8Array(this.of64.buffer));
    this.of64 = new Float64Array(mem);
    this.oi32 = new Int32Array(mem);
    this.oHashed = grow(this.oHashed, records);
    this.growWindow(records * WINDOW_PER_RECORD);
  }

  /** Widens the id window to `cap` cells (a power of two), re-placing the orders it indexes. */
  private growWindow(cap: number): void {
    const old = this.win;
    const oldMask = this.winMask;
    if (old.length >= cap) return;
    let w = old.length;
    while (w < cap) w *= 2;
    const win = new Int32Array(w).fill(NIL);
    const mask = w - 1;
    for (let c = 0; c < old.length; c++) {
      const o = old[c];
      // Cells whose id maps apart under the old mask map apart under the wider one too.
      if (o === NIL || this.of64[o * F64_WORDS + F_LEFT] === 0 || this.oHashed[o] === 1) continue;
      const id = this.of64[o * F64_WORDS + F_ID];
      if ((id & oldMask) === c) win[id & mask] = o;
    }
    this.win = win;
    this.winMask = mask;
  }

  private growLevels(): void {
    const old = this.lCap;
    const cap = old * 2;
    this.lPrice = grow(this.lPrice, cap);
    this.lTotal = grow(this.lTotal, cap);
    this.lHead = grow(this.lHead, cap);
    this.lTail = grow(this.lTail, cap);
    this.lSide = grow(this.lSide, cap);
    this.lDirty = grow(this.lDirty, cap);
    this.lEmpty = grow(this.lEmpty, cap);
    this.lParked = grow(this.lParked, cap);
    this.lFree = grow(this.lFree, cap);
    this.sorted[BUY] = grow(this.sorted[BUY], cap);
    this.sorted[SELL] = grow(this.sorted[SELL], cap);
    this.dirty = grow(this.dirty, cap);
    for (let i = cap - 1; i >= old; i--) this.lFree[this.lFreeTop++] = i;
    this.lCap = cap;
    this.lHashed = grow(this.lHashed, cap);
    // Widen the price windows to two cells per level slot; prices apart under the old mask stay apart.
    const mask = cap * 2 - 1;
    for (const side of [BUY, SELL] as const) {
      const prev = this.pWin[side];
      const win = new Int32Array(cap * 2).fill(NIL);
      for (let c = 0; c < prev.length; c++) if (prev[c] !== NIL) win[this.lPrice[prev[c]] & mask] = prev[c];
      this.pWin[side] = win;
    }
    this.pMask = mask;
  }
}

type TypedArray = Float64Array | Int32Array | Uint8Array;

function grow<T extends TypedArray>(a: T, cap: number): T {
  const b = new (a.constructor as new (n: number) => T)(cap);
  b.set(a);
  return b;
}
