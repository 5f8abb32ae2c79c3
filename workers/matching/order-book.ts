/**
 * The fast order book run by each pair worker (the reference it is checked against lives in
 * test/matching/reference-book.ts).
 *
 * Layout, chosen so that a million resting orders are a handful of typed arrays, not a million
 * objects:
 * - Orders live in 32-byte records of one buffer (id and open quantity as float64; user, level,
 *   previous and next as int32, seen through two views), linked into a doubly linked FIFO per price
 *   level. One record is one half cache line, so a fill touches one line (and one page) per maker
 *   instead of one per field array. An order's side and price are its level's. Free slots form a
 *   stack. An order id finds its slot in O(1) through a direct-mapped window over recent ids
 *   (`win`, see `find`), with a hash (`older`) for the few resting orders the window has moved past.
 * - Levels live in slots of their own arrays (`lPrice`, `lTotal`, `lHead`, `lTail`, `lSide`).
 *   Each side keeps its level slots sorted by price in an Int32Array with the BEST level LAST (bids
 *   ascending, asks descending), so the best price is O(1), consuming the best level is a pop, and
 *   a new level near the touch moves only the few entries above it. Price-to-level lookup is a
 *   Map per side, so any price range works (no fixed ladder).
 * - Levels touched by a command are marked dirty and reported once each, with their final total,
 *   when the command ends; emptied levels are unlinked at once and their slots recycled then.
 *
 * Every quantity and price is an integer below 2^53 (see types.ts), so plain number arithmetic is
 * exact here; the one division (cutting a fill to a market-buy budget) is done in BigInt.
 */
import { IdIndex } from "./id-index.ts";
import {
  type BookEvents,
  BUY,
  DONE_CANCELLED,
  DONE_REMAINDER,
  DONE_SELF_TRADE,
  ERR_DUPLICATE_ID,
  ERR_INSUFFICIENT_FUNDS,
  ERR_NO_LIQUIDITY,
  ERR_ORDER_NOT_FOUND,
  type MatchingBook,
  OK,
  type ResultCode,
  SELL,
  type Side,
} from "./types.ts";

const NIL = -1;

/** An order record: 32 bytes, float64 words 0-1 and int32 words 4-7. */
const RECORD_BYTES = 32;
const F_ID = 0;
const F_LEFT = 1;
const I_USER = 4;
const I_LEVEL = 5;
const I_PREV = 6;
const I_NEXT = 7;

export class OrderBook implements MatchingBook {
  private readonly ev: BookEvents;

  // Order slots.
  /** Order records: `of64[o * 4 + F_ID | F_LEFT]`, `oi32[o * 8 + I_USER | I_LEVEL | I_PREV | I_NEXT]`. */
  private of64: Float64Array;
  private oi32: Int32Array;
  private oFree: Int32Array;
  private oFreeTop = 0;
  private oCap: number;
  /** 1 when the slot's order is indexed in `older` instead of `win`. */
  private oHashed: Uint8Array;
  private live = 0;
  /** The highest order id seen: a larger id cannot be a duplicate. */
  private maxId = 0;

  // Order id -> slot. `win[id & winMask]` is the slot of the newest order id that maps to that
  // cell; entries are never cleared, so a lookup checks that the slot still holds that id, open.
  // When a new id takes a cell whose order still rests, that order moves to `older` (a hash).
  // Filling or cancelling a window order therefore touches no index at all.
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
  private readonly levelAt: [IdIndex, IdIndex] = [new IdIndex(256), new IdIndex(256)];

  // Levels changed by the current command.
  private dirty: Int32Array;
  private dirtyCount = 0;

  constructor(events: BookEvents, initialCapacity = 1024) {
    this.ev = events;
    const n = Math.max(16, initialCapacity);
    this.oCap = n;
    let w = 16;
    while (w < n) w *= 2;
    this.win = new Int32Array(w).fill(NIL);
    this.winMask = w - 1;
    this.oHashed = new Uint8Array(n);
    const mem = new ArrayBuffer(n * RECORD_BYTES);
    this.of64 = new Float64Array(mem);
    this.oi32 = new Int32Array(mem);
    this.oFree = new Int32Array(n);
    for (let i = 0; i < n; i++) this.oFree[i] = n - 1 - i;
    this.oFreeTop = n;

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
  }

