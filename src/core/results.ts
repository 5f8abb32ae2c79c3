/**
 * Persisting and publishing results (the DB and OUT stages of src/core/command.ts).
 *
 *   persist(cmd, touched)  the order rows a command changed go into the writer's current batch
 *   commit(cmd)            its answer and stream messages wait for that batch
 *   ── batch commits ──▶   read model (book levels, seq) updated, the edge answered by request id,
 *                          then the stream told (CommitListener)
 *
 * A command's answer never leaves before the transaction holding its rows has committed
 * (docs/API.md 6), and the read model changes at the same moment the stream is told, so a book
 * snapshot and the deltas after it always agree. The commands of one batch are released together,
 * in the order they finished, by one callback per batch.
 */

import { EXEC_ORDER, EXEC_TRADE } from "../protocol/db/rows.ts";
import { nowMicro } from "../util/time.ts";
import { ClientIds } from "./client-ids.ts";
import {
  type CancelAllGroup,
  CMD_AMEND,
  CMD_CANCEL,
  CMD_CREATE,
  CMD_QUOTE,
  type Command,
  isWaitingStop,
  NO_REQUEST,
  type OrderState,
  type ResultSink,
} from "./command.ts";
import type { ExecSeqs } from "./exec-seqs.ts";
import type { OpenOrders } from "./open-orders.ts";
import type { PairStatusName } from "./pair-status.ts";
import type { L3Book } from "./read-models/l3-view.ts";
import type { PairMarket } from "./read-models/pair-market.ts";
import type { RecordSink } from "./record-sink.ts";
import { type OrderView, orderView, type UserTradeView, userTradeView, type ViewPair } from "./views.ts";

/** Receives what a committed command changed, for the stream fan-out. */
export interface CommitListener {
  /**
   * Whether anyone holds a channel the records would go to. The core builds a view only for a
   * channel with a subscriber (asked when the record is made; a subscriber that arrives before the
   * commit may miss that one record, as if it had connected just after).
   */
  wantsOrders(user: number): boolean;
  wantsUserTrades(user: number): boolean;
  /** `history:{pair}` or `exchanges` (which counts the pair's trades). */
  wantsTrades(pair: number): boolean;
  /** `created`: the command created the order (its first change; docs/API.md 17 reports it as new). */
  orderChanged(user: number, view: OrderView, created: boolean): void;
  /**
   * `orderId`: the user's order in the trade, `maker`: whether it rested (docs/API.md 17 reports the
   * fill on that order, with its liquidity).
   */
  userTrade(user: number, view: UserTradeView, orderId: number, maker: boolean): void;
  publicTrades(pair: number, trades: readonly ReturnType<PairMarket["publicTrade"]>[]): void;
  /**
   * `levels`: `side, price, total` triples in the order they changed (a price repeated later
   * wins); `seq`: the pair's book sequence after this change (docs/API.md 12.3), one more than the last.
   */
  levelsChanged(pair: number, levels: readonly number[], seq: number): void;
  /** docs/API.md 8.10: `user`'s MMP state on the pair changed (its trading sessions are told). */
  mmpChanged?(user: number, pairName: string, frozen: boolean, frozenUntil: number): void;
  /**
   * A pair's status changed (`POST /admin/pairs/status`) and the change is committed: the `status`
   * channel and every logged-on session are told (docs/API.md 11, 12.2, 13).
   */
  pairStatusChanged?(pair: number, pairName: string, status: PairStatusName): void;
  /** The change just applied moved the best bid or ask (docs/API.md 7.6.1): the market shows it now. */
  bboChanged(pair: number): void;
  /**
   * The L3 events (src/core/read-models/l3-view.ts) of book change `seq`, applied to the pair's L3 book just
   * now (docs/API.md 7.6.2); only while that book is followed.
   */
  l3Changed(pair: number, seq: number, events: readonly number[]): void;
}

