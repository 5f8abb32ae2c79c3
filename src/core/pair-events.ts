/**
 * R2 (src/core/command.ts): a pair worker's event records, applied in ring order to the command in
 * progress (`PairSequencer.current()`), each routed to the stage that owns it:
 *
 *   TRADE    the risk stage settles the fill; both orders' fills; the results stage takes the trade
 *   AMENDED  the risk stage settles the amend's hold; the order takes its new price and amount
 *   RESTED   the taker joins the open orders
 *   DONE     the risk stage releases what the order still holds; it leaves the open orders
 *   LEVEL    kept for the command's publication (the read model takes it at the commit)
 *   MMP      the user's MMP state on the pair changed (src/core/mmp-settings.ts)
 *   QUOTED   the outcome of a level of the quote in progress (src/core/quotes.ts)
 *   END      the command is finished: the risk stage ends its holds and waits (a quote's in
 *            src/core/quotes.ts), the results stage persists and answers it
 *
 * While a pair's L3 book is followed (src/core/l3-follow.ts), TRADE, AMENDED, RESTED and DONE also
 * record its L3 events (`PairState.l3`), which the results stage applies at the commit.
 *
 * `pairEventHandler` decodes the records (src/protocol/pair/records.ts) into these calls. A new
 * kind of event record gets its case there and its method here.
 */

import { BUY, DONE_NO_LIQUIDITY, DONE_OCO, ERR_ORDER_NOT_FOUND, OK } from "../protocol/pair/engine.ts";
import {
  AMENDED,
  DONE,
  END,
  EV_AMENDED,
  EV_DONE,
  EV_END,
  EV_FUNDS,
  EV_KIND,
  EV_LEVEL,
  EV_MMP,
  EV_QUOTED,
  EV_RESTED,
  EV_TRADE,
  EV_TRAILED,
  EV_TRIGGERED,
  FUNDS_ASKED,
  LEVEL,
  MMP,
  QUOTED,
  RESTED,
  TRADE,
  TRAILED,
  TRIGGERED,
} from "../protocol/pair/records.ts";
import { mulDivRoundHalfUp } from "../util/numbers.ts";
import { nowMicro } from "../util/time.ts";
import {
  CMD_AMEND,
  CMD_CANCEL,
  CMD_CREATE,
  CMD_MMP,
  CMD_QUOTE,
  type Command,
  isWaitingStop,
  MARKET,
  type OrderState,
} from "./command.ts";
import type { L3Follow } from "./l3-follow.ts";
import type { MmpBook } from "./mmp-settings.ts";
import type { OpenOrders } from "./open-orders.ts";
import type { PairState } from "./pairs.ts";
import type { Quotes } from "./quotes.ts";
import { L3_CHANGE, L3_DONE, L3_OPEN } from "./read-models/l3-view.ts";
import { closedError } from "./recently-closed.ts";
import type { Results } from "./results.ts";
import { limitHold } from "./risk.ts";
import type { RiskStage } from "./risk-stage.ts";
import type { SequenceIds } from "./sequencer.ts";
import { orderView } from "./views.ts";

/** What R2 is built with: the stages it routes to. */
export interface PairEventsOptions {
  /** The core's pairs, by index (the core's own array: pairs added later are seen). */
  pairs: readonly PairState[];
  /** Trade ids are taken here, as trades settle. */
  ids: SequenceIds;
  openOrders: OpenOrders;
  risk: RiskStage;
  results: Results;
  /** Mass quotes' settlement (docs/API.md 8.12). */
  quotes: Quotes;
  /** MMP frozen state (docs/API.md 8.10). */
  mmp: MmpBook;
  /** The L3 books followed (docs/API.md 7.6.2). */
  l3: L3Follow;
}

export class PairEvents {
  private readonly pairs: readonly PairState[];
  private readonly ids: SequenceIds;
  private readonly openOrders: OpenOrders;
  private readonly risk: RiskStage;
  private readonly results: Results;
  private readonly quotes: Quotes;
  private readonly mmp: MmpBook;
  private readonly l3: L3Follow;

