/**
 * The command record (exchange-core's `OrderCommand`, docs/ARCHITECTURE.md "Threads and stages"): one object carries a request from
 * the HTTP edge through every stage of the core, and each stage writes its part into it:
 *
 *   edge   request id, user and the validated inputs                 (src/entry/trade.ts)
 *   R1     what it holds in the ledger, or a refusal code             (src/core/risk-stage.ts,
 *                                                                      quotes.ts; src/core/risk.ts)
 *   SEQ    its place in the pair's command FIFO; the order id and time when it enters the ring
 *                                                                     (src/core/sequencer.ts)
 *   ME     the pair worker runs it; its events come back             (workers/pair)
 *   R2     settlement of each event, the result code at END           (src/core/pair-events.ts on*)
 *   DB     the rows it changed go into the writer's batch             (src/core/results.ts)
 *   OUT    after that batch commits: the answer to the edge by request id, the stream messages
 *                                                                     (src/core/results.ts)
 *
 * No stage holds a closure of another: the edge keeps a map from request id to the waiting
 * response (src/entry/answers.ts) and the core reports results through `ResultSink`.
 */

import type { MmpRequest } from "./mmp-settings.ts";
import type { PairMarket } from "./read-models/pair-market.ts";
import type { StopFacts } from "./record-sink.ts";
import type { OrderFacts, OrderView, UserTradeView } from "./views.ts";

/** Order types. */
export const LIMIT = 0;
export const MARKET = 1;

/*
 * The command kinds of the core (a command's `kind`): what was asked of the core. The matching
 * engine's operation codes are another set (src/protocol/pair/records.ts OP_*): a kind may send
 * several records (a cancel-all: one OP_CANCEL per order).
 */
/** Recovery: a stored open order put back into its book. */
export const CMD_RESTORE = 0;
export const CMD_CREATE = 1;
export const CMD_CANCEL = 2;
/** Amend (docs/API.md 8.3): a REDUCE when `delta` < 0 at the same price, else a MOVE. */
export const CMD_AMEND = 3;
/** Cancel-all on one pair (docs/API.md 8.4): expands into one CMD_CANCEL per target when it is sent. */
export const CMD_CANCEL_ALL = 4;
/** MMP settings or reset of one user on one pair (docs/API.md 8.10; `mmp`, src/core/mmp-settings.ts). */
export const CMD_MMP = 5;
/**
 * Mass quote (docs/API.md 8.12): one QUOTE record and its levels, one engine step; `quote` holds its
 * levels, holds and outcome (src/core/quotes.ts).
 */
export const CMD_QUOTE = 6;

/** No one waits for an answer (recovery, the dead-man's switch, a cancel inside a cancel-all). */
export const NO_REQUEST = 0;

/**
 * A cancel's answer when the core no longer holds the order: only its committed row can tell
 * (the edge reads it). Never a catalogue code (those are positive).
 */
export const NEEDS_ROW = -1;

/**
 * `Command.cidCheck`: a create's client order id against the database (src/core/client-ids.ts). NONE:
 * not asked; ASKING: the read is out; UNUSED: no order has it; USED: one has (a duplicate);
 * FAILED: the read failed.
 */
export const CID_CHECK_NONE = 0;
export const CID_CHECK_ASKING = 1;
export const CID_CHECK_UNUSED = 2;
export const CID_CHECK_USED = 3;
export const CID_CHECK_FAILED = 4;

/**
 * Live state of an order the core knows about (open, or finishing in the current command). Its
 * facts (id, type, side, price, amount, used, cancelled, times, flags, client order id) are the
 * ones every order view is built from (src/core/views.ts).
 */
export interface OrderState extends OrderFacts {
  user: number;
  pair: number;
  side: 0 | 1;
  type: 0 | 1;
  /** Limit price in ticks; for a market order 0 until it is final, then the average price. */
  price: number;
  clientOrderId: string | undefined;
  /** Market buy: quote (ledger units) still reserved for it. */
  budget: bigint;
  /**
   * Ticks × lots its fills executed so far (docs/API.md 5.1 `executedQuote`; a market order's
   * average price): exact, as the ledger's amounts are.
   */
  executed: bigint;
  /** Set while an amend of the order is in the worker: the amends waiting behind it (else null). */
  amending: Command[] | null;
  /** Index in its user's list of open orders (OpenOrders, src/core/open-orders.ts); -1 when not in it. */
  userSlot: number;
  /**
   * Its row was sent to the writer (or recovered from the database): later records only update
   * what changes (DbWriter.updateOrder).
   */
  rowSent: boolean;
  /** The session that created it (OrderInputs.session), 0: none. Memory only: the row keeps the flag. */
  session: number;
  /**
   * When it last started resting (OpenOrders.setOpen: one number per rest, increasing): its time
   * priority within a price, for the L3 snapshot (docs/API.md 7.6.2); 0 before it rests.
   */
  restSeq: number;
  /** docs/API.md 18: while both legs of its OCO are open, the two of them (else null). */
  oco: OcoLink | null;
}

