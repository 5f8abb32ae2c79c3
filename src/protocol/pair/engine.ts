/**
 * The matching engine's contract, shared by the fast book (workers/matching/order-book.ts), the
 * naive reference book used in tests, the pair worker that copies events into its ring, and the
 * main thread, which sends the commands and reads the codes and events (src/core/exchange.ts).
 *
 * Units: every price is an integer number of ticks (10^-priceDecimals of the quote currency) and
 * every quantity an integer number of lots (10^-amountDecimals of the base currency). They travel
 * as JS numbers and stay exact because they are integers below 2^53 (the front end refuses any
 * input that could leave that range). Notional (price × quantity) is only computed for market-buy
 * budgets, where `budget` is an integer number of ticks × lots: up to MAX_BUDGET every product
 * compared against it is either exact or provably larger than the budget; a larger budget (any
 * integer a double holds exactly, up to the ledger's 2^127) is compared in BigInt.
 *
 * Users are small integers assigned by the ledger (not UUIDs), order ids are positive integers
 * assigned before the command reaches the book. The book never reads a clock.
 */

/** Side of an order. Plain numbers (not a TS enum) so the values can be written into rings. */
export const BUY = 0;
export const SELL = 1;
export type Side = typeof BUY | typeof SELL;

/**
 * Why an order ended without being fully filled. A fully filled order gets no `done` event: the
 * trade that fills it reports `takerLeft` or `makerLeft` 0.
 */
/** Cancelled by its owner (a cancel command). */
export const DONE_CANCELLED = 2;
/** A resting order cancelled because an incoming order of the same user met it (docs/API.md 6). */
export const DONE_SELF_TRADE = 3;
/**
 * The unfilled remainder of a market order (no more liquidity, or the budget ran out), of an IOC
 * limit order, or of a FOK limit order that was killed (then `left` is its whole quantity).
 */
export const DONE_REMAINDER = 4;
/**
 * A protected order cancelled by a market-maker-protection trigger (docs/API.md 8.10), or the
 * remainder of a protected incoming order whose own fill triggered it.
 */
export const DONE_MMP = 5;
/**
 * A triggered stop order that ended whole without matching (docs/API.md 18): a market order with
 * no opposite order of another user, a market buy its budget cannot pay, a market order below the
 * pair's minimum order value. `left` is its whole quantity.
 */
export const DONE_NO_LIQUIDITY = 6;
export const DONE_INSUFFICIENT_FUNDS = 7;
export const DONE_BELOW_MIN_NOTIONAL = 8;
/**
 * An OCO leg cancelled by its sibling (docs/API.md 18): the other leg traded, triggered or ended.
 * `left` is its open quantity.
 */
export const DONE_OCO = 9;
export type DoneReason =
  | typeof DONE_CANCELLED
  | typeof DONE_SELF_TRADE
  | typeof DONE_REMAINDER
  | typeof DONE_MMP
  | typeof DONE_NO_LIQUIDITY
  | typeof DONE_INSUFFICIENT_FUNDS
  | typeof DONE_BELOW_MIN_NOTIONAL
  | typeof DONE_OCO;

/**
 * Result codes of book commands. The range 100-199 belongs to the matching engine; codes are never
 * reused. The HTTP edge maps them to statuses and messages.
 */
export const OK = 0;
/** Market order with no opposite order of another user: nothing happened. */
export const ERR_NO_LIQUIDITY = 101;
/** Market buy whose cost, walking other users' orders, exceeds its budget: nothing happened. */
export const ERR_INSUFFICIENT_FUNDS = 102;
/** Cancel of an id that is not resting in this book. */
export const ERR_ORDER_NOT_FOUND = 103;
/** Limit order with an id that is already resting (a caller bug; nothing happened). */
export const ERR_DUPLICATE_ID = 104;
/** Post-only limit order or move whose price reaches a resting opposite order: nothing happened. */
export const ERR_WOULD_TAKE = 105;
/** Reduce or move that would leave the order with no open quantity: nothing happened. */
export const ERR_AMEND_TOO_SMALL = 106;
/**
 * A protected limit order (FLAG_MMP) or a quote with levels, from a user frozen by a
 * market-maker-protection trigger on this pair: nothing happened (docs/API.md 8.10).
 */
export const ERR_MMP_FROZEN = 107;
/**
 * Not a command result: the status of a quote level (`quoted` event) kept as the open order of an
 * earlier quote with the same side, price and open quantity (its place in the queue kept).
 */
