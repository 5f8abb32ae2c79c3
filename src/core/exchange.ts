/**
 * The exchange core on the main thread: the stages a command record (src/core/command.ts) passes
 * through between the HTTP edge and the pair worker, in the order exchange-core names them
 * (STYLE 1):
 *
 *   R1   risk hold   reserve funds in the ledger (src/core/risk.ts), or refuse      (`place`, `amend`)
 *   SEQ  sequencing  the pair's command FIFO and back-pressure; id and time    (src/core/sequencer.ts, `entered`)
 *   ME   matching    the pair worker runs the command on its book              (ring, workers/pair)
 *   R2   settle      apply each event: trades move reserved funds, dones release (`onTrade`, `onDone`, `onAmended`, `onEnd`)
 *   DB   persist     every changed row goes into the writer's current batch    (src/core/results.ts `persist`)
 *   OUT  results     after that batch commits: the edge is answered by request id and the stream
 *                    is told                                                    (src/core/results.ts)
 *
 * Everything here runs on one thread, so ledger checks and reservations are atomic with respect to
 * every other request, whatever the pair. No stage holds a closure of the edge: the edge gives each
 * request an id and receives its result through `ResultSink`.
 */

import { Code } from "../errors/catalogue.ts";
import {
  BUY,
  DONE_REMAINDER,
  ERR_ORDER_NOT_FOUND,
  MAX_BUDGET,
  NO_BUDGET,
  OK,
  SELL,
} from "../protocol/pair/engine.ts";
import {
  AMENDED,
  DONE,
  END,
  EV_AMENDED,
  EV_DONE,
  EV_END,
  EV_KIND,
  EV_LEVEL,
  EV_RESTED,
  EV_TRADE,
  LEVEL,
  RESTED,
  TRADE,
} from "../protocol/pair/records.ts";
import { floorToDouble, mulDivRoundHalfUp } from "../util/numbers.ts";
import { nowMicro } from "../util/time.ts";
import { CID_DUPLICATE, CID_MAYBE, ClientIds } from "./client-ids.ts";
import {
  type CancelAllGroup,
  CID_CHECK_ASKING,
  CID_CHECK_FAILED,
  CID_CHECK_UNUSED,
  CID_CHECK_USED,
  CMD_AMEND,
  CMD_CANCEL,
  CMD_CANCEL_ALL,
  CMD_CREATE,
  CMD_RESTORE,
  type Command,
  LIMIT,
  MARKET,
  NEEDS_ROW,
  NO_REQUEST,
  newCommand,
  type OrderInputs,
  type OrderState,
  type ResultSink,
} from "./command.ts";
import type { Ledger } from "./ledger.ts";
import type { PairMarket } from "./market-data.ts";
import { OrderIndex } from "./order-index.ts";
import { FLAG_CANCEL_ON_DISCONNECT, TIF_GTC, TIF_MASK } from "./orders.ts";
import { PairStatuses } from "./pair-status.ts";
import { closedError } from "./recently-closed.ts";
import { type CommitListener, type RecordSink, Results } from "./results.ts";
import { amendHold, limitHold, pairUnits, type SettlementPair, settleFill } from "./risk.ts";
import { type CommandSink, PairSequencer } from "./sequencer.ts";
import { type OrderView, orderView, type UserTradeView, userTradeView } from "./views.ts";

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

/**
 * How often balances and candles are written (ms): a snapshot of every changed balance and candle
 * at most once a second instead of with every group commit, which saves about two balance rows and
 * half a candle row per order under load. Recovery adds the trades committed after the snapshot
 * (migration 005, src/boot.ts).
 */
export const SNAPSHOT_MS = 1000;

/** `placeNow`: the create's client order id must be checked against the database first. */
const CHECK_CLIENT_ID = -2;

/** A publication's empty lists: one shared array rather than three new ones per command. */
const NONE: readonly never[] = Object.freeze([]);

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

