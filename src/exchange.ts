/**
 * The exchange core on the main thread: the stages a command passes through between the HTTP edge
 * and the pair worker, in the order exchange-core names them (STYLE 1):
 *
 *   R1  risk hold   reserve funds in the ledger, assign the order id and time   (`createOrder`)
 *   ME  matching    the pair worker runs the command on its book                 (ring, worker)
 *   R2  settle      apply each event: trades move reserved funds, dones release  (`onTrade`, `onDone`, `onAmended`)
 *   DB  persist     every changed row goes into the writer's current batch       (`onTrade`, `onEnd`)
 *   OUT answer      the reply and the stream messages leave after that batch commits (`afterCommit`)
 *
 * Everything here runs on one thread, so ledger checks and reservations are atomic with respect to
 * every other request, whatever the pair.
 */

import { FEE_DECIMALS } from "./config.ts";
import type { DbWriter } from "./db/writer.ts";
import { Code } from "./errors.ts";
import type { Ledger } from "./ledger.ts";
import type { PairMarket } from "./market-data.ts";
import { mulDivRoundHalfUp, pow10 } from "./numbers.ts";
import { ENGINE_FLAGS, FLAG_POST_ONLY, TIF_GTC, TIF_MASK } from "./orders.ts";
import {
  BUY,
  DONE_REMAINDER,
  ERR_ORDER_NOT_FOUND,
  MAX_BUDGET,
  NO_BUDGET,
  OK,
  SELL,
} from "./protocol/engine.ts";
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
} from "./protocol/pair.ts";
import { amendHold, limitHold, type PairUnits, pairUnits } from "./risk.ts";
import { type OrderView, orderView, type UserTradeView, userTradeView } from "./views.ts";

export type { OrderView, UserTradeView };

import { nowMicro } from "./time.ts";

export const LIMIT = 0;
export const MARKET = 1;

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

/** Fee rates are integers in units of 10^-FEE_DECIMALS. */
const FEE_UNIT = pow10(FEE_DECIMALS);

/** What the core needs from a pair worker's command ring (see src/pair-client.ts). */
export interface CommandSink {
  /** Resolves once the command ring has room again. */
  writable(): Promise<void>;
  sendLimit(orderId: number, user: number, side: 0 | 1, price: number, qty: number, flags: number): boolean;
  sendMarket(orderId: number, user: number, side: 0 | 1, qty: number, budget: number): boolean;
  sendCancel(orderId: number): boolean;
  sendReduce(orderId: number, by: number): boolean;
  sendMove(orderId: number, price: number, delta: number, flags: number): boolean;
}

/** What the core needs from the database writer. */
export type RecordSink = Pick<
  DbWriter,
  "order" | "trade" | "balance" | "candle" | "meta" | "afterCommit" | "beforeSend" | "settledOrderIds"
>;

/** Live state of an order the core knows about (open, or finishing in the current command). */
export interface OrderState {
  id: number;
  user: number;
  pair: number;
  side: 0 | 1;
  type: 0 | 1;
  /** Limit price in ticks; for a market order 0 until it is final, then the average price. */
  price: number;
  amount: number;
  used: number;
  cancelled: boolean;
  createMicro: number;
  updateMicro: number;
  /** Market buy: quote (ledger units) still reserved for it. Market orders: ticks × lots spent. */
  budget: bigint;
  spent: bigint;
  /** Options (src/orders.ts): time in force, post-only. */
  flags: number;
  clientOrderId: string | undefined;
  /** Set while an amend of the order is in the worker: the amends waiting behind it. */
  amending?: (() => void)[] | null;
  /** Index in its user's list of open orders (Exchange.openByUser); -1 or absent when not in it. */
  userSlot?: number;
}

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
  publicTrades(pair: number, trades: ReturnType<PairMarket["publicTrade"]>[]): void;
  /** `seq`: the pair's book sequence after this change (CONTRACT 9), one more than the last. */
  levelsChanged(pair: number, buy: Map<number, number>, sell: Map<number, number>, seq: number): void;
}

export type CreateReply = (error: number, order: OrderView | null) => void;
export type CancelReply = (error: number) => void;
/** The ids of the orders a cancel-all cancelled, ascending. */
export type CancelAllReply = (cancelled: number[]) => void;