export const QUOTE_KEPT = 108;
/** Quote with more than MAX_QUOTE_LEVELS levels, or a level with a bad side: nothing happened. */
export const ERR_QUOTE_LEVELS = 109;
/**
 * Market order whose value (price × lots over the other users' orders it would take, walking the
 * book as for liquidity and funds) is below the pair's minimum order value: nothing happened
 * (docs/API.md 20.5).
 */
export const ERR_BELOW_MIN_NOTIONAL = 110;
/**
 * Stop order whose condition the pair's last trade price already meets (docs/API.md 18): nothing
 * happened. A pair that never traded takes any stop.
 */
export const ERR_STOP_WOULD_TRIGGER = 111;
/**
 * OCO whose limit leg's price is not beyond the pair's last trade price (a sell: above it; a buy:
 * below it), docs/API.md 18: nothing happened.
 */
export const ERR_OCO_PRICE = 112;
export type ResultCode =
  | typeof OK
  | typeof ERR_OCO_PRICE
  | typeof ERR_STOP_WOULD_TRIGGER
  | typeof ERR_BELOW_MIN_NOTIONAL
  | typeof ERR_MMP_FROZEN
  | typeof ERR_QUOTE_LEVELS
  | typeof ERR_NO_LIQUIDITY
  | typeof ERR_INSUFFICIENT_FUNDS
  | typeof ERR_ORDER_NOT_FOUND
  | typeof ERR_DUPLICATE_ID
  | typeof ERR_WOULD_TAKE
  | typeof ERR_AMEND_TOO_SMALL;

/**
 * Flags of a limit order (and of a move), a bit field. The low two bits are the time in force:
 * - TIF_GTC: match, then rest the remainder;
 * - TIF_IOC: match, then end the remainder (`done` DONE_REMAINDER), never rest;
 * - TIF_FOK: when other users' orders at the limit price or better hold less than the whole
 *   quantity, end at once (`done` DONE_REMAINDER with the whole quantity; no trade, no self-trade
 *   cancel, no level); otherwise match like IOC (it then ends fully filled).
 * The value 3 of the two bits is not defined; the books treat it as GTC (the front end never sends it).
 * FLAG_POST_ONLY: when the price reaches any resting opposite order (any user's, own included) the
 * order is refused with ERR_WOULD_TAKE and nothing changes; otherwise the time in force applies.
 * Only GTC orders are post-only at the HTTP edge; the book applies the check first for any.
 */
export const TIF_GTC = 0;
export const TIF_IOC = 1;
export const TIF_FOK = 2;
export const TIF_MASK = 3;
export const FLAG_POST_ONLY = 4;
/**
 * A protected order (docs/API.md 8.10): its fills count for its user's MMP window, and an MMP trigger
 * cancels it; refused with ERR_MMP_FROZEN while its user is frozen. The front end sends it on GTC
 * limit orders only; the book applies it to any.
 */
export const FLAG_MMP = 8;
/** Set by the book on the orders a quote places (never sent with `limit`); kept across moves. */
export const FLAG_QUOTE = 16;
/**
 * Self-trade prevention mode of the incoming order (two bits, docs/API.md 8.11); 0 is cancelMaker
 * (docs/API.md 6): a resting order of the same user that the order meets is cancelled
 * (DONE_SELF_TRADE) and matching goes on. STP_CANCEL_TAKER: matching stops there, the resting
 * order stays, and the incoming order's remainder ends (`done` DONE_SELF_TRADE). STP_CANCEL_BOTH:
 * the resting order is cancelled, then the remainder ends the same way. Under either, a FOK counts
 * only the other users' liquidity before its first own order. The mode stays with a resting order
 * and applies again when it is moved.
 */
export const STP_CANCEL_TAKER = 32;
export const STP_CANCEL_BOTH = 64;
export const STP_MASK = 96;
/** Flags a resting order keeps (the others describe only its arrival). */
export const KEPT_FLAGS = FLAG_MMP | FLAG_QUOTE | STP_MASK;
/** Most levels a quote holds per side (docs/API.md 8.12). */
export const MAX_QUOTE_LEVELS = 20;
/**
 * Not a ResultCode: a multi-record command (quote) is still collecting records; the worker writes
 * no END record for this one.
 */
