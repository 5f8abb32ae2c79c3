/**
 * Test helpers for the matching engine:
 * - `ReferenceOrderBook`: the naive, obviously-correct book (one array of order objects, linear
 *   scans, sorting on every command) that the fast book is compared against.
 * - `RecordingEvents`: a `BookEvents` sink that records every event as a plain tuple (its ring
 *   record's fields, in the order of its field table in src/protocol/pair/records.ts).
 * - `checkBookInvariants`: structural invariants of the reference book's internals.
 * - `BookMirror`: rebuilds the resting orders from the event stream alone, checks every command's
 *   events against the rules (price-time priority, self-trade prevention, event order, levels
 *   reported once each), and then checks any `MatchingBook` through its public interface.
 * - `Command`, `applyCommand`, `formatCommand`: one command as data, so sequences can be replayed
 *   against several books and printed as reproductions.
 *
 * Everything here is integer arithmetic; notional sums are BigInt.
 */
import assert from "node:assert/strict";
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
  MAX_QUOTE_LEVELS,
  type MatchingBook,
  NO_BUDGET,
  OK,
  PENDING,
  QUOTE_KEPT,
  type ResultCode,
  SELL,
  type Side,
  STP_CANCEL_BOTH,
  STP_CANCEL_TAKER,
  STP_MASK,
  TIF_FOK,
  TIF_GTC,
  TIF_IOC,
  TIF_MASK,
} from "../../src/protocol/pair/engine.ts";
import { EV_SLOT_WORDS, EventRecordWriter, eventTuple } from "../../src/protocol/pair/records.ts";

// ---------------------------------------------------------------------------------------------
// Events as data
// ---------------------------------------------------------------------------------------------

/** An event as a tuple: the BookEvents method's name, then its arguments (with their names and types). */
export type BookEvent = {
  [K in keyof BookEvents]: readonly [kind: K, ...Parameters<BookEvents[K]>];
}[keyof BookEvents];

/**
 * Records every event as a tuple, in arrival order: each event is written as a ring record
 * (src/protocol/pair/records.ts) into a one-slot buffer and read back with `eventTuple` once the book has
 * written it (at the next event, or at `take`), so the tuples are exactly the records' fields.
 */
export class RecordingEvents extends EventRecordWriter {
  private events: BookEvent[] = [];
  private pending = false;

  constructor() {
    super(new Float64Array(EV_SLOT_WORDS));
  }

  slot(): number {
    this.flush();
    this.pending = true;
    return 0;
  }

  private flush(): void {
    if (this.pending) this.events.push(eventTuple(this.f, 0) as unknown as BookEvent);
    this.pending = false;
  }