/** What results need of a pair: its name for the rows, its read model, what R2 gathered. */
export interface ResultPair {
  spec: ViewPair & { index: number };
  market: PairMarket;
  /** The fee rates as numbers, for the trade rows (0 unless `hasFees`). */
  hasFees: boolean;
  makerRate: number;
  takerRate: number;
  /** Book sequence (docs/API.md 12.3): the last number given to a change of this pair's book. */
  bookSeq: number;
  /** `bookSeq` changed since the last batch was sealed (then it is written to meta with that batch). */
  seqDirty: boolean;
  // Scratch of the command in progress, handed to its record at END.
  /** Orders changed by the command being processed (taker and makers). */
  touched: OrderState[];
  /**
   * Trailing stops whose stop price the command moved (docs/API.md 18): their rows go into its
   * batch, with no execution number and no report (DECISIONS.md "Trailing stops").
   */
  trailed: OrderState[];
  trades: ReturnType<PairMarket["publicTrade"]>[];
  /** Trades of the command in progress (its book step's, ResultsOptions.journalSteps). */
  stepTrades: number;
  userTrades: [number, UserTradeView, number, boolean][];
  /** Level changes of the command in progress: `side, price, total` triples (Publication.levels). */
  levels: number[];
  /** Time of the last book change (docs/API.md 7.6.1 eventTimeMicro), committed with `bookSeq`. */
  bookMicro: number;
  /**
   * L3 events of the command in progress (src/core/read-models/l3-view.ts) while the pair's L3 book is
   * followed; null otherwise, and then nothing is recorded.
   */
  l3: number[] | null;
  /** The L3 book is wanted and its snapshot waits for the end of the command in the worker. */
  l3Pending: boolean;
}

/** A publication's empty lists: one shared array rather than three new ones per command. */
const NONE: readonly never[] = Object.freeze([]);

/** Answers nobody: the core's sink until the edge attaches its own. */
const NOBODY: ResultSink = {
  orderResult() {},
  cancelResult() {},
  cancelAllResult() {},
  quoteResult() {},
};

/** What the results stage is built with, besides the writer and the pairs. */
export interface ResultsOptions {
  /** The edge (src/entry/answers.ts): told each request's result, by request id. */
  sink?: ResultSink;
  /** The stream hub, told of every committed change. */
  listener?: CommitListener | null;
  /** Open and closing orders: a closed order moves to the recently closed ones at its commit. */
  openOrders: OpenOrders;
  /** Client order ids: a committed create's key moves to the recent window. */
  clientIds: ClientIds;
  /** Each user's execution sequence (docs/API.md 16). */
  execSeqs: ExecSeqs;
  /**
   * A leader with a replication port: each book change goes into the batch as a journal-only
   * record with its L3 events (RecordSink.bookStep), which every pair then records
   * (DECISIONS.md "Live streams on a follower").
   */
  journalSteps?: boolean;
}

export class Results {
  /** The edge: told each request's result. */
  readonly sink: ResultSink;
  /** The stream hub. */
  readonly listener: CommitListener | null;
  private readonly openOrders: OpenOrders;
  private readonly clientIds: ClientIds;
  private readonly execSeqs: ExecSeqs;
  private readonly journalSteps: boolean;
  /** Commands finished since the current batch was opened, released when it commits. */
  private batch: Command[] | null = null;
  /** The orders the command being finished created (their first row), for `orderChanged`. */
  private readonly fresh: OrderState[] = [];

  constructor(
    private readonly db: RecordSink,
    /** The core's pairs, by index (the core's own array: pairs added later are seen). */
    private readonly pairs: readonly ResultPair[],
    options: ResultsOptions,
  ) {
    this.sink = options.sink ?? NOBODY;
    this.listener = options.listener ?? null;
    this.openOrders = options.openOrders;
    this.clientIds = options.clientIds;
    this.execSeqs = options.execSeqs;
    this.journalSteps = options.journalSteps === true;
    // The next command after a batch is sealed belongs to the next batch.
    db.beforeSend(() => {
      this.batch = null;
      for (const p of this.pairs) {
        if (p === undefined || !p.seqDirty) continue;
        // The pair's book sequence commits with the changes it numbers: a restart goes on from it.
        p.seqDirty = false;
        db.meta(`book_seq:${p.spec.name}`, p.bookSeq);
        db.meta(`book_micro:${p.spec.name}`, p.bookMicro);
      }
    });
  }