/**
 * The two open legs of an OCO (docs/API.md 18) and their one hold: the limit leg holds as any limit
 * order, the waiting stop leg nothing of its own; `extra` is what the shared hold takes beyond the
 * limit leg's (a buy whose stop leg would hold more), released when the stop leg ends. When the
 * stop leg triggers, the limit leg's cancel hands it its own hold (RiskStage.ocoLegDone).
 */
export interface OcoLink {
  readonly limit: OrderState;
  readonly stop: OrderState;
  extra: bigint;
}

/** What a create-order asks for, validated by the edge (src/entry/validate.ts) in book units. */
export interface OrderInputs {
  type: 0 | 1;
  side: 0 | 1;
  /** Ticks (ignored for a market order). */
  price: number;
  /** Lots. */
  amount: number;
  /** Options (src/core/order-options.ts): time in force, post-only. */
  flags: number;
  clientOrderId: string | undefined;
  /**
   * docs/API.md 8.8: Unix ms after which the call must not start its risk check (R1); 0: no deadline.
   */
  expiresAt: number;
  /**
   * The trading session that created the order (docs/API.md 8.9), 0: none. A nonzero tag makes the
   * order cancel-on-disconnect (Exchange.cancelSessionOrders).
   */
  session: number;
  /** docs/API.md 18: the stop price in ticks (absent or 0: not a stop order). */
  stopPrice?: number;
  /** STOP_DIRECTION_UP or STOP_DIRECTION_DOWN with a stop price or a trailing delta. */
  stopDirection?: number;
  /** docs/API.md 18: a trailing stop's delta in ticks, in place of `stopPrice`. */
  trailingDelta?: number;
}

/**
 * What create-oco asks for (docs/API.md 18), validated by the edge in book units: the limit leg's
 * `price`, the stop leg's `stopPrice` and `stopLimitPrice` (0: a stop-market), both for `amount`.
 */
export interface OcoInputs {
  side: 0 | 1;
  price: number;
  amount: number;
  stopPrice: number;
  stopLimitPrice: number;
  clientOrderId: string | undefined;
  expiresAt: number;
  session: number;
}

/** docs/API.md 18 `stopDirection` as stored (migration 015). */
export const STOP_DIRECTION_UP = 1;
export const STOP_DIRECTION_DOWN = 2;

/** A stop order that has not triggered: open, in no book (docs/API.md 18). */
export function isWaitingStop(o: StopFacts): boolean {
  return o.stopDirection !== 0 && o.triggerMicro === 0;
}

/** The cancels of one cancel-all request, over every pair it covers. */
export interface CancelAllGroup {
  request: number;
  /** Pairs whose cancels are not all sent, plus cancels not answered yet. */
  outstanding: number;
  /** Ids of the orders cancelled so far. */
  cancelled: number[];
}

export interface Command extends OrderInputs {
  kind: number;
  stopPrice: number;
  stopDirection: number;
  trailingDelta: number;
  /** The edge's id for the response waiting for this command (NO_REQUEST: none). */
  request: number;
  user: number;
  pair: number;
  /** The order it creates (given when it enters the ring) or acts on. */
  orderId: number;
  /** That order's live state (create: built when it enters the ring). */
  order: OrderState | null;
  /**
   * docs/API.md 18: an OCO create (`order` its limit leg, `sibling` its stop leg once it entered
   * the ring, with `stopLimitPrice`, 0 for a stop-market).
   */
  oco: boolean;
  stopLimitPrice: number;
  sibling: OrderState | null;

  // ---- inputs (edge): OrderInputs; for an amend, `price` and `amount` are the new ones.

  // ---- R1
  /** Market buy: ticks × lots the worker may spend (NO_BUDGET otherwise). */
  budget: number;
  /** Ledger units held for it and not settled yet (create: its hold; amend: the extra hold). */
  hold: bigint;
  /** Amend: new total amount minus the current one. */
  delta: number;
  /** Create with a client order id: where its check against the database stands (CID_CHECK_*). */
  cidCheck: number;
  /** Waiting on the main thread before its sequencer (src/core/arrival-order.ts). */
  waits: boolean;

  // ---- cancel-all
  group: CancelAllGroup | null;
  /** CMD_CANCEL_ALL: the orders to cancel, chosen when it is sent, and how many are sent. */
  targets: OrderState[] | null;
  sent: number;

  // ---- CMD_MMP: the settings to send (null: a reset) and what to run once committed.
  mmp: MmpRequest | null;
  /** CMD_QUOTE: its levels, what it holds and what became of each level (src/core/quotes.ts). */
  quote: QuoteWork | null;