  /** Returns the events recorded since the last call and forgets them. */
  take(): BookEvent[] {
    this.flush();
    const out = this.events;
    this.events = [];
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// Commands as data
// ---------------------------------------------------------------------------------------------

export type Command =
  | {
      readonly op: "limit";
      id: number;
      user: number;
      side: Side;
      price: number;
      qty: number;
      /** TIF_* | FLAG_POST_ONLY | FLAG_MMP | STP_*; absent means 0 (GTC). */
      flags?: number;
      /** Command time in ms (MMP); absent means 0. */
      time?: number;
    }
  | {
      readonly op: "market";
      id: number;
      user: number;
      side: Side;
      qty: number;
      budget: number;
      flags?: number;
      time?: number;
    }
  | { readonly op: "cancel"; id: number }
  | { readonly op: "reduce"; id: number; by: number }
  | { readonly op: "move"; id: number; price: number; delta: number; flags: number; time?: number };

/** Every command, the quote and MMP ones included (BookMirror checks only `Command`s). */
export type EngineCommand =
  | Command
  /** A quote: `levels` as [orderId, side, price, qty], bids then asks. */
  | { readonly op: "quote"; user: number; time: number; levels: Array<[number, Side, number, number]> }
  | {
      readonly op: "mmpSet";
      user: number;
      intervalSeconds: number;
      qtyLimit: number;
      frozenSeconds: number;
    }
  | { readonly op: "mmpReset"; user: number };

export function applyCommand(book: MatchingBook, cmd: EngineCommand): ResultCode {
  switch (cmd.op) {
    case "limit":
      if (cmd.time !== undefined)
        return book.limit(cmd.id, cmd.user, cmd.side, cmd.price, cmd.qty, cmd.flags ?? 0, cmd.time);
      return cmd.flags === undefined
        ? book.limit(cmd.id, cmd.user, cmd.side, cmd.price, cmd.qty)
        : book.limit(cmd.id, cmd.user, cmd.side, cmd.price, cmd.qty, cmd.flags);
    case "market":
      return cmd.flags === undefined && cmd.time === undefined
        ? book.market(cmd.id, cmd.user, cmd.side, cmd.qty, cmd.budget)
        : book.market(cmd.id, cmd.user, cmd.side, cmd.qty, cmd.budget, cmd.flags ?? 0, cmd.time ?? 0);
    case "cancel":
      return book.cancel(cmd.id);
    case "reduce":
      return book.reduce(cmd.id, cmd.by);
    case "move":
      return cmd.time === undefined
        ? book.move(cmd.id, cmd.price, cmd.delta, cmd.flags)
        : book.move(cmd.id, cmd.price, cmd.delta, cmd.flags, cmd.time);
    case "quote": {
      let r = book.quoteBegin(cmd.user, cmd.levels.length, cmd.time);
      for (const [id, side, price, qty] of cmd.levels) r = book.quoteLevel(id, side, price, qty);
      assert.notEqual(r, PENDING, "the last record of a quote ends it");
      return r as ResultCode;
    }
    case "mmpSet":
      return book.mmpSet(cmd.user, cmd.intervalSeconds, cmd.qtyLimit, cmd.frozenSeconds);
    case "mmpReset":
      return book.mmpReset(cmd.user);
  }
}

/** The flags as TypeScript constants, for reproductions. */
export function formatFlags(flags: number): string {
  const tif = flags & TIF_MASK;
  const parts = [
    tif === TIF_IOC ? "TIF_IOC" : tif === TIF_FOK ? "TIF_FOK" : tif === 0 ? "TIF_GTC" : `${tif}`,
  ];
  if ((flags & FLAG_POST_ONLY) !== 0) parts.push("FLAG_POST_ONLY");
  if ((flags & FLAG_MMP) !== 0) parts.push("FLAG_MMP");
  if ((flags & STP_MASK) === STP_CANCEL_TAKER) parts.push("STP_CANCEL_TAKER");
  if ((flags & STP_MASK) === STP_CANCEL_BOTH) parts.push("STP_CANCEL_BOTH");
  const rest = flags & ~(TIF_MASK | FLAG_POST_ONLY | FLAG_MMP | STP_MASK);
  if (rest !== 0) parts.push(`${rest}`);
  return parts.join(" | ");
}

const sideName = (side: Side): string => (side === BUY ? "BUY" : "SELL");

/** The command as a line of TypeScript, for reproductions. */
export function formatCommand(cmd: EngineCommand): string {
  switch (cmd.op) {
    case "limit":
      return `book.limit(${cmd.id}, ${cmd.user}, ${sideName(cmd.side)}, ${cmd.price}, ${cmd.qty}${cmd.flags === undefined && cmd.time === undefined ? "" : `, ${formatFlags(cmd.flags ?? 0)}`}${cmd.time === undefined ? "" : `, ${cmd.time}`});`;
    case "market":
      return `book.market(${cmd.id}, ${cmd.user}, ${sideName(cmd.side)}, ${cmd.qty}, ${cmd.budget === NO_BUDGET ? "NO_BUDGET" : cmd.budget}${cmd.flags === undefined && cmd.time === undefined ? "" : `, ${formatFlags(cmd.flags ?? 0)}, ${cmd.time ?? 0}`});`;
    case "cancel":
      return `book.cancel(${cmd.id});`;
    case "reduce":
      return `book.reduce(${cmd.id}, ${cmd.by});`;
    case "move":
      return `book.move(${cmd.id}, ${cmd.price}, ${cmd.delta}, ${formatFlags(cmd.flags)}${cmd.time === undefined ? "" : `, ${cmd.time}`});`;
    case "quote":
      return [
        `book.quoteBegin(${cmd.user}, ${cmd.levels.length}, ${cmd.time});`,
        ...cmd.levels.map(
          ([id, side, price, qty]) => `book.quoteLevel(${id}, ${sideName(side)}, ${price}, ${qty});`,
        ),
      ].join(" ");
    case "mmpSet":
      return `book.mmpSet(${cmd.user}, ${cmd.intervalSeconds}, ${cmd.qtyLimit}, ${cmd.frozenSeconds});`;
    case "mmpReset":
      return `book.mmpReset(${cmd.user});`;
  }
}

// ---------------------------------------------------------------------------------------------
// Small shared rules
// ---------------------------------------------------------------------------------------------

export const opposite = (side: Side): Side => (side === BUY ? SELL : BUY);

/** True when `a` is a better price than `b` on `side` (higher bid, lower ask). */
const better = (side: Side, a: number, b: number): boolean => (side === BUY ? a > b : a < b);

/** True when an incoming order on `takerSide` with limit `limit` may trade at `makerPrice`. */
export const reaches = (takerSide: Side, limit: number, makerPrice: number): boolean =>
  takerSide === BUY ? makerPrice <= limit : makerPrice >= limit;

interface OrderLike {
  readonly id: number;
  readonly user: number;
  readonly side: Side;
  readonly price: number;
  left: number;
  /** Arrival number: lower arrived earlier. */
  readonly seq: number;
  /** KEPT_FLAGS of the order (protected, quote, self-trade mode); absent: none. */
  readonly flags?: number;
}

/** Orders of `side` in priority order: best price first, then earliest arrival. */
function inPriorityOrder<T extends OrderLike>(orders: Iterable<T>, side: Side): T[] {
  const out: T[] = [];
  for (const o of orders) if (o.side === side) out.push(o);
  out.sort((a, b) => (a.price !== b.price ? (better(side, a.price, b.price) ? -1 : 1) : a.seq - b.seq));
  return out;
}

/** The first order of `side` in priority order (a linear scan), or undefined when it is empty. */
function headOf<T extends OrderLike>(orders: Iterable<T>, side: Side): T | undefined {
  let head: T | undefined;
  for (const o of orders) {
    if (o.side !== side) continue;
    if (
      head === undefined ||
      better(side, o.price, head.price) ||
      (o.price === head.price && o.seq < head.seq)
    ) {
      head = o;
    }
  }
  return head;
}

/** Aggregated levels of `side`, best first, as [price, total] pairs. */
function aggregate(orders: Iterable<OrderLike>, side: Side): Array<[number, number]> {
  const totals = new Map<number, number>();
  for (const o of orders) if (o.side === side) totals.set(o.price, (totals.get(o.price) ?? 0) + o.left);
  return [...totals.entries()].sort((a, b) => (better(side, a[0], b[0]) ? -1 : 1));
}

/**
 * Cost in ticks × lots of walking `makers` (already in priority order, other users only) for
 * min(qty, their liquidity) lots.
 */
function walkCost(makers: readonly OrderLike[], qty: number): bigint {
  let left = qty;
  let cost = 0n;
  for (const m of makers) {
    if (left === 0) break;
    const q = Math.min(left, m.left);
    cost += BigInt(m.price) * BigInt(q);
    left -= q;
  }
  return cost;
}

const levelKey = (side: Side, price: number): string => `${side}:${price}`;

/** A set of (side, price) levels, listed in (side, price) ascending order. */
class LevelSet {
  private readonly map = new Map<string, [Side, number]>();
  add(side: Side, price: number): void {
    this.map.set(levelKey(side, price), [side, price]);
  }
  sorted(): Array<[Side, number]> {
    return [...this.map.values()].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  }
}

// ---------------------------------------------------------------------------------------------
// The reference book
// ---------------------------------------------------------------------------------------------

/** A resting order of the reference book. */
export type ReferenceOrder = OrderLike;

/** One user's MMP settings and state, naively: every counted fill kept with its time. */
interface ReferenceMmp {
  intervalMs: number;
  qtyLimit: number;
  frozenMs: number;
  frozen: boolean;
  until: number;
  fills: Array<{ time: number; qty: number }>;
}

export class ReferenceOrderBook implements MatchingBook {
  /** Every resting order, in arrival order. */
  readonly orders: ReferenceOrder[] = [];
  private readonly events: BookEvents;
  private nextSeq = 0;
  private readonly mmp = new Map<number, ReferenceMmp>();
  private now = 0;
  /** Why the current incoming order stopped matching (0: it did not). */
  private stop: 0 | typeof DONE_SELF_TRADE | typeof DONE_MMP = 0;
  private quote: { user: number; want: number; time: number; levels: number[][] } | undefined;

  /** The pair's minimum order value in ticks × lots (docs/API.md 20.5; 0n: none). */
  private readonly minNotional: bigint;

  constructor(events: BookEvents, minNotional = 0n) {
    this.events = events;
    this.minNotional = minNotional;
  }

  limit(
    orderId: number,
    user: number,
    side: Side,
    price: number,
    qty: number,
    flags = 0,
    time = 0,
  ): ResultCode {
    if (this.find(orderId) !== undefined) return ERR_DUPLICATE_ID;
    this.now = time;
    if ((flags & FLAG_MMP) !== 0 && this.frozen(user)) return ERR_MMP_FROZEN;
    if ((flags & FLAG_POST_ONLY) !== 0 && this.reachesAny(side, price)) return ERR_WOULD_TAKE;
    const tif = flags & TIF_MASK;
    if (tif === TIF_FOK) {
      let reachable = inPriorityOrder(this.orders, opposite(side)).filter((m) =>
        reaches(side, price, m.price),
      );
      const own = reachable.findIndex((m) => m.user === user);
      // Under cancelTaker and cancelBoth, the walk ends at the first own order.
      if ((flags & STP_MASK) !== 0 && own >= 0) reachable = reachable.slice(0, own);
      let lots = 0;
      for (const m of reachable) if (m.user !== user) lots += m.left;
      if (lots < qty) {
        this.events.done(orderId, user, side, DONE_REMAINDER, qty);
        return OK;
      }
    }
    this.arrive(
      orderId,
      user,
      side,
      price,
      qty,
      tif === TIF_IOC || tif === TIF_FOK,
      new LevelSet(),
      flags & KEPT_FLAGS,
    );
    return OK;
  }

  reduce(orderId: number, by: number): ResultCode {
    const order = this.find(orderId);
    if (order === undefined) return ERR_ORDER_NOT_FOUND;
    if (!(by >= 1) || order.left - by <= 0) return ERR_AMEND_TOO_SMALL;
    this.events.amended(
      order.id,
      order.user,
      order.side,
      order.price,
      order.price,
      order.left,
      order.left - by,
    );
    order.left -= by;
    const changed = new LevelSet();
    changed.add(order.side, order.price);
    this.reportLevels(changed);
    return OK;
  }

  move(orderId: number, price: number, delta: number, flags: number, time = 0): ResultCode {
    this.now = time;
    const order = this.find(orderId);
    if (order === undefined) return ERR_ORDER_NOT_FOUND;
    const newLeft = order.left + delta;
    if (newLeft <= 0) return ERR_AMEND_TOO_SMALL;
    if ((flags & FLAG_POST_ONLY) !== 0 && this.reachesAny(order.side, price)) return ERR_WOULD_TAKE;
    this.events.amended(order.id, order.user, order.side, order.price, price, order.left, newLeft);
    this.remove(order);
    const changed = new LevelSet();
    changed.add(order.side, order.price);
    this.arrive(order.id, order.user, order.side, price, newLeft, false, changed, order.flags ?? 0);
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
    const makers = inPriorityOrder(this.orders, opposite(side));
    const others = makers.filter((m) => m.user !== user);
    if (others.length === 0) return ERR_NO_LIQUIDITY;
    const budgeted = side === BUY && budget !== NO_BUDGET;
    if (budgeted && walkCost(others, qty) > BigInt(budget)) return ERR_INSUFFICIENT_FUNDS;
    if (walkCost(others, qty) < this.minNotional) return ERR_BELOW_MIN_NOTIONAL;

    const changed = new LevelSet();
    let left = qty;
    // Budget still unspent (only when budgeted); `meet` returns -1 as the signal to stop.
    const budgetLeft = { value: budgeted ? BigInt(budget) : -1n };
    this.stop = 0;
    while (left > 0 && this.stop === 0) {
      const maker = headOf(this.orders, opposite(side));
      if (maker === undefined) break;
      const next = this.meet(orderId, user, side, left, maker, budgetLeft, changed, flags & STP_MASK);
      if (next < 0) break;
      left = next;
    }
    if (left > 0) this.events.done(orderId, user, side, this.stop === 0 ? DONE_REMAINDER : this.stop, left);
    this.reportLevels(changed);
    return OK;
  }

  cancel(orderId: number, reason: DoneReason = DONE_CANCELLED): ResultCode {
    const order = this.find(orderId);
    if (order === undefined) return ERR_ORDER_NOT_FOUND;
    this.remove(order);
    this.events.done(order.id, order.user, order.side, reason, order.left);
    const changed = new LevelSet();
    changed.add(order.side, order.price);
    this.reportLevels(changed);
    return OK;
  }

  bestBid(): number {
    let best = -1;
    for (const o of this.orders) if (o.side === BUY && (best === -1 || o.price > best)) best = o.price;
    return best;
  }

  bestAsk(): number {
    let best = -1;
    for (const o of this.orders) if (o.side === SELL && (best === -1 || o.price < best)) best = o.price;
    return best;
  }

  size(): number {
    return this.orders.length;
  }

  levels(side: Side, depth: number, prices: Float64Array, totals: Float64Array): number {
    const levels = aggregate(this.orders, side);
    const n = Math.min(depth, levels.length);
    for (let i = 0; i < n; i++) {
      prices[i] = levels[i][0];
      totals[i] = levels[i][1];
    }
    return n;
  }

  remaining(orderId: number): number {
    return this.find(orderId)?.left ?? -1;
  }

  /**
   * Cost (ticks × lots) of a market buy of `qty` lots by `user` walking other users' asks, i.e.
   * the smallest budget it is accepted with. Tests use it to build budgets that are just enough
   * or just too small.
   */
  marketBuyCost(user: number, qty: number): bigint {
    const others = inPriorityOrder(this.orders, SELL).filter((m) => m.user !== user);
    return walkCost(others, qty);
  }

  /** Ids of the resting orders, in arrival order. */
  restingIds(): number[] {
    return this.orders.map((o) => o.id);
  }

  // -- internals ------------------------------------------------------------------------------

  /** True when an order on `side` at `price` reaches any resting opposite order. */
  private reachesAny(side: Side, price: number): boolean {
    return this.orders.some((m) => m.side !== side && reaches(side, price, m.price));
  }

  /**
   * An arriving limit order: match up to `price`, then rest the remainder at the back of its
   * level, or end it (`done` DONE_REMAINDER) when `noRest`; then report `changed` levels.
   */
  private arrive(
    orderId: number,
    user: number,
    side: Side,
    price: number,
    qty: number,
    noRest: boolean,
    changed: LevelSet,
    flags: number,
  ): void {
    let left = qty;
    this.stop = 0;
    while (left > 0 && this.stop === 0) {
      const maker = headOf(this.orders, opposite(side));
      if (maker === undefined || !reaches(side, price, maker.price)) break;
      left = this.meet(orderId, user, side, left, maker, { value: -1n }, changed, flags);
    }
    if (left > 0 && this.stop !== 0) this.events.done(orderId, user, side, this.stop, left);
    else if (left > 0 && noRest) this.events.done(orderId, user, side, DONE_REMAINDER, left);
    else if (left > 0) {
      this.orders.push({ id: orderId, user, side, price, left, seq: this.nextSeq++, flags });
      this.events.rested(orderId, user, side, price, left);
      changed.add(side, price);
    }
    this.reportLevels(changed);
  }

  private find(orderId: number): ReferenceOrder | undefined {
    return this.orders.find((o) => o.id === orderId);
  }

  private remove(order: ReferenceOrder): void {
    this.orders.splice(this.orders.indexOf(order), 1);
  }

  /**
   * The incoming order (with `left` lots to fill) meets resting `maker`: cancels it when it is the
   * same user's, else trades min(left, maker.left) at the maker's price. Returns the incoming
   * order's new `left`. `budgetLeft.value` is the unspent budget, or -1n for none: a fill is cut
   * to floor(budgetLeft / price) lots, and when that is 0 nothing happens and -1 is returned
   * (filling stops).
   */
  private meet(
    takerId: number,
    takerUser: number,
    takerSide: Side,
    left: number,
    maker: ReferenceOrder,
    budgetLeft: { value: bigint },
    changed: LevelSet,
    takerFlags: number,
  ): number {
    if (maker.user === takerUser) {
      const stp = takerFlags & STP_MASK;
      if (stp !== STP_CANCEL_TAKER) {
        this.remove(maker);
        this.events.done(maker.id, maker.user, maker.side, DONE_SELF_TRADE, maker.left);
        changed.add(maker.side, maker.price);
      }
      if (stp === STP_CANCEL_TAKER || stp === STP_CANCEL_BOTH) this.stop = DONE_SELF_TRADE;
      return left;
    }
    let q = Math.min(left, maker.left);
    if (budgetLeft.value >= 0n) {
      const affordable = budgetLeft.value / BigInt(maker.price);
      if (affordable < BigInt(q)) q = Number(affordable);
      if (q === 0) return -1;
      budgetLeft.value -= BigInt(maker.price) * BigInt(q);
    }
    left -= q;
    maker.left -= q;
    if (maker.left === 0) this.remove(maker);
    this.events.trade(takerId, takerUser, takerSide, maker.id, maker.user, maker.price, q, left, maker.left);
    changed.add(maker.side, maker.price);
    if (((maker.flags ?? 0) & FLAG_MMP) !== 0) this.countFill(maker.user, q, changed);
    if ((takerFlags & FLAG_MMP) !== 0 && this.countFill(takerUser, q, changed)) this.stop = DONE_MMP;
    return left;
  }

  /**
   * A protected fill of `user`: when the fills of the last interval reach the limit, the user's
   * protected orders are cancelled (ids ascending), the window empties and the user is frozen.
   */
  private countFill(user: number, qty: number, changed: LevelSet): boolean {
    const st = this.mmp.get(user);
    if (st === undefined || st.intervalMs === 0) return false;
    st.fills = st.fills.filter((f) => f.time > this.now - st.intervalMs);
    st.fills.push({ time: this.now, qty });
    let sum = 0;
    for (const f of st.fills) sum += f.qty;
    if (sum < st.qtyLimit) return false;
    st.fills = [];
    st.frozen = true;
    st.until = st.frozenMs > 0 ? this.now + st.frozenMs : 0;
    const victims = this.orders
      .filter((o) => o.user === user && ((o.flags ?? 0) & FLAG_MMP) !== 0)
      .sort((a, b) => a.id - b.id);
    for (const o of victims) {
      this.remove(o);
      this.events.done(o.id, o.user, o.side, DONE_MMP, o.left);
      changed.add(o.side, o.price);
    }
    this.events.mmp(user, 1, st.until);
    return true;
  }

  private frozen(user: number): boolean {
    const st = this.mmp.get(user);
    if (st === undefined) return false;
    return st.frozen && (st.until === 0 || this.now < st.until);
  }

  quoteBegin(user: number, levels: number, time: number): ResultCode | typeof PENDING {
    this.quote = { user, want: levels, time, levels: [] };
    return levels > 0 ? PENDING : this.runQuote();
  }

  quoteLevel(orderId: number, side: Side, price: number, qty: number): ResultCode | typeof PENDING {
    const q = this.quote;
    if (q === undefined) return ERR_QUOTE_LEVELS;
    q.levels.push([orderId, side, price, qty]);
    return q.levels.length < q.want ? PENDING : this.runQuote();
  }

  private runQuote(): ResultCode {
    const q = this.quote;
    if (q === undefined) return ERR_QUOTE_LEVELS;
    this.quote = undefined;
    const { user, levels } = q;
    this.now = q.time;
    if (levels.length > 2 * MAX_QUOTE_LEVELS) return ERR_QUOTE_LEVELS;
    if (levels.some(([, side, , qty]) => (side !== BUY && side !== SELL) || !(qty >= 1)))
      return ERR_QUOTE_LEVELS;
    if (levels.length > 0 && this.frozen(user)) return ERR_MMP_FROZEN;
    const ids = levels.map((l) => l[0]);
    if (ids.some((id, i) => this.find(id) !== undefined || ids.indexOf(id) !== i)) return ERR_DUPLICATE_ID;
    const old = this.orders
      .filter((o) => o.user === user && ((o.flags ?? 0) & FLAG_QUOTE) !== 0)
      .sort((a, b) => a.id - b.id);
    const kept = new Set<ReferenceOrder>();
    const keptBy = levels.map(([, side, price, qty]) => {
      const o = old.find((x) => !kept.has(x) && x.side === side && x.price === price && x.left === qty);
      if (o !== undefined) kept.add(o);
      return o;
    });
    const changed = new LevelSet();
    for (const o of old) {
      if (kept.has(o)) continue;
      this.remove(o);
      this.events.done(o.id, o.user, o.side, DONE_CANCELLED, o.left);
      changed.add(o.side, o.price);
    }
    levels.forEach(([id, sideNum, price, qty], i) => {
      const side = sideNum as Side;
      const k = keptBy[i];
      if (k !== undefined) this.events.quoted(user, i, k.id, QUOTE_KEPT);
      else if (this.reachesAny(side, price)) this.events.quoted(user, i, id, ERR_WOULD_TAKE);
      else {
        this.orders.push({
          id,
          user,
          side,
          price,
          left: qty,
          seq: this.nextSeq++,
          flags: FLAG_QUOTE | FLAG_MMP,
        });
        this.events.rested(id, user, side, price, qty);
        this.events.quoted(user, i, id, OK);
        changed.add(side, price);
      }
    });
    this.reportLevels(changed);
    return OK;
  }

  mmpSet(user: number, intervalSeconds: number, qtyLimit: number, frozenSeconds: number): ResultCode {
    const st = this.mmp.get(user);
    const next: ReferenceMmp = {
      intervalMs: intervalSeconds * 1000,
      qtyLimit,
      frozenMs: frozenSeconds * 1000,
      frozen: st?.frozen ?? false,
      until: st?.until ?? 0,
      fills: [],
    };
    this.mmp.set(user, next);
    return OK;
  }

  mmpReset(user: number): ResultCode {
    const st = this.mmp.get(user);
    if (st !== undefined) {
      st.frozen = false;
      st.until = 0;
      st.fills = [];
    }
    this.events.mmp(user, 0, 0);
    return OK;
  }

  private reportLevels(changed: LevelSet): void {
    for (const [side, price] of changed.sorted()) {
      let total = 0;
      for (const o of this.orders) if (o.side === side && o.price === price) total += o.left;
      this.events.level(side, price, total);
    }
  }
}

/** Structural invariants of the reference book's internal state. */
export function checkBookInvariants(book: ReferenceOrderBook): void {
  const ids = new Set<number>();
  let lastSeq = -1;
  for (const o of book.orders) {
    assert.ok(!ids.has(o.id), `order id ${o.id} rests twice`);
    ids.add(o.id);
    assert.ok(o.side === BUY || o.side === SELL, `order ${o.id} has side ${o.side}`);
    assert.ok(Number.isSafeInteger(o.price) && o.price > 0, `order ${o.id} has price ${o.price}`);
    assert.ok(Number.isSafeInteger(o.left) && o.left > 0, `order ${o.id} rests with ${o.left} lots`);
    assert.ok(o.seq > lastSeq, `orders are not kept in arrival order at ${o.id}`);
    lastSeq = o.seq;
  }
  const bid = book.bestBid();
  const ask = book.bestAsk();
  if (bid !== -1 && ask !== -1) assert.ok(bid < ask, `book is crossed: bid ${bid} >= ask ${ask}`);
  assert.equal(book.size(), book.orders.length);
}

// ---------------------------------------------------------------------------------------------
// The event-stream mirror: an independent check usable on any book
// ---------------------------------------------------------------------------------------------

/** A resting order as the events described it. */
type MirrorOrder = OrderLike;

/** The incoming order a command matches with: a limit order, a market order, or a moved order. */
interface Taker {
  readonly id: number;
  readonly user: number;
  readonly side: Side;
  /** Limit price, undefined for a market order. */
  readonly price: number | undefined;
  readonly qty: number;
  /** TIF_* of a limit order (a moved order is GTC; a market order is treated as IOC). */
  readonly tif: number;
}

/** Deepest snapshot `snapshotLevels` takes (the buffers are shared, so this stays allocation-free). */
export const SNAPSHOT_DEPTH = 4096;
const snapshotPrices = new Float64Array(SNAPSHOT_DEPTH);
const snapshotTotals = new Float64Array(SNAPSHOT_DEPTH);

/** [price, total] pairs of one side, best first, read through `levels()`. */
export function snapshotLevels(
  book: MatchingBook,
  side: Side,
  depth = SNAPSHOT_DEPTH,
): Array<[number, number]> {
  assert.ok(depth <= SNAPSHOT_DEPTH);
  const prices = snapshotPrices;
  const totals = snapshotTotals;
  if (depth < SNAPSHOT_DEPTH) prices[depth] = -1;
  const n = book.levels(side, depth, prices, totals);
  assert.ok(Number.isInteger(n) && n >= 0 && n <= depth, `levels() returned ${n} for depth ${depth}`);
  if (depth < SNAPSHOT_DEPTH) assert.equal(prices[depth], -1, `levels() wrote past depth ${depth}`);
  const out: Array<[number, number]> = [];
  for (let i = 0; i < n; i++) out.push([prices[i], totals[i]]);
  return out;
}

/**
 * Rebuilds the set of resting orders from events alone. `record` checks one command's result and
 * events against the rules, using only what earlier events said; `checkBook` then checks that a
 * book's public interface agrees with the mirror and is not crossed.
 */
export class BookMirror {
  readonly orders = new Map<number, MirrorOrder>();
  private nextSeq = 0;

  /** Checks `code` and `events` of `cmd` against the rules, then applies the events. */
  record(cmd: Command, code: ResultCode, events: readonly BookEvent[]): void {
    const where = formatCommand(cmd);
    const ctx = `${where} -> ${code} ${JSON.stringify(events)}`;
    if (code !== OK) {
      assert.deepEqual(events, [], `${ctx}: a refused command must emit nothing`);
      this.checkRefusal(cmd, code, ctx);
      return;
    }
    if (cmd.op === "cancel") {
      this.recordCancel(cmd, events, ctx);
      return;
    }
    if (cmd.op === "reduce") {
      this.recordReduce(cmd, events, ctx);
      return;
    }
    const touched = new LevelSet();
    let i = 0;
    let taker: Taker;
    if (cmd.op === "move") {
      // amended first; then the order is out of its level and arrives again as a GTC limit order.
      const o = this.orders.get(cmd.id);
      assert.ok(o !== undefined, `${ctx}: moved an order that is not resting`);
      const newLeft = o.left + cmd.delta;
      assert.ok(newLeft > 0, `${ctx}: moved to no open quantity`);
      if ((cmd.flags & FLAG_POST_ONLY) !== 0) {
        assert.ok(
          !this.reachesAny(o.side, cmd.price),
          `${ctx}: a post-only move that reaches the book was accepted`,
        );
      }
      assert.deepEqual(
        events[0],
        ["amended", o.id, o.user, o.side, o.price, cmd.price, o.left, newLeft],
        `${ctx}: amended first`,
      );
      i = 1;
      this.orders.delete(o.id);
      touched.add(o.side, o.price);
      taker = { id: o.id, user: o.user, side: o.side, price: cmd.price, qty: newLeft, tif: TIF_GTC };
    } else if (cmd.op === "limit") {
      assert.ok(!this.orders.has(cmd.id), `${ctx}: accepted a duplicate id`);
      const flags = cmd.flags ?? 0;
      const tif = flags & TIF_MASK;
      taker = { id: cmd.id, user: cmd.user, side: cmd.side, price: cmd.price, qty: cmd.qty, tif };
      if ((flags & FLAG_POST_ONLY) !== 0) {
        assert.ok(
          !this.reachesAny(cmd.side, cmd.price),
          `${ctx}: a post-only order that reaches the book was accepted`,
        );
        assert.ok(
          events.every((e) => e[0] !== "trade" && !(e[0] === "done" && e[4] === DONE_SELF_TRADE)),
          `${ctx}: a post-only order traded`,
        );
      }
      if (tif === TIF_FOK) {
        let lots = 0;
        for (const m of this.otherMakers(cmd.user, cmd.side))
          if (reaches(cmd.side, cmd.price, m.price)) lots += m.left;
        if (lots < cmd.qty) {
          // Killed: all or nothing against other users' liquidity, so nothing at all happens.
          assert.deepEqual(
            events,
            [["done", cmd.id, cmd.user, cmd.side, DONE_REMAINDER, cmd.qty]],
            `${ctx}: a FOK order without enough liquidity of other users must only be killed`,
          );
          return;
        }
      }
    } else {
      taker = { id: cmd.id, user: cmd.user, side: cmd.side, price: undefined, qty: cmd.qty, tif: TIF_IOC };
    }
    // Unspent budget of an accepted market buy (the full walk must fit it), or -1n for none.
    let budgetLeft = -1n;
    if (cmd.op === "market") {
      const makers = this.otherMakers(cmd.user, cmd.side);
      assert.ok(makers.length > 0, `${ctx}: accepted without liquidity from other users`);
      if (cmd.side === BUY && cmd.budget !== NO_BUDGET) {
        budgetLeft = BigInt(cmd.budget);
        assert.ok(
          walkCost(makers, cmd.qty) <= budgetLeft,
          `${ctx}: accepted although the walk exceeds the budget`,
        );
      }
    }
    let takerLeft = taker.qty;
    // Matching phase: trades and self-trade cancels, each against the head of the opposite side.
    for (; i < events.length; i++) {
      const e = events[i];
      if (e[0] === "trade") {
        const [, takerId, takerUser, takerSide, makerId, makerUser, price, qty, tLeft, mLeft] = e;
        assert.deepEqual(
          [takerId, takerUser, takerSide],
          [taker.id, taker.user, taker.side],
          `${ctx}: trade taker`,
        );
        const maker = this.headCheck(taker, makerId, takerLeft, ctx);
        assert.notEqual(makerUser, taker.user, `${ctx}: self-trade executed`);
        assert.equal(makerUser, maker.user, `${ctx}: maker user`);
        assert.equal(price, maker.price, `${ctx}: trade not at the maker's price`);
        assert.ok(
          Number.isSafeInteger(qty) && qty > 0 && qty <= maker.left && qty <= takerLeft,
          `${ctx}: qty`,
        );
        if (budgetLeft >= 0n) {
          budgetLeft -= BigInt(price) * BigInt(qty);
          assert.ok(budgetLeft >= 0n, `${ctx}: spent more than the budget`);
        }
        takerLeft -= qty;
        maker.left -= qty;
        assert.equal(tLeft, takerLeft, `${ctx}: takerLeft`);
        assert.equal(mLeft, maker.left, `${ctx}: makerLeft`);
        if (maker.left === 0) this.orders.delete(maker.id);
        touched.add(maker.side, maker.price);
      } else if (e[0] === "done" && e[4] === DONE_SELF_TRADE) {
        const [, id, user, side, , left] = e;
        const maker = this.headCheck(taker, id, takerLeft, ctx);
        assert.equal(maker.user, taker.user, `${ctx}: self-trade cancel of another user's order`);
        assert.deepEqual([user, side, left], [maker.user, maker.side, maker.left], `${ctx}: self-trade done`);
        this.orders.delete(id);
        touched.add(maker.side, maker.price);
      } else {
        break;
      }
    }
    // The taker's outcome.
    const outcome = i < events.length && events[i][0] !== "level" ? events[i++] : undefined;
    if (taker.price !== undefined && taker.tif !== TIF_IOC && taker.tif !== TIF_FOK) {
      if (takerLeft === 0) {
        assert.equal(outcome, undefined, `${ctx}: a filled limit order has no outcome event`);
      } else {
        assert.deepEqual(
          outcome,
          ["rested", taker.id, taker.user, taker.side, taker.price, takerLeft],
          `${ctx}: rested`,
        );
        this.assertNothingReachable(taker.side, taker.price, `${ctx}: rested`);
        this.orders.set(taker.id, {
          id: taker.id,
          user: taker.user,
          side: taker.side,
          price: taker.price,
          left: takerLeft,
          seq: this.nextSeq++,
        });
        touched.add(taker.side, taker.price);
      }
    } else if (taker.price !== undefined) {
      // IOC, or FOK with enough liquidity: never rests; a FOK order that got here fills completely.
      if (taker.tif === TIF_FOK)
        assert.equal(takerLeft, 0, `${ctx}: a FOK order that was not killed must fill`);
      if (takerLeft === 0) {
        assert.equal(outcome, undefined, `${ctx}: a filled IOC order has no outcome event`);
      } else {
        assert.deepEqual(
          outcome,
          ["done", taker.id, taker.user, taker.side, DONE_REMAINDER, takerLeft],
          `${ctx}: IOC remainder`,
        );
        this.assertNothingReachable(taker.side, taker.price, `${ctx}: IOC remainder`);
      }
    } else if (cmd.op === "market") {
      if (takerLeft === 0) {
        assert.equal(outcome, undefined, `${ctx}: a filled market order has no outcome event`);
      } else {
        const expected = ["done", cmd.id, cmd.user, cmd.side, DONE_REMAINDER, takerLeft];
        assert.deepEqual(outcome, expected, `${ctx}: market remainder`);
        if (cmd.side === SELL || cmd.budget === NO_BUDGET) {
          const rest = [...this.orders.values()].filter((m) => m.side !== cmd.side);
          assert.equal(rest.length, 0, `${ctx}: market remainder cancelled while opposite orders remain`);
        }
      }
    }
    // Levels: every touched level once, (side, price) ascending, with the mirror's total.
    const levels = events.slice(i);
    const expectedLevels = touched
      .sorted()
      .map(([side, price]) => ["level", side, price, this.total(side, price)]);
    assert.deepEqual(levels, expectedLevels, `${ctx}: level events`);
  }

  /** Checks a book's public interface against the mirror and the not-crossed invariant. */
  checkBook(book: MatchingBook): void {
    assert.equal(book.size(), this.orders.size, "size() differs from the orders rested per the events");
    for (const o of this.orders.values()) {
      assert.equal(book.remaining(o.id), o.left, `remaining(${o.id})`);
    }
    for (const side of [BUY, SELL] as const) {
      const expected = aggregate(this.orders.values(), side);
      assert.deepEqual(snapshotLevels(book, side), expected, `levels(${sideName(side)})`);
      const best = expected.length === 0 ? -1 : expected[0][0];
      assert.equal(side === BUY ? book.bestBid() : book.bestAsk(), best, `best ${sideName(side)}`);
      const depth = 2;
      assert.deepEqual(snapshotLevels(book, side, depth), expected.slice(0, depth), `levels(depth ${depth})`);
    }
    const bid = book.bestBid();
    const ask = book.bestAsk();
    if (bid !== -1 && ask !== -1) assert.ok(bid < ask, `book is crossed: bid ${bid} >= ask ${ask}`);
  }

  // -- internals ------------------------------------------------------------------------------

  private total(side: Side, price: number): number {
    let total = 0;
    for (const o of this.orders.values()) if (o.side === side && o.price === price) total += o.left;
    return total;
  }

  private otherMakers(user: number, takerSide: Side): MirrorOrder[] {
    return inPriorityOrder(this.orders.values(), opposite(takerSide)).filter((m) => m.user !== user);
  }

  /**
   * The order the incoming command meets next must be resting, on the opposite side, at the head
   * of that side (best price, earliest arrival), reachable by the limit, and met only while the
   * incoming order still has lots to fill.
   */
  private headCheck(taker: Taker, makerId: number, takerLeft: number, ctx: string): MirrorOrder {
    assert.ok(takerLeft > 0, `${ctx}: met order ${makerId} after the incoming order was filled`);
    const head = headOf(this.orders.values(), opposite(taker.side));
    assert.ok(head !== undefined, `${ctx}: met order ${makerId} on an empty side`);
    assert.equal(makerId, head.id, `${ctx}: met order ${makerId} before ${head.id} (price-time priority)`);
    if (taker.price !== undefined) {
      assert.ok(reaches(taker.side, taker.price, head.price), `${ctx}: beyond the limit`);
    }
    return head;
  }

  /** True when an order on `side` at `price` reaches any resting opposite order (any user's). */
  private reachesAny(side: Side, price: number): boolean {
    for (const m of this.orders.values()) if (m.side !== side && reaches(side, price, m.price)) return true;
    return false;
  }

  private assertNothingReachable(side: Side, price: number, ctx: string): void {
    for (const m of this.orders.values()) {
      if (m.side !== side && reaches(side, price, m.price)) {
        assert.fail(`${ctx} while order ${m.id} at ${m.price} was still reachable`);
      }
    }
  }

  /** A reduce: amended at the same price, the level, and the order keeps its arrival number. */
  private recordReduce(
    cmd: Extract<Command, { op: "reduce" }>,
    events: readonly BookEvent[],
    ctx: string,
  ): void {
    const o = this.orders.get(cmd.id);
    assert.ok(o !== undefined, `${ctx}: reduced an order that is not resting`);
    assert.ok(cmd.by >= 1 && o.left - cmd.by > 0, `${ctx}: reduced to no open quantity`);
    const oldLeft = o.left;
    o.left -= cmd.by;
    assert.deepEqual(
      events,
      [
        ["amended", o.id, o.user, o.side, o.price, o.price, oldLeft, o.left],
        ["level", o.side, o.price, this.total(o.side, o.price)],
      ],
      `${ctx}: reduce events`,
    );
  }

  private recordCancel(cmd: Command, events: readonly BookEvent[], ctx: string): void {
    const o = this.orders.get(cmd.id);
    assert.ok(o !== undefined, `${ctx}: cancelled an order that is not resting`);
    this.orders.delete(cmd.id);
    assert.deepEqual(
      events,
      [
        ["done", o.id, o.user, o.side, DONE_CANCELLED, o.left],
        ["level", o.side, o.price, this.total(o.side, o.price)],
      ],
      `${ctx}: cancel events`,
    );
  }

  private checkRefusal(cmd: Command, code: ResultCode, ctx: string): void {
    switch (code) {
      case ERR_ORDER_NOT_FOUND:
        assert.ok(
          (cmd.op === "cancel" || cmd.op === "reduce" || cmd.op === "move") && !this.orders.has(cmd.id),
          `${ctx}: wrong ERR_ORDER_NOT_FOUND`,
        );
        return;
      case ERR_AMEND_TOO_SMALL: {
        const o = this.orders.get(cmd.id);
        assert.ok(o !== undefined, `${ctx}: ERR_AMEND_TOO_SMALL for an order that is not resting`);
        if (cmd.op === "reduce") assert.ok(!(cmd.by >= 1) || o.left - cmd.by <= 0, `${ctx}: the reduce fits`);
        else assert.ok(cmd.op === "move" && o.left + cmd.delta <= 0, `${ctx}: wrong ERR_AMEND_TOO_SMALL`);
        return;
      }
      case ERR_WOULD_TAKE:
        if (cmd.op === "limit") {
          assert.ok(
            !this.orders.has(cmd.id) &&
              ((cmd.flags ?? 0) & FLAG_POST_ONLY) !== 0 &&
              this.reachesAny(cmd.side, cmd.price),
            `${ctx}: wrong ERR_WOULD_TAKE`,
          );
        } else {
          assert.ok(cmd.op === "move", `${ctx}: ERR_WOULD_TAKE for ${cmd.op}`);
          const o = this.orders.get(cmd.id);
          assert.ok(
            o !== undefined &&
              o.left + cmd.delta > 0 &&
              (cmd.flags & FLAG_POST_ONLY) !== 0 &&
              this.reachesAny(o.side, cmd.price),
            `${ctx}: wrong ERR_WOULD_TAKE`,
          );
        }
        return;
      case ERR_DUPLICATE_ID:
        assert.ok(cmd.op === "limit" && this.orders.has(cmd.id), `${ctx}: wrong ERR_DUPLICATE_ID`);
        return;
      case ERR_NO_LIQUIDITY:
        assert.ok(
          cmd.op === "market" && this.otherMakers(cmd.user, cmd.side).length === 0,
          `${ctx}: liquidity`,
        );
        return;
      case ERR_INSUFFICIENT_FUNDS: {
        assert.ok(cmd.op === "market" && cmd.side === BUY && cmd.budget !== NO_BUDGET, `${ctx}: funds`);
        const makers = this.otherMakers(cmd.user, cmd.side);
        assert.ok(makers.length > 0, `${ctx}: ERR_INSUFFICIENT_FUNDS without liquidity`);
        assert.ok(walkCost(makers, cmd.qty) > BigInt(cmd.budget), `${ctx}: the walk fits the budget`);
        return;
      }
      case ERR_BELOW_MIN_NOTIONAL: {
        // docs/API.md 20.5: judged after liquidity and funds; the book's minimum is the test's to check.
        assert.ok(cmd.op === "market", `${ctx}: ERR_BELOW_MIN_NOTIONAL for ${cmd.op}`);
        const makers = this.otherMakers(cmd.user, cmd.side);
        assert.ok(makers.length > 0, `${ctx}: ERR_BELOW_MIN_NOTIONAL without liquidity`);
        if (cmd.side === BUY && cmd.budget !== NO_BUDGET)
          assert.ok(walkCost(makers, cmd.qty) <= BigInt(cmd.budget), `${ctx}: the walk exceeds the budget`);
        return;
      }
      default:
        assert.fail(`${ctx}: unknown result code`);
    }
  }
}