/** Commands a pair may hold while its command ring is full; past it, requests get 503. */
const MAX_WAITING = 10_000;

const CMD_RESTORE = 0;
const CMD_CREATE = 1;
const CMD_CANCEL = 2;
const CMD_AMEND = 3;

interface Pending {
  kind: number;
  order: OrderState | null;
  orderId: number;
  user: number;
  replyCreate: CreateReply | null;
  replyCancel: CancelReply | null;
  /** Amend: ledger units held at R1 for it and not settled yet (quote for a buy, base for a sell). */
  hold?: bigint;
}

/** Per pair: scale factors between book units and ledger units (risk.ts), and the command FIFO. */
interface PairState extends PairUnits {
  spec: PairSpec;
  market: PairMarket;
  sink: CommandSink;
  base: number;
  quote: number;
  /** False when both fee rates are 0: settlement then does no fee work at all. */
  hasFees: boolean;
  makerFee: bigint;
  takerFee: bigint;
  /** The same rates as numbers, for the trade rows. */
  makerRate: number;
  takerRate: number;
  /** Book sequence (CONTRACT 9): the last number given to a change of this pair's book. */
  seq: number;
  /** `seq` changed since the last batch was sealed (then it is written to meta with that batch). */
  seqDirty: boolean;
  /** Commands waiting for room in the command ring, oldest first (bounded by MAX_WAITING). */
  waiting: (() => boolean)[];
  /** Commands sent to the worker and not yet answered by END, oldest first. */
  pending: Pending[];
  pendingHead: number;
  /** Orders changed by the command being processed (taker and makers). */
  touched: OrderState[];
  trades: ReturnType<PairMarket["publicTrade"]>[];
  userTrades: [number, UserTradeView][];
  buyLevels: Map<number, number>;
  sellLevels: Map<number, number>;
}

export class Exchange {
  readonly ledger: Ledger;
  private readonly pairs: PairState[] = [];
  private readonly db: RecordSink;
  /** Resting orders (and the taker of the command in progress), by id. */
  readonly open = new Map<number, OrderState>();
  /** Closed orders whose final row is not committed yet (cancel answers need them). */
  private readonly closing = new Map<number, OrderState>();
  /** The resting orders of each user (cancel-all). */
  private readonly openByUser = new Map<number, OrderState[]>();
  /**
   * `user:clientOrderId` of every order ever accepted with a client order id: they are unique per
   * user (CONTRACT 8.2). A key is dropped again only when the book refuses the order (nothing was
   * created). Reads by client order id go to the committed rows, not here.
   */
  private readonly clientIds = new Set<string>();
  nextOrderId = 1;
  nextTradeId = 1;
  listener: CommitListener | null = null;
  /** The fee account's user id (CONTRACT 9); must be set before any pair with fees trades. */
  feeUser = -1;
  /** Market buys in flight per user (each holds the user's whole available quote balance). */
  private readonly marketBuys = new Map<number, number>();
  /** Orders refused for funds while a market buy of the user was in flight, oldest first. */
  private readonly waitingForMarketBuys = new Map<number, (() => void)[]>();

  constructor(ledger: Ledger, db: RecordSink) {
    this.ledger = ledger;
    this.db = db;
    // Balances and candles keep only their latest values: they go into each batch as it is sealed
    // (one record per changed balance or candle per transaction, not one per command).
    db.beforeSend(() => {
      this.flushBalances();
      for (const p of this.pairs) {
        if (p === undefined) continue;
        const name = p.spec.name;
        if (p.seqDirty) {
          // The pair's book sequence commits with the changes it numbers: a restart goes on from it.
          p.seqDirty = false;
          db.meta(`book_seq:${name}`, p.seq);
        }
        p.market.drainCandles((period, c) => db.candle(name, period, c[0], c[1], c[2], c[3], c[4], c[5]));
      }
    });
    db.settledOrderIds(() => this.lowestUnsettledOrderId());
  }

