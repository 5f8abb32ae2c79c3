/**
 * The exchange core on the main thread: a facade over the stages a command record
 * (src/core/command.ts) passes through between the HTTP edge and the pair worker, in the order
 * exchange-core names them (STYLE 1):
 *
 *   R1   risk hold   client order id, reserve funds, the market-buy queue; or refuse (src/core/risk-stage.ts)
 *   SEQ  sequencing  the pair's command FIFO and back-pressure; order ids and time   (src/core/sequencer.ts)
 *   ME   matching    the pair worker runs the command on its book                   (ring, workers/pair)
 *   R2   settle      each event: trades move reserved funds, dones release          (src/core/risk-stage.ts,
 *                    routed by `onTrade`, `onDone`, `onAmended`, `onEnd` here)
 *   DB   persist     order and trade rows into the writer's batch; market data and stream views
 *                                                                                    (src/core/results.ts)
 *   OUT  results     after that batch commits: the edge is answered by request id and the stream
 *                    is told                                                         (src/core/results.ts)
 *
 * Open orders, per-user lists, closing and recently closed orders live in src/core/open-orders.ts;
 * snapshots of balances and candles in src/core/snapshots.ts. Everything is passed to the
 * constructor (ExchangeOptions). Everything here runs on one thread, so ledger checks and
 * reservations are atomic with respect to every other request, whatever the pair. No stage holds
 * a closure of the edge: the edge gives each request an id and receives its result through
 * `ResultSink`.
 */

import { Code } from "../errors/catalogue.ts";
import { BUY, ERR_ORDER_NOT_FOUND, OK } from "../protocol/pair/engine.ts";
import {
  AMENDED,
  DONE,
  END,
  EV_AMENDED,
  EV_DONE,
  EV_END,
  EV_KIND,
  EV_LEVEL,
  EV_MMP,
  EV_QUOTED,
  EV_RESTED,
  EV_TRADE,
  LEVEL,
  MMP,
  QUOTED,
  RESTED,
  TRADE,
} from "../protocol/pair/records.ts";
import { mulDivRoundHalfUp } from "../util/numbers.ts";
import { nowMicro } from "../util/time.ts";
import { ClientIds } from "./client-ids.ts";
import {
  type CancelAllGroup,
  CMD_AMEND,
  CMD_CANCEL,
  CMD_CANCEL_ALL,
  CMD_CREATE,
  CMD_MMP,
  CMD_QUOTE,
  CMD_RESTORE,
  LIMIT,
  MARKET,
  NEEDS_ROW,
  NO_REQUEST,
  newCommand,
  type OrderInputs,
  type OrderState,
  type ResultSink,
} from "./command.ts";
import { L3_CHANGE, L3_DONE, L3_IDLE_MS, L3_OPEN, L3Book } from "./l3-book.ts";
import type { Ledger } from "./ledger.ts";
import type { PairMarket } from "./market-data.ts";
import { MmpBook, type MmpRequest } from "./mmp-settings.ts";
import { OpenOrders } from "./open-orders.ts";
import type { OrderIndex } from "./order-index.ts";
import { FLAG_CANCEL_ON_DISCONNECT } from "./orders.ts";
import { PairStatuses } from "./pair-status.ts";
import { newQuoteWork, type QuoteLevel, Quotes } from "./quotes.ts";
import { closedError } from "./recently-closed.ts";
import { type CommitListener, type RecordSink, type ResultPair, Results } from "./results.ts";
import { pairUnits } from "./risk.ts";
import { expired, type RiskPair, RiskStage } from "./risk-stage.ts";
import { type CommandSink, PairSequencer, SequenceIds } from "./sequencer.ts";
import { SNAPSHOT_MS, Snapshots } from "./snapshots.ts";
import { type OrderView, orderView, type UserTradeView } from "./views.ts";

export type {
  CommandSink,
  CommitListener,
  OrderInputs,
  OrderState,
  OrderView,
  RecordSink,
  ResultSink,
  UserTradeView,
};
export { LIMIT, MARKET, NEEDS_ROW };