/** Per pair: scale factors between book units and ledger units (risk.ts), its FIFO, R2 scratch. */
interface PairState extends SettlementPair {
  spec: PairSpec;
  market: PairMarket;
  seq: PairSequencer;
  /** The fee rates as numbers, for the trade rows. */
  makerRate: number;
  takerRate: number;
  /** Book sequence (CONTRACT 9): the last number given to a change of this pair's book. */
  bookSeq: number;
  /** `bookSeq` changed since the last batch was sealed (then it is written to meta with that batch). */
  seqDirty: boolean;
  // R2 scratch of the command in progress, handed to its record at END.
  /** Orders changed by the command being processed (taker and makers). */
  touched: OrderState[];
  trades: ReturnType<PairMarket["publicTrade"]>[];
  userTrades: [number, UserTradeView][];
  /** Level changes of the command in progress: `side, price, total` triples (Publication.levels). */
  levels: number[];
}

export class Exchange {
  readonly ledger: Ledger;
  /** Each pair's status (CONTRACT 14), decided at R1. */
  readonly statuses = new PairStatuses();
  private readonly pairs: PairState[] = [];
  private readonly db: RecordSink;
  /** DB and OUT: rows into the writer, answers and stream messages after each commit. */
  readonly results: Results;
  /** Resting orders (and the taker of the command in progress), by id. */
  readonly open = new OrderIndex<OrderState>();
  /** The resting orders of each user (cancel-all). */
  private readonly openByUser = new Map<number, OrderState[]>();
  /** The resting orders of each session tag (CONTRACT 11.4, `cancelSessionOrders`). */
  private readonly openBySession = new Map<number, Set<OrderState>>();
  /**
   * Client order ids, unique per user over all of the user's orders ever (CONTRACT 8.2), in bounded
   * memory (src/core/client-ids.ts): those in flight and recent ones here, a filter over all, and the
   * database for the rest. A key is freed again only when the book refuses the order (nothing was
   * created). Reads by client order id go to the committed rows, not here.
   */
  clientIds = new ClientIds();
  /**
   * Whether an order of `user` with this client order id is stored (its row readable: the read
   * waits for every committed batch's rows). Set by the server to the reader pool's query.
   */
  clientIdStored: (user: number, clientOrderId: string) => Promise<boolean> = () =>
    Promise.reject(new Error("no database to check client order ids against"));
  /**
   * Creates of a user waiting behind one whose client order id is being checked against the
   * database, in arrival order (the head is the one being checked): a user's creates stay in order.
   */
  private readonly checkingClientIds = new Map<number, Command[]>();
  nextOrderId = 1;
  nextTradeId = 1;
  /** The fee account's user id (CONTRACT 9); must be set before any pair with fees trades. */
  feeUser = -1;
  /** Market buys in flight per user (each holds the user's whole available quote balance). */
  private readonly marketBuys = new Map<number, number>();
  /** Commands refused for funds while a market buy of the user was in flight, oldest first. */
  private readonly waitingForMarketBuys = new Map<number, Command[]>();
  /** When the next batch takes a snapshot of balances and candles (Date.now() ms). */
  private snapshotDue = 0;

  constructor(ledger: Ledger, db: RecordSink) {
    this.ledger = ledger;
    this.db = db;
    this.results = new Results(db, this.pairs, (o) => this.orderView(o, true));
    this.results.createCommitted = (user, clientOrderId) =>
      this.clientIds.committed(ClientIds.key(user, clientOrderId));
    // Every balance record says which trades it holds: all those settled so far.
    db.tradesThroughMark(() => this.nextTradeId - 1);
    // Balances and candles keep only their latest values: they go into a batch as it is sealed,
    // every SNAPSHOT_MS (one record per changed balance or candle per snapshot, not one per
    // command); between snapshots the trades are the record (migration 005).
    db.beforeSend(() => {
      const now = Date.now();
      if (now >= this.snapshotDue) {
        this.snapshot();
        this.snapshotDue = now + SNAPSHOT_MS;
      }
      for (const p of this.pairs) {
        if (p === undefined || !p.seqDirty) continue;
        // The pair's book sequence commits with the changes it numbers: a restart goes on from it.
        p.seqDirty = false;
        db.meta(`book_seq:${p.spec.name}`, p.bookSeq);
      }
    });
    db.settledOrderIds(() => this.lowestUnsettledOrderId());
  }