  /**
   * The lowest order id that may still get an order record: the oldest create still in a pair
   * worker (a pair's pending creates are in id order), else the next id to be given. Every id
   * below it has had all its records handed to the writer, or never will (refused by the book).
   */
  private lowestUnsettledOrderId(): number {
    let low = this.nextOrderId;
    for (const p of this.pairs) {
      if (p === undefined) continue;
      for (let i = p.pendingHead; i < p.pending.length; i++) {
        const cmd = p.pending[i];
        if (cmd.kind === CMD_CREATE) {
          if (cmd.orderId < low) low = cmd.orderId;
          break;
        }
      }
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
      sink,
      base: this.ledger.currencyIndex(spec.base),
      quote: this.ledger.currencyIndex(spec.quote),
      ...pairUnits(spec, baseScale, quoteScale),
      hasFees: makerFee !== 0n || takerFee !== 0n,
      makerFee,
      takerFee,
      makerRate: Number(makerFee),
      takerRate: Number(takerFee),
      seq,
      seqDirty: false,
      waiting: [],
      pending: [],
      pendingHead: 0,
      touched: [],
      trades: [],
      userTrades: [],
      buyLevels: new Map(),
      sellLevels: new Map(),
    };
  }

  market(pair: number): PairMarket {
    return this.pairs[pair].market;
  }

  /** Commands sent to a pair's worker and not answered yet. */
  inFlight(pair: number): number {
    const p = this.pairs[pair];
    return p.pending.length - p.pendingHead + p.waiting.length;
  }

  // ------------------------------------------------------------------ R1: commands in

  /**
   * Places an order. `price` (ticks) is ignored for market orders. Calls `reply` once: with an
   * error code (and nothing changed), or with the order after its own matching, once committed.
   * Returns false when the command ring and the queue waiting for it are full (nothing changed; the
   * caller answers 503).
   */
  createOrder(
    user: number,
    pairIndex: number,
    type: 0 | 1,
    side: 0 | 1,
    price: number,
    amount: number,
    reply: CreateReply,
    flags = 0,
    clientOrderId?: string,
  ): boolean {
    const p = this.pairs[pairIndex];
    const ledger = this.ledger;
    const marketBuy = type === MARKET && side === BUY;
    // A market buy holds the user's whole available quote balance while it is in the worker: the
    // next one is decided against what the first leaves, one after the other.
    if (marketBuy && this.marketBuys.has(user))
      return this.createAfterMarketBuys(
        user,
        pairIndex,
        type,
        side,
        price,
        amount,
        reply,
        flags,
        clientOrderId,
      );
    const clientKey = clientOrderId === undefined ? undefined : `${user}:${clientOrderId}`;
    if (clientKey !== undefined && this.clientIds.has(clientKey)) {
      reply(Code.CLIENT_ORDER_ID_DUPLICATE, null);
      return true;
    }
    let hold: bigint;
    let currency: number;
    let budget = NO_BUDGET;
    if (type === LIMIT || side === SELL) {
      currency = side === SELL ? p.base : p.quote;
      hold = limitHold(p, side, price, amount);
    } else {
      // Market buy: hold everything available (at most MAX_BUDGET ticks × lots); the worker
      // refuses the order when walking the book would cost more, and the unused part is released.
      currency = p.quote;
      let units = ledger.available(user, currency) / p.quoteMul;
      if (units > BigInt(MAX_BUDGET)) units = BigInt(MAX_BUDGET);
      budget = Number(units);
      hold = units * p.quoteMul;
    }
    if (!ledger.reserve(user, currency, hold)) {
      // A market buy of this user holds its whole quote balance for a moment: decide this order
      // against the balance that buy leaves, as if the user's orders ran one by one.
      if (this.marketBuys.has(user))
        return this.createAfterMarketBuys(
          user,
          pairIndex,
          type,
          side,
          price,
          amount,
          reply,
          flags,
          clientOrderId,
        );
      reply(Code.INSUFFICIENT_FUNDS, null);
      return true;
    }
    if (marketBuy) this.marketBuys.set(user, (this.marketBuys.get(user) ?? 0) + 1);
    if (clientKey !== undefined) this.clientIds.add(clientKey);
    // The id and time are taken when the command enters the ring, so ids follow matching order.
    const send = (): boolean => {
      const id = this.nextOrderId;
      const sent =
        type === LIMIT
          ? p.sink.sendLimit(id, user, side, price, amount, flags & ENGINE_FLAGS)
          : p.sink.sendMarket(id, user, side, amount, budget);
      if (!sent) return false;
      this.nextOrderId = id + 1;
      const micro = nowMicro();
      const order: OrderState = {
        id,
        user,
        pair: pairIndex,
        side,
        type,
        price: type === LIMIT ? price : 0,
        amount,
        used: 0,
        cancelled: false,
        createMicro: micro,
        updateMicro: micro,
        budget: marketBuy ? hold : 0n,
        spent: 0n,
        flags,
        clientOrderId,
      };
      p.pending.push({ kind: CMD_CREATE, order, orderId: id, user, replyCreate: reply, replyCancel: null });
      return true;
    };
    if (this.submit(p, send)) return true;
    ledger.release(user, currency, hold);
    if (marketBuy) this.marketBuyEnded(user);
    if (clientKey !== undefined) this.clientIds.delete(clientKey);
    return false;
  }