export { SNAPSHOT_MS };

/** A configured pair as the core needs it. */
export interface PairSpec {
  index: number;
  name: string;
  base: string;
  quote: string;
  priceDecimals: number;
  amountDecimals: number;
  /** Fee rates in units of 10^-FEE_DECIMALS (config.ts); absent or 0n: no fee. */
  makerFee?: bigint;
  takerFee?: bigint;
}

/**
 * Per pair: scale factors between book units and ledger units (risk.ts), its FIFO, and what the
 * results stage keeps of it (its read model, book sequence, the scratch of the command in progress).
 */
interface PairState extends RiskPair, ResultPair {
  spec: PairSpec;
}

/** What the core is built with (src/boot.ts; tests build it the same way). */
export interface ExchangeOptions {
  ledger: Ledger;
  db: RecordSink;
  /** The edge (src/http/answers.ts): told each request's result, by request id. */
  sink?: ResultSink;
  /** The stream hub (src/stream/hub.ts), told of every committed change. */
  listener?: CommitListener | null;
  /** The ids the next create and the next trade get (recovery: one past the stored ones). */
  nextOrderId?: number;
  nextTradeId?: number;
  /**
   * Client order ids, unique per user over all of the user's orders ever (CONTRACT 8.2), in bounded
   * memory (src/core/client-ids.ts); recovery fills its filter.
   */
  clientIds?: ClientIds;
  /**
   * Whether an order of `user` with this client order id is stored (its row readable: the read
   * waits for every committed batch's rows): the reader pool's query.
   */
  clientIdStored?: (user: number, clientOrderId: string) => Promise<boolean>;
  /** The fee account's user id (CONTRACT 9); needed once a pair with fees trades. */
  feeUser?: number;
  /** Each pair's status (CONTRACT 14), as recovered; the admin call changes it. */
  statuses?: PairStatuses;
}

export class Exchange {
  readonly ledger: Ledger;
  /** Each pair's status (CONTRACT 14), decided at R1. */
  readonly statuses: PairStatuses;
  private readonly pairs: PairState[] = [];
  private readonly db: RecordSink;
  /** DB and OUT: rows into the writer, answers and stream messages after each commit. */
  readonly results: Results;
  /** Open orders, per-user lists, closing and recently closed orders (src/core/open-orders.ts). */
  readonly openOrders = new OpenOrders();
  /** The next order id (taken by the sequencers) and trade id (taken by R2). */
  readonly ids: SequenceIds;
  /**
   * Client order ids: those in flight and recent ones in memory, a filter over all, and the
   * database for the rest. A key is freed again only when the book refuses the order (nothing was
   * created). Reads by client order id go to the committed rows, not here.
   */
  readonly clientIds: ClientIds;
  /** R1 and R2: holds, the market-buy queue, settlement and releases (src/core/risk-stage.ts). */
  readonly risk: RiskStage;
  /** Balances and candles written at most every SNAPSHOT_MS (src/core/snapshots.ts). */
  private readonly snapshots: Snapshots;
  /** Market-maker protection settings and frozen state (CONTRACT 12.2, src/core/mmp-settings.ts). */
  readonly mmp: MmpBook;
  /** Mass quotes (CONTRACT 12.1): their R1 and settlement (src/core/quotes.ts). */
  private readonly quotes: Quotes;
  /** Drops L3 books nobody wants (sweepL3); started by the first wantL3. */
  private l3Timer: NodeJS.Timeout | null = null;

