/**
 * Stop orders of one pair (docs/API.md 18), around its book: the waiting orders, and the trigger
 * after each command.
 *
 * A waiting stop is in no book level: the book never sees it until it triggers. The book's event
 * sink notes every trade's price (EventRecordWriter: the lowest and highest since the stops last
 * reset them, with two compares and no call per event), which is all the stops read. When a
 * command's matching has ended, every waiting stop whose condition one of its trades met (an `up`
 * stop: a trade at a price >= its stop price, so the highest trade price; `down`: <=, the lowest)
 * is taken out, in order of id, and each runs in turn as an arriving order of its type; the stops
 * their trades trigger join the end of that queue, until none is met. All of it belongs to the
 * command that started it: the same `seq`, before its END, so it commits as one step.
 *
 * A triggered market buy needs a budget, which only the ledger on the main thread can give (the
 * same budget as a market buy's, DECISIONS.md "Market buy funds"): the cascade stops at it with a
 * `fundsAsked` event and resumes with `funds(budget)`; the worker runs no other command meanwhile.
 *
 * OCO (docs/API.md 18): `addOco` rests the limit leg and adds the stop leg in one command, and
 * links them (`legs`, which the event sink shares: it notes each leg that trades as a maker or
 * ends, `ocoHits`). After every run, before the trigger, the sibling of each leg noted is
 * cancelled (`done` DONE_OCO) wherever it is: waiting, triggered and queued, or resting; a stop
 * leg that triggers cancels its resting sibling right after its `triggered` event, before it runs.
 *
 * Waiting stops are kept in two arrays sorted by stop price, the next to trigger last (`up`:
 * descending, `down`: ascending), so a trigger is a pop; an arrival or a cancel is a binary search
 * and a splice. Trailing stops, whose stop price follows the trades, are a third array that walks
 * each run's trade prices in order (`follow`, DECISIONS.md "Trailing stops"). Prices and
 * quantities are integer ticks and lots, as in the book.
 */
import {
  BUY,
  DONE_BELOW_MIN_NOTIONAL,
  DONE_CANCELLED,
  DONE_INSUFFICIENT_FUNDS,
  DONE_NO_LIQUIDITY,
  DONE_OCO,
  type DoneReason,
  ERR_AMEND_TOO_SMALL,
  ERR_BELOW_MIN_NOTIONAL,
  ERR_DUPLICATE_ID,
  ERR_INSUFFICIENT_FUNDS,
  ERR_OCO_PRICE,
  ERR_ORDER_NOT_FOUND,
  ERR_STOP_WOULD_TRIGGER,
  FLAG_POST_ONLY,
  type MatchingBook,
  NO_BUDGET,
  OK,
  PENDING,
  type ResultCode,
  SELL,
  type Side,
  STOP_MARKET,
  STOP_OCO,
  STOP_RESTORE,
  STOP_SELL,
  STOP_UP,
  type StopEvents,
} from "../../src/protocol/pair/engine.ts";
import {
  CANCEL_CMD,
  CMD_KIND,
  LIMIT_CMD,
  MARKET_CMD,
  MOVE_CMD,
  OCO_CMD,
  OP_CANCEL,
  OP_LIMIT,
  OP_MARKET,
  OP_MOVE,
  OP_OCO,
  OP_QUOTE,
  OP_STOP,
  QUOTE_CMD,
  runCommand,
  STOP_CMD,
} from "../../src/protocol/pair/records.ts";

/** A waiting stop order. */
interface Stop {
  id: number;
  user: number;
  mode: number;
  /** Limit price once triggered (ticks); 0 for a stop-market. */
  price: number;
  qty: number;
  /** Limit/market flags it arrives with (time in force, self-trade mode). */
  flags: number;
  stopPrice: number;
  /** A trailing stop's delta in ticks (docs/API.md 18); 0 for a stop at a fixed price. */
  trail: number;
  /**
   * A trailing stop's highest trade price since it arrived (`down`) or lowest (`up`), its stop
   * price that ± `trail`; -1 while the pair never traded (its stop price is then 0).
   */
  extreme: number;
}

/** `up` stops trigger at the highest trade price (ascending stop prices at the end: descending). */
function upBefore(a: Stop, b: Stop): boolean {
  return a.stopPrice > b.stopPrice;
}
/** `down` stops trigger at the lowest trade price: ascending. */
function downBefore(a: Stop, b: Stop): boolean {
  return a.stopPrice < b.stopPrice;
}

