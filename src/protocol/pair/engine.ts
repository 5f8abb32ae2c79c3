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
/** A resting order cancelled because an incoming order of the same user met it (CONTRACT 3). */
export const DONE_SELF_TRADE = 3;
/**
 * The unfilled remainder of a market order (no more liquidity, or the budget ran out), of an IOC
 * limit order, or of a FOK limit order that was killed (then `left` is its whole quantity).
 */
export const DONE_REMAINDER = 4;
export type DoneReason = typeof DONE_CANCELLED | typeof DONE_SELF_TRADE | typeof DONE_REMAINDER;

/**
 * Result codes of book commands. The range 100-199 belongs to the matching engine; codes are never
 * reused (STYLE 3). The HTTP edge maps them to statuses and messages.
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
export type ResultCode =
  | typeof OK
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
 * 2^52: the largest market-buy budget (ticks × lots) the book compares in plain numbers; a larger
 * one is compared in BigInt (a balance past it is a whale's, and so is the slower walk).
 */
export const MAX_BUDGET = 2 ** 52;
/** Passed as `budget` for a market order that has none (market sells, benchmarks). */
export const NO_BUDGET = -1;

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

/** The commands every book implementation accepts. */
export interface MatchingBook {
  /**
   * Limit order: match against the opposite side up to `price`, then rest the remainder (GTC) or
   * end it (IOC, FOK). `flags`: TIF_* | FLAG_POST_ONLY (see there); 0 is a plain GTC order.
   */
  limit(orderId: number, user: number, side: Side, price: number, qty: number, flags?: number): ResultCode;
  /**
   * Market order for `qty` lots. `budget` (market buys only, ticks × lots: an integer held exactly
   * by a double, or NO_BUDGET): when the full walk over other users' orders costs more than the budget, the order
   * is refused with ERR_INSUFFICIENT_FUNDS and nothing changes; while filling, a fill never makes
   * the spent amount exceed the budget (the remainder is cancelled).
   */
  market(orderId: number, user: number, side: Side, qty: number, budget: number): ResultCode;
  /** Cancel a resting order by id (ownership is checked by the caller). */
  cancel(orderId: number): ResultCode;
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
  move(orderId: number, price: number, delta: number, flags: number): ResultCode;
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