  constructor(options: ExchangeOptions) {
    const db = options.db;
    this.ledger = options.ledger;
    this.db = db;
    this.ids = new SequenceIds(options.nextOrderId ?? 1, options.nextTradeId ?? 1);
    this.clientIds = options.clientIds ?? new ClientIds();
    this.statuses = options.statuses ?? new PairStatuses();
    this.results = new Results(db, this.pairs, {
      sink: options.sink,
      listener: options.listener,
      openOrders: this.openOrders,
      clientIds: this.clientIds,
    });
    this.risk = new RiskStage({
      ledger: this.ledger,
      pairs: this.pairs,
      openOrders: this.openOrders,
      statuses: this.statuses,
      results: this.results,
      clientIds: this.clientIds,
      clientIdStored:
        options.clientIdStored ??
        (() => Promise.reject(new Error("no database to check client order ids against"))),
      feeUser: options.feeUser ?? -1,
    });
    this.snapshots = new Snapshots(db, this.ledger, this.pairs, this.ids);
    this.mmp = new MmpBook(
      (user, pair, request) => this.submitMmp(user, pair, request),
      (user, pair, s) =>
        db.mmpSetting(user, this.pairs[pair].spec.name, s.intervalSeconds, s.qtyLimit, s.frozenSeconds),
    );
    this.quotes = new Quotes({
      ledger: this.ledger,
      statuses: this.statuses,
      pair: (i) => this.pairs[i],
      openOf: (user, pair) => this.openOrders.userOrdersOn(user, pair, []),
      answer: (cmd) => this.results.answer(cmd),
    });
    db.settledOrderIds(() => this.lowestUnsettledOrderId());
  }

  /** Resting orders by id. */
  get open(): OrderIndex<OrderState> {
    return this.openOrders.open;
  }

  /** The id the next trade gets. */
  get nextTradeId(): number {
    return this.ids.nextTradeId;
  }

  /** The stream hub (src/stream/hub.ts), told of every committed change. */
  get listener(): CommitListener | null {
    return this.results.listener;
  }

  /**
   * The lowest order id that may still get an order record: the oldest create still in a pair
   * worker (a pair's creates in the worker are in id order), else the next id to be given. Every
   * id below it has had all its records handed to the writer, or never will (refused by the book).
   */
  private lowestUnsettledOrderId(): number {
    let low = this.ids.nextOrderId;
    for (const p of this.pairs) {
      if (p === undefined) continue;
      const oldest = p.seq.oldestCreate();
      if (oldest < low) low = oldest;
    }
    return low;
  }

  addPair(
    spec: PairSpec,
    market: PairMarket,
    sink: CommandSink,
    baseScale: number,
    quoteScale: number,
    seq = 0,
    bookMicro = 0,
  ): void {
    const makerFee = spec.makerFee ?? 0n;
    const takerFee = spec.takerFee ?? 0n;
    market.seq = seq;
    market.bookMicro = bookMicro;
    this.pairs[spec.index] = {
      spec,
      market,
      seq: new PairSequencer(spec.index, sink, this.ids, this.openOrders, this.results),
      base: this.ledger.currencyIndex(spec.base),
      quote: this.ledger.currencyIndex(spec.quote),
      ...pairUnits(spec, baseScale, quoteScale),
      hasFees: makerFee !== 0n || takerFee !== 0n,
      makerFee,
      takerFee,
      makerRate: Number(makerFee),
      takerRate: Number(takerFee),
      bookSeq: seq,
      seqDirty: false,
      bookMicro,
      l3: null,
      l3Pending: false,
      touched: [],
      trades: [],
      userTrades: [],
      levels: [],
    };
  }

  market(pair: number): PairMarket {
    return this.pairs[pair].market;
  }

  /**
   * CONTRACT 13.2: the pair's order-by-order book, followed from now on (src/core/l3-book.ts). Its
   * snapshot is taken from the open orders now, or at the end of the command in the worker; it is
   * ready once the committed seq reaches the snapshot's (`L3Book.readyAt`, `whenReady`).
   */
  wantL3(pair: number): L3Book {
    const p = this.pairs[pair];
    const m = p.market;
    if (m.l3 !== null) return m.l3;
    const book = new L3Book();
    m.l3 = book;
    if (p.seq.current() === undefined) this.takeL3(p);
    else p.l3Pending = true;
    if (this.l3Timer === null) {
      this.l3Timer = setInterval(() => this.sweepL3(Date.now()), L3_IDLE_MS / 6);
      this.l3Timer.unref();
    }
    return book;
  }

