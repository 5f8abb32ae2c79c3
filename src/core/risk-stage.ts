/**
 * The risk stage (R1 and R2 of src/core/command.ts), as exchange-core's risk processor:
 *
 *   R1  create / amend   refuse a change on a pair that is not trading (src/core/pair-status.ts) or
 *                        past the call's deadline (`expiresAt`, docs/API.md 8.8); judge the client
 *                        order id; hold what the order (or the amend) may cost in the ledger, then
 *                        hand the command to its pair's sequencer; or refuse with nothing changed.
 *                        A market buy holds the user's whole available quote balance while it is in
 *                        the worker: the user's creates, amends and quotes refused for funds
 *                        meanwhile wait for it and are judged again after (the market-buy queue).
 *   R1  cancel*          the same deadline, and a halted pair refuses a user's cancel; nothing is
 *                        held. Cancel-all and a session's cancels (cancel-on-disconnect) too.
 *   R2  settle*          trades move reserved funds between the parties (and the fee account);
 *                        what an order or amend no longer needs is released. The pair's events
 *                        reach these through src/core/pair-events.ts.
 *
 * Everything runs on the main thread, so each check and reservation is atomic with respect to
 * every other request, whatever the pair.
 *
 * Arrival order (docs/API.md 6): a create waiting for the database's judgement of its client order
 * id, for a market buy, or an amend waiting for the amend of its order in flight, waits on the main
 * thread; so may a quote (src/core/quotes.ts). While one of a user's commands waits on a pair, that
 * user's later creates, amends, cancels and cancel-all steps there are parked behind it
 * (src/core/arrival-order.ts) and run through `resume`, in arrival order, once none waits.
 */

import { Code } from "../errors/catalogue.ts";
import { BUY, MAX_BUDGET, NO_BUDGET, SELL } from "../protocol/pair/engine.ts";
import { floorToDouble } from "../util/numbers.ts";
import type { ArrivalOrder } from "./arrival-order.ts";
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
  CMD_QUOTE,
  type Command,
  expired,
  isWaitingStop,
  LIMIT,
  MARKET,
  NEEDS_ROW,
  NO_REQUEST,
  newCommand,
  type OcoLink,
  type OrderState,
} from "./command.ts";
import type { Ledger } from "./ledger.ts";
import type { OpenOrders } from "./open-orders.ts";
import type { PairStatuses } from "./pair-status.ts";
import { closedError } from "./recently-closed.ts";
import type { Results } from "./results.ts";
import { amendHold, limitHold, type SettlementPair, settleFill } from "./risk.ts";
import type { PairSequencer } from "./sequencer.ts";

/** `placeNow`: the create's client order id must be checked against the database first. */
const CHECK_CLIENT_ID = -2;

/** What the risk stage needs of a pair: its units and currencies, and its sequencer. */
export interface RiskPair extends SettlementPair {
  spec: { index: number };
  seq: PairSequencer;
}

/** Quotes' R1 (src/core/quotes.ts), for a quote that was parked or waited for a market buy. */
export interface QuoteR1 {
  /** R1 of the quote, not parked (0: its result comes later). */
  submitNow(cmd: Command): number;
}

/** What the risk stage is built with. */
export interface RiskOptions {
  ledger: Ledger;
  /** The core's pairs, by index (the core's own array: pairs added later are seen). */
  pairs: readonly RiskPair[];
  openOrders: OpenOrders;
  /** Each pair's status (docs/API.md 11): a user's create or amend is refused on a pair not trading. */
  statuses: PairStatuses;
  /** Refusals decided later (after a database check or a market buy) are answered through it. */
  results: Pick<Results, "answer" | "commit" | "settle" | "sink">;
  /** Where a user's commands wait behind that user's command waiting on the same pair. */
  arrival: ArrivalOrder;
  quotes: QuoteR1;
  clientIds: ClientIds;
  /** Whether an order of `user` with this client order id is stored (the reader pool's query). */
  clientIdStored: (user: number, clientOrderId: string) => Promise<boolean>;
  /** The fee account's user id (docs/API.md 9). */
  feeUser: number;
}