  constructor(options: PairEventsOptions) {
    this.pairs = options.pairs;
    this.ids = options.ids;
    this.openOrders = options.openOrders;
    this.risk = options.risk;
    this.results = options.results;
    this.quotes = options.quotes;
    this.mmp = options.mmp;
    this.l3 = options.l3;
  }

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
    // docs/API.md 5.1 executedQuote: price × amount of each fill, on both sides.
    const value = BigInt(price) * BigInt(qty);
    taker.executed += value;
    maker.executed += value;
    taker.used += qty;
    maker.used += qty;
    taker.updateMicro = micro;
    maker.updateMicro = micro;
    touch(p, maker);
    if (maker.used === maker.amount) this.openOrders.close(maker);
    // docs/API.md 18: a triggered stop is a taker of the step that is no command's own order.
    const cmd = p.seq.current();
    if (cmd === undefined || cmd.order !== taker) {
      touch(p, taker);
      if (taker.used === taker.amount) this.openOrders.close(taker);
    }
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
  onAmended(pairIndex: number, oldPrice: number, newPrice: number, oldLeft: number, newLeft: number): void {
    const p = this.pairs[pairIndex];
    const cmd = p.seq.current()!;
    const o = cmd.order!;
    this.risk.settleAmend(p, cmd, oldPrice, newPrice, oldLeft, newLeft);
    o.price = newPrice;
    o.amount = o.used + newLeft;
    o.updateMicro = nowMicro();
    touch(p, o);
    // docs/API.md 18: a waiting stop, amended in the worker's stops, is in no book.
    if (isWaitingStop(o)) {
      if (cmd.stopPrice > 0) o.stopPrice = cmd.stopPrice;
      // A new trailing delta: its new stop price came in a `trailed` event before this one.
      if (cmd.trailingDelta > 0) o.trailingDelta = cmd.trailingDelta;
      return;
    }
    const l3 = p.l3;
    if (l3 !== null) {
      // docs/API.md 7.6.2: a reduce keeps the place (change); a move leaves the book (done), and its
      // `rested` event, if it rests again, opens it at the back.
      if (newPrice === oldPrice && newLeft < oldLeft) l3.push(L3_CHANGE, o.id, o.side, newPrice, newLeft);
      else l3.push(L3_DONE, o.id, o.side, oldPrice, 0);
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
    if (l3 !== null && (cmd === undefined || cmd.orderId !== orderId || cmd.kind === CMD_CANCEL) && inBook(o))
      l3.push(L3_DONE, orderId, o.side, o.price, 0);
    // An old quote order cancelled by a quote: its hold goes to the new quote (src/core/quotes.ts).
    // docs/API.md 18: an OCO leg's hold is shared with its sibling while both are open.
    if (o.oco !== null) this.risk.ocoLegDone(p, o, o.oco, left);
    else if (cmd?.kind !== CMD_QUOTE || !this.quotes.absorb(cmd, p, o, reason, left))
      this.risk.releaseHold(p, o, left);
    // A market buy's unused budget is released when its command ends.
    o.cancelled = true;
    // docs/API.md 18: a triggered order that ended whole without matching says why, and so does an
    // OCO leg its sibling cancelled.
    if (reason >= DONE_NO_LIQUIDITY) o.cancelReason = reason;
    o.updateMicro = nowMicro();
    touch(p, o);
    this.openOrders.close(o);
  }

  /**
   * docs/API.md 18: waiting stop `orderId` triggered inside the current command's step; its
   * matching events follow. It keeps its id and its hold; from now on it is an arriving order.
   */
  onTriggered(pairIndex: number, orderId: number): void {
    const p = this.pairs[pairIndex];
    const o = this.openOrders.get(orderId)!;
    const micro = nowMicro();
    o.triggerMicro = micro;
    o.updateMicro = micro;
    // Not in the book until its `rested` event (the L3 book, docs/API.md 7.6.2).
    o.restSeq = 0;
    touch(p, o);
  }

  /**
   * docs/API.md 18: trailing stop `orderId`'s stop price moved to `stopPrice` (or was set at its
   * arrival). Not an order change: no execution number, no report; its row is written with the
   * step (DECISIONS.md "Trailing stops").
   */
  onTrailed(pairIndex: number, orderId: number, stopPrice: number): void {
    const p = this.pairs[pairIndex];
    const o = this.currentOrder(p, orderId);
    o.stopPrice = stopPrice;
    p.trailed.push(o);
  }

  /**
   * docs/API.md 18: triggered market buy `orderId` waits in the worker for its budget: the ledger
   * holds it as it holds an arriving market buy's, and the worker gets it at once.
   */
  onFundsAsked(pairIndex: number, orderId: number): void {
    const p = this.pairs[pairIndex];
    const o = this.openOrders.get(orderId)!;
    const budget = this.risk.triggeredBuy(p, o);
    p.triggeredBuys.push(o);
    p.seq.funds(orderId, budget);
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

  /** The outcome of level `index` of the quote in progress (docs/API.md 8.12). */
  onQuoted(pairIndex: number, index: number, orderId: number, result: number): void {
    const cmd = this.pairs[pairIndex].seq.current()!;
    this.quotes.quoted(cmd, index, orderId, result, (id) => this.openOrders.get(id));
  }

  /** The worker finished the pair's oldest command with result `code`. */
  onEnd(pairIndex: number, code: number): void {
    this.endCommand(pairIndex, code);
    const p = this.pairs[pairIndex];
    // A wanted L3 book is taken between two commands (L3Follow.want).
    this.l3.atEnd(p);
    // MMP state changes of the command go out after its answer and its order reports.
    if (this.mmp.hasPending) this.results.mmpChanged(this.mmp.takePending());
  }

  private endCommand(pairIndex: number, code: number): void {
    const p = this.pairs[pairIndex];
    // docs/API.md 18: the budgets of the market buys the step triggered.
    const buys = p.triggeredBuys;
    if (buys.length > 0) {
      for (const o of buys) this.risk.triggeredBuyEnded(p, o);
      buys.length = 0;
    }
    // docs/API.md 18: a triggered market order's price is its average, as an arriving one's.
    const touched = p.touched;
    for (let i = 0; i < touched.length; i++) {
      const o = touched[i];
      if (o.type === MARKET && o.triggerMicro > 0 && o.used > 0)
        o.price = Number(mulDivRoundHalfUp(o.executed, 1n, BigInt(o.used)));
    }
    // The worker also ends its SHUTDOWN command, which is not in the FIFO.
    const cmd = p.seq.finish();
    if (cmd === undefined) return;
    switch (cmd.kind) {
      case CMD_CREATE: {
        const o = cmd.order!;
        if (cmd.oco) {
          if (!this.ocoCreated(p, cmd, code)) return;
          break;
        }
        // Refused by the book (no liquidity, unaffordable, post-only would take): nothing happened
        // but the hold, and the client order id was not used.
        this.risk.createEnded(p, o, code !== OK);
        if (code !== OK) {
          cmd.result = code;
          this.results.reset(p);
          this.results.answer(cmd);
          return;
        }
        if (o.type === MARKET && o.used > 0)
          o.price = Number(mulDivRoundHalfUp(o.executed, 1n, BigInt(o.used)));
        // docs/API.md 18: a stop order waits, open, in no book.
        if (isWaitingStop(o)) this.openOrders.setOpen(o);
        touch(p, o);
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
          if (o.used === o.amount) this.openOrders.close(o);
          touch(p, o);
        }
        break;
      }
      case CMD_CANCEL: {
        // ERR_ORDER_NOT_FOUND: the order finished between the request and the command. In a
        // cancel-all, an OCO leg its sibling's cancel took just before counts as cancelled.
        const o = cmd.order!;
        const bySibling = cmd.group !== null && o.cancelled && o.cancelReason === DONE_OCO;
        cmd.result = code === ERR_ORDER_NOT_FOUND && !bySibling ? closedError(o) : 0;
        break;
      }
      case CMD_MMP: {
        // Answered once the settings row (in the batch since the call) is committed.
        const done = cmd.mmp!.done;
        if (done !== null) this.results.afterCommit(done);
        this.results.reset(p);
        return;
      }
      case CMD_QUOTE: {
        const done = this.quotes.end(
          cmd,
          p,
          code,
          (o) => touch(p, o),
          (o) => orderView(p.spec, o, true),
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

  /**
   * docs/API.md 18: an OCO's command ended. Refused (nothing happened but its hold): answered now,
   * false. Else its limit leg rests and its stop leg waits, linked, sharing the hold R1 took.
   */
  private ocoCreated(p: PairState, cmd: Command, code: number): boolean {
    const limit = cmd.order!;
    if (code !== OK) {
      this.risk.ocoRefused(p, cmd);
      cmd.result = code;
      this.results.reset(p);
      this.results.answer(cmd);
      return false;
    }
    const stop = cmd.sibling!;
    const link = { limit, stop, extra: cmd.hold - limitHold(p, limit.side, limit.price, limit.amount) };
    cmd.hold = 0n;
    limit.oco = link;
    stop.oco = link;
    this.openOrders.setOpen(stop);
    touch(p, limit);
    touch(p, stop);
    return true;
  }

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
}

/**
 * Whether `o` rests in the book (docs/API.md 18): a waiting stop does not, nor a triggered one
 * before its `rested` event.
 */
function inBook(o: OrderState): boolean {
  return o.stopDirection === 0 || (o.triggerMicro > 0 && o.restSeq > 0);
}

/** `o` changed in the command in progress: its row and view go out with the command (once). */
function touch(p: PairState, o: OrderState): void {
  const t = p.touched;
  if (t.length === 0 || t[t.length - 1] !== o) {
    if (!t.includes(o)) t.push(o);
  }
}

/**
 * Decodes a pair worker's event records (src/protocol/pair/records.ts) into R2 (`exchange.events`)
 * for pair `pairIndex`. `onTrade` is told of each trade (metrics).
 */
export function pairEventHandler(
  exchange: { readonly events: PairEvents },
  pairIndex: number,
  onTrade: () => void = () => {},
): (f: Float64Array, o: number) => void {
  const events = exchange.events;
  return (f, o) => {
    switch (f[o + EV_KIND]) {
      case EV_TRADE:
        events.onTrade(
          pairIndex,
          f[o + TRADE.takerId],
          f[o + TRADE.makerId],
          f[o + TRADE.price],
          f[o + TRADE.qty],
        );
        onTrade();
        break;
      case EV_RESTED:
        events.onRested(pairIndex, f[o + RESTED.orderId]);
        break;
      case EV_DONE:
        events.onDone(pairIndex, f[o + DONE.orderId], f[o + DONE.reason], f[o + DONE.left]);
        break;
      case EV_LEVEL:
        events.onLevel(pairIndex, f[o + LEVEL.side], f[o + LEVEL.price], f[o + LEVEL.total]);
        break;
      case EV_AMENDED:
        events.onAmended(
          pairIndex,
          f[o + AMENDED.oldPrice],
          f[o + AMENDED.newPrice],
          f[o + AMENDED.oldLeft],
          f[o + AMENDED.newLeft],
        );
        break;
      case EV_MMP:
        events.onMmp(pairIndex, f[o + MMP.user], f[o + MMP.frozen], f[o + MMP.frozenUntil]);
        break;
      case EV_TRIGGERED:
        events.onTriggered(pairIndex, f[o + TRIGGERED.orderId]);
        break;
      case EV_TRAILED:
        events.onTrailed(pairIndex, f[o + TRAILED.orderId], f[o + TRAILED.stopPrice]);
        break;
      case EV_FUNDS:
        events.onFundsAsked(pairIndex, f[o + FUNDS_ASKED.orderId]);
        break;
      case EV_QUOTED:
        events.onQuoted(pairIndex, f[o + QUOTED.index], f[o + QUOTED.orderId], f[o + QUOTED.result]);
        break;
      case EV_END:
        events.onEnd(pairIndex, f[o + END.result]);
        break;
    }
  };
}