  /**
   * Stops following the L3 books nobody wants any more: no stream subscriber, nobody waiting, and
   * no REST read for L3_IDLE_MS.
   */
  sweepL3(now: number): void {
    for (const p of this.pairs) {
      const book = p?.market.l3;
      if (book == null || book.subscribers > 0 || book.waiting || now - book.lastRead < L3_IDLE_MS) continue;
      p!.l3 = null;
      p!.l3Pending = false;
      p!.market.l3 = null;
    }
  }

  /**
   * Between two commands every open order of the pair rests as the book holds it; the order each
   * last rested in (`restSeq`, OpenOrders.setOpen) is its time priority. That is the book of seq
   * `bookSeq`, which the commits may not have reached yet.
   */
  private takeL3(p: PairState): void {
    p.l3Pending = false;
    const book = p.market.l3!;
    const pair = p.spec.index;
    const mine: OrderState[] = [];
    for (const o of this.openOrders.open.values()) if (o.pair === pair) mine.push(o);
    mine.sort((a, b) => a.restSeq - b.restSeq);
    for (const o of mine) book.open(o.id, o.side, o.price, o.amount - o.used);
    book.from = p.bookSeq;
    p.l3 = [];
    if (book.readyAt(p.market.seq)) book.fireReady();
  }

  /** Commands submitted to a pair and not finished yet. */
  inFlight(pair: number): number {
    return this.pairs[pair].seq.inFlight;
  }

  // ------------------------------------------------------------------ R1: commands in
  //
  // Each entry point answers at once with a code: 0 when the command was accepted (its result then
  // comes through the ResultSink under `request`, once committed), or why it was refused with
  // nothing changed (Code.BUSY: the pair's command queue is full, the edge answers 503).

  /** Places an order of `user` on `pair`. */
  createOrder(user: number, pair: number, order: OrderInputs, request: number): number {
    const cmd = newCommand(CMD_CREATE, request, user, pair);
    cmd.type = order.type;
    cmd.side = order.side;
    cmd.price = order.type === LIMIT ? order.price : 0;
    cmd.amount = order.amount;
    cmd.flags = order.flags;
    cmd.clientOrderId = order.clientOrderId;
    cmd.expiresAt = order.expiresAt;
    cmd.session = order.session;
    if (order.session !== 0) cmd.flags |= FLAG_CANCEL_ON_DISCONNECT;
    return this.risk.create(cmd);
  }

  /**
   * CONTRACT 12.1: replaces the quote of `user` on `pair` by `levels` (bids then asks, validated by
   * the edge); both sides empty pulls it. `session`: the session tag its orders carry (0: none).
   */
  quote(user: number, pair: number, levels: readonly QuoteLevel[], request: number, session = 0): number {
    const cmd = newCommand(CMD_QUOTE, request, user, pair);
    cmd.quote = newQuoteWork(levels, session);
    return this.quotes.submit(cmd);
  }

  /** Cancels an order of `user`; NEEDS_ROW when only the order's committed row can tell why not. */
  cancelOrder(user: number, orderId: number, request: number, expiresAt = 0): number {
    if (expired(expiresAt)) return Code.REQUEST_EXPIRED;
    const o = this.openOrders.own(user, orderId);
    if (o === undefined) {
      const err = this.openOrders.notOpenError(user, orderId);
      return err < 0 ? NEEDS_ROW : err;
    }
    const refused = this.statuses.refuseCancel(o.pair);
    if (refused !== 0) return refused;
    const cmd = newCommand(CMD_CANCEL, request, user, o.pair);
    cmd.orderId = o.id;
    cmd.order = o;
    return this.pairs[o.pair].seq.submit(cmd) ? 0 : Code.BUSY;
  }

  /** The open order `orderId` of `user`, or undefined. */
  ownOpenOrder(user: number, orderId: number): OrderState | undefined {
    return this.openOrders.own(user, orderId);
  }

  /**
   * Why `orderId` is not an open order of `user`, as cancel-order answers it (CONTRACT 3): another
   * user's order and an unknown id alike are "not found". -1 when only the database can tell (the
   * order closed, its row is committed, and it is not among the recently closed ones).
   */
  notOpenError(user: number, orderId: number): number {
    return this.openOrders.notOpenError(user, orderId);
  }

