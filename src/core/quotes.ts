/**
 * Mass quotes on the main thread (docs/API.md 8.12): R1 of a quote, its level orders, and how its
 * events settle, for the matching engine's quote (workers/matching/order-book.ts `quoteBegin`).
 *
 *   R1   `submit`: the new quote's needs less what the old quote holds, per currency; the rest is
 *        reserved now (not enough: INSUFFICIENT_FUNDS, nothing changes)
 *   SEQ  one QUOTE record and its levels (sequencer.ts); the level orders take consecutive ids
 *   R2   `absorb` (an old quote order cancelled: its hold stays with the quote), `levelOrder`
 *        (a level rested), `quoted` (each level's outcome), `end` (what the quote holds and its
 *        placed orders do not need is released; the answer)
 *
 * The old quote's holds never pass through the available balance: a cancelled old order's hold
 * goes to the quote, which gives the placed levels theirs and releases only the rest, at END. So
 * no other request can take those funds between the engine's step and the quote's end.
 *
 * What the old quote holds when the engine runs the quote can be less than what R1 sees: commands
 * ahead of it on the pair may fill, cancel or amend the caller's quote orders first. R1 therefore
 * credits only what they cannot take: no order a cancel or amend ahead names, nothing when a
 * cancel-all of the caller is ahead, and per side less what every create or amend ahead on the
 * other side could fill (worst case: the highest-priced bids first). Quotes of one user on one
 * pair run one after the other (the next one's R1 after the previous END), so a quote always
 * credits the orders its predecessor placed. A quote refused for funds while a market buy of its
 * user is in flight waits for it and is judged again, as a create is (src/core/risk-stage.ts).
 *
 * Arrival order (docs/API.md 6): a quote waiting for one in flight or for a market buy waits on the
 * main thread; while it does, its user's later calls on the pair are parked behind it, and a quote
 * arriving while any command of its user waits on the pair is parked (src/core/arrival-order.ts).
 */
import { Code } from "../errors/catalogue.ts";
import { BUY, DONE_CANCELLED, ERR_WOULD_TAKE, OK, QUOTE_KEPT, SELL } from "../protocol/pair/engine.ts";
import type { ArrivalOrder } from "./arrival-order.ts";
import {
  CMD_AMEND,
  CMD_CANCEL,
  CMD_CANCEL_ALL,
  CMD_CREATE,
  type Command,
  expired,
  type OrderState,
  type QuoteLevel,
  type QuoteResult,
  type QuoteWork,
} from "./command.ts";
import type { Ledger } from "./ledger.ts";
import { FLAG_QUOTE_ORDER } from "./order-options.ts";
import type { PairStatuses } from "./pair-status.ts";
import { limitHold, type SettlementPair } from "./risk.ts";
import type { PairSequencer } from "./sequencer.ts";
import type { OrderView } from "./views.ts";

export { FLAG_QUOTE_ORDER };
export type { QuoteLevel, QuoteResult, QuoteWork };
export { newQuoteWork, quoteLevelOrders, quoteLevelRecords, restoreFlags } from "./quote-orders.ts";

/** A pair as a quote needs it. */
export interface QuotePair extends SettlementPair {
  seq: PairSequencer;
}

/** What quotes need of the core (src/core/exchange.ts). */
export interface QuoteHost {
  readonly ledger: Ledger;
  readonly statuses: PairStatuses;
  pair(index: number): QuotePair;
  /** The user's open orders on `pair`. */
  openOf(user: number, pair: number): readonly OrderState[];
  /** Answers a command refused after it waited (nothing changed). */
  answer(cmd: Command): void;
  /** Where a user's calls on a pair wait behind that user's command waiting there. */
  readonly arrival: ArrivalOrder;
  /** A quote refused for funds: true when it waits for the user's market buy in flight instead. */
  afterMarketBuy(cmd: Command): boolean;
  /** Whether the session tag ended (OpenOrders.sessionEnded): its quotes are refused. */
  sessionEnded(session: number): boolean;
}

export class Quotes {
  /**
   * Per user and pair (`user:pair`), with a quote in flight: the quotes waiting for it, oldest
   * first (at most one: the user's later calls on the pair are parked behind a waiting one).
   */
  private readonly inFlight = new Map<string, Command[]>();

  constructor(private readonly host: QuoteHost) {}