function doneReasonOf(result: ResultCode): DoneReason {
  if (result === ERR_INSUFFICIENT_FUNDS) return DONE_INSUFFICIENT_FUNDS;
  if (result === ERR_BELOW_MIN_NOTIONAL) return DONE_BELOW_MIN_NOTIONAL;
  return DONE_NO_LIQUIDITY;
}

export class StopBook {
  private readonly up: Stop[] = [];
  private readonly down: Stop[] = [];
  private readonly byId = new Map<number, Stop>();
  /** OCO legs, each id to its sibling's (the event sink's `ocoLegs` while there are any). */
  private readonly legs = new Map<number, number>();
  /**
   * Waiting trailing stops, in no order: after each step with trades every one follows the step's
   * trade prices in their order (`follow`). Empty, the trade prices are not even noted.
   */
  private readonly trails: Stop[] = [];
  /** The trade prices of the running command or triggered order, while trailing stops wait. */
  private readonly prices: number[] = [];
  /** Triggered stops of the running step, in the order they run. */
  private readonly queue: Stop[] = [];
  private next = 0;
  /** The triggered market buy waiting for its budget, or null. */
  private waiting: Stop | null = null;
  /** Time (ms) of the command that started the step: the triggered orders run at it. */
  private time = 0;
  /** The result of the command whose step runs (its END once the step is complete). */
  result: ResultCode = OK;

  constructor(
    /** The book the triggered orders enter, built with `out` as its events. */
    private readonly book: MatchingBook,
    /** The book's events: the stops add theirs and read the trade prices it noted. */
    private readonly out: StopEvents & TradePrices,
    /** Price of the pair's last trade in ticks; -1: it never traded. */
    lastPrice = -1,
  ) {
    if (lastPrice >= 0) out.lastTradePrice = lastPrice;
  }

  /** Price of the pair's last trade in ticks; -1 while it never traded. */
  get lastPrice(): number {
    return this.out.lastTradePrice;
  }

  /** Waiting stop orders. */
  get size(): number {
    return this.byId.size;
  }

  /** Whether `orderId` is a waiting stop. */
  has(orderId: number): boolean {
    return this.byId.has(orderId);
  }

  /** Whether a triggered market buy waits for its budget. */
  get suspended(): boolean {
    return this.waiting !== null;
  }

  /**
   * A stop order arrives (`mode`: STOP_* bits): it waits. ERR_STOP_WOULD_TRIGGER when the last
   * trade price already meets its condition (unless STOP_RESTORE), ERR_DUPLICATE_ID for an id that
   * waits or rests already; nothing happened then.
   */
  add(
    orderId: number,
    user: number,
    mode: number,
    price: number,
    qty: number,
    flags: number,
    stopPrice: number,
    trail = 0,
  ): ResultCode {
    const last = this.out.lastTradePrice;
    if (trail > 0) return this.addTrailing(orderId, user, mode, price, qty, flags, stopPrice, trail);
    if (
      (mode & STOP_RESTORE) === 0 &&
      last >= 0 &&
      ((mode & STOP_UP) !== 0 ? last >= stopPrice : last <= stopPrice)
    )
      return ERR_STOP_WOULD_TRIGGER;
    if (this.byId.has(orderId) || this.book.remaining(orderId) >= 0) return ERR_DUPLICATE_ID;
    const s: Stop = {
      id: orderId,
      user,
      mode: mode & ~(STOP_RESTORE | STOP_OCO),
      price,
      qty,
      flags,
      stopPrice,
      trail: 0,
      extreme: -1,
    };
    this.byId.set(orderId, s);
    const up = (mode & STOP_UP) !== 0;
    insert(up ? this.up : this.down, s, up ? upBefore : downBefore);
    // An OCO's stop leg put back by recovery: its limit leg is the order before it.
    if ((mode & STOP_OCO) !== 0) this.link(orderId - 1, orderId);
    return OK;
  }