  /**
   * Amends the open order `o` of its user (CONTRACT 8.3) to `price` (ticks) and the new total
   * `amount` (lots). Only a lower amount at the same price keeps the order's place (a REDUCE
   * command); anything else is a MOVE: the order goes to the back of its new level and may match.
   * Amends of one order run one after the other.
   *
   * R1 holds what the amended order may need beyond what it holds now. The order's open quantity
   * can still drop (fills still in the worker), so the hold is the most the amend can cost over
   * every open quantity from 0 to the one known now; the AMENDED event settles it exactly.
   */
  amendOrder(o: OrderState, price: number, amount: number, request: number, expiresAt = 0): number {
    const cmd = newCommand(CMD_AMEND, request, o.user, o.pair);
    cmd.orderId = o.id;
    cmd.order = o;
    cmd.price = price;
    cmd.amount = amount;
    cmd.expiresAt = expiresAt;
    return this.risk.amend(cmd);
  }

  /**
   * Cancels every open order of `user` on pair `pairIndex` (-1: every pair), CONTRACT 8.4; the
   * result is the ids it cancelled, ascending, once every cancel committed. Each pair's cancels
   * enter its command FIFO as one step (CMD_CANCEL_ALL), so they follow every command the user sent
   * before: the orders resting then, and the creates still in the worker that may rest, are the
   * ones cancelled (a create that ends filled or cancelled is not listed).
   *
   * A user's cancel-all (`safety` false) is refused on a halted pair it names, and skips halted
   * pairs when it names none (CONTRACT 14); a safety cancel (the dead-man's switch) acts on every
   * pair.
   */
  cancelAll(user: number, pairIndex: number, request: number, expiresAt = 0, safety = false): number {
    if (expired(expiresAt)) return Code.REQUEST_EXPIRED;
    if (!safety && pairIndex >= 0) {
      const refused = this.statuses.refuseCancel(pairIndex);
      if (refused !== 0) return refused;
    }
    const group: CancelAllGroup = { request, outstanding: 0, cancelled: [] };
    let accepted = true;
    for (const p of this.pairs) {
      if (p === undefined || (pairIndex >= 0 && p.spec.index !== pairIndex)) continue;
      if (!safety && this.statuses.refuseCancel(p.spec.index) !== 0) continue;
      const cmd = newCommand(CMD_CANCEL_ALL, NO_REQUEST, user, p.spec.index);
      cmd.group = group;
      group.outstanding++;
      if (!p.seq.submit(cmd)) {
        group.outstanding--;
        accepted = false;
      }
    }
    if (group.outstanding === 0) queueMicrotask(() => this.results.sink.cancelAllResult(request, []));
    return accepted ? 0 : Code.BUSY;
  }

  /**
   * Cancels every open order created under the session tag `session` (CONTRACT 11.4: the session
   * ended), through the normal cancel path like the dead-man's switch: each cancel is committed and
   * streamed like any other, and nobody waits for an answer. Creates of the session still in a pair
   * worker that may rest are cancelled behind them in the pair's FIFO.
   */
  cancelSessionOrders(session: number): void {
    if (session === 0) return;
    const targets = this.openOrders.sessionOrders(session, []);
    for (const p of this.pairs) p?.seq.createsThatMayRest((o) => o.session === session, targets);
    for (const o of targets) {
      const cmd = newCommand(CMD_CANCEL, NO_REQUEST, o.user, o.pair);
      cmd.orderId = o.id;
      cmd.order = o;
      this.pairs[o.pair].seq.submit(cmd);
    }
  }

  /**
   * Ids of the user's orders on a pair that are open, or were until a change not yet committed:
   * the candidates of an open-orders read, which the committed rows then decide (CONTRACT 8.6).
   */
  openOrderIds(user: number, pairIndex: number): number[] {
    return this.openOrders.openOrderIds(user, pairIndex);
  }

