/**
 * Persisting and publishing results (the DB and OUT stages of src/core/command.ts).
 *
 *   persist(cmd, touched)  the order rows a command changed go into the writer's current batch
 *   commit(cmd)            its answer and stream messages wait for that batch
 *   ── batch commits ──▶   read model (book levels, seq) updated, the edge answered by request id,
 *                          then the stream told (CommitListener)
 *
 * A command's answer never leaves before the transaction holding its rows has committed
 * (CONTRACT 6), and the read model changes at the same moment the stream is told, so a book
 * snapshot and the deltas after it always agree. The commands of one batch are released together,
 * in the order they finished, by one callback per batch.
 */

import type { DbWriter } from "../db/writer.ts";
import {
  type CancelAllGroup,
  CMD_AMEND,
  CMD_CANCEL,
  CMD_CREATE,
  type Command,
  NO_REQUEST,
  type OrderState,
  type ResultSink,
} from "./command.ts";
import type { PairMarket } from "./market-data.ts";
import { closedError, RecentlyClosed } from "./recently-closed.ts";
import type { OrderView, UserTradeView } from "./views.ts";

/** What the core needs from the database writer. */
export type RecordSink = Pick<
  DbWriter,
  | "insertOrder"
  | "updateOrder"
  | "trade"
  | "balance"
  | "candle"
  | "meta"
  | "afterCommit"
  | "beforeSend"
  | "settledOrderIds"
  | "tradesThroughMark"
>;

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
  orderChanged(user: number, view: OrderView): void;
  userTrade(user: number, view: UserTradeView): void;
  publicTrades(pair: number, trades: readonly ReturnType<PairMarket["publicTrade"]>[]): void;
  /**
   * `levels`: `side, price, total` triples in the order they changed (a price repeated later
   * wins); `seq`: the pair's book sequence after this change (CONTRACT 9), one more than the last.
   */
  levelsChanged(pair: number, levels: readonly number[], seq: number): void;
}

/** What results need of a pair: its name for the rows, its read model for the book. */
export interface ResultPair {
  spec: { name: string };
  market: PairMarket;
}

/** Answers nobody: the core's sink until the edge attaches its own. */
const NOBODY: ResultSink = {
  orderResult() {},
  cancelResult() {},
  cancelAllResult() {},
};

export class Results {
  /** The edge: told each request's result. */
  sink: ResultSink = NOBODY;
  /** The stream hub. */
  listener: CommitListener | null = null;
  /** Closed orders whose final row is not committed yet (a cancel's answer needs them). */
  readonly closing = new Map<number, OrderState>();
  /** Orders whose final rows have committed, and why they are closed (src/core/recently-closed.ts). */
  readonly recentlyClosed = new RecentlyClosed();
  /** Commands finished since the current batch was opened, released when it commits. */
  private batch: Command[] | null = null;
  /** A create with a client order id committed (the core's ClientIds moves the key to its window). */
  createCommitted: (user: number, clientOrderId: string) => void = () => {};

  constructor(
    private readonly db: RecordSink,
    /** The core's pairs, by index (the core's own array: pairs added later are seen). */
    private readonly pairs: readonly ResultPair[],
    /** The order as answered, for an amend that changed nothing (built when it is released). */
    private readonly viewOf: (o: OrderState) => OrderView,
  ) {
    // The next command after a batch is sealed belongs to the next batch.
    db.beforeSend(() => {
      this.batch = null;
    });
  }

  /**
   * DB: the order rows the command changed (each once, in the order they changed): the whole row
   * the first time, then only what changes (OrderState.rowSent).
   */
  persist(pair: number, touched: OrderState[]): void {
    const db = this.db;
    const name = this.pairs[pair].spec.name;
    for (let i = 0; i < touched.length; i++) {
      const o = touched[i];
      if (o.rowSent) {
        db.updateOrder(o.id, o.price, o.amount, o.used, o.cancelled, o.updateMicro);
        continue;
      }
      o.rowSent = true;
      db.insertOrder(
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
      );
    }
  }

  /** An order closed in the command being persisted: cancels see it until its row commits. */
  closed(o: OrderState): void {
    this.closing.set(o.id, o);
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
        if (ok && view === null) view = this.viewOf(cmd.order!);
        if (cmd.request !== NO_REQUEST) sink.orderResult(cmd.request, cmd.result, ok ? view : null);
        break;
      }
      case CMD_CANCEL:
        if (cmd.group !== null) {
          if (cmd.result === 0) cmd.group.cancelled.push(cmd.orderId);
          this.settle(cmd.group);
        } else if (cmd.request !== NO_REQUEST) sink.cancelResult(cmd.request, cmd.result);
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
    const closing = this.closing;
    for (let i = 0; i < list.length; i++) {
      const cmd = list[i];
      // Their final rows are committed: from now on the database answers for them.
      const closed = cmd.closed;
      if (closed !== null)
        for (let j = 0; j < closed.length; j++) {
          const o = closed[j];
          if (closing.get(o.id) === o) {
            closing.delete(o.id);
            this.recentlyClosed.add(o.id, o.user, closedError(o));
          }
        }
      const pub = cmd.publication;
      if (pub !== null && pub.levels !== null) {
        const market = this.pairs[cmd.pair].market;
        market.applyLevels(pub.levels);
        market.seq = pub.seq;
      }
      if (cmd.kind === CMD_CREATE && cmd.clientOrderId !== undefined)
        this.createCommitted(cmd.user, cmd.clientOrderId);
      this.answer(cmd);
      if (pub !== null) this.publish(cmd.pair, pub);
    }
  }

  private publish(pair: number, pub: NonNullable<Command["publication"]>): void {
    const listener = this.listener;
    if (listener === null) return;
    if (pub.levels !== null) listener.levelsChanged(pair, pub.levels, pub.seq);
    if (pub.trades.length > 0) listener.publicTrades(pair, pub.trades);
    const orders = pub.orders;
    for (let i = 0; i < orders.length; i++) listener.orderChanged(orders[i][0], orders[i][1]);
    const userTrades = pub.userTrades;
    for (let i = 0; i < userTrades.length; i++) listener.userTrade(userTrades[i][0], userTrades[i][1]);
  }
}