  // ---------------------------------------------------------------- commands

  limit(orderId: number, user: number, side: Side, price: number, qty: number): ResultCode {
    if (orderId > this.maxId) this.maxId = orderId;
    else if (this.find(orderId) !== NIL) return ERR_DUPLICATE_ID;
    const left = this.match(orderId, user, side, qty, side === BUY ? price : -price, -1);
    if (left > 0) {
      this.rest(orderId, user, side, price, left);
      this.ev.rested(orderId, user, side, price, left);
    }
    this.flushLevels();
    return OK;
  }

  market(orderId: number, user: number, side: Side, qty: number, budget: number): ResultCode {
    const opp = side === BUY ? SELL : BUY;
    const useBudget = side === BUY && budget >= 0;
    // Pre-walk the other users' orders: is there liquidity, and can the budget pay for it all?
    const need = this.walkCost(opp, user, qty, useBudget ? budget : -1);
    if (need === -1) return ERR_NO_LIQUIDITY;
    if (need === -2) return ERR_INSUFFICIENT_FUNDS;
    const left = this.match(orderId, user, side, qty, Number.POSITIVE_INFINITY, useBudget ? budget : -1);
    if (left > 0) this.ev.done(orderId, user, side, DONE_REMAINDER, left);
    this.flushLevels();
    return OK;
  }

  cancel(orderId: number): ResultCode {
    const o = this.find(orderId);
    if (o === NIL) return ERR_ORDER_NOT_FOUND;
    const left = this.of64[o * 4 + F_LEFT];
    const side = this.lSide[this.oi32[o * 8 + I_LEVEL]] as Side;
    const user = this.oi32[o * 8 + I_USER];
    this.unlinkOrder(o);
    this.ev.done(orderId, user, side, DONE_CANCELLED, left);
    this.flushLevels();
    return OK;
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
    return o === NIL ? -1 : this.of64[o * 4 + F_LEFT];
  }