  /**
   * An OCO arrives (docs/API.md 18): limit leg `orderId` at `price` and stop leg `orderId + 1`
   * (`mode`: STOP_* bits, `stopLimitPrice` its limit price, 0 for a stop-market) at `stopPrice`.
   * Against the last trade price, a sell's `price` must be above it and its `stopPrice` below it
   * (a buy: the reverse): ERR_OCO_PRICE, ERR_STOP_WOULD_TRIGGER. The limit leg rests post-only
   * (ERR_WOULD_TAKE); then the stop leg waits. Refused, nothing happened.
   */
  addOco(
    orderId: number,
    user: number,
    mode: number,
    price: number,
    qty: number,
    stopPrice: number,
    stopLimitPrice: number,
    time: number,
  ): ResultCode {
    const last = this.out.lastTradePrice;
    const sell = (mode & STOP_SELL) !== 0;
    if (last >= 0) {
      if (sell ? price <= last : price >= last) return ERR_OCO_PRICE;
      if (sell ? stopPrice >= last : stopPrice <= last) return ERR_STOP_WOULD_TRIGGER;
    }
    const stopId = orderId + 1;
    if (this.byId.has(orderId) || this.byId.has(stopId) || this.book.remaining(stopId) >= 0)
      return ERR_DUPLICATE_ID;
    const result = this.book.limit(orderId, user, sell ? SELL : BUY, price, qty, FLAG_POST_ONLY, time);
    if (result !== OK) return result;
    const s: Stop = {
      id: stopId,
      user,
      mode: mode & ~(STOP_RESTORE | STOP_OCO),
      price: stopLimitPrice,
      qty,
      flags: 0,
      stopPrice,
      trail: 0,
      extreme: -1,
    };
    this.byId.set(stopId, s);
    const up = (mode & STOP_UP) !== 0;
    insert(up ? this.up : this.down, s, up ? upBefore : downBefore);
    this.link(orderId, stopId);
    return OK;
  }

  private link(a: number, b: number): void {
    this.legs.set(a, b);
    this.legs.set(b, a);
    this.out.ocoLegs = this.legs;
  }

  private unlink(a: number, b: number): void {
    this.legs.delete(a);
    this.legs.delete(b);
    if (this.legs.size === 0) this.out.ocoLegs = null;
  }

  /** The siblings of the OCO legs the run traded or ended are cancelled (DONE_OCO). */
  private settleOco(): void {
    const hits = this.out.ocoHits;
    for (let i = 0; i < hits.length; i++) {
      const sibling = this.legs.get(hits[i]);
      if (sibling === undefined) continue;
      this.unlink(hits[i], sibling);
      this.cancelSibling(sibling);
    }
    hits.length = 0;
  }

  /** Cancels OCO leg `id` (DONE_OCO): waiting, triggered and not run yet, or resting. */
  private cancelSibling(id: number): void {
    if (this.byId.has(id)) {
      this.cancel(id, DONE_OCO);
      return;
    }
    const queue = this.queue;
    for (let i = this.next; i < queue.length; i++) {
      if (queue[i].id !== id) continue;
      const [s] = queue.splice(i, 1);
      this.out.done(s.id, s.user, sideOf(s), DONE_OCO, s.qty);
      return;
    }
    this.book.cancel(id, DONE_OCO);
  }

  /**
   * A trailing stop arrives (docs/API.md 18): its stop price is the last trade price ∓ `trail`
   * (the `trailed` event says it), or 0 until the first trade on a pair that never traded. Put
   * back by recovery (STOP_RESTORE), it goes on from the `stopPrice` it had.
   */
  private addTrailing(
    orderId: number,
    user: number,
    mode: number,
    price: number,
    qty: number,
    flags: number,
    stopPrice: number,
    trail: number,
  ): ResultCode {
    if (this.byId.has(orderId) || this.book.remaining(orderId) >= 0) return ERR_DUPLICATE_ID;
    const up = (mode & STOP_UP) !== 0;
    let extreme = -1;
    let stop = 0;
    if ((mode & STOP_RESTORE) !== 0) {
      if (stopPrice !== 0) {
        extreme = up ? stopPrice - trail : stopPrice + trail;
        stop = stopPrice;
      }
    } else if (this.out.lastTradePrice >= 0) {
      extreme = this.out.lastTradePrice;
      stop = up ? extreme + trail : extreme - trail;
    }
    const s: Stop = {
      id: orderId,
      user,
      mode: mode & ~STOP_RESTORE,
      price,
      qty,
      flags,
      stopPrice: stop,
      trail,
      extreme,
    };
    this.byId.set(orderId, s);
    this.trails.push(s);
    if (this.out.tradePrices === null) {
      this.prices.length = 0;
      this.out.tradePrices = this.prices;
    }
    if ((mode & STOP_RESTORE) === 0 && extreme >= 0) this.out.trailed(orderId, user, stop);
    return OK;
  }

