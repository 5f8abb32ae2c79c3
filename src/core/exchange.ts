/**
 * The exchange core on the main thread: a facade that routes the edge's commands (create, amend,
 * cancel, cancel-all, a session's cancels, mass quotes, MMP settings) and the pair workers' events
 * to the stages a command record (src/core/command.ts) passes through, in exchange-core's order:
 *
 *   R1   risk hold   pair status, deadline, client order id; reserve funds, the market-buy queue;
 *                    or refuse                       (src/core/risk-stage.ts; quotes: src/core/quotes.ts)
 *   SEQ  sequencing  the pair's command FIFO and back-pressure; order ids and time (src/core/sequencer.ts)
 *   ME   matching    the pair worker runs the command on its book                 (ring, workers/pair)
 *   R2   settle      each event record applied: trades move reserved funds, dones release; the L3
 *                    events of a followed book   (src/core/pair-events.ts → risk-stage.ts, quotes.ts)
 *   DB   persist     order and trade rows into the writer's batch; market data and stream views
 *   OUT  results     after that batch commits: the edge is answered by request id, the read model,
 *                    BBO and L3 book take the change, the stream is told              (src/core/results.ts)
 *
 * Open orders live in src/core/open-orders.ts; each pair's state in pairs.ts; the followed L3 books
 * in l3-follow.ts; MMP state in mmp-settings.ts; snapshots in snapshots.ts. Every stage is built in
 * the constructor from ExchangeOptions; none is set later. Everything runs on one thread, so ledger
 * checks and reservations are atomic with respect to every other request, whatever the pair. The
 * edge gives each request an id and receives its result through `ResultSink`.
 */

import { Code } from "../errors/catalogue.ts";
import { SELL } from "../protocol/pair/engine.ts";
import { ArrivalOrder } from "./arrival-order.ts";
import { ClientIds } from "./client-ids.ts";
import {
  CMD_AMEND,
  CMD_CREATE,
  CMD_MMP,
  CMD_QUOTE,
  CMD_RESTORE,
  LIMIT,
  MARKET,
  NEEDS_ROW,
  NO_REQUEST,
  newCommand,
  type OcoInputs,
  type OrderInputs,
  type OrderState,
  type ResultSink,
  STOP_DIRECTION_DOWN,
  STOP_DIRECTION_UP,
} from "./command.ts";
import type { ExchangeOptions } from "./exchange-options.ts";
import { ExecSeqs } from "./exec-seqs.ts";
import { L3Follow } from "./l3-follow.ts";
import type { Ledger } from "./ledger.ts";
import { MmpBook } from "./mmp-settings.ts";
import { OpenOrders } from "./open-orders.ts";
import type { OrderIndex } from "./order-index.ts";
import { FLAG_CANCEL_ON_DISCONNECT, FLAG_POST_ONLY } from "./order-options.ts";
import { PairEvents, pairEventHandler } from "./pair-events.ts";
import { PairStatuses } from "./pair-status.ts";
import { lowestUnsettledOrderId, newPairState, type PairSpec, type PairState } from "./pairs.ts";
import { newQuoteWork, type QuoteLevel, Quotes } from "./quotes.ts";
import type { L3Book } from "./read-models/l3-view.ts";
import type { PairMarket } from "./read-models/pair-market.ts";
import type { RecordSink } from "./record-sink.ts";
import { type CommitListener, Results } from "./results.ts";
import { RiskStage } from "./risk-stage.ts";
import { type CommandSink, PairSequencer, SequenceIds } from "./sequencer.ts";
import { SNAPSHOT_MS, Snapshots } from "./snapshots.ts";
import type { OrderView, UserTradeView } from "./views.ts";

export type { CommandSink, CommitListener, ExchangeOptions, OrderInputs, OrderState, OrderView, PairSpec };
export type { RecordSink, ResultSink, UserTradeView };
export { LIMIT, MARKET, NEEDS_ROW, pairEventHandler, SNAPSHOT_MS };