  /** Number of price levels on one side. */
  depth(side: Side): number {
    return this.count[side] - this.parked[side];
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
  ): number {
    const opp = side === BUY ? SELL : BUY;
    const arr = this.sorted[opp];
    const ev = this.ev;
    const lPrice = this.lPrice;
    const f64 = this.of64;
    const i32 = this.oi32;
    let left = qty;
    let budgetLeft = budget;
    while (left > 0) {
      const n = this.count[opp];
      if (n === 0) break;
      const lvl = arr[n - 1];
      const price = lPrice[lvl];
      if ((opp === SELL ? price : -price) > limitKey) break;
      let o = this.lHead[lvl];
      while (o !== NIL && left > 0) {
        const next = i32[o * 8 + I_NEXT];
        const makerLeft = f64[o * 4 + F_LEFT];
        const makerUser = i32[o * 8 + I_USER];
        if (makerUser === user) {
          const makerId = f64[o * 4 + F_ID];
          this.unlinkOrder(o);
          ev.done(makerId, user, opp, DONE_SELF_TRADE, makerLeft);
          o = next;
          continue;
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
        f64[o * 4 + F_LEFT] = makerLeft - fill;
        this.lTotal[lvl] -= fill;
        this.markDirty(lvl);
        ev.trade(takerId, user, side, f64[o * 4 + F_ID], makerUser, price, fill, left, makerLeft - fill);
        if (makerLeft === fill) this.unlinkOrder(o);
        if (last) return left;
        o = next;
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
    let got = 0;
    let cost = 0;
    for (let i = this.count[opp] - 1; i >= 0 && got < qty; i--) {
      const lvl = arr[i];
      const price = this.lPrice[lvl];
      for (let o = this.lHead[lvl]; o !== NIL && got < qty; o = this.oi32[o * 8 + I_NEXT]) {
        if (this.oi32[o * 8 + I_USER] === user) continue;
        const want = qty - got;
        const f = Math.min(this.of64[o * 4 + F_LEFT], want);
        got += f;
        if (budget < 0) {
          // No budget to check: one order of another user is enough to know there is liquidity.
          return got;
        }
        cost += price * f;
        if (!(cost <= budget)) return -2;
      }
    }
    return got === 0 ? -1 : got;
  }

  // ---------------------------------------------------------------- book structure

  /** Puts a new order at the tail of its price level, creating the level when needed. */
  private rest(orderId: number, user: number, side: Side, price: number, left: number): void {
    if (this.oFreeTop === 0) this.growOrders();
    const o = this.oFree[--this.oFreeTop];
    let lvl = this.levelAt[side].get(price);
    if (lvl === -1) lvl = this.addLevel(side, price);
    else if (this.lParked[lvl] === 1) {
      this.lParked[lvl] = 0;
      this.parked[side]--;
    }
    const f64 = this.of64;
    const i32 = this.oi32;
    f64[o * 4 + F_ID] = orderId;
    f64[o * 4 + F_LEFT] = left;
    const tail = this.lTail[lvl];
    i32[o * 8 + I_USER] = user;
    i32[o * 8 + I_LEVEL] = lvl;
    i32[o * 8 + I_PREV] = tail;
    i32[o * 8 + I_NEXT] = NIL;
    if (tail === NIL) this.lHead[lvl] = o;
    else i32[tail * 8 + I_NEXT] = o;
    this.lTail[lvl] = o;
    this.lTotal[lvl] += left;
    this.markDirty(lvl);
    this.live++;
    // Index the order in the window; a still-open order owning the cell moves to `older`.
    const cell = orderId & this.winMask;
    const occ = this.win[cell];
    if (occ !== NIL && occ !== o && f64[occ * 4 + F_LEFT] > 0 && this.oHashed[occ] === 0) {
      const occId = f64[occ * 4 + F_ID];
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
    if (o !== NIL && this.of64[o * 4 + F_ID] === orderId && this.of64[o * 4 + F_LEFT] > 0) return o;
    return this.older.size === 0 ? NIL : this.older.get(orderId);
  }

  /** Takes an order out of its level (the level's total drops by its open quantity). */
  private unlinkOrder(o: number): void {
    const f64 = this.of64;
    const i32 = this.oi32;
    const lvl = i32[o * 8 + I_LEVEL];
    const prev = i32[o * 8 + I_PREV];
    const next = i32[o * 8 + I_NEXT];
    if (prev === NIL) this.lHead[lvl] = next;
    else i32[prev * 8 + I_NEXT] = next;
    if (next === NIL) this.lTail[lvl] = prev;
    else i32[next * 8 + I_PREV] = prev;
    this.lTotal[lvl] -= f64[o * 4 + F_LEFT];
    f64[o * 4 + F_LEFT] = 0;
    this.markDirty(lvl);
    this.live--;
    if (this.oHashed[o] === 1) {
      this.older.delete(f64[o * 4 + F_ID]);
      this.oHashed[o] = 0;
    }
    this.oFree[this.oFreeTop++] = o;
    if (this.lHead[lvl] === NIL) this.removeLevel(lvl);
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
    this.levelAt[side].set(price, lvl);
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
    this.levelAt[side].delete(this.lPrice[lvl]);
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
      this.ev.level(this.lSide[lvl] as Side, this.lPrice[lvl], this.lTotal[lvl]);
      if (this.lEmpty[lvl] === 1) {
        this.lEmpty[lvl] = 0;
        this.lFree[this.lFreeTop++] = lvl;
      }
    }
    this.dirtyCount = 0;
  }

  // ---------------------------------------------------------------- growth

  private growOrders(): void {
    const old = this.oCap;
    const cap = old * 2;
    this.of64 = grow(this.of64, cap * 4);
    this.oi32 = new Int32Array(this.of64.buffer);
    this.oFree = grow(this.oFree, cap);
    this.oHashed = grow(this.oHashed, cap);
    this.growWindow(cap);
    // The free stack is empty when we grow; push the new slots, lowest on top.
    for (let i = cap - 1; i >= old; i--) this.oFree[this.oFreeTop++] = i;
    this.oCap = cap;
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
      if (o === NIL || this.of64[o * 4 + F_LEFT] === 0 || this.oHashed[o] === 1) continue;
      const id = this.of64[o * 4 + F_ID];
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
  }
}

type TypedArray = Float64Array | Int32Array | Uint8Array;

function grow<T extends TypedArray>(a: T, cap: number): T {
  const b = new (a.constructor as new (n: number) => T)(cap);
  b.set(a);
  return b;
}