  /**
   * docs/API.md 18: the waiting stop `orderId` is amended to `price` (its limit price; 0 for a
   * stop-market), its quantity changed by `delta` lots and its stop price to `stopPrice` (a
   * trailing stop's delta to `trail`; 0: unchanged), checked against the last trade price as at
   * arrival (ERR_STOP_WOULD_TRIGGER: nothing changed). It stays waiting with its id; the `amended`
   * event reports the change as a resting order's amend (after `trailed` for a new delta).
   */
  amend(orderId: number, price: number, delta: number, stopPrice: number, trail = 0): ResultCode {
    const s = this.byId.get(orderId);
    if (s === undefined) return ERR_ORDER_NOT_FOUND;
    const up = (s.mode & STOP_UP) !== 0;
    const last = this.out.lastTradePrice;
    if (s.trail > 0) {
      // A trailing stop's stop price follows the trades; a new delta applies from the same extreme
      // trade price, checked as at arrival (none yet: it starts at the first trade).
      const stop = trail > 0 && s.extreme >= 0 ? (up ? s.extreme + trail : s.extreme - trail) : s.stopPrice;
      if (s.extreme >= 0 && last >= 0 && (up ? last >= stop : last <= stop)) return ERR_STOP_WOULD_TRIGGER;
      const qty = s.qty + delta;
      if (qty <= 0) return ERR_AMEND_TOO_SMALL;
      if (trail > 0) s.trail = trail;
      if (stop !== s.stopPrice) {
        s.stopPrice = stop;
        this.out.trailed(s.id, s.user, stop);
      }
      this.out.amended(s.id, s.user, sideOf(s), s.price, price, s.qty, qty);
      s.price = price;
      s.qty = qty;
      return OK;
    }
    // 0: the stop price stays.
    if (stopPrice === 0) stopPrice = s.stopPrice;
    if (last >= 0 && (up ? last >= stopPrice : last <= stopPrice)) return ERR_STOP_WOULD_TRIGGER;
    const qty = s.qty + delta;
    if (qty <= 0) return ERR_AMEND_TOO_SMALL;
    this.out.amended(s.id, s.user, sideOf(s), s.price, price, s.qty, qty);
    s.price = price;
    s.qty = qty;
    if (stopPrice !== s.stopPrice) {
      const list = up ? this.up : this.down;
      remove(list, s, up);
      s.stopPrice = stopPrice;
      insert(list, s, up ? upBefore : downBefore);
    }
    return OK;
  }

  /** Cancels a waiting stop (`done` DONE_CANCELLED with its whole quantity) or a resting order. */
  cancel(orderId: number, reason: DoneReason): ResultCode {
    const s = this.byId.get(orderId);
    if (s === undefined) return this.book.cancel(orderId, reason);
    this.byId.delete(orderId);
    const up = (s.mode & STOP_UP) !== 0;
    if (s.trail > 0) this.dropTrailing(s);
    else remove(up ? this.up : this.down, s, up);
    this.out.done(s.id, s.user, sideOf(s), reason, s.qty);
    return OK;
  }

  /** A command starts at `time` (ms; 0: the one before's): its trades are watched from here. */
  begin(time: number): void {
    const out = this.out;
    out.tradeLow = Number.POSITIVE_INFINITY;
    out.tradeHigh = -1;
    // Noted only while trailing stops wait; setting an array's length is not free even at 0.
    if (this.prices.length !== 0) this.prices.length = 0;
    if (time > 0) this.time = time;
  }

  /**
   * The command's matching has ended: runs the stops its trades triggered and theirs. True when
   * the step is complete; false when a triggered market buy waits for its budget (`funds`).
   */
  cascade(): boolean {
    // Most commands trade nothing, or trigger nothing: nothing to run.
    if (this.out.tradeHigh < 0 && this.out.ocoHits.length === 0) return true;
    this.collect();
    return this.next === this.queue.length || this.drain();
  }