  /** The stream hub (src/stream/hub.ts), told of every committed change. */
  get listener(): CommitListener | null {
    return this.results.listener;
  }
  set listener(l: CommitListener | null) {
    this.results.listener = l;
  }

  /** The edge (src/http/answers.ts): told each request's result, by request id. */
  set sink(s: ResultSink) {
    this.results.sink = s;
  }

  /**
   * The lowest order id that may still get an order record: the oldest create still in a pair
   * worker (a pair's creates in the worker are in id order), else the next id to be given. Every
   * id below it has had all its records handed to the writer, or never will (refused by the book).
   */
  private lowestUnsettledOrderId(): number {
    let low = this.nextOrderId;
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
  ): void {
    const makerFee = spec.makerFee ?? 0n;
    const takerFee = spec.takerFee ?? 0n;
    market.seq = seq;
    this.pairs[spec.index] = {
      spec,
      market,
      seq: new PairSequencer(spec.index, sink, this),
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
      touched: [],
      trades: [],
      userTrades: [],
      levels: [],
    };
  }

  market(pair: number): PairMarket {
    return this.pairs[pair].market;
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
    const refused = this.statuses.refuseChange(pair);
    if (refused !== 0) return refused;
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
    return this.place(cmd);
  }

  /**
   * A create: R1 now, or, while one of the user's creates waits for the database to judge its
   * client order id, after it (0: its result comes later).
   */
  private place(cmd: Command): number {
    const waiting = this.checkingClientIds.get(cmd.user);
    if (waiting !== undefined) {
      waiting.push(cmd);
      return 0;
    }
    const code = this.placeNow(cmd);
    if (code !== CHECK_CLIENT_ID) return code;
    this.checkingClientIds.set(cmd.user, [cmd]);
    this.checkClientId(cmd);
    return 0;
  }

  /** Asks the database whether the client order id of `cmd` (the head of its user's queue) is used. */
  private checkClientId(cmd: Command): void {
    cmd.cidCheck = CID_CHECK_ASKING;
    this.clientIds.dbChecks++;
    this.clientIdStored(cmd.user, cmd.clientOrderId!).then(
      (stored) => {
        cmd.cidCheck = stored ? CID_CHECK_USED : CID_CHECK_UNUSED;
        if (stored) this.clientIds.dbDuplicates++;
        this.placeChecked(cmd.user);
      },
      () => {
        cmd.cidCheck = CID_CHECK_FAILED;
        this.placeChecked(cmd.user);
      },
    );
  }

  /** The database judged the head of the user's queue: it and those behind it run R1 in order. */
  private placeChecked(user: number): void {
    const list = this.checkingClientIds.get(user)!;
    while (list.length > 0) {
      const cmd = list[0];
      const code = this.placeNow(cmd);
      if (code === CHECK_CLIENT_ID) {
        this.checkClientId(cmd);
        return;
      }
      list.shift();
      if (code !== 0) {
        cmd.result = code;
        this.results.answer(cmd);
      }
    }
    this.checkingClientIds.delete(user);
  }