  /** CONTRACT 12.2: MMP settings or a reset into the pair's FIFO (MmpBook); false when it is full. */
  private submitMmp(user: number, pair: number, request: MmpRequest): boolean {
    const cmd = newCommand(CMD_MMP, NO_REQUEST, user, pair);
    cmd.mmp = request;
    return this.pairs[pair].seq.submit(cmd);
  }

  /** Recovery: puts a stored open order back into its book (it cannot cross: books never are). */
  restoreOrder(o: OrderState): boolean {
    const cmd = newCommand(CMD_RESTORE, NO_REQUEST, o.user, o.pair);
    cmd.orderId = o.id;
    cmd.order = o;
    return this.pairs[o.pair].seq.submit(cmd);
  }

  // ------------------------------------------------------------------ R2: events out

  /** A fill of `qty` lots at `price` between the current command's taker and a resting maker. */
  onTrade(pairIndex: number, takerId: number, makerId: number, price: number, qty: number): void {
    const p = this.pairs[pairIndex];
    const taker = this.currentOrder(p, takerId);
    const maker = this.openOrders.get(makerId)!;
    const tradeId = this.ids.nextTradeId++;
    const micro = p.market.nextMicro(nowMicro());
    const buyer = taker.side === BUY ? taker : maker;
    const seller = taker.side === BUY ? maker : taker;
    this.risk.settleTrade(p, buyer, seller, buyer === taker, price, qty);
    if (taker.type === MARKET) taker.spent += BigInt(price) * BigInt(qty);
    taker.used += qty;
    maker.used += qty;
    taker.updateMicro = micro;
    maker.updateMicro = micro;
    this.touch(p, maker);
    if (maker.used === maker.amount) this.close(maker);
    const l3 = p.l3;
    if (l3 !== null) {
      const left = maker.amount - maker.used;
      l3.push(left === 0 ? L3_DONE : L3_CHANGE, maker.id, maker.side, maker.price, left);
    }
    this.results.trade(p, tradeId, taker, maker, price, qty, micro);
  }

  /**
   * The amend in progress took effect: the order is now `newLeft` lots open at `newPrice` (it was
   * `oldLeft` at `oldPrice`). Settles the amend's hold against what the order now holds.
   */
  onAmended(
    pairIndex: number,
    orderId: number,
    oldPrice: number,
    newPrice: number,
    oldLeft: number,
    newLeft: number,
  ): void {
    const p = this.pairs[pairIndex];
    const cmd = p.seq.current()!;
    const o = cmd.order!;
    this.risk.settleAmend(p, cmd, oldPrice, newPrice, oldLeft, newLeft);
    o.price = newPrice;
    o.amount = o.used + newLeft;
    o.updateMicro = nowMicro();
    this.touch(p, o);
    const l3 = p.l3;
    if (l3 !== null) {
      // CONTRACT 13.2: a reduce keeps the place (change); a move leaves the book (done), and its
      // `rested` event, if it rests again, opens it at the back.
      if (newPrice === oldPrice && newLeft < oldLeft) l3.push(L3_CHANGE, orderId, o.side, newPrice, newLeft);
      else l3.push(L3_DONE, orderId, o.side, oldPrice, 0);
    }
  }

  /** The taker of the current command now rests in the book. */
  onRested(pairIndex: number, orderId: number): void {
    const p = this.pairs[pairIndex];
    const o = this.currentOrder(p, orderId);
    this.openOrders.setOpen(o);
    if (p.l3 !== null) p.l3.push(L3_OPEN, orderId, o.side, o.price, o.amount - o.used);
  }