  /** The budget of the triggered market buy `orderId` (ticks × lots, as MatchingBook.market). */
  funds(orderId: number, budget: number): boolean {
    const s = this.waiting;
    if (s === null || s.id !== orderId)
      throw new Error(`funds for order ${orderId}, which does not wait for them`);
    this.waiting = null;
    this.run(s, budget);
    return this.drain();
  }

  private drain(): boolean {
    const queue = this.queue;
    while (this.next < queue.length) {
      const s = queue[this.next++];
      const side = sideOf(s);
      this.out.triggered(s.id, s.user, side);
      // docs/API.md 18: an OCO's stop leg triggers: its limit leg is cancelled before it runs.
      if (this.out.ocoLegs !== null) {
        const sibling = this.legs.get(s.id);
        if (sibling !== undefined) {
          this.unlink(s.id, sibling);
          this.book.cancel(sibling, DONE_OCO);
        }
      }
      if ((s.mode & STOP_MARKET) !== 0 && side === BUY) {
        this.waiting = s;
        this.out.fundsAsked(s.id, s.user);
        return false;
      }
      this.run(s, NO_BUDGET);
    }
    queue.length = 0;
    this.next = 0;
    return true;
  }

  /** A triggered stop arrives as an order of its type; the stops its trades meet join the queue. */
  private run(s: Stop, budget: number): void {
    this.out.tradeLow = Number.POSITIVE_INFINITY;
    this.out.tradeHigh = -1;
    this.prices.length = 0;
    const side = sideOf(s);
    if ((s.mode & STOP_MARKET) === 0) {
      this.book.limit(s.id, s.user, side, s.price, s.qty, s.flags, this.time);
    } else {
      const result = this.book.market(s.id, s.user, side, s.qty, budget, s.flags, this.time);
      // Refused as an arriving market order is: here it has waited, so it ends cancelled whole.
      if (result !== OK) this.out.done(s.id, s.user, side, doneReasonOf(result), s.qty);
    }
    this.collect();
  }

  /**
   * Each trailing stop follows the trade prices of the run, in order: a price that meets its stop
   * price triggers it (to `queue`); else a new highest (`down`) or lowest (`up`) price moves its stop
   * price. One `trailed` event per stop whose stop price moved, before any `triggered` event.
   */
  private follow(queue: Stop[]): void {
    const trails = this.trails;
    const prices = this.prices;
    let kept = 0;
    for (let i = 0; i < trails.length; i++) {
      const s = trails[i];
      const up = (s.mode & STOP_UP) !== 0;
      const before = s.stopPrice;
      let hit = false;
      for (let j = 0; j < prices.length; j++) {
        const p = prices[j];
        if (s.extreme >= 0 && (up ? p >= s.stopPrice : p <= s.stopPrice)) {
          hit = true;
          break;
        }
        if (s.extreme < 0 || (up ? p < s.extreme : p > s.extreme)) {
          s.extreme = p;
          s.stopPrice = up ? p + s.trail : p - s.trail;
        }
      }
      if (s.stopPrice !== before) this.out.trailed(s.id, s.user, s.stopPrice);
      if (hit) queue.push(s);
      else trails[kept++] = s;
    }
    trails.length = kept;
    prices.length = 0;
    if (kept === 0) this.out.tradePrices = null;
  }

  /** A trailing stop leaves (cancelled); the last one stops the noting of trade prices. */
  private dropTrailing(s: Stop): void {
    const trails = this.trails;
    trails.splice(trails.indexOf(s), 1);
    if (trails.length === 0) this.out.tradePrices = null;
  }

  /** Moves the stops the step's trades met to the queue, in id order. */
  private collect(): void {
    // An OCO leg's trade or end comes before the triggers the run's trades meet.
    if (this.out.ocoHits.length > 0) this.settleOco();
    const high = this.out.tradeHigh;
    if (high < 0) return;
    const low = this.out.tradeLow;
    const queue = this.queue;
    const start = queue.length;
    if (this.trails.length > 0) this.follow(queue);
    const up = this.up;
    while (up.length > 0 && up[up.length - 1].stopPrice <= high) queue.push(up.pop()!);
    const down = this.down;
    while (down.length > 0 && down[down.length - 1].stopPrice >= low) queue.push(down.pop()!);
    if (queue.length === start) return;
    for (let i = start; i < queue.length; i++) this.byId.delete(queue[i].id);
    if (queue.length - start > 1) {
      const batch = queue.splice(start).sort((a, b) => a.id - b.id);
      for (const s of batch) queue.push(s);
    }
  }
}