  /**
   * R1 of a create: hold what the order may cost, then hand it to its pair's FIFO. CHECK_CLIENT_ID
   * when only the database can tell whether its client order id was used (nothing done yet).
   */
  private placeNow(cmd: Command): number {
    if (expired(cmd.expiresAt)) return Code.REQUEST_EXPIRED;
    const p = this.pairs[cmd.pair];
    const ledger = this.ledger;
    const user = cmd.user;
    const marketBuy = cmd.type === MARKET && cmd.side === BUY;
    // A market buy holds the user's whole available quote balance while it is in the worker: the
    // next one is decided against what the first leaves, one after the other.
    if (marketBuy && this.marketBuys.has(user)) return this.afterMarketBuys(cmd);
    const cid = cmd.clientOrderId;
    const clientKey = cid === undefined ? undefined : ClientIds.key(user, cid);
    if (clientKey !== undefined) {
      const check = cmd.cidCheck;
      if (check === CID_CHECK_USED) return Code.CLIENT_ORDER_ID_DUPLICATE;
      if (check === CID_CHECK_FAILED) return Code.INTERNAL;
      const known = this.clientIds.check(user, cid!, clientKey, check === CID_CHECK_UNUSED);
      if (known === CID_DUPLICATE) return Code.CLIENT_ORDER_ID_DUPLICATE;
      if (known === CID_MAYBE) return CHECK_CLIENT_ID;
    }
    const currency = cmd.side === SELL ? p.base : p.quote;
    let hold: bigint;
    if (!marketBuy) {
      hold = limitHold(p, cmd.side, cmd.price, cmd.amount);
      cmd.budget = NO_BUDGET;
    } else {
      // Market buy: hold everything available; the worker refuses the order when walking the book
      // would cost more, and the unused part is released. The budget travels as a double: exact up
      // to 2^53 ticks × lots, above that rounded down to the nearest double (at most a 2^-52 part
      // of the balance left out), and the hold is exactly that budget.
      let units = ledger.available(user, currency) / p.quoteMul;
      if (units > BigInt(MAX_BUDGET)) units = floorToDouble(units);
      cmd.budget = Number(units);
      hold = units * p.quoteMul;
    }
    if (!ledger.reserve(user, currency, hold)) {
      // A market buy of this user holds its whole quote balance for a moment: decide this order
      // against the balance that buy leaves, as if the user's orders ran one by one.
      if (this.marketBuys.has(user)) return this.afterMarketBuys(cmd);
      return Code.INSUFFICIENT_FUNDS;
    }
    cmd.hold = hold;
    if (marketBuy) this.marketBuys.set(user, (this.marketBuys.get(user) ?? 0) + 1);
    if (clientKey !== undefined) this.clientIds.accepted(user, cid!, clientKey);
    if (p.seq.submit(cmd)) return 0;
    ledger.release(user, currency, hold);
    if (marketBuy) this.marketBuyEnded(user);
    if (clientKey !== undefined) this.clientIds.refused(clientKey);
    return Code.BUSY;
  }

  /** `cmd` is decided again once the user's market buys in flight have ended. */
  private afterMarketBuys(cmd: Command): 0 {
    const list = this.waitingForMarketBuys.get(cmd.user);
    if (list === undefined) this.waitingForMarketBuys.set(cmd.user, [cmd]);
    else list.push(cmd);
    return 0;
  }

  /** A market buy of `user` released its hold: orders that waited for it are decided now. */
  private marketBuyEnded(user: number): void {
    const n = (this.marketBuys.get(user) ?? 1) - 1;
    if (n > 0) {
      this.marketBuys.set(user, n);
      return;
    }
    this.marketBuys.delete(user);
    const list = this.waitingForMarketBuys.get(user);
    if (list === undefined) return;
    this.waitingForMarketBuys.delete(user);
    // After the current event is handled, in arrival order (a run may start another market buy,
    // and the orders behind it wait again).
    queueMicrotask(() => {
      for (const cmd of list) this.retry(cmd);
    });
  }

  /** Runs R1 again for a command that waited; a refusal now is its result. */
  private retry(cmd: Command): void {
    const code = cmd.kind === CMD_CREATE ? this.place(cmd) : this.amend(cmd);
    if (code === 0) return;
    cmd.result = code;
    this.results.answer(cmd);
  }