export class Exchange {
  readonly ledger: Ledger;
  /** Each pair's status (docs/API.md 11), decided at R1. */
  readonly statuses: PairStatuses;
  private readonly pairs: PairState[] = [];
  /** Open orders, per-user and per-session lists, closing and recently closed orders. */
  readonly openOrders = new OpenOrders();
  /** The next order id (taken by the sequencers) and trade id (taken by R2). */
  readonly ids: SequenceIds;
  /** Client order ids in flight and recent, a filter over all, the database for the rest. */
  readonly clientIds: ClientIds;
  /** R1 and R2's settlement: holds, the market-buy queue, cancels' checks, releases. */
  readonly risk: RiskStage;
  /** R2: the pair workers' event records, routed to the stages (`pairEventHandler`). */
  readonly events: PairEvents;
  /** DB and OUT: rows into the writer, answers and stream messages after each commit. */
  readonly results: Results;
  /** Balances and candles written at most every SNAPSHOT_MS. */
  private readonly snapshots: Snapshots | null;
  /** Every pair records its L3 events (ExchangeOptions.journalSteps). */
  private readonly journalSteps: boolean;
  /** A follower takes no command (ExchangeOptions.follower). */
  readonly follower: boolean;
  /** Market-maker protection settings and frozen state (docs/API.md 8.10, src/core/mmp-settings.ts). */
  readonly mmp: MmpBook;
  /** Mass quotes (docs/API.md 8.12): their R1 and settlement (src/core/quotes.ts). */
  private readonly quotes: Quotes;
  /** The pairs' L3 books while wanted (docs/API.md 7.6.2, src/core/l3-follow.ts). */
  private readonly l3: L3Follow;
  /** Each user's execution sequence (docs/API.md 16): numbers given, and committed. */
  readonly execSeqs = new ExecSeqs();

  constructor(options: ExchangeOptions) {
    const { ledger, db } = options;
    const pairs = this.pairs;
    const openOrders = this.openOrders;
    this.ledger = ledger;
    this.statuses = options.statuses ?? new PairStatuses();
    this.ids = new SequenceIds(options.nextOrderId ?? 1, options.nextTradeId ?? 1);
    const clientIds = options.clientIds ?? new ClientIds();
    for (const [user, last] of options.execSeqs ?? []) this.execSeqs.restore(user, last);
    const results = new Results(db, pairs, {
      sink: options.sink,
      listener: options.listener,
      openOrders,
      clientIds,
      execSeqs: this.execSeqs,
      journalSteps: options.journalSteps,
    });
    this.clientIds = clientIds;
    this.results = results;
    const arrival = new ArrivalOrder((cmd) => this.risk.resume(cmd));
    this.quotes = new Quotes({
      ledger,
      statuses: this.statuses,
      pair: (i) => pairs[i],
      openOf: (user, pair) => openOrders.userOrdersOn(user, pair, []),
      answer: (cmd) => results.answer(cmd),
      arrival,
      afterMarketBuy: (cmd) => this.risk.afterMarketBuy(cmd),
      sessionEnded: (session) => openOrders.sessionEnded(session),
    });
    this.risk = new RiskStage({
      ledger,
      pairs,
      openOrders,
      statuses: this.statuses,
      results,
      arrival,
      quotes: this.quotes,
      clientIds,
      clientIdStored: options.clientIdStored ?? (() => Promise.reject(new Error("no client id store"))),
      feeUser: options.feeUser ?? -1,
    });
    this.mmp = new MmpBook(
      (user, pair, request) => {
        const cmd = newCommand(CMD_MMP, NO_REQUEST, user, pair);
        cmd.mmp = request;
        return pairs[pair].seq.submit(cmd);
      },
      (user, pair, s) =>
        db.mmpSetting(user, pairs[pair].spec.name, s.intervalSeconds, s.qtyLimit, s.frozenSeconds),
    );
    this.journalSteps = options.journalSteps === true;
    this.l3 = new L3Follow(pairs, openOrders, this.journalSteps);
    const { ids, risk, quotes, mmp, l3 } = this;
    this.events = new PairEvents({ pairs, ids, openOrders, risk, results, quotes, mmp, l3 });
    this.follower = options.follower === true;
    this.snapshots = options.follower === true ? null : new Snapshots(db, ledger, pairs, this.ids);
    if (options.follower !== true)
      db.settledOrderIds(() => lowestUnsettledOrderId(pairs, this.ids.nextOrderId));
  }

  /** Resting orders by id. */
  get open(): OrderIndex<OrderState> {
    return this.openOrders.open;
  }

  /** The stream hub and sessions, told of every committed change. */
  get listener(): CommitListener | null {
    return this.results.listener;
  }