  /**
   * An order ends with `left` lots unfilled: releases what it still holds. It is the command's own
   * order (a remainder, a taker ended by its self-trade mode or by an MMP trigger) or a resting one.
   */
  onDone(pairIndex: number, orderId: number, reason: number, left: number): void {
    const p = this.pairs[pairIndex];
    const o = this.currentOrder(p, orderId);
    const cmd = p.seq.current();
    const l3 = p.l3;
    // Only an order that rests leaves the L3 book: not the command's own taker, nor an order being
    // moved (its done was recorded when the move took it out).
    if (l3 !== null && (cmd === undefined || cmd.orderId !== orderId || cmd.kind === CMD_CANCEL))
      l3.push(L3_DONE, orderId, o.side, o.price, 0);
    // An old quote order cancelled by a quote: its hold goes to the new quote (src/core/quotes.ts).
    if (cmd?.kind !== CMD_QUOTE || !this.quotes.absorb(cmd, p, o, reason, left))
      this.risk.releaseHold(p, o, left);
    // A market buy's unused budget is released when its command ends.
    o.cancelled = true;
    o.updateMicro = nowMicro();
    this.touch(p, o);
    this.close(o);
  }

  /**
   * An aggregated level changed. The read model takes the change when the command commits, the
   * same moment the stream sends it, so a book snapshot and the deltas after it always agree.
   */
  onLevel(pairIndex: number, side: number, price: number, total: number): void {
    this.pairs[pairIndex].levels.push(side, price, total);
  }

  /**
   * The worker reported a change of `user`'s MMP state on the pair (a trigger froze it, a reset
   * unfroze it). The sessions are told once the command's changes are committed (`onEnd`).
   */
  onMmp(pairIndex: number, user: number, frozen: number, frozenUntil: number): void {
    this.mmp.changed(user, pairIndex, frozen !== 0, frozenUntil);
  }

  /** The outcome of level `index` of the quote in progress (CONTRACT 12.1). */
  onQuoted(pairIndex: number, index: number, orderId: number, result: number): void {
    const cmd = this.pairs[pairIndex].seq.current()!;
    this.quotes.quoted(cmd, index, orderId, result, (id) => this.openOrders.get(id));
  }

  /** The worker finished the pair's oldest command with result `code`. */
  onEnd(pairIndex: number, code: number): void {
    this.endCommand(pairIndex, code);
    const p = this.pairs[pairIndex];
    // A wanted L3 book is taken between two commands (wantL3).
    if (p.l3Pending) this.takeL3(p);
    // MMP state changes of the command go out after its answer and its order reports.
    if (this.mmp.hasPending) {
      const changes = this.mmp.takePending();
      this.db.afterCommit(() => {
        const l = this.results.listener;
        if (l?.mmpChanged === undefined) return;
        for (const [user, pair, frozen, until] of changes)
          l.mmpChanged(user, this.pairs[pair].spec.name, frozen, until);
      });
    }
  }

  private endCommand(pairIndex: number, code: number): void {
    const p = this.pairs[pairIndex];
    // The worker also ends its SHUTDOWN command, which is not in the FIFO.
    const cmd = p.seq.finish();
    if (cmd === undefined) return;
    switch (cmd.kind) {
      case CMD_CREATE: {
        const o = cmd.order!;
        // Refused by the book (no liquidity, unaffordable, post-only would take): nothing happened
        // but the hold, and the client order id was not used.
        this.risk.createEnded(p, o, code !== OK);
        if (code !== OK) {
          cmd.result = code;
          this.results.reset(p);
          this.results.answer(cmd);
          return;
        }
        if (o.type === MARKET && o.used > 0) o.price = Number(mulDivRoundHalfUp(o.spent, 1n, BigInt(o.used)));
        this.touch(p, o);
        cmd.view = this.orderView(o, true);
        break;
      }
      case CMD_AMEND: {
        const o = cmd.order!;
        this.risk.amendEnded(o);
        if (code !== OK) {
          // Refused (post-only would take, not above what executed, no longer open): only the hold.
          this.risk.amendRefused(p, cmd);
          cmd.result = code === ERR_ORDER_NOT_FOUND ? closedError(o) : code;
        } else {
          // A move may have filled it completely as a taker.
          if (o.used === o.amount) this.close(o);
          this.touch(p, o);
          cmd.view = this.orderView(o, true);
        }
        break;
      }
      case CMD_CANCEL:
        // ERR_ORDER_NOT_FOUND: the order finished between the request and the command.
        cmd.result = code === ERR_ORDER_NOT_FOUND ? closedError(cmd.order!) : 0;
        break;
      case CMD_MMP: {
        // Answered once the settings row (in the batch since the call) is committed.
        const done = cmd.mmp!.done;
        if (done !== null) this.db.afterCommit(done);
        this.results.reset(p);
        return;
      }
      case CMD_QUOTE: {
        const done = this.quotes.end(
          cmd,
          p,
          code,
          (o) => this.touch(p, o),
          (o) => this.orderView(o, true),
        );
        this.quotes.ended(cmd);
        if (!done) {
          // Refused by the book (MMP frozen): nothing happened but its hold.
          this.results.reset(p);
          this.results.answer(cmd);
          return;
        }
        break;
      }
      default: {
        // Recovery replay: nothing to persist or answer; the book is as it was committed.
        p.market.applyLevels(p.levels);
        this.results.reset(p);
        return;
      }
    }
    this.results.finish(p, cmd);
  }