  /** Cancels an order of `user`; NEEDS_ROW when only the order's committed row can tell why not. */
  cancelOrder(user: number, orderId: number, request: number, expiresAt = 0): number {
    if (expired(expiresAt)) return Code.REQUEST_EXPIRED;
    const o = this.open.get(orderId);
    if (o === undefined || o.user !== user) {
      const err = this.notOpenError(user, orderId);
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
    const o = this.open.get(orderId);
    return o !== undefined && o.user === user ? o : undefined;
  }

  /**
   * Why `orderId` is not an open order of `user`, as cancel-order answers it (CONTRACT 3): another
   * user's order and an unknown id alike are "not found". -1 when only the database can tell (the
   * order closed, its row is committed, and it is not among the recently closed ones).
   */
  notOpenError(user: number, orderId: number): number {
    const c = this.results.closing.get(orderId);
    if (c !== undefined) return c.user === user ? closedError(c) : Code.ORDER_NOT_FOUND;
    if (this.open.has(orderId)) return Code.ORDER_NOT_FOUND;
    return this.results.recentlyClosed.errorFor(user, orderId, Code.ORDER_NOT_FOUND);
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
    const refused = this.statuses.refuseChange(o.pair);
    if (refused !== 0) return refused;
    const cmd = newCommand(CMD_AMEND, request, o.user, o.pair);
    cmd.orderId = o.id;
    cmd.order = o;
    cmd.price = price;
    cmd.amount = amount;
    cmd.expiresAt = expiresAt;
    return this.amend(cmd);
  }

  /** R1 of an amend. */
  private amend(cmd: Command): number {
    if (expired(cmd.expiresAt)) return Code.REQUEST_EXPIRED;
    const o = cmd.order!;
    const user = o.user;
    if (o.amending !== null) {
      o.amending.push(cmd);
      return 0;
    }
    if (this.open.get(o.id) !== o) {
      const err = this.notOpenError(user, o.id);
      return err < 0 ? closedError(o) : err;
    }
    if (cmd.amount <= o.used) return Code.AMEND_NOT_ABOVE_EXECUTED;
    const p = this.pairs[o.pair];
    const delta = cmd.amount - o.amount;
    if (cmd.price === o.price && delta === 0) {
      // Nothing to change: the order as it stands once what is in flight has committed.
      this.results.commit(cmd);
      return 0;
    }
    const currency = o.side === SELL ? p.base : p.quote;
    const hold = amendHold(p, o.side, o.price, o.amount - o.used, cmd.price, delta);
    if (hold > 0n && !this.ledger.reserve(user, currency, hold)) {
      if (this.marketBuys.has(user)) return this.afterMarketBuys(cmd);
      return Code.INSUFFICIENT_FUNDS;
    }
    o.amending = [];
    cmd.delta = delta;
    cmd.hold = hold;
    if (p.seq.submit(cmd)) return 0;
    if (hold > 0n) this.ledger.release(user, currency, hold);
    this.amendEnded(o);
    return Code.BUSY;
  }

  /** The amend of `o` in the worker ended: the next one waiting for it runs. */
  private amendEnded(o: OrderState): void {
    const waiting = o.amending;
    o.amending = null;
    if (waiting === undefined || waiting === null || waiting.length === 0) return;
    queueMicrotask(() => {
      for (const cmd of waiting) this.retry(cmd);
    });
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
    const targets: OrderState[] = [];
    const mine = this.openBySession.get(session);
    if (mine !== undefined) for (const o of mine) targets.push(o);
    for (const p of this.pairs) {
      if (p === undefined) continue;
      for (const cmd of p.seq.inWorker()) {
        const o = cmd.order;
        if (cmd.kind !== CMD_CREATE || o === null || o.session !== session || o.type !== LIMIT) continue;
        if ((o.flags & TIF_MASK) === TIF_GTC && !this.open.has(o.id)) targets.push(o);
      }
    }
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
    const ids: number[] = [];
    const mine = this.openByUser.get(user);
    if (mine !== undefined) for (const o of mine) if (o.pair === pairIndex) ids.push(o.id);
    for (const o of this.results.closing.values())
      if (o.user === user && o.pair === pairIndex) ids.push(o.id);
    return ids;
  }

  /** Recovery: puts a stored open order back into its book (it cannot cross: books never are). */
  restoreOrder(o: OrderState): boolean {
    const cmd = newCommand(CMD_RESTORE, NO_REQUEST, o.user, o.pair);
    cmd.orderId = o.id;
    cmd.order = o;
    return this.pairs[o.pair].seq.submit(cmd);
  }

  // ------------------------------------------------------------------ SEQ: entering the ring

  /** SequencerHost: `cmd` is in its pair's command ring. */
  entered(cmd: Command): void {
    if (cmd.kind === CMD_CREATE) {
      // The id and time are taken as the command enters the ring, so ids follow matching order.
      const id = cmd.orderId;
      this.nextOrderId = id + 1;
      const micro = nowMicro();
      cmd.order = {
        id,
        user: cmd.user,
        pair: cmd.pair,
        side: cmd.side,
        type: cmd.type,
        price: cmd.price,
        amount: cmd.amount,
        used: 0,
        cancelled: false,
        createMicro: micro,
        updateMicro: micro,
        budget: cmd.budget === NO_BUDGET ? 0n : cmd.hold,
        spent: 0n,
        flags: cmd.flags,
        clientOrderId: cmd.clientOrderId,
        rowSent: false,
        session: cmd.session,
        // Every field is set here, so a resting order never changes shape (nor grows a property
        // store) when it is listed or amended.
        amending: null,
        userSlot: -1,
      };
    } else if (cmd.kind === CMD_RESTORE) this.setOpen(cmd.order!);
  }

  /** SequencerHost: what a cancel-all sent now on pair `pair` must cancel. */
  cancelTargets(pair: number, user: number): OrderState[] {
    const out: OrderState[] = [];
    const mine = this.openByUser.get(user);
    if (mine !== undefined) for (const o of mine) if (o.pair === pair) out.push(o);
    // Creates still in the worker that may rest.
    for (const cmd of this.pairs[pair].seq.inWorker()) {
      const o = cmd.order;
      if (cmd.kind !== CMD_CREATE || o === null || o.user !== user || o.type !== LIMIT) continue;
      if ((o.flags & TIF_MASK) === TIF_GTC && !this.open.has(o.id)) out.push(o);
    }
    return out;
  }

  /** SequencerHost: a cancel-all's cancels on one pair are all in the ring. */
  cancelAllSent(cmd: Command): void {
    const group = cmd.group!;
    // Deferred: the answer must not come before the caller learned the call was accepted.
    queueMicrotask(() => this.results.settle(group));
  }

  // ------------------------------------------------------------------ R2: events out

  /** A fill of `qty` lots at `price` between the current command's taker and a resting maker. */
  onTrade(pairIndex: number, takerId: number, makerId: number, price: number, qty: number): void {
    const p = this.pairs[pairIndex];
    const taker = this.currentOrder(p, takerId);
    const maker = this.open.get(makerId)!;
    const ledger = this.ledger;
    const tradeId = this.nextTradeId++;
    const micro = p.market.nextMicro(nowMicro());
    const buyer = taker.side === BUY ? taker : maker;
    const seller = taker.side === BUY ? maker : taker;
    settleFill(ledger, p, this.feeUser, buyer, seller, buyer === taker, price, qty);
    const takerRate = p.hasFees ? p.takerRate : 0;
    const makerRate = p.hasFees ? p.makerRate : 0;
    if (taker.type === MARKET) taker.spent += BigInt(price) * BigInt(qty);
    taker.used += qty;
    maker.used += qty;
    taker.updateMicro = micro;
    maker.updateMicro = micro;
    this.touch(p, maker);
    if (maker.used === maker.amount) this.close(maker);
    this.db.trade(
      tradeId,
      p.spec.name,
      price,
      qty,
      taker.id,
      maker.id,
      taker.user,
      maker.user,
      taker.side,
      taker.type,
      maker.type,
      micro,
      takerRate,
      makerRate,
    );
    p.market.addTrade(taker.side, taker.type, price, qty, micro);
    const listener = this.results.listener;
    if (listener !== null) {
      if (listener.wantsTrades(pairIndex)) p.trades.push(p.market.latestTrade());
      if (listener.wantsUserTrades(taker.user)) {
        const view = userTradeView(p.spec, {
          id: tradeId,
          side: taker.side,
          type: taker.type,
          price,
          amount: qty,
          timeMicro: micro,
          feeRate: takerRate,
        });
        p.userTrades.push([taker.user, view]);
      }
      if (listener.wantsUserTrades(maker.user)) {
        const view = userTradeView(p.spec, {
          id: tradeId,
          side: maker.side,
          type: maker.type,
          price,
          amount: qty,
          timeMicro: micro,
          feeRate: makerRate,
        });
        p.userTrades.push([maker.user, view]);
      }
    }
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
    const currency = o.side === SELL ? p.base : p.quote;
    const change = limitHold(p, o.side, newPrice, newLeft) - limitHold(p, o.side, oldPrice, oldLeft);
    const unused = cmd.hold - change;
    if (unused < 0n) throw new Error(`amend of order ${orderId}: the hold falls short by ${-unused}`);
    if (unused > 0n) this.ledger.release(o.user, currency, unused);
    cmd.hold = 0n;
    o.price = newPrice;
    o.amount = o.used + newLeft;
    o.updateMicro = nowMicro();
    this.touch(p, o);
  }

  /** The taker of the current command now rests in the book. */
  onRested(pairIndex: number, orderId: number): void {
    const p = this.pairs[pairIndex];
    this.setOpen(this.currentOrder(p, orderId));
  }

  /** An order ends with `left` lots unfilled: releases what it still holds. */
  onDone(pairIndex: number, orderId: number, reason: number, left: number): void {
    const p = this.pairs[pairIndex];
    const o = reason === DONE_REMAINDER ? this.currentOrder(p, orderId) : this.open.get(orderId)!;
    this.releaseHold(p, o, left);
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
    const p = this.pairs[pairIndex];
    p.levels.push(side, price, total);
  }

  /** The worker finished the pair's oldest command with result `code`. */
  onEnd(pairIndex: number, code: number): void {
    const p = this.pairs[pairIndex];
    // The worker also ends its SHUTDOWN command, which is not in the FIFO.
    const cmd = p.seq.finish();
    if (cmd === undefined) return;
    const ledger = this.ledger;
    switch (cmd.kind) {
      case CMD_CREATE: {
        const o = cmd.order!;
        if (o.type === MARKET && o.side === BUY) {
          if (o.budget > 0n) ledger.release(o.user, p.quote, o.budget);
          o.budget = 0n;
          this.marketBuyEnded(o.user);
        }
        if (code !== OK) {
          // Refused by the book (no liquidity, unaffordable, post-only would take): nothing happened
          // but the hold, and the client order id was not used.
          if (o.clientOrderId !== undefined) this.clientIds.refused(ClientIds.key(o.user, o.clientOrderId));
          this.releaseHold(p, o, o.amount);
          cmd.result = code;
          this.resetCommand(p);
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
        this.amendEnded(o);
        if (code !== OK) {
          // Refused (post-only would take, not above what executed, no longer open): only the hold.
          if (cmd.hold > 0n) ledger.release(o.user, o.side === SELL ? p.base : p.quote, cmd.hold);
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
      default: {
        // Recovery replay: nothing to persist or answer; the book is as it was committed.
        p.market.applyLevels(p.levels);
        this.resetCommand(p);
        return;
      }
    }
    this.persist(p, cmd);
    this.results.commit(cmd);
  }

  /** DB: the command's changed orders, and what its commit must release and publish. */
  private persist(p: PairState, cmd: Command): void {
    const touched = p.touched;
    this.results.persist(p.spec.index, touched);
    const closing = this.results.closing;
    const listener = this.results.listener;
    let closed: OrderState[] | null = null;
    let orders: [number, OrderView][] | null = null;
    for (let i = 0; i < touched.length; i++) {
      const o = touched[i];
      if (closing.get(o.id) === o) {
        if (closed === null) closed = [];
        closed.push(o);
      }
      if (listener?.wantsOrders(o.user)) {
        if (orders === null) orders = [];
        orders.push([o.user, this.orderView(o, false)]);
      }
    }
    cmd.closed = closed;
    touched.length = 0;
    const hasLevels = p.levels.length > 0;
    const trades = p.trades.length > 0 ? p.trades : NONE;
    const userTrades = p.userTrades.length > 0 ? p.userTrades : NONE;
    if (!hasLevels && trades === NONE && userTrades === NONE && orders === null) return;
    let levels: number[] | null = null;
    if (hasLevels) {
      levels = p.levels;
      p.levels = [];
      // One number per committed change of the book, in commit (= publish) order.
      p.bookSeq++;
      p.seqDirty = true;
    }
    // The lists move to the publication; the pair starts new ones only for those it gave away.
    if (trades !== NONE) p.trades = [];
    if (userTrades !== NONE) p.userTrades = [];
    // Nothing to tell when no channel wanted anything (levels go out only to `orders:` holders,
    // which the hub checks itself).
    cmd.publication = { levels, seq: p.bookSeq, trades, orders: orders ?? NONE, userTrades };
  }

  /**
   * A snapshot (migration 005): every balance and candle changed since the last one goes into the
   * current batch, and meta 'balances_through' / 'candles_through' say that the rows hold every
   * trade up to now. Also written at shutdown (src/boot.ts).
   */
  snapshot(): void {
    const db = this.db;
    const names = this.ledger.currencies;
    this.ledger.drainDirty((user, c, available, reserved) => db.balance(user, names[c], available, reserved));
    for (const p of this.pairs) {
      if (p === undefined) continue;
      const name = p.spec.name;
      p.market.drainCandles((period, c) => db.candle(name, period, c[0], c[1], c[2], c[3], c[4], c[5]));
    }
    const through = this.nextTradeId - 1;
    db.meta("balances_through", through);
    db.meta("candles_through", through);
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
    return this.open.get(id)!;
  }

  private touch(p: PairState, o: OrderState): void {
    const t = p.touched;
    if (t.length === 0 || t[t.length - 1] !== o) {
      if (!t.includes(o)) t.push(o);
    }
  }

  /** Releases what `lots` of a limit order or a sell hold (a market buy's budget is released apart). */
  private releaseHold(p: PairState, o: OrderState, lots: number): void {
    if (o.type === LIMIT || o.side === SELL)
      this.ledger.release(o.user, o.side === SELL ? p.base : p.quote, limitHold(p, o.side, o.price, lots));
  }

  private setOpen(o: OrderState): void {
    this.open.set(o.id, o);
    // A moved order rests again: it is listed already.
    if (o.userSlot >= 0) return;
    let mine = this.openByUser.get(o.user);
    if (mine === undefined) {
      mine = [];
      this.openByUser.set(o.user, mine);
    }
    o.userSlot = mine.push(o) - 1;
    if (o.session !== 0) {
      let set = this.openBySession.get(o.session);
      if (set === undefined) {
        set = new Set();
        this.openBySession.set(o.session, set);
      }
      set.add(o);
    }
  }

  private close(o: OrderState): void {
    if (this.open.get(o.id) === o) {
      this.open.delete(o.id);
      // Out of its user's list in O(1): the last order takes its slot.
      const mine = this.openByUser.get(o.user)!;
      const last = mine.pop()!;
      if (last !== o) {
        mine[o.userSlot] = last;
        last.userSlot = o.userSlot;
      }
      o.userSlot = -1;
      if (mine.length === 0) this.openByUser.delete(o.user);
      if (o.session !== 0) {
        const set = this.openBySession.get(o.session);
        if (set?.delete(o) && set.size === 0) this.openBySession.delete(o.session);
      }
    }
    this.results.closed(o);
  }

  private resetCommand(p: PairState): void {
    p.touched.length = 0;
    p.trades.length = 0;
    p.userTrades.length = 0;
    p.levels.length = 0;
  }
}

/** CONTRACT 11.2: the deadline `expiresAt` (Unix ms, 0: none) has passed. */
function expired(expiresAt: number): boolean {
  return expiresAt !== 0 && Date.now() > expiresAt;
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
      case EV_END:
        exchange.onEnd(pairIndex, f[o + END.result]);
        break;
    }
  };
}