export const PENDING = -1;
/**
 * 2^52: the largest market-buy budget (ticks × lots) the book compares in plain numbers; a larger
 * one is compared in BigInt (a balance past it is a whale's, and so is the slower walk).
 */
export const MAX_BUDGET = 2 ** 52;
/** Passed as `budget` for a market order that has none (market sells, benchmarks). */
export const NO_BUDGET = -1;

/**
 * A stop order's `mode` (docs/API.md 18), a bit field: its side (STOP_SELL, else a buy), its
 * direction (STOP_UP: it triggers at a trade price >= its stop price; else down: <=), its type once
 * triggered (STOP_MARKET, else a limit order at its price), and STOP_RESTORE for a waiting order put
 * back by recovery (not checked against the last trade price).
 */
export const STOP_SELL = 1;
export const STOP_UP = 2;
export const STOP_MARKET = 4;
export const STOP_RESTORE = 8;
/**
 * A stop put back by recovery that is the stop leg of an OCO (docs/API.md 18): its sibling, the
 * limit leg, is the order with the id just below its own.
 */
export const STOP_OCO = 16;

/**
 * Receiver of the book's events. Methods take only numbers so that an implementation can copy
 * them into a ring buffer without allocating. Within one command, events arrive in this order:
 * `amended` (reduce and move only), then trades and self-trade cancels interleaved in execution
 * order, then the taker's own outcome (`rested` or `done`), then every aggregated level that
 * changed during the command, once each with its final total. Each method's arguments, in order,
 * are the fields of the ring record of the same name (./pair.ts), which EventRecordWriter writes.
 */
export interface BookEvents {
  /**
   * A fill: `qty` lots at the maker's `price`. `makerLeft` / `takerLeft` are the quantities still
   * open after this fill (0 means that order is now fully executed and gets no `done` event).
   */
  trade(
    takerId: number,
    takerUser: number,
    takerSide: Side,
    makerId: number,
    makerUser: number,
    price: number,
    qty: number,
    takerLeft: number,
    makerLeft: number,
  ): void;
  /** The incoming limit order now rests in the book with `left` lots open. */
  rested(orderId: number, user: number, side: Side, price: number, left: number): void;
  /** An order ends with `left` lots unfilled: cancelled, self-trade cancelled, or a market remainder. */
  done(orderId: number, user: number, side: Side, reason: DoneReason, left: number): void;
  /**
   * The user's MMP state changed: `frozen` 1 after a trigger (`frozenUntil`: command time in ms
   * when it ends, 0 until a reset), 0 after a reset (`frozenUntil` 0).
   */
  mmp(user: number, frozen: number, frozenUntil: number): void;
  /**
   * The outcome of quote level `index` (bids first, then asks, as sent): OK when order `orderId`
   * was placed (its `rested` event comes just before), QUOTE_KEPT when `orderId` is the earlier
   * quote order kept for it, ERR_WOULD_TAKE when it was not placed (`orderId` is the id it was
   * given).
   */
  quoted(user: number, index: number, orderId: number, result: number): void;
  /** The aggregated amount at `price` on `side` is now `total` lots (0: the level is gone). */
  level(side: Side, price: number, total: number): void;
  /**
   * A resting order was reduced (same price, keeps its place) or moved (taken out of its level;
   * the events that follow treat it as an arriving limit order at `newPrice` for `newLeft` lots).
   */
  amended(
    orderId: number,
    user: number,
    side: Side,
    oldPrice: number,
    newPrice: number,
    oldLeft: number,
    newLeft: number,
  ): void;
}

/**
 * What a pair's stop orders report besides the book's events (docs/API.md 18,
 * workers/matching/stops.ts), in the same order as the events they cause.
 */
export interface StopEvents extends BookEvents {
  /** Waiting stop `orderId` triggered: it now arrives as an order of its type (its events follow). */
  triggered(orderId: number, user: number, side: Side): void;
  /** Triggered market buy `orderId` waits for its budget (a FUNDS command) before it matches. */
  fundsAsked(orderId: number, user: number): void;
  /** Trailing stop `orderId`'s stop price is now `stopPrice` (ticks): not an order change. */
  trailed(orderId: number, user: number, stopPrice: number): void;
}