  /**
   * Adds pair `spec`: its read model `market`, its worker's command ring `sink`, its currencies'
   * ledger scales, and its book sequence last committed (`seq`) with its time (`bookMicro`).
   */
  addPair(
    spec: PairSpec,
    market: PairMarket,
    sink: CommandSink,
    baseScale: number,
    quoteScale: number,
    seq = 0,
    bookMicro = 0,
  ): void {
    const s = new PairSequencer(spec.index, sink, this.ids, this.openOrders, this.results);
    this.pairs[spec.index] = newPairState(
      spec,
      this.ledger,
      market,
      s,
      baseScale,
      quoteScale,
      seq,
      bookMicro,
    );
    if (this.journalSteps) this.pairs[spec.index].l3 = [];
  }

  /** The pair's read model (market data as committed). */
  market(pair: number): PairMarket {
    return this.pairs[pair].market;
  }

  /** docs/API.md 7.6.2: the pair's order-by-order book, followed from now on (L3Follow.want). */
  wantL3(pair: number): L3Book {
    return this.l3.want(pair);
  }

  /** Commands submitted to a pair and not finished yet. */
  inFlight(pair: number): number {
    return this.pairs[pair].seq.inFlight;
  }

  // ------------------------------------------------------------------ commands in
  // Each answers at once: 0 (accepted; the result comes through the ResultSink under `request`, once
  // committed), or why it was refused with nothing changed (Code.BUSY: the pair's FIFO is full, 503).

  /** Places an order of `user` on `pair`. */
  createOrder(user: number, pair: number, order: OrderInputs, request: number): number {
    if (this.follower) return Code.FOLLOWER_READ_ONLY;
    const cmd = newCommand(CMD_CREATE, request, user, pair);
    cmd.type = order.type;
    cmd.side = order.side;
    cmd.price = order.type === LIMIT ? order.price : 0;
    cmd.amount = order.amount;
    cmd.flags = order.session !== 0 ? order.flags | FLAG_CANCEL_ON_DISCONNECT : order.flags;
    cmd.clientOrderId = order.clientOrderId;
    cmd.expiresAt = order.expiresAt;
    cmd.session = order.session;
    cmd.stopPrice = order.stopPrice ?? 0;
    cmd.stopDirection = order.stopDirection ?? 0;
    cmd.trailingDelta = order.trailingDelta ?? 0;
    return this.risk.create(cmd);
  }

  /**
   * docs/API.md 18: places an OCO of `user` on `pair`: a post-only GTC limit leg and a stop leg
   * (down for a sell, up for a buy), created in one step with one shared hold.
   */
  createOco(user: number, pair: number, oco: OcoInputs, request: number): number {
    if (this.follower) return Code.FOLLOWER_READ_ONLY;
    const cmd = newCommand(CMD_CREATE, request, user, pair);
    cmd.oco = true;
    cmd.type = LIMIT;
    cmd.side = oco.side;
    cmd.price = oco.price;
    cmd.amount = oco.amount;
    cmd.flags = oco.session !== 0 ? FLAG_POST_ONLY | FLAG_CANCEL_ON_DISCONNECT : FLAG_POST_ONLY;
    cmd.clientOrderId = oco.clientOrderId;
    cmd.expiresAt = oco.expiresAt;
    cmd.session = oco.session;
    cmd.stopPrice = oco.stopPrice;
    cmd.stopDirection = oco.side === SELL ? STOP_DIRECTION_DOWN : STOP_DIRECTION_UP;
    cmd.stopLimitPrice = oco.stopLimitPrice;
    return this.risk.create(cmd);
  }

  /**
   * docs/API.md 8.12: replaces the quote of `user` on `pair` by `levels` (bids then asks, validated by
   * the edge); both sides empty pulls it. `session`: the session tag its orders carry (0: none).
   */
  quote(
    user: number,
    pair: number,
    levels: readonly QuoteLevel[],
    request: number,
    session = 0,
    expiresAt = 0,
  ): number {
    if (this.follower) return Code.FOLLOWER_READ_ONLY;
    const cmd = newCommand(CMD_QUOTE, request, user, pair);
    cmd.quote = newQuoteWork(levels, session);
    cmd.expiresAt = expiresAt;
    return this.quotes.submit(cmd);
  }

  /** Cancels an order of `user`; NEEDS_ROW when only the order's committed row can tell why not. */
  cancelOrder(user: number, orderId: number, request: number, expiresAt = 0): number {
    if (this.follower) return Code.FOLLOWER_READ_ONLY;
    return this.risk.cancel(user, orderId, request, expiresAt);
  }

  /** The open order `orderId` of `user`, or undefined. */
  ownOpenOrder(user: number, orderId: number): OrderState | undefined {
    return this.openOrders.own(user, orderId);
  }