  // ---- R2 / OUT
  /** Result code: 0, or why it was refused. */
  result: number;
  /** The order as answered (create, amend), taken when the command ended. */
  view: OrderView | null;
  /** An OCO's stop leg as answered. */
  siblingView: OrderView | null;
  /** Orders it closed: cancels see them (Results.closing) until their final rows commit. */
  closed: OrderState[] | null;
  /** What the read model and the stream are told after the commit (null: nothing). */
  publication: Publication | null;
  /**
   * The execution numbers it gave (docs/API.md 16), as `user, number` pairs, each user's highest
   * (an order change's, above its trades'); they count as committed when it is released. null: none.
   */
  execs: number[] | null;
}

/** Stream messages of one command, sent after its commit (CommitListener). */
export interface Publication {
  /**
   * Book levels changed, as the worker reported them: `side, price, total` triples (total 0:
   * removed), in order, so a price repeated later wins; numbered `seq` (docs/API.md 12.3). null: none.
   * One flat array per command instead of a Map per side: fewer allocations per order.
   */
  levels: number[] | null;
  seq: number;
  /** Time of that book change (docs/API.md 7.6.1 eventTimeMicro). */
  micro: number;
  /**
   * Its L3 events (src/core/read-models/l3-view.ts) when the pair's L3 book is followed, else null (also when
   * the book changed before it was followed).
   */
  l3: number[] | null;
  /** The three lists below are a shared empty array when empty (read-only, like the whole record). */
  trades: readonly ReturnType<PairMarket["publicTrade"]>[];
  /** `[user, view, created]`: created is true when this command created the order. */
  orders: readonly [number, OrderView, boolean][];
  /** `[user, view, orderId, maker]`: that user's order in the trade, and whether it was the maker. */
  userTrades: readonly [number, UserTradeView, number, boolean][];
}

/** A command record with every field set (one shape for every kind keeps the stages monomorphic). */
export function newCommand(kind: number, request: number, user: number, pair: number): Command {
  return {
    kind,
    request,
    user,
    pair,
    orderId: 0,
    order: null,
    oco: false,
    stopLimitPrice: 0,
    sibling: null,
    type: 0,
    side: 0,
    price: 0,
    amount: 0,
    flags: 0,
    clientOrderId: undefined,
    expiresAt: 0,
    session: 0,
    stopPrice: 0,
    stopDirection: 0,
    trailingDelta: 0,
    budget: 0,
    hold: 0n,
    delta: 0,
    cidCheck: 0,
    waits: false,
    group: null,
    targets: null,
    sent: 0,
    mmp: null,
    quote: null,
    result: 0,
    view: null,
    siblingView: null,
    closed: null,
    publication: null,
    execs: null,
  };
}

/**
 * The edge's side of the core: each request's result, by the id the edge gave it. Called after
 * the command's changes committed (or, for a refusal decided later, when nothing changed).
 */
export interface ResultSink {
  /**
   * create-order, amend-order: `code` 0 and the order, or an error code and null; create-oco also
   * its stop leg (`sibling`).
   */
  orderResult(request: number, code: number, order: OrderView | null, sibling?: OrderView | null): void;
  /** cancel-order: 0, an error code, or NEEDS_ROW. */
  cancelResult(request: number, code: number): void;
  /** cancel-all: the ids it cancelled, ascending. */
  cancelAllResult(request: number, cancelled: number[]): void;
  /** A mass quote (docs/API.md 8.12): `code` 0 and what it did, or an error code and null. */
  quoteResult(request: number, code: number, result: QuoteResult | null): void;
}

// ------------------------------------------------------------------ mass quotes (src/core/quotes.ts)

/** One level of a quote, validated by the edge, in book units. */
export interface QuoteLevel {
  side: 0 | 1;
  price: number;
  amount: number;
}

/** A quote command's own part (`Command.quote`). */
export interface QuoteWork {
  /** Bids then asks, as the engine numbers them. */
  readonly levels: readonly QuoteLevel[];
  /** The session tag its orders carry (docs/API.md 8.9), 0: none. */
  readonly session: number;
  /** Level i's order (id `Command.orderId + i`), built as the quote enters the ring. */
  orders: OrderState[];
  /** Per level: OK, QUOTE_KEPT or ERR_WOULD_TAKE from its `quoted` event. */
  outcome: number[];
  /** Per level kept: the earlier quote order kept. */
  kept: (OrderState | undefined)[];
  /** Ledger units the quote holds and has not given to a placed order: base (asks), quote (bids). */
  holdBase: bigint;
  holdQuote: bigint;
  /** Ids of the old quote orders it cancelled. */
  cancelled: number[];
  /** The answer, made at END. */
  result: QuoteResult | null;
}

/** A quote's answer: the ids it cancelled, ascending, and per level the order or an error code. */
export interface QuoteResult {
  cancelled: number[];
  placed: (OrderView | number)[];
}

/**
 * The deadline `expiresAt` (Unix ms, 0: none) has passed: a call whose risk check (R1) starts
 * later answers REQUEST_EXPIRED and changes nothing (docs/API.md 11.2).
 */
export function expired(expiresAt: number): boolean {
  return expiresAt !== 0 && Date.now() > expiresAt;
}