/** The commands every book implementation accepts. */
export interface MatchingBook {
  /**
   * Limit order: match against the opposite side up to `price`, then rest the remainder (GTC) or
   * end it (IOC, FOK). `flags`: TIF_* | FLAG_POST_ONLY (see there); 0 is a plain GTC order.
   */
  limit(
    orderId: number,
    user: number,
    side: Side,
    price: number,
    qty: number,
    flags?: number,
    time?: number,
  ): ResultCode;
  /**
   * Market order for `qty` lots. `budget` (market buys only, ticks × lots: an integer held exactly
   * by a double, or NO_BUDGET): when the full walk over other users' orders costs more than the budget, the order
   * is refused with ERR_INSUFFICIENT_FUNDS and nothing changes; while filling, a fill never makes
   * the spent amount exceed the budget (the remainder is cancelled).
   */
  market(
    orderId: number,
    user: number,
    side: Side,
    qty: number,
    budget: number,
    flags?: number,
    time?: number,
  ): ResultCode;
  /**
   * Cancel a resting order by id (ownership is checked by the caller); its `done` event carries
   * `reason` (DONE_CANCELLED unless given: an OCO sibling's is DONE_OCO).
   */
  cancel(orderId: number, reason?: DoneReason): ResultCode;
  /**
   * Lowers a resting order's open quantity by `by` lots (>= 1); it keeps its place in its level.
   * ERR_ORDER_NOT_FOUND when it is not resting; ERR_AMEND_TOO_SMALL when `left - by <= 0` (or
   * `by < 1`). Events: `amended` (same price twice), then the level.
   */
  reduce(orderId: number, by: number): ResultCode;
  /**
   * Moves a resting order to `price` with `left + delta` lots open (`delta`: signed lots, may be
   * 0). ERR_ORDER_NOT_FOUND when it is not resting; ERR_AMEND_TOO_SMALL when `left + delta <= 0`;
   * ERR_WOULD_TAKE when `flags & FLAG_POST_ONLY` and `price` reaches the opposite best. Otherwise
   * `amended`, and the order leaves its level and arrives again as a GTC limit order with the same
   * id, user and side (other flag bits are ignored): it may trade, and its remainder rests at the
   * back of its level. Every changed level (the old one included) is reported once.
   */
  move(orderId: number, price: number, delta: number, flags: number, time?: number): ResultCode;
  /**
   * Starts a quote of `levels` levels (bids then asks) for `user`, sent as `quoteLevel` calls
   * (one ring record each); the quote runs, as one step, when the last level arrives (at once for
   * 0 levels: a pull). Returns PENDING until then, then the quote's ResultCode: ERR_QUOTE_LEVELS
   * (more than 2 × MAX_QUOTE_LEVELS levels, a side that is not BUY or SELL), ERR_MMP_FROZEN (levels while
   * frozen), ERR_DUPLICATE_ID (a level's id rests already): nothing changed; otherwise OK:
   * - every open quote order of the user (FLAG_QUOTE) that no level keeps is cancelled (`done`
   *   DONE_CANCELLED, ids ascending); a level keeps the lowest-id open quote order with its side,
   *   price and open quantity not kept by an earlier level;
   * - then each level in order: kept (`quoted` QUOTE_KEPT), or placed as a post-only GTC order with
   *   FLAG_QUOTE | FLAG_MMP (`rested`, `quoted` OK), or, when its price reaches a resting opposite
   *   order, not placed (`quoted` ERR_WOULD_TAKE);
   * - then the changed levels.
   * `time` is the command time (ms) for the frozen check.
   */
  quoteBegin(user: number, levels: number, time: number): ResultCode | typeof PENDING;
  quoteLevel(orderId: number, side: Side, price: number, qty: number): ResultCode | typeof PENDING;
  /**
   * The user's MMP settings on this pair (docs/API.md 8.10): 0 `intervalSeconds` disables counting.
   * Empties the window; the frozen state is left as it is. No events.
   */
  mmpSet(user: number, intervalSeconds: number, qtyLimit: number, frozenSeconds: number): ResultCode;
  /** Unfreezes the user and empties the window; event `mmp(user, 0, 0)`. */
  mmpReset(user: number): ResultCode;
  /** Best bid / best ask in ticks, or -1 when that side is empty. */
  bestBid(): number;
  bestAsk(): number;
  /** Number of resting orders. */
  size(): number;
  /**
   * Aggregated levels of one side, best first, at most `depth` of them, written into the two
   * arrays; returns how many were written.
   */
  levels(side: Side, depth: number, prices: Float64Array, totals: Float64Array): number;
  /** Open quantity of a resting order, or -1 when it is not in the book. */
  remaining(orderId: number): number;
}