export class RiskStage {
  private readonly ledger: Ledger;
  private readonly pairs: readonly RiskPair[];
  private readonly openOrders: OpenOrders;
  private readonly statuses: PairStatuses;
  private readonly results: Pick<Results, "answer" | "commit" | "settle" | "sink">;
  private readonly arrival: ArrivalOrder;
  private readonly quotes: QuoteR1;
  private readonly clientIds: ClientIds;
  private readonly clientIdStored: (user: number, clientOrderId: string) => Promise<boolean>;
  readonly feeUser: number;
  /**
   * Creates of a user waiting behind one whose client order id is being checked against the
   * database, in arrival order (the head is the one being checked): a user's creates stay in order.
   */
  private readonly checkingClientIds = new Map<number, Command[]>();
  /** Market buys in flight per user (each holds the user's whole available quote balance). */
  private readonly marketBuys = new Map<number, number>();
  /** Commands refused for funds while a market buy of the user was in flight, oldest first. */
  private readonly waitingForMarketBuys = new Map<number, Command[]>();

  constructor(options: RiskOptions) {
    this.ledger = options.ledger;
    this.pairs = options.pairs;
    this.openOrders = options.openOrders;
    this.statuses = options.statuses;
    this.results = options.results;
    this.arrival = options.arrival;
    this.quotes = options.quotes;
    this.clientIds = options.clientIds;
    this.clientIdStored = options.clientIdStored;
    this.feeUser = options.feeUser;
  }

  // ------------------------------------------------------------------ R1

  /** A user's create: parked behind the user's command waiting on the pair, or `createNow`. */
  create(cmd: Command): number {
    return this.arrival.park(cmd) ? 0 : this.createNow(cmd);
  }

  /** A create: refused on a pair that is not trading, else `place`. */
  private createNow(cmd: Command): number {
    const refused = this.statuses.refuseChange(cmd.pair);
    return refused !== 0 ? refused : this.place(cmd);
  }

  /**
   * A command parked behind the user's waiting command on its pair runs now, as it would have on
   * arrival; a refusal is answered (a cancel's NEEDS_ROW too: the edge reads the row then).
   */
  resume(cmd: Command): void {
    let code: number;
    switch (cmd.kind) {
      case CMD_CREATE:
        code = this.createNow(cmd);
        break;
      case CMD_AMEND:
        code = this.amendChecked(cmd);
        break;
      case CMD_CANCEL:
        code = this.cancelNow(cmd.user, cmd.orderId, cmd.request, cmd.expiresAt);
        break;
      case CMD_CANCEL_ALL:
        // A step of a cancel-all: its group is answered when every step is done.
        if (!this.pairs[cmd.pair].seq.submit(cmd)) this.results.settle(cmd.group!);
        return;
      case CMD_QUOTE:
        code = this.quotes.submitNow(cmd);
        break;
      default:
        throw new Error(`command kind ${cmd.kind} cannot be parked`);
    }
    if (code === 0) return;
    cmd.result = code;
    this.results.answer(cmd);
  }

  /**
   * A create: R1 now, or, while one of the user's creates waits for the database to judge its
   * client order id, after it (0: its result comes later).
   */
  private place(cmd: Command): number {
    const waiting = this.checkingClientIds.get(cmd.user);
    if (waiting !== undefined) {
      waiting.push(cmd);
      this.arrival.wait(cmd);
      return 0;
    }
    const code = this.placeNow(cmd);
    if (code !== CHECK_CLIENT_ID) return code;
    this.checkingClientIds.set(cmd.user, [cmd]);
    this.arrival.wait(cmd);
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
    let checking = false;
    const run = (cmd: Command) => {
      const code = this.placeNow(cmd);
      if (code === CHECK_CLIENT_ID) {
        checking = true;
        this.arrival.wait(cmd);
        this.checkClientId(cmd);
        return;
      }
      list.shift();
      if (code !== 0) {
        cmd.result = code;
        this.results.answer(cmd);
      }
    };
    // Commands parked behind one that goes may run here; a create among them joins `list`.
    while (list.length > 0) {
      this.arrival.rerun(list[0], run);
      if (checking) return;
    }
    this.checkingClientIds.delete(user);
  }