  /** A snapshot of every changed balance and candle into the current batch (at shutdown too). */
  snapshot(): void {
    this.snapshots.take();
  }

  // ------------------------------------------------------------------ views

  orderView(o: OrderState, withUpdate: boolean): OrderView {
    return orderView(this.pairs[o.pair].spec, o, withUpdate);
  }

  // ------------------------------------------------------------------ helpers

  /** The taker of the pair's command in progress (or a resting order with that id). */
  private currentOrder(p: PairState, id: number): OrderState {
    const cmd = p.seq.current();
    if (cmd !== undefined && cmd.orderId === id && cmd.order !== null) return cmd.order;
    if (cmd?.kind === CMD_QUOTE) {
      const level = this.quotes.levelOrder(cmd, id);
      if (level !== undefined) return level;
    }
    return this.openOrders.get(id)!;
  }

  private touch(p: PairState, o: OrderState): void {
    const t = p.touched;
    if (t.length === 0 || t[t.length - 1] !== o) {
      if (!t.includes(o)) t.push(o);
    }
  }

  private close(o: OrderState): void {
    this.openOrders.close(o);
  }
}

/**
 * Decodes a pair worker's event records (src/protocol/pair/records.ts) into the core's stages for
 * pair `pairIndex`. `onTrade` is told of each trade (metrics).
 */
export function pairEventHandler(
  exchange: Exchange,
  pairIndex: number,
  onTrade: () => void = () => {},
): (f: Float64Array, o: number) => void {
  return (f, o) => {
    switch (f[o + EV_KIND]) {
      case EV_TRADE:
        exchange.onTrade(
          pairIndex,
          f[o + TRADE.takerId],
          f[o + TRADE.makerId],
          f[o + TRADE.price],
          f[o + TRADE.qty],
        );
        onTrade();
        break;
      case EV_RESTED:
        exchange.onRested(pairIndex, f[o + RESTED.orderId]);
        break;
      case EV_DONE:
        exchange.onDone(pairIndex, f[o + DONE.orderId], f[o + DONE.reason], f[o + DONE.left]);
        break;
      case EV_LEVEL:
        exchange.onLevel(pairIndex, f[o + LEVEL.side], f[o + LEVEL.price], f[o + LEVEL.total]);
        break;
      case EV_AMENDED:
        exchange.onAmended(
          pairIndex,
          f[o + AMENDED.orderId],
          f[o + AMENDED.oldPrice],
          f[o + AMENDED.newPrice],
          f[o + AMENDED.oldLeft],
          f[o + AMENDED.newLeft],
        );
        break;
      case EV_MMP:
        exchange.onMmp(pairIndex, f[o + MMP.user], f[o + MMP.frozen], f[o + MMP.frozenUntil]);
        break;
      case EV_QUOTED:
        exchange.onQuoted(pairIndex, f[o + QUOTED.index], f[o + QUOTED.orderId], f[o + QUOTED.result]);
        break;
      case EV_END:
        exchange.onEnd(pairIndex, f[o + END.result]);
        break;
    }
  };
}