function sideOf(s: Stop): Side {
  return (s.mode & STOP_SELL) !== 0 ? SELL : BUY;
}

/** Inserts `s` into `list` kept sorted by `before`, after the ones equal to it. */
function insert(list: Stop[], s: Stop, before: (a: Stop, b: Stop) => boolean): void {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(s, list[mid])) hi = mid;
    else lo = mid + 1;
  }
  list.splice(lo, 0, s);
}

/** Removes `s` from `list` (sorted by stop price: descending when `up`). */
function remove(list: Stop[], s: Stop, up: boolean): void {
  // Equal stop prices sit together; the binary search lands on the first, a short scan finds `s`.
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const p = list[mid].stopPrice;
    if (up ? p > s.stopPrice : p < s.stopPrice) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < list.length; i++) {
    if (list[i] === s) {
      list.splice(i, 1);
      return;
    }
  }
}

const PENDING_RESULT: typeof PENDING = PENDING;

/** What the event sink notes of the trades (src/protocol/pair/records.ts EventRecordWriter). */
export interface TradePrices {
  tradeLow: number;
  tradeHigh: number;
  lastTradePrice: number;
  tradePrices: number[] | null;
  ocoLegs: Map<number, number> | null;
  readonly ocoHits: number[];
}

/** Not a ResultCode: the command's step waits for a triggered market buy's budget (no END yet). */
export const SUSPENDED = -2;

/** The time (ms) a command record carries, 0 for the kinds without one. */
function commandTime(f: Float64Array, o: number): number {
  switch (f[o + CMD_KIND]) {
    case OP_LIMIT:
      return f[o + LIMIT_CMD.time];
    case OP_MARKET:
      return f[o + MARKET_CMD.time];
    case OP_MOVE:
      return f[o + MOVE_CMD.time];
    case OP_QUOTE:
      return f[o + QUOTE_CMD.time];
    default:
      return 0;
  }
}

/**
 * Runs the command at `o` (src/protocol/pair/records.ts) on `book` and its `stops`: a STOP waits,
 * a CANCEL finds waiting stops too, and every other command runs on the book, then the stops its
 * trades trigger. SUSPENDED: a triggered market buy waits for its budget (`StopBook.funds`).
 */
export function runWithStops(
  stops: StopBook,
  book: MatchingBook,
  f: Float64Array,
  o: number,
): ResultCode | typeof PENDING | typeof SUSPENDED {
  const kind = f[o + CMD_KIND];
  if (kind === OP_STOP)
    return stops.add(
      f[o + STOP_CMD.orderId],
      f[o + STOP_CMD.user],
      f[o + STOP_CMD.mode],
      f[o + STOP_CMD.price],
      f[o + STOP_CMD.qty],
      f[o + STOP_CMD.flags],
      f[o + STOP_CMD.stopPrice],
      f[o + STOP_CMD.trailingDelta],
    );
  if (kind === OP_OCO)
    return stops.addOco(
      f[o + OCO_CMD.orderId],
      f[o + OCO_CMD.user],
      f[o + OCO_CMD.mode],
      f[o + OCO_CMD.price],
      f[o + OCO_CMD.qty],
      f[o + OCO_CMD.stopPrice],
      f[o + OCO_CMD.stopLimitPrice],
      f[o + OCO_CMD.time],
    );
  // docs/API.md 18: an amend of a waiting stop (it trades nothing, so it triggers nothing). One
  // sent while it waited that finds it triggered is a move of the order it became.
  if (kind === OP_MOVE && stops.size > 0 && stops.has(f[o + MOVE_CMD.orderId]))
    return stops.amend(
      f[o + MOVE_CMD.orderId],
      f[o + MOVE_CMD.price],
      f[o + MOVE_CMD.delta],
      f[o + MOVE_CMD.stopPrice],
      f[o + MOVE_CMD.trailingDelta],
    );
  stops.begin(commandTime(f, o));
  const result =
    kind === OP_CANCEL ? stops.cancel(f[o + CANCEL_CMD.orderId], DONE_CANCELLED) : runCommand(book, f, o);
  if (result === PENDING_RESULT || stops.cascade()) return result;
  stops.result = result;
  return SUSPENDED;
}