  /** Recovery: a stored order's client order id, so that it is never given again. */
  restoreClientId(user: number, clientOrderId: string): void {
    this.clientIds.add(`${user}:${clientOrderId}`);
  }

  /** Decides a create-order again once the user's market buys in flight have ended. */
  private createAfterMarketBuys(
    user: number,
    pairIndex: number,
    type: 0 | 1,
    side: 0 | 1,
    price: number,
    amount: number,
    reply: CreateReply,
    flags: number,
    clientOrderId: string | undefined,
  ): true {
    this.afterMarketBuys(user, () => {
      if (!this.createOrder(user, pairIndex, type, side, price, amount, reply, flags, clientOrderId))
        reply(Code.BUSY, null);
    });
    return true;
  }

  private afterMarketBuys(user: number, run: () => void): void {
    const list = this.waitingForMarketBuys.get(user);
    if (list === undefined) this.waitingForMarketBuys.set(user, [run]);
    else list.push(run);
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
      for (const run of list) run();
    });
  }

  /**
   * Cancels an order of `user`. Replies with 0 after the cancel committed, or an error code.
   * Returns false when the command ring and the queue waiting for it are full.
   */
  cancelOrder(
    user: number,
    orderId: number,
    reply: CancelReply,
    lookupClosed: (id: number) => void,
  ): boolean {
    const o = this.open.get(orderId);
    if (o === undefined || o.user !== user) {
      const err = this.notOpenError(user, orderId);
      if (err < 0) lookupClosed(orderId);
      else reply(err);
      return true;
    }
    const p = this.pairs[o.pair];
    return this.submit(p, () => this.sendCancel(p, o, reply));
  }

  /** The open order `orderId` of `user`, or undefined. */
  ownOpenOrder(user: number, orderId: number): OrderState | undefined {
    const o = this.open.get(orderId);
    return o !== undefined && o.user === user ? o : undefined;
  }

  /**
   * Why `orderId` is not an open order of `user`, as cancel-order answers it (CONTRACT 3): another
   * user's order and an unknown id alike are "not found". -1 when only the database can tell (the
   * order closed and its row is committed).
   */
  notOpenError(user: number, orderId: number): number {
    const c = this.closing.get(orderId);
    if (c !== undefined) return c.user === user ? closedError(c) : Code.ORDER_NOT_FOUND;
    return this.open.has(orderId) ? Code.ORDER_NOT_FOUND : -1;
  }

  /**
   * Amends the open order `o` of its user (CONTRACT 8.3) to `price` (ticks) and the new total
   * `amount` (lots). Only a lower amount at the same price keeps the order's place (a REDUCE
   * command); anything else is a MOVE: the order goes to the back of its new level and may match.
   * Calls `reply` once: with an error code (nothing changed), or with the order after the amend and
   * any matching, once committed. Amends of one order run one after the other. Returns false when
   * the command queue is full (nothing changed; the caller answers 503).
   *
   * R1 holds what the amended order may need beyond what it holds now. The order's open quantity
   * can still drop (fills still in the worker), so the hold is the most the amend can cost over
   * every open quantity from 0 to the one known now; the AMENDED event settles it exactly.
   */
  amendOrder(o: OrderState, price: number, amount: number, reply: CreateReply): boolean {
    const user = o.user;
    /** This amend, run again later (behind another amend of the order, or the user's market buys). */
    const again = (): void => {
      if (!this.amendOrder(o, price, amount, reply)) reply(Code.BUSY, null);
    };
    if (o.amending !== undefined && o.amending !== null) {
      o.amending.push(again);
      return true;
    }
    if (this.open.get(o.id) !== o) {
      const err = this.notOpenError(user, o.id);
      reply(err < 0 ? closedError(o) : err, null);
      return true;
    }
    if (amount <= o.used) {
      reply(Code.AMEND_NOT_ABOVE_EXECUTED, null);
      return true;
    }
    const p = this.pairs[o.pair];
    const delta = amount - o.amount;
    if (price === o.price && delta === 0) {
      // Nothing to change: the order as it stands once what is in flight has committed.
      this.db.afterCommit(() => reply(0, this.orderView(o, true)));
      return true;
    }
    const currency = o.side === SELL ? p.base : p.quote;
    const hold = amendHold(p, o.side, o.price, o.amount - o.used, price, delta);
    if (hold > 0n && !this.ledger.reserve(user, currency, hold)) {
      if (this.marketBuys.has(user)) {
        this.afterMarketBuys(user, again);
        return true;
      }
      reply(Code.INSUFFICIENT_FUNDS, null);
      return true;
    }
    o.amending = [];
    const reduce = price === o.price && delta < 0;
    const send = (): boolean => {
      const sent = reduce
        ? p.sink.sendReduce(o.id, -delta)
        : p.sink.sendMove(o.id, price, delta, o.flags & FLAG_POST_ONLY);
      if (!sent) return false;
      p.pending.push({
        kind: CMD_AMEND,
        order: o,
        orderId: o.id,
        user,
        replyCreate: reply,
        replyCancel: null,
        hold,
      });
      return true;
    };
    if (this.submit(p, send)) return true;
    if (hold > 0n) this.ledger.release(user, currency, hold);
    this.amendEnded(o);
    return false;
  }

  /** The amend of `o` in the worker ended: the next one waiting for it runs. */
  private amendEnded(o: OrderState): void {
    const waiting = o.amending;
    o.amending = null;
    if (waiting === undefined || waiting === null || waiting.length === 0) return;
    queueMicrotask(() => {
      for (const run of waiting) run();
    });
  }

  private sendCancel(p: PairState, o: OrderState, reply: CancelReply): boolean {
    if (!p.sink.sendCancel(o.id)) return false;
    p.pending.push({
      kind: CMD_CANCEL,
      order: o,
      orderId: o.id,
      user: o.user,
      replyCreate: null,
      replyCancel: reply,
    });
    return true;
  }

  /**
   * Cancels every open order of `user` on pair `pairIndex` (-1: every pair), CONTRACT 8.4, and
   * answers the ids it cancelled, ascending, once every cancel committed. Each pair's cancels enter
   * its command FIFO as one step, so they follow every command the user sent before: the orders
   * resting then, and the creates still in the worker that may rest, are the ones cancelled (a
   * create that ends filled or cancelled is not listed). Returns false when a command queue is full
   * (nothing was sent on that pair; the caller answers 503).
   */
  cancelAll(user: number, pairIndex: number, reply: CancelAllReply): boolean {
    const cancelled: number[] = [];
    // Pairs whose cancels are not all sent, plus cancels not answered yet.
    let outstanding = 0;
    const settle = (): void => {
      if (--outstanding === 0) reply(cancelled.sort((a, b) => a - b));
    };
    const onCancel = (orderId: number) => (err: number) => {
      if (err === 0) cancelled.push(orderId);
      settle();
    };
    let accepted = true;
    for (const p of this.pairs) {
      if (p === undefined || (pairIndex >= 0 && p.spec.index !== pairIndex)) continue;
      let targets: OrderState[] | null = null;
      let next = 0;
      outstanding++;
      const sendAll = (): boolean => {
        if (targets === null) {
          targets = this.cancelTargets(p, user);
          outstanding += targets.length;
        }
        while (next < targets.length) {
          const o = targets[next];
          if (!this.sendCancel(p, o, onCancel(o.id))) return false;
          next++;
        }
        // Deferred: the answer must not come before the caller learned the call was accepted.
        queueMicrotask(settle);
        return true;
      };
      if (!this.submit(p, sendAll)) accepted = false;
    }
    if (outstanding === 0) queueMicrotask(() => reply(cancelled));
    return accepted;
  }

  /**
   * Ids of the user's orders on a pair that are open, or were until a change not yet committed:
   * the candidates of an open-orders read, which the committed rows then decide (CONTRACT 8.6).
   */
  openOrderIds(user: number, pairIndex: number): number[] {
    const ids: number[] = [];
    const mine = this.openByUser.get(user);
    if (mine !== undefined) for (const o of mine) if (o.pair === pairIndex) ids.push(o.id);
    for (const o of this.closing.values()) if (o.user === user && o.pair === pairIndex) ids.push(o.id);
    return ids;
  }

  /** What a cancel-all sent now on pair `p` must cancel: resting orders and creates that may rest. */
  private cancelTargets(p: PairState, user: number): OrderState[] {
    const out: OrderState[] = [];
    const mine = this.openByUser.get(user);
    if (mine !== undefined) for (const o of mine) if (o.pair === p.spec.index) out.push(o);
    for (let i = p.pendingHead; i < p.pending.length; i++) {
      const cmd = p.pending[i];
      const o = cmd.order;
      if (cmd.kind !== CMD_CREATE || o === null || o.user !== user || o.type !== LIMIT) continue;
      if ((o.flags & TIF_MASK) === TIF_GTC && !this.open.has(o.id)) out.push(o);
    }
    return out;
  }

  /**
   * Sends a command now, or queues it behind the ones waiting for room in the pair's command
   * ring (FIFO, so commands keep their order). False when the queue is full: the caller answers
   * 503 and nothing changed.
   */
  private submit(p: PairState, send: () => boolean): boolean {
    if (p.waiting.length === 0 && send()) return true;
    if (p.waiting.length >= MAX_WAITING) return false;
    p.waiting.push(send);
    // The channel rejects `writable()` only when its worker is gone or it is closing; the server
    // treats a dead pair worker as fatal, so the waiting commands are simply never sent.
    if (p.waiting.length === 1) this.drainWaiting(p).catch(() => {});
    return true;
  }

  private async drainWaiting(p: PairState): Promise<void> {
    while (p.waiting.length > 0) {
      await p.sink.writable();
      while (p.waiting.length > 0 && p.waiting[0]()) p.waiting.shift();
    }
  }

  /** Recovery: puts a stored open order back into its book (it cannot cross: books never are). */
  restoreOrder(o: OrderState): boolean {
    const p = this.pairs[o.pair];
    if (!p.sink.sendLimit(o.id, o.user, o.side, o.price, o.amount - o.used, TIF_GTC)) return false;
    this.setOpen(o);
    p.pending.push({
      kind: CMD_RESTORE,
      order: o,
      orderId: o.id,
      user: o.user,
      replyCreate: null,
      replyCancel: null,
    });
    return true;
  }

  // ------------------------------------------------------------------ R2 + DB: events out

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
    const lots = BigInt(qty);
    const cost = BigInt(price) * lots * p.quoteMul;
    let takerRate = 0;
    let makerRate = 0;
    if (!p.hasFees) {
      // Base: the seller's reserved base goes to the buyer.
      ledger.transfer(seller.user, buyer.user, p.base, lots * p.baseMul);
      // Quote: the buyer's reserved quote pays the seller at the maker's price.
      ledger.transfer(buyer.user, seller.user, p.quote, cost);
    } else {
      // The same legs, each less its receiver's fee, which goes to the fee account. Exact: the
      // currency scales carry the rates' decimals (config.ts ledgerScale), so the division by
      // FEE_UNIT never has a remainder.
      takerRate = p.takerRate;
      makerRate = p.makerRate;
      const buyerRate = buyer === taker ? p.takerFee : p.makerFee;
      const sellerRate = seller === taker ? p.takerFee : p.makerFee;
      const base = lots * p.baseMul;
      ledger.transferWithFee(
        seller.user,
        buyer.user,
        this.feeUser,
        p.base,
        base,
        (base * buyerRate) / FEE_UNIT,
      );
      ledger.transferWithFee(
        buyer.user,
        seller.user,
        this.feeUser,
        p.quote,
        cost,
        (cost * sellerRate) / FEE_UNIT,
      );
    }
    if (buyer.type === LIMIT) {
      // A limit buy reserved at its own price: a better price releases the difference.
      if (buyer.price !== price)
        ledger.release(buyer.user, p.quote, limitHold(p, BUY, buyer.price - price, qty));
    } else {
      buyer.budget -= cost;
    }
    if (taker.type === MARKET) taker.spent += BigInt(price) * lots;
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
    const listener = this.listener;
    if (listener !== null) {
      if (listener.wantsTrades(pairIndex)) p.trades.push(p.market.history[0]);
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
    const cmd = p.pending[p.pendingHead];
    const o = cmd.order!;
    const currency = o.side === SELL ? p.base : p.quote;
    const change = limitHold(p, o.side, newPrice, newLeft) - limitHold(p, o.side, oldPrice, oldLeft);
    const unused = (cmd.hold ?? 0n) - change;
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
    (side === BUY ? p.buyLevels : p.sellLevels).set(price, total);
  }

  /** The worker finished the pair's oldest pending command with result `code`. */
  onEnd(pairIndex: number, code: number): void {
    const p = this.pairs[pairIndex];
    const cmd = p.pending[p.pendingHead];
    // The worker also ends its SHUTDOWN command, which has no pending entry.
    if (cmd === undefined) return;
    p.pending[p.pendingHead++] = undefined as unknown as Pending;
    if (p.pendingHead > 1024 && p.pendingHead * 2 > p.pending.length) {
      p.pending = p.pending.slice(p.pendingHead);
      p.pendingHead = 0;
    }
    const ledger = this.ledger;
    const db = this.db;
    let reply: (() => void) | null = null;
    if (cmd.kind === CMD_CREATE) {
      const o = cmd.order!;
      const cb = cmd.replyCreate!;
      if (o.type === MARKET && o.side === BUY) {
        if (o.budget > 0n) ledger.release(o.user, p.quote, o.budget);
        o.budget = 0n;
        this.marketBuyEnded(o.user);
      }
      if (code !== OK) {
        // Refused by the book (no liquidity, unaffordable, post-only would take): nothing happened
        // but the hold, and the client order id was not used.
        if (o.clientOrderId !== undefined) this.clientIds.delete(`${o.user}:${o.clientOrderId}`);
        this.releaseHold(p, o, o.amount);
        cb(code, null);
        this.resetCommand(p);
        return;
      }
      if (o.type === MARKET && o.used > 0) o.price = Number(mulDivRoundHalfUp(o.spent, 1n, BigInt(o.used)));
      this.touch(p, o);
      const view = this.orderView(o, true);
      reply = () => cb(0, view);
    } else if (cmd.kind === CMD_AMEND) {
      const o = cmd.order!;
      const cb = cmd.replyCreate!;
      this.amendEnded(o);
      if (code !== OK) {
        // Refused (post-only would take, not above what executed, no longer open): only the hold.
        const hold = cmd.hold ?? 0n;
        if (hold > 0n) ledger.release(o.user, o.side === SELL ? p.base : p.quote, hold);
        const err = code === ERR_ORDER_NOT_FOUND ? closedError(o) : code;
        reply = () => cb(err, null);
      } else {
        // A move may have filled it completely as a taker.
        if (o.used === o.amount) this.close(o);
        this.touch(p, o);
        const view = this.orderView(o, true);
        reply = () => cb(0, view);
      }
    } else if (cmd.kind === CMD_CANCEL) {
      const cb = cmd.replyCancel!;
      if (code === ERR_ORDER_NOT_FOUND) {
        // The order finished between the request and the command (filled or cancelled).
        const o = cmd.order!;
        const err = closedError(o);
        reply = () => cb(err);
      } else {
        reply = () => cb(0);
      }
    } else {
      // Recovery replay: nothing to persist or answer; the book is as it was committed.
      applyLevels(p.market, p.buyLevels, p.sellLevels);
      this.resetCommand(p);
      return;
    }
    // DB: every order row the command changed, its balances and candles, then the answer.
    const touched = p.touched;
    for (let i = 0; i < touched.length; i++) {
      const o = touched[i];
      db.order(
        o.id,
        o.user,
        p.spec.name,
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
    const closed = touched.filter((o) => this.closing.get(o.id) === o);
    const listener = this.listener;
    const buy = p.buyLevels;
    const sell = p.sellLevels;
    const hasLevels = buy.size > 0 || sell.size > 0;
    let seq = p.seq;
    if (hasLevels) {
      p.buyLevels = new Map();
      p.sellLevels = new Map();
      // One number per committed change of the book, in commit (= publish) order.
      seq = ++p.seq;
      p.seqDirty = true;
    }
    let publish: (() => void) | null = null;
    if (listener !== null) {
      const views: [number, OrderView][] = [];
      for (let i = 0; i < touched.length; i++) {
        const o = touched[i];
        if (listener.wantsOrders(o.user)) views.push([o.user, this.orderView(o, false)]);
      }
      const trades = p.trades;
      const userTrades = p.userTrades;
      p.trades = [];
      p.userTrades = [];
      const pairIdx = pairIndex;
      // Nothing to tell when no channel wanted anything (levels go out only to `orders:` holders,
      // which the hub checks itself).
      if (hasLevels || trades.length > 0 || views.length > 0 || userTrades.length > 0)
        publish = () => {
          if (hasLevels) listener.levelsChanged(pairIdx, buy, sell, seq);
          if (trades.length > 0) listener.publicTrades(pairIdx, trades);
          for (const [u, v] of views) listener.orderChanged(u, v);
          for (const [u, t] of userTrades) listener.userTrade(u, t);
        };
    }
    const market = p.market;
    const answer = reply;
    db.afterCommit(() => {
      for (const o of closed) if (this.closing.get(o.id) === o) this.closing.delete(o.id);
      if (hasLevels) {
        applyLevels(market, buy, sell);
        market.seq = seq;
      }
      answer();
      publish?.();
    });
    touched.length = 0;
  }

  /** Balance rows changed since the last flush go into the current batch. */
  flushBalances(): void {
    const names = this.ledger.currencies;
    this.ledger.drainDirty((user, c, available, reserved) =>
      this.db.balance(user, names[c], available, reserved),
    );
  }

  // ------------------------------------------------------------------ views

  orderView(o: OrderState, withUpdate: boolean): OrderView {
    return orderView(this.pairs[o.pair].spec, o, withUpdate);
  }

  // ------------------------------------------------------------------ helpers

  /** The taker of the pair's command in progress (or a resting order with that id). */
  private currentOrder(p: PairState, id: number): OrderState {
    const cmd = p.pending[p.pendingHead];
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
    if (o.userSlot !== undefined && o.userSlot >= 0) return;
    let mine = this.openByUser.get(o.user);
    if (mine === undefined) {
      mine = [];
      this.openByUser.set(o.user, mine);
    }
    o.userSlot = mine.push(o) - 1;
  }

  private close(o: OrderState): void {
    if (this.open.get(o.id) === o) {
      this.open.delete(o.id);
      // Out of its user's list in O(1): the last order takes its slot.
      const mine = this.openByUser.get(o.user)!;
      const last = mine.pop()!;
      if (last !== o) {
        mine[o.userSlot!] = last;
        last.userSlot = o.userSlot;
      }
      o.userSlot = -1;
      if (mine.length === 0) this.openByUser.delete(o.user);
    }
    this.closing.set(o.id, o);
  }

  private resetCommand(p: PairState): void {
    p.touched.length = 0;
    p.trades.length = 0;
    p.userTrades.length = 0;
    p.buyLevels.clear();
    p.sellLevels.clear();
  }
}

/**
 * Decodes a pair worker's event records (src/protocol/pair.ts) into the core's stages for
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

function applyLevels(market: PairMarket, buy: Map<number, number>, sell: Map<number, number>): void {
  for (const [price, total] of buy) market.setLevel(BUY, price, total);
  for (const [price, total] of sell) market.setLevel(SELL, price, total);
}

/** The cancel error for an order that is no longer open. */
export function closedError(o: { cancelled: boolean; used: number; amount: number }): number {
  if (o.cancelled) return Code.ORDER_ALREADY_CANCELLED;
  if (o.used === o.amount) return Code.ORDER_ALREADY_EXECUTED;
  return Code.ORDER_NOT_FOUND;
}