  /**
   * Why `orderId` is not an open order of `user`, as cancel-order answers it (docs/API.md 7.2): another
   * user's order and an unknown id alike are "not found". -1 when only the database can tell (the
   * order closed, its row is committed, and it is not among the recently closed ones).
   */
  notOpenError(user: number, orderId: number): number {
    return this.openOrders.notOpenError(user, orderId);
  }

  /**
   * Amends the open order `o` of its user (docs/API.md 8.3) to `price` (ticks) and the new total
   * `amount` (lots). Only a lower amount at the same price keeps the order's place (a REDUCE
   * command); anything else is a MOVE: the order goes to the back of its new level and may match.
   * A waiting stop order (docs/API.md 18) is always a MOVE, which may also give it a new
   * `stopPrice` (ticks; 0: unchanged), or a trailing stop a new `trailingDelta`, and keeps it
   * waiting. Amends of one order run one after the
   * other; R1 in RiskStage.amend.
   */
  amendOrder(
    o: OrderState,
    price: number,
    amount: number,
    request: number,
    expiresAt = 0,
    stopPrice = 0,
    trailingDelta = 0,
  ): number {
    if (this.follower) return Code.FOLLOWER_READ_ONLY;
    const cmd = newCommand(CMD_AMEND, request, o.user, o.pair);
    cmd.orderId = o.id;
    cmd.order = o;
    cmd.price = price;
    cmd.stopPrice = stopPrice;
    cmd.trailingDelta = trailingDelta;
    cmd.amount = amount;
    cmd.expiresAt = expiresAt;
    return this.risk.amend(cmd);
  }

  /**
   * Cancels every open order of `user` on pair `pairIndex` (-1: every pair), docs/API.md 8.4; the
   * result is the ids it cancelled, ascending, once every cancel committed. Each pair's cancels
   * enter its command FIFO as one step (CMD_CANCEL_ALL), so they follow every command the user sent
   * before: the orders resting then, and the creates still in the worker that may rest, are the
   * ones cancelled (a create that ends filled or cancelled is not listed). `safety`: the dead-man's
   * switch, which pair status does not stop (RiskStage.cancelAll).
   */
  cancelAll(user: number, pairIndex: number, request: number, expiresAt = 0, safety = false): number {
    if (this.follower) return Code.FOLLOWER_READ_ONLY;
    return this.risk.cancelAll(user, pairIndex, request, expiresAt, safety);
  }

  /**
   * Cancels every open order created under the session tag `session` (docs/API.md 8.9: the session
   * ended) like the dead-man's switch: committed and streamed like any cancel, nobody waits for an
   * answer; the session's creates still in a pair worker that may rest are cancelled behind them.
   */
  cancelSessionOrders(session: number): void {
    if (this.follower) return;
    this.risk.cancelSession(session);
  }

  /**
   * Ids of the user's orders on a pair that are open, or were until a change not yet committed:
   * the candidates of an open-orders read, which the committed rows then decide (docs/API.md 8.6).
   */
  openOrderIds(user: number, pairIndex: number): number[] {
    return this.openOrders.openOrderIds(user, pairIndex);
  }

  /** Recovery: puts a stored open order back into its book (it cannot cross: books never are). */
  /** Resolves once pair `pair` takes a command again (Sequencer.room): a start's restore waits here. */
  room(pair: number): Promise<void> {
    return this.pairs[pair].seq.room();
  }

  restoreOrder(o: OrderState): boolean {
    const cmd = newCommand(CMD_RESTORE, NO_REQUEST, o.user, o.pair);
    cmd.orderId = o.id;
    cmd.order = o;
    return this.pairs[o.pair].seq.submit(cmd);
  }

  /** A snapshot of every changed balance and candle into the current batch (at shutdown too). */
  snapshot(): void {
    this.snapshots?.take();
  }

  /**
   * A follower's refresh (src/replication/follower-state.ts): pair `pair` reads from `market` from
   * now on, built from the database as recovery builds it.
   */
  replaceMarket(pair: number, market: PairMarket): void {
    const p = this.pairs[pair];
    (p as { market: PairMarket }).market = market;
    p.bookSeq = market.seq;
    p.bookMicro = market.bookMicro;
  }

  /** A follower's refresh: the open orders are `orders` from now on (OpenOrders.replaceAll). */
  replaceOpenOrders(orders: readonly OrderState[]): void {
    this.openOrders.replaceAll(orders);
  }
}