  /** A quote on arrival: parked behind the caller's command waiting on the pair, or `submitNow`. */
  submit(cmd: Command): number {
    return this.host.arrival.park(cmd) ? 0 : this.submitNow(cmd);
  }

  /** R1 of a quote, or after the caller's quote in flight on the pair; 0: its result comes later. */
  submitNow(cmd: Command): number {
    const waiting = this.inFlight.get(`${cmd.user}:${cmd.pair}`);
    if (waiting === undefined) return this.hold(cmd);
    waiting.push(cmd);
    this.host.arrival.wait(cmd);
    return 0;
  }

  /** R1: reserve what the new quote needs beyond what the old one holds, then send it. */
  private hold(cmd: Command): number {
    if (expired(cmd.expiresAt)) return Code.REQUEST_EXPIRED;
    const w = cmd.quote!;
    const { ledger, statuses } = this.host;
    // A pull only cancels: allowed where cancels are (docs/API.md 8.12, 11).
    const refused = w.levels.length > 0 ? statuses.refuseChange(cmd.pair) : statuses.refuseCancel(cmd.pair);
    if (refused !== 0) return refused;
    // A quote of a session that ended while it waited: its session's cancels already went.
    if (w.session !== 0 && this.host.sessionEnded(w.session)) return Code.SESSION_ENDED;
    const p = this.host.pair(cmd.pair);
    let needBase = 0n;
    let needQuote = 0n;
    for (const l of w.levels) {
      const h = limitHold(p, l.side, l.price, l.amount);
      if (l.side === SELL) needBase += h;
      else needQuote += h;
    }
    const [creditBase, creditQuote] = this.credit(cmd, p);
    const extraBase = needBase > creditBase ? needBase - creditBase : 0n;
    const extraQuote = needQuote > creditQuote ? needQuote - creditQuote : 0n;
    const user = cmd.user;
    if (extraBase > 0n && !ledger.reserve(user, p.base, extraBase)) return this.short(cmd);
    if (extraQuote > 0n && !ledger.reserve(user, p.quote, extraQuote)) {
      ledger.release(user, p.base, extraBase);
      return this.short(cmd);
    }
    w.holdBase = extraBase;
    w.holdQuote = extraQuote;
    if (p.seq.submit(cmd)) {
      this.inFlight.set(`${user}:${cmd.pair}`, []);
      return 0;
    }
    ledger.release(user, p.base, extraBase);
    ledger.release(user, p.quote, extraQuote);
    w.holdBase = w.holdQuote = 0n;
    return Code.BUSY;
  }

  /** Not enough funds for `cmd`: it waits for the caller's market buy in flight, or is refused. */
  private short(cmd: Command): number {
    return this.host.afterMarketBuy(cmd) ? 0 : Code.INSUFFICIENT_FUNDS;
  }

  /**
   * What the caller's open quote orders on the pair surely still hold when the quote runs, per
   * currency [base, quote]: see the header.
   */
  private credit(cmd: Command, p: QuotePair): [bigint, bigint] {
    const user = cmd.user;
    const mine = this.host.openOf(user, cmd.pair);
    if (mine.length === 0) return [0n, 0n];
    const skip = new Set<number>();
    let buying = 0;
    let selling = 0;
    for (const c of p.seq.ahead()) {
      switch (c.kind) {
        case CMD_CANCEL_ALL:
          if (c.user === user) return [0n, 0n];
          break;
        case CMD_CANCEL:
          if (c.order !== null && c.order.user === user) skip.add(c.order.id);
          break;
        case CMD_AMEND: {
          const o = c.order!;
          if (o.user === user) skip.add(o.id);
          if (o.side === BUY) buying += c.amount;
          else selling += c.amount;
          break;
        }
        case CMD_CREATE:
          if (c.side === BUY) buying += c.amount;
          else selling += c.amount;
          break;
      }
    }
    let askLots = 0;
    const bids: OrderState[] = [];
    for (const o of mine) {
      if ((o.flags & FLAG_QUOTE_ORDER) === 0 || skip.has(o.id)) continue;
      if (o.side === SELL) askLots += o.amount - o.used;
      else bids.push(o);
    }
    // Asks: every lot holds the same; buys ahead may take `buying` of them.
    const base = askLots > buying ? limitHold(p, SELL, 0, askLots - buying) : 0n;
    // Bids: sells ahead take the highest prices first.
    bids.sort((a, b) => b.price - a.price);
    let quote = 0n;
    let taken = selling;
    for (const o of bids) {
      const left = o.amount - o.used;
      const take = Math.min(left, taken);
      taken -= take;
      if (left > take) quote += limitHold(p, BUY, o.price, left - take);
    }
    return [base, quote];
  }

