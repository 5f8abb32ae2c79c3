/**
 * The matching engine's contract, shared by the fast book (`order-book.ts`), the naive reference
 * book used in tests, and the pair worker that copies events into its ring.
 *
 * Units: every price is an integer number of ticks (10^-priceDecimals of the quote currency) and
 * every quantity an integer number of lots (10^-amountDecimals of the base currency). They travel
 * as JS numbers and stay exact because they are integers below 2^53 (the front end refuses any
 * input that could leave that range). Notional (price × quantity) is only computed for market-buy
 * budgets, where `budget` is in ticks × lots and is at most MAX_BUDGET, so every product compared
 * against it is either exact or provably larger than the budget.
 *
 * Users are small integers assigned by the ledger (not UUIDs), order ids are positive integers
 * assigned before the command reaches the book. The book never reads a clock.
 */

/** Side of an order. Plain numbers (not a TS enum) so the values can be written into rings. */
export const BUY = 0;
export const SELL = 1;
export type Side = typeof BUY | typeof SELL;

/**
 * Flags of a limit order (and of a move): time in force in the low two bits, then post-only.
 * GTC rests what it cannot fill; IOC cancels the remainder; FOK fills completely against other
 * users' orders at submission or not at all. A post-only order never trades on arrival.
 */
export const TIF_GTC = 0;
export const TIF_IOC = 1;
export const TIF_FOK = 2;
export const TIF_MASK = 3;
export const FLAG_POST_ONLY = 4;

/**
 * Why an order ended without being fully filled. A fully filled order gets no `done` event: the
 * trade that fills it reports `takerLeft` or `makerLeft` 0.
 */
/** Cancelled by its owner (a cancel command). */
export const DONE_CANCELLED = 2;
/** A resting order cancelled because an incoming order of the same user met it (CONTRACT 3). */
export const DONE_SELF_TRADE = 3;
/** The unfilled remainder of a market order (no more liquidity, or the budget ran out). */
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
/** Post-only order (or move of one) whose price reaches the opposite best: nothing happened. */
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

/** 2^52: the largest market-buy budget (ticks × lots); callers clamp larger balances to it. */
export const MAX_BUDGET = 2 ** 52;
/** Passed as `budget` for a market order that has none (market sells, benchmarks). */
export const NO_BUDGET = -1;

/**
 * Receiver of the book's events. Methods take only numbers so that an implementation can copy
 * them into a ring buffer without allocating. Within one command, events arrive in this order:
 * trades and self-trade cancels interleaved in execution order, then the taker's own outcome
 * (`rested` or `done`), then every aggregated level that changed during the command, once each
 * with its final total.
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
}

/** The commands every book implementation accepts. */
export interface MatchingBook {
  /** Limit order: match against the opposite side up to `price`, rest the remainder. */
  limit(orderId: number, user: number, side: Side, price: number, qty: number): ResultCode;
  /**
   * Market order for `qty` lots. `budget` (market buys only, ticks × lots, at most MAX_BUDGET, or
   * NO_BUDGET): when the full walk over other users' orders costs more than the budget, the order
   * is refused with ERR_INSUFFICIENT_FUNDS and nothing changes; while filling, a fill never makes
   * the spent amount exceed the budget (the remainder is cancelled).
   */
  market(orderId: number, user: number, side: Side, qty: number, budget: number): ResultCode;
  /** Cancel a resting order by id (ownership is checked by the caller). */
  cancel(orderId: number): ResultCode;
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