  /**
   * A fill of `qty` lots at `price` between `taker` and `maker` settled as trade `tradeId`: its row
   * goes into the batch with its number in each side's execution sequence (below the numbers of the
   * order changes the command makes, given when it ends), the pair's market data takes it, and the
   * stream views wanted are built.
   */
  trade(
    p: ResultPair,
    tradeId: number,
    taker: OrderState,
    maker: OrderState,
    price: number,
    qty: number,
    micro: number,
  ): void {
    const takerRate = p.hasFees ? p.takerRate : 0;
    const makerRate = p.hasFees ? p.makerRate : 0;
    const db = this.db;
    const takerSeq = this.execSeqs.next(taker.user);
    const makerSeq = this.execSeqs.next(maker.user);
    db.trade(
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
      takerSeq,
      makerSeq,
    );
    db.execution(taker.user, takerSeq, EXEC_TRADE, tradeId);
    db.execution(maker.user, makerSeq, EXEC_TRADE, tradeId);
    p.stepTrades++;
    p.market.addTrade(taker.side, taker.type, price, qty, micro, tradeId);
    const listener = this.listener;
    if (listener === null) return;
    if (listener.wantsTrades(p.spec.index)) p.trades.push(p.market.latestTrade());
    if (listener.wantsUserTrades(taker.user)) {
      const view = userTradeView(p.spec, {
        id: tradeId,
        side: taker.side,
        type: taker.type,
        price,
        amount: qty,
        timeMicro: micro,
        feeRate: takerRate,
        execSeq: takerSeq,
        orderId: taker.id,
        maker: false,
      });
      p.userTrades.push([taker.user, view, taker.id, false]);
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
        execSeq: makerSeq,
        orderId: maker.id,
        maker: true,
      });
      p.userTrades.push([maker.user, view, maker.id, true]);
    }
  }

  /**
   * DB and OUT of a finished command: its changed orders' rows go into the batch, the views and
   * book changes it made become its publication, and it waits for the batch's commit.
   */
  finish(p: ResultPair, cmd: Command): void {
    const touched = p.touched;
    cmd.execs = this.persist(p.spec.index, touched);
    if (p.trailed.length > 0) this.persistTrailed(p);
    // A create or amend is answered with its order as the command left it (and numbered).
    if ((cmd.kind === CMD_CREATE || cmd.kind === CMD_AMEND) && cmd.result === 0) {
      cmd.view = orderView(p.spec, cmd.order!, true);
      if (cmd.sibling !== null) cmd.siblingView = orderView(p.spec, cmd.sibling, true);
    }
    const openOrders = this.openOrders;
    const listener = this.listener;
    let closed: OrderState[] | null = null;
    let orders: [number, OrderView, boolean][] | null = null;
    const fresh = this.fresh;
    for (let i = 0; i < touched.length; i++) {
      const o = touched[i];
      if (openOrders.isClosing(o)) {
        if (closed === null) closed = [];
        closed.push(o);
      }
      if (listener?.wantsOrders(o.user)) {
        if (orders === null) orders = [];
        orders.push([o.user, orderView(p.spec, o, false), fresh.length > 0 && fresh.includes(o)]);
      }
    }
    cmd.closed = closed;
    touched.length = 0;
    fresh.length = 0;
    this.publication(p, cmd, orders);
    this.commit(cmd);
  }

  /** What the command's commit tells the stream; none when no channel wanted anything. */
  private publication(p: ResultPair, cmd: Command, orders: [number, OrderView, boolean][] | null): void {
    const hasLevels = p.levels.length > 0;
    const stepTrades = p.stepTrades;
    p.stepTrades = 0;
    const trades = p.trades.length > 0 ? p.trades : NONE;
    const userTrades = p.userTrades.length > 0 ? p.userTrades : NONE;
    if (!hasLevels && trades === NONE && userTrades === NONE && orders === null) return;
    let levels: number[] | null = null;
    let l3: number[] | null = null;
    if (hasLevels) {
      levels = p.levels;
      p.levels = [];
      // One number per committed change of the book, in commit (= publish) order.
      p.bookSeq++;
      p.seqDirty = true;
      const micro = nowMicro();
      p.bookMicro = micro > p.bookMicro ? micro : p.bookMicro + 1;
      if (p.l3 !== null && p.l3.length > 0) {
        l3 = p.l3;
        p.l3 = [];
      }
      // The followers' live streams: this change's number, time, trades and L3 events.
      if (this.journalSteps) this.db.bookStep(p.spec.name, p.bookSeq, p.bookMicro, stepTrades, l3 ?? NONE);
    }
    // The lists move to the publication; the pair starts new ones only for those it gave away.
    if (trades !== NONE) p.trades = [];
    if (userTrades !== NONE) p.userTrades = [];
    // Nothing to tell when no channel wanted anything (levels go out only to `orders:` holders,
    // which the hub checks itself).
    cmd.publication = {
      levels,
      seq: p.bookSeq,
      micro: p.bookMicro,
      l3,
      trades,
      orders: orders ?? NONE,
      userTrades,
    };
  }

  /** Runs `done` once the writer's current batch is committed (a CMD_MMP's answer). */
  afterCommit(done: () => void): void {
    this.db.afterCommit(done);
  }

  /**
   * docs/API.md 8.10: MMP state changes `[user, pair, frozen, frozenUntil]` of a command, told once its
   * changes are committed, after its answer and its order reports.
   */
  mmpChanged(changes: readonly [number, number, boolean, number][]): void {
    this.db.afterCommit(() => {
      const l = this.listener;
      if (l?.mmpChanged === undefined) return;
      for (const [user, pair, frozen, until] of changes)
        l.mmpChanged(user, this.pairs[pair].spec.name, frozen, until);
    });
  }

  /** The command in progress left nothing to persist or publish (refused, or a recovery replay). */
  reset(p: ResultPair): void {
    p.touched.length = 0;
    p.trailed.length = 0;
    p.trades.length = 0;
    p.stepTrades = 0;
    p.userTrades.length = 0;
    p.levels.length = 0;
    if (p.l3 !== null) p.l3.length = 0;
  }

  /**
   * DB: the order rows the command changed (each once, in the order they changed): the whole row
   * the first time, then only what changes (OrderState.rowSent), each change numbered in its user's
   * execution sequence. Returns the numbers as `user, number` pairs (null: none).
   */
  persist(pair: number, touched: OrderState[]): number[] | null {
    const db = this.db;
    const fresh = this.fresh;
    fresh.length = 0;
    const seqs = this.execSeqs;
    const name = this.pairs[pair].spec.name;
    if (touched.length === 0) return null;
    const execs: number[] = [];
    for (let i = 0; i < touched.length; i++) {
      const o = touched[i];
      const seq = seqs.next(o.user);
      o.execSeq = seq;
      execs.push(o.user, seq);
      db.execution(o.user, seq, EXEC_ORDER, o.id);
      // A waiting stop's changes (an amend may change its stop price) are whole rows, ORDER
      // upserts, which apply before any ORDER_UPDATE (DECISIONS.md "Amend of a waiting stop order").
      if (o.rowSent && !isWaitingStop(o)) {
        db.updateOrder(
          o.id,
          o.price,
          o.amount,
          o.used,
          o.cancelled,
          o.updateMicro,
          seq,
          o.executed,
          o.stopDirection !== 0 || o.ocoId !== 0 ? o : undefined,
        );
        continue;
      }
      if (!o.rowSent) fresh.push(o);
      o.rowSent = true;
      this.insertOrder(o, name, seq);
    }
    return execs;
  }

  /** The whole ORDER record of `o` on pair `name`, numbered `execSeq` (its stop facts with a stop). */
  private insertOrder(o: OrderState, name: string, execSeq: number): void {
    this.db.insertOrder(
      o.id,
      o.user,
      name,
      o.side,
      o.type,
      o.price,
      o.amount,
      o.used,
      o.cancelled,
      o.createMicro,
      o.updateMicro,
      o.flags,
      o.clientOrderId,
      execSeq,
      o.executed,
      o.stopDirection !== 0 || o.ocoId !== 0 ? o : undefined,
    );
  }

  /**
   * The rows of the trailing stops the command moved: whole ORDER records (an upsert, as every
   * change of a waiting stop), after its other rows, with the number of their latest change.
   */
  private persistTrailed(p: ResultPair): void {
    const trailed = p.trailed;
    // A stop moved twice in the step (a cascade) has two records: the last is its row.
    for (let i = 0; i < trailed.length; i++) this.insertOrder(trailed[i], p.spec.name, trailed[i].execSeq);
    trailed.length = 0;
  }

  /** OUT: `cmd` is answered and published once the batch holding its rows commits. */
  commit(cmd: Command): void {
    let batch = this.batch;
    if (batch === null) {
      const list: Command[] = [];
      this.batch = batch = list;
      this.db.afterCommit(() => this.release(list));
    }
    batch.push(cmd);
  }

  /** Answers `cmd` now: it changed nothing that must commit first (a refusal). */
  answer(cmd: Command): void {
    const sink = this.sink;
    switch (cmd.kind) {
      case CMD_CREATE:
      case CMD_AMEND: {
        const ok = cmd.result === 0;
        let view = cmd.view;
        if (ok && view === null) view = orderView(this.pairs[cmd.pair].spec, cmd.order!, true);
        if (cmd.request === NO_REQUEST) break;
        if (cmd.oco) sink.orderResult(cmd.request, cmd.result, ok ? view : null, ok ? cmd.siblingView : null);
        else sink.orderResult(cmd.request, cmd.result, ok ? view : null);
        break;
      }
      case CMD_CANCEL:
        if (cmd.group !== null) {
          if (cmd.result === 0) cmd.group.cancelled.push(cmd.orderId);
          this.settle(cmd.group);
        } else if (cmd.request !== NO_REQUEST) sink.cancelResult(cmd.request, cmd.result);
        break;
      case CMD_QUOTE:
        if (cmd.request !== NO_REQUEST)
          sink.quoteResult(cmd.request, cmd.result, cmd.result === 0 ? cmd.quote!.result : null);
        break;
    }
  }

  /** One step of a cancel-all is done (a cancel answered, or a pair's cancels all sent). */
  settle(group: CancelAllGroup): void {
    if (--group.outstanding === 0)
      this.sink.cancelAllResult(
        group.request,
        group.cancelled.sort((a, b) => a - b),
      );
  }

  private release(list: Command[]): void {
    const openOrders = this.openOrders;
    const seqs = this.execSeqs;
    for (let i = 0; i < list.length; i++) {
      const cmd = list[i];
      const execs = cmd.execs;
      if (execs !== null) for (let j = 0; j < execs.length; j += 2) seqs.commit(execs[j], execs[j + 1]);
      // Their final rows are committed: from now on the database answers for them.
      const closed = cmd.closed;
      if (closed !== null) for (let j = 0; j < closed.length; j++) openOrders.committed(closed[j]);
      const pub = cmd.publication;
      let bbo = false;
      let l3: readonly number[] | null = null;
      let book: L3Book | null = null;
      if (pub !== null && pub.levels !== null) {
        const market = this.pairs[cmd.pair].market;
        bbo = market.applyChange(pub.levels, pub.seq, pub.micro);
        book = market.l3;
        // Events of a change the L3 book's snapshot already holds are not applied again.
        if (book !== null && pub.l3 !== null && book.from >= 0 && pub.seq > book.from) {
          book.apply(pub.l3);
          l3 = pub.l3;
        }
      }
      if (cmd.kind === CMD_CREATE && cmd.clientOrderId !== undefined)
        this.clientIds.committed(ClientIds.key(cmd.user, cmd.clientOrderId));
      this.answer(cmd);
      if (pub !== null) this.publish(cmd.pair, pub, bbo, l3);
      // A wanted L3 book whose snapshot was ahead of the commits is now the committed book.
      if (book?.waiting && book.readyAt(pub!.seq)) book.fireReady();
    }
  }

  private publish(
    pair: number,
    pub: NonNullable<Command["publication"]>,
    bbo: boolean,
    l3: readonly number[] | null,
  ): void {
    const listener = this.listener;
    if (listener === null) return;
    if (pub.levels !== null) listener.levelsChanged(pair, pub.levels, pub.seq);
    if (bbo) listener.bboChanged(pair);
    if (l3 !== null) listener.l3Changed(pair, pub.seq, l3);
    if (pub.trades.length > 0) listener.publicTrades(pair, pub.trades);
    // A user's trades of the command carry lower execution numbers than its order changes: they go
    // first, so each user's reports come in number order (docs/API.md 16).
    const userTrades = pub.userTrades;
    for (let i = 0; i < userTrades.length; i++) {
      const t = userTrades[i];
      listener.userTrade(t[0], t[1], t[2], t[3]);
    }
    const orders = pub.orders;
    for (let i = 0; i < orders.length; i++) listener.orderChanged(orders[i][0], orders[i][1], orders[i][2]);
  }
}