  /** The level order `id` of the quote `cmd` (a `rested` event), or undefined. */
  levelOrder(cmd: Command, id: number): OrderState | undefined {
    const i = id - cmd.orderId;
    const orders = cmd.quote!.orders;
    return i >= 0 && i < orders.length ? orders[i] : undefined;
  }

  /**
   * R2: `o` ends with `left` lots open during `cmd`. When the quote cancelled it (an old quote order
   * of its user), its hold stays with the quote (true); otherwise the caller releases it (false).
   */
  absorb(cmd: Command, p: QuotePair, o: OrderState, reason: number, left: number): boolean {
    if (reason !== DONE_CANCELLED || o.user !== cmd.user) return false;
    const w = cmd.quote!;
    const h = limitHold(p, o.side, o.price, left);
    if (o.side === SELL) w.holdBase += h;
    else w.holdQuote += h;
    w.cancelled.push(o.id);
    return true;
  }

  /** R2: the outcome of level `index` (`orderId`: its order, or the kept one, `open` finds it). */
  quoted(
    cmd: Command,
    index: number,
    orderId: number,
    result: number,
    open: (id: number) => OrderState | undefined,
  ) {
    const w = cmd.quote!;
    w.outcome[index] = result;
    if (result === QUOTE_KEPT) w.kept[index] = open(orderId);
  }

  /**
   * END of the quote with the engine's `code`. Not OK: nothing happened, its hold is released and
   * false returned (the caller answers the refusal). OK: the placed orders take their holds, the
   * rest is released, `touch` is told of every placed order and the answer is made.
   */
  end(
    cmd: Command,
    p: QuotePair,
    code: number,
    touch: (o: OrderState) => void,
    view: (o: OrderState) => OrderView,
  ): boolean {
    const w = cmd.quote!;
    const ledger = this.host.ledger;
    if (code !== OK) {
      ledger.release(cmd.user, p.base, w.holdBase);
      ledger.release(cmd.user, p.quote, w.holdQuote);
      w.holdBase = w.holdQuote = 0n;
      cmd.result = code;
      return false;
    }
    const placed: (OrderView | number)[] = [];
    for (let i = 0; i < w.levels.length; i++) {
      const outcome = w.outcome[i];
      if (outcome === OK) {
        const o = w.orders[i];
        const h = limitHold(p, o.side, o.price, o.amount);
        if (o.side === SELL) w.holdBase -= h;
        else w.holdQuote -= h;
        touch(o);
        placed.push(view(o));
      } else if (outcome === QUOTE_KEPT && w.kept[i] !== undefined) placed.push(view(w.kept[i]!));
      else placed.push(outcome === ERR_WOULD_TAKE ? Code.WOULD_TAKE_LIQUIDITY : Code.INTERNAL);
    }
    if (w.holdBase < 0n || w.holdQuote < 0n)
      throw new Error(`quote of user ${cmd.user}: the hold falls short by ${w.holdBase} / ${w.holdQuote}`);
    ledger.release(cmd.user, p.base, w.holdBase);
    ledger.release(cmd.user, p.quote, w.holdQuote);
    w.holdBase = w.holdQuote = 0n;
    w.result = { cancelled: w.cancelled.sort((a, b) => a - b), placed };
    return true;
  }

  /**
   * The quote `cmd` ended: the quote waiting for it runs R1 (then the calls parked behind that
   * one, src/core/arrival-order.ts); a quote after it waits for the one that went to the engine.
   */
  ended(cmd: Command): void {
    const key = `${cmd.user}:${cmd.pair}`;
    const waiting = this.inFlight.get(key);
    if (waiting === undefined) return;
    this.inFlight.delete(key);
    if (waiting.length === 0) return;
    queueMicrotask(() => {
      for (const next of waiting) this.host.arrival.rerun(next, this.retry);
    });
  }

  /** R1 of a quote that waited; a refusal now is its answer. */
  private readonly retry = (cmd: Command): void => {
    const code = this.submitNow(cmd);
    if (code === 0) return;
    cmd.result = code;
    this.host.answer(cmd);
  };
}