  /**
   * R1 of a create: hold what the order may cost, then hand it to its pair's FIFO. CHECK_CLIENT_ID
   * when only the database can tell whether its client order id was used (nothing done yet).
   */
  private placeNow(cmd: Command): number {
    if (expired(cmd.expiresAt)) return Code.REQUEST_EXPIRED;
    // A create of a session that ended while it waited here: its session's cancels already went.
    if (cmd.session !== 0 && this.openOrders.sessionEnded(cmd.session)) return Code.SESSION_ENDED;
    const p = this.pairs[cmd.pair];
    const ledger = this.ledger;
    const user = cmd.user;
    // docs/API.md 18: a stop-market buy holds nothing while it waits (its budget is taken when it
    // triggers, `triggeredBuy`); every other stop holds what its order would.
    const stopMarketBuy = cmd.stopDirection !== 0 && cmd.type === MARKET && cmd.side === BUY;
    const marketBuy = cmd.type === MARKET && cmd.side === BUY && !stopMarketBuy;
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
    if (cmd.oco) {
      hold = ocoHold(p, cmd);
      cmd.budget = NO_BUDGET;
    } else if (stopMarketBuy) {
      hold = 0n;
      cmd.budget = NO_BUDGET;
    } else if (!marketBuy) {
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
    this.arrival.wait(cmd);
    return 0;
  }

  /** A quote refused for funds: true when it waits for the user's market buys in flight instead. */
  afterMarketBuy(cmd: Command): boolean {
    if (!this.marketBuys.has(cmd.user)) return false;
    this.afterMarketBuys(cmd);
    return true;
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
      for (const cmd of list) this.arrival.rerun(cmd, this.retry);
    });
  }

  /** Runs R1 again for a command that waited; a refusal now is its result. */
  private readonly retry = (cmd: Command): void => {
    const code =
      cmd.kind === CMD_CREATE
        ? this.place(cmd)
        : cmd.kind === CMD_AMEND
          ? this.amendNow(cmd)
          : this.quotes.submitNow(cmd);
    if (code === 0) return;
    cmd.result = code;
    this.results.answer(cmd);
  };

  /**
   * A user's amend: refused on a pair that is not trading, else R1 of the amend. R1 holds what the
   * amended order may need beyond what it holds now. The order's open quantity can still drop
   * (fills still in the worker), so the hold is the most the amend can cost over every open
   * quantity from 0 to the one known now; the AMENDED event settles it exactly.
   */
  amend(cmd: Command): number {
    return this.arrival.park(cmd) ? 0 : this.amendChecked(cmd);
  }

  /** An amend: refused on a pair that is not trading, else `amendNow`. */
  private amendChecked(cmd: Command): number {
    const refused = this.statuses.refuseChange(cmd.pair);
    return refused !== 0 ? refused : this.amendNow(cmd);
  }

  /** R1 of an amend (again after the amend before it, or a market buy, ended). */
  private amendNow(cmd: Command): number {
    if (expired(cmd.expiresAt)) return Code.REQUEST_EXPIRED;
    const o = cmd.order!;
    const user = o.user;
    if (o.amending !== null) {
      o.amending.push(cmd);
      this.arrival.wait(cmd);
      return 0;
    }
    if (this.openOrders.get(o.id) !== o) {
      const err = this.openOrders.notOpenError(user, o.id);
      return err < 0 ? closedError(o) : err;
    }
    // docs/API.md 18.1: an OCO's legs share one hold; neither is amended (the edge says so first).
    if (o.ocoId !== 0) return Code.OCO_AMEND;
    // docs/API.md 18: only a waiting stop has a stop price to amend (it may have triggered since
    // the request was read); its holds follow the same rule as a resting order's.
    if (cmd.stopPrice > 0 && !isWaitingStop(o)) return Code.STOP_AMEND_NOT_WAITING;
    if (cmd.amount <= o.used) return Code.AMEND_NOT_ABOVE_EXECUTED;
    const p = this.pairs[o.pair];
    const delta = cmd.amount - o.amount;
    if (
      cmd.price === o.price &&
      delta === 0 &&
      (cmd.stopPrice === 0 || cmd.stopPrice === o.stopPrice) &&
      (cmd.trailingDelta === 0 || cmd.trailingDelta === o.trailingDelta)
    ) {
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
  amendEnded(o: OrderState): void {
    const waiting = o.amending;
    o.amending = null;
    if (waiting === undefined || waiting === null || waiting.length === 0) return;
    queueMicrotask(() => {
      for (const cmd of waiting) this.arrival.rerun(cmd, this.retry);
    });
  }

  /**
   * R1 of a user's cancel: past its deadline, or on a halted pair, it is refused; nothing is held.
   * NEEDS_ROW when only the order's committed row can tell why the order is not open.
   */
  cancel(user: number, orderId: number, request: number, expiresAt: number): number {
    return this.cancelNow(user, orderId, request, expiresAt, true);
  }

  /** R1 of a cancel; `park`: behind the user's command waiting on the order's pair if there is one. */
  private cancelNow(user: number, orderId: number, request: number, expiresAt: number, park = false): number {
    if (expired(expiresAt)) return Code.REQUEST_EXPIRED;
    const o = this.openOrders.own(user, orderId);
    if (o === undefined) {
      const err = this.openOrders.notOpenError(user, orderId);
      return err < 0 ? NEEDS_ROW : err;
    }
    const refused = this.statuses.refuseCancel(o.pair);
    if (refused !== 0) return refused;
    const cmd = cancelOf(o, request);
    if (park) {
      cmd.expiresAt = expiresAt;
      if (this.arrival.park(cmd)) return 0;
    }
    return this.pairs[o.pair].seq.submit(cmd) ? 0 : Code.BUSY;
  }

  /**
   * R1 of a cancel-all of `user` on pair `pairIndex` (-1: every pair): one CMD_CANCEL_ALL step per
   * pair, whose targets its sequencer chooses. A user's cancel-all (`safety` false) is refused on a
   * halted pair it names, and skips halted pairs when it names none (docs/API.md 11); a safety cancel
   * (the dead-man's switch) acts on every pair.
   */
  cancelAll(user: number, pairIndex: number, request: number, expiresAt: number, safety: boolean): number {
    if (expired(expiresAt)) return Code.REQUEST_EXPIRED;
    const statuses = this.statuses;
    if (!safety && pairIndex >= 0) {
      const refused = statuses.refuseCancel(pairIndex);
      if (refused !== 0) return refused;
    }
    const group: CancelAllGroup = { request, outstanding: 0, cancelled: [] };
    let accepted = true;
    for (const p of this.pairs) {
      if (p === undefined || (pairIndex >= 0 && p.spec.index !== pairIndex)) continue;
      if (!safety && statuses.refuseCancel(p.spec.index) !== 0) continue;
      const cmd = newCommand(CMD_CANCEL_ALL, NO_REQUEST, user, p.spec.index);
      cmd.group = group;
      group.outstanding++;
      if (!safety && this.arrival.park(cmd)) continue;
      if (!p.seq.submit(cmd)) {
        group.outstanding--;
        accepted = false;
      }
    }
    if (group.outstanding === 0) queueMicrotask(() => this.results.sink.cancelAllResult(request, []));
    return accepted ? 0 : Code.BUSY;
  }

  /**
   * The session `session` ended (docs/API.md 8.9): a cancel, answered to nobody, for each of its open
   * orders and for each of its creates in a worker that may still rest (behind it in the FIFO).
   */
  cancelSession(session: number): void {
    if (session === 0) return;
    this.openOrders.endSession(session);
    const targets = this.openOrders.sessionOrders(session, []);
    for (const p of this.pairs) p?.seq.createsThatMayRest((o) => o.session === session, targets);
    for (const o of targets) this.pairs[o.pair].seq.submit(cancelOf(o, NO_REQUEST));
  }

  // ------------------------------------------------------------------ R2

  /** A fill of `qty` lots at `price`: the parties' reserved funds move (fees to the fee account). */
  settleTrade(
    p: RiskPair,
    buyer: OrderState,
    seller: OrderState,
    takerBuys: boolean,
    price: number,
    qty: number,
  ): void {
    settleFill(this.ledger, p, this.feeUser, buyer, seller, takerBuys, price, qty);
  }

  /**
   * The amend `cmd` took effect: the order is now `newLeft` lots open at `newPrice` (it was
   * `oldLeft` at `oldPrice`). Settles the amend's hold against what the order now holds.
   */
  settleAmend(
    p: RiskPair,
    cmd: Command,
    oldPrice: number,
    newPrice: number,
    oldLeft: number,
    newLeft: number,
  ): void {
    const o = cmd.order!;
    const currency = o.side === SELL ? p.base : p.quote;
    const change = limitHold(p, o.side, newPrice, newLeft) - limitHold(p, o.side, oldPrice, oldLeft);
    const unused = cmd.hold - change;
    if (unused < 0n) throw new Error(`amend of order ${o.id}: the hold falls short by ${-unused}`);
    if (unused > 0n) this.ledger.release(o.user, currency, unused);
    cmd.hold = 0n;
  }

  /** Releases what `lots` of a limit order or a sell hold (a market buy's budget is released apart). */
  releaseHold(p: RiskPair, o: OrderState, lots: number): void {
    if (o.type === LIMIT || o.side === SELL)
      this.ledger.release(o.user, o.side === SELL ? p.base : p.quote, limitHold(p, o.side, o.price, lots));
  }

  /**
   * A create's command ended (`refused`: the book refused it, nothing happened but the hold). A
   * market buy's unused budget is released, and the orders waiting for it are judged again.
   */
  createEnded(p: RiskPair, o: OrderState, refused: boolean): void {
    // A stop-market buy held nothing at its arrival (docs/API.md 18).
    if (o.type === MARKET && o.side === BUY && o.stopPrice === 0) {
      if (o.budget > 0n) this.ledger.release(o.user, p.quote, o.budget);
      o.budget = 0n;
      this.marketBuyEnded(o.user);
    }
    if (!refused) return;
    // The client order id was not used.
    if (o.clientOrderId !== undefined) this.clientIds.refused(ClientIds.key(o.user, o.clientOrderId));
    this.releaseHold(p, o, o.amount);
  }

  /**
   * docs/API.md 18: an OCO's create was refused by the book (a side against the last trade price,
   * post-only would take): its whole shared hold goes, and the client order id was not used.
   */
  ocoRefused(p: RiskPair, cmd: Command): void {
    const o = cmd.order!;
    if (o.clientOrderId !== undefined) this.clientIds.refused(ClientIds.key(o.user, o.clientOrderId));
    this.ledger.release(o.user, o.side === SELL ? p.base : p.quote, cmd.hold);
    cmd.hold = 0n;
  }

  /**
   * docs/API.md 18: OCO leg `o` of `link` ends with `left` lots open. The stop leg, while it waits,
   * holds nothing of its own: its end releases the part of the shared hold above the limit leg's.
   * The limit leg releases its own hold; when its stop leg triggered (which cancelled it), that leg
   * now holds as its order does, out of the shared hold. Otherwise the stop leg's end follows.
   */
  ocoLegDone(p: RiskPair, o: OrderState, link: OcoLink, left: number): void {
    const currency = o.side === SELL ? p.base : p.quote;
    const ledger = this.ledger;
    if (o === link.stop) {
      if (link.extra > 0n) ledger.release(o.user, currency, link.extra);
      link.limit.oco = null;
      o.oco = null;
      return;
    }
    this.releaseHold(p, o, left);
    const stop = link.stop;
    if (stop.triggerMicro === 0) return;
    if (link.extra > 0n) ledger.release(o.user, currency, link.extra);
    // A stop-market buy holds nothing: its budget is taken as it asks for it.
    const own =
      stop.type === LIMIT || stop.side === SELL
        ? limitHold(p, stop.side, stop.price, stop.amount - stop.used)
        : 0n;
    if (!ledger.reserve(o.user, currency, own))
      throw new Error(`OCO ${o.id}: its stop leg ${stop.id} cannot take its hold`);
    stop.oco = null;
    o.oco = null;
  }

  /**
   * docs/API.md 18: a stop-market buy triggered and waits in the worker for its budget, which is
   * held as an arriving market buy's is (DECISIONS.md "Market buy funds"): the user's whole
   * available quote balance, until the step that triggered it ends (`triggeredBuyEnded`); the
   * user's orders that it leaves uncovered meanwhile wait for it. Returns the budget in ticks ×
   * lots, for the worker.
   */
  triggeredBuy(p: RiskPair, o: OrderState): number {
    const ledger = this.ledger;
    let units = ledger.available(o.user, p.quote) / p.quoteMul;
    if (units > BigInt(MAX_BUDGET)) units = floorToDouble(units);
    const hold = units * p.quoteMul;
    if (!ledger.reserve(o.user, p.quote, hold))
      throw new Error(`order ${o.id}: cannot hold its available balance`);
    o.budget = hold;
    this.marketBuys.set(o.user, (this.marketBuys.get(o.user) ?? 0) + 1);
    return Number(units);
  }

  /** The step of a triggered market buy ended: what its budget did not spend is released. */
  triggeredBuyEnded(p: RiskPair, o: OrderState): void {
    if (o.budget > 0n) this.ledger.release(o.user, p.quote, o.budget);
    o.budget = 0n;
    this.marketBuyEnded(o.user);
  }

  /** An amend's command was refused (post-only would take, not above what executed, closed). */
  amendRefused(p: RiskPair, cmd: Command): void {
    const o = cmd.order!;
    if (cmd.hold > 0n) this.ledger.release(o.user, o.side === SELL ? p.base : p.quote, cmd.hold);
  }
}

/**
 * docs/API.md 18: an OCO's one hold: a sell's `amount` of base once; a buy's the larger of its two
 * legs' quote holds (a stop-market buy leg holds nothing).
 */
export function ocoHold(p: SettlementPair, cmd: Command): bigint {
  const limit = limitHold(p, cmd.side, cmd.price, cmd.amount);
  if (cmd.side === SELL || cmd.stopLimitPrice === 0) return limit;
  const stop = limitHold(p, BUY, cmd.stopLimitPrice, cmd.amount);
  return stop > limit ? stop : limit;
}

/** A cancel of the open order `o`, answered under `request`. */
function cancelOf(o: OrderState, request: number): Command {
  const cmd = newCommand(CMD_CANCEL, request, o.user, o.pair);
  cmd.orderId = o.id;
  cmd.order = o;
  return cmd;
}
