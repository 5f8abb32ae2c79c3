/**
 * Execution reports of the FIX sessions (docs/API.md 17.2, 17.3): after each commit, every change of
 * an order of a user with a FIX session on becomes ExecutionReports to each of that user's FIX
 * sessions (order entry and drop copy), in commit order, behind the answers queued before
 * (fix-gateway.ts). boot.ts joins this listener with the stream hub's and the sessions'.
 *
 * One change of an order (one command) arrives as the user's trades on it, then the order as the
 * command left it (src/core/results.ts): reported as New (0) when the command created it, Replaced
 * (5) when it was amended, one Trade (F) per fill with the order's state after that fill, and
 * Cancelled (4) when it ended cancelled. The order-change number (ExecSeq 20002) goes on the last of
 * these that is not a fill; a fill carries its trade's number, so numbers only go up on the wire.
 * The answers to this gateway's cancels and replaces (fix-orders.ts) leave a claim on the order, so
 * that the report of that change carries the request's ClOrdID to the session that asked, and the
 * order's own ClOrdID (its clientOrderId) as OrigClOrdID.
 */
import type { OrderView, UserTradeView } from "../core/exchange.ts";
import type { EntryContext } from "../entry/context.ts";
import { replayRows } from "../entry/resume.ts";
import { orderRowView, tradeRowView } from "../entry/row-views.ts";
import { waitingStopIds } from "../entry/trade.ts";
import { UserReports } from "../entry/user-reports.ts";
import type { Execution } from "../protocol/db/reader-tasks.ts";
import { log } from "../util/log.ts";
import {
  execReport,
  type Fill,
  type FixOrder,
  fillOf,
  fixOrderOf,
  ordStatus,
  quoteOf,
  type ReportState,
} from "./exec-report.ts";
import { FIX_ON, type FixConn, type FixOut, type OutMsg } from "./fix-conn.ts";

/** What this gateway knows of an open order of a user with a FIX session: its last size and price. */
interface Track {
  amount: number;
  price: number;
}

/** A cancel or replace answered to one session: the report of that change names its ClOrdID. */
export interface Claim {
  readonly conn: FixConn;
  readonly replace: boolean;
  readonly clOrdId: string;
}

/** A user with FIX sessions on. */
interface UserBook {
  readonly conns: Set<FixConn>;
  /** The user's trades of the command being published, until its order changes arrive. */
  trades: [UserTradeView, number, boolean][];
  readonly orders: Map<number, Track>;
  readonly claims: Map<number, Claim>;
  /** The user's stop orders waiting for their trigger (docs/API.md 18): their trigger is ExecType L. */
  readonly waiting: Set<number>;
}

export class FixReports extends UserReports {
  private readonly books = new Map<number, UserBook>();
  /**
   * Per user, the ClOrdID of every accepted OrderCancelReplaceRequest → the order it replaced
   * (docs/API.md 17.2: a client chains them, across its reconnects too); an entry goes when its
   * order is seen closing.
   */
  private readonly replaced = new Map<number, Map<string, number>>();
  /** The replaced map's ClOrdIDs of each order (to drop them when it closes). */
  private readonly replacedOf = new Map<number, string[]>();

  constructor(
    private readonly out: FixOut,
    /** Its `ctx` is read when a report is made, after the start (boot.ts builds it last). */
    private readonly deps: { readonly ctx: EntryContext },
  ) {
    super();
  }

  protected reporting(user: number): boolean {
    return this.books.has(user);
  }

  add(c: FixConn): void {
    let book = this.books.get(c.userId);
    if (book === undefined) {
      // Stops placed before the user's first FIX session: their trigger is told apart all the same.
      const waiting = new Set(waitingStopIds(this.deps.ctx, c.userId));
      book = { conns: new Set(), trades: [], orders: new Map(), claims: new Map(), waiting };
      this.books.set(c.userId, book);
    }
    book.conns.add(c);
  }

  remove(c: FixConn): void {
    const book = this.books.get(c.userId);
    if (book === undefined) return;
    book.conns.delete(c);
    for (const [id, claim] of book.claims) if (claim.conn === c) book.claims.delete(id);
    if (book.conns.size === 0) this.books.delete(c.userId);
  }

  /** A replace of `orderId` accepted with `clOrdId`: later requests may name the order by it. */
  replacedWith(user: number, clOrdId: string, orderId: number): void {
    let map = this.replaced.get(user);
    if (map === undefined) {
      map = new Map();
      this.replaced.set(user, map);
    }
    map.set(clOrdId, orderId);
    const list = this.replacedOf.get(orderId);
    if (list === undefined) this.replacedOf.set(orderId, [clOrdId]);
    else list.push(clOrdId);
  }

  /** The order a replace accepted with `clOrdId` was on, if any. */
  replacedOrder(user: number, clOrdId: string): number | undefined {
    return this.replaced.get(user)?.get(clOrdId);
  }

  /** The book of a user with a session on (fix-orders.ts leaves claims in it). */
  book(user: number): UserBook | undefined {
    return this.books.get(user);
  }

  userTrade(user: number, view: UserTradeView, orderId: number, maker: boolean): void {
    this.books.get(user)?.trades.push([view, orderId, maker]);
  }

  orderChanged(user: number, view: OrderView, created: boolean): void {
    const book = this.books.get(user);
    if (book === undefined || this.closed) return;
    try {
      this.report(book, user, view, created);
    } catch (err) {
      // Called from the core's publication of a commit: a fault here must not stop the others.
      log().error({ err: String(err), orderId: view.id }, "FIX report failed");
    }
  }

  /** The reports of one change of an order, to each of the user's FIX sessions. */
  private report(book: UserBook, user: number, view: OrderView, created: boolean): void {
    const o = fixOrderOf(view, this.deps.ctx.config);
    const fills: Fill[] = [];
    if (book.trades.length > 0) {
      const rest: [UserTradeView, number, boolean][] = [];
      for (const t of book.trades) {
        if (t[1] === o.id) fills.push(fillOf(t[0], t[2], o.pair));
        else rest.push(t);
      }
      book.trades = rest;
    }
    const claim = book.claims.get(o.id);
    if (claim !== undefined) book.claims.delete(o.id);
    const known = book.orders.get(o.id);
    // The state before this change's fills: the record's, less each fill.
    let cum = o.used;
    let quote = quoteOf(o);
    for (const f of fills) {
      cum -= f.qty;
      quote -= BigInt(f.px) * BigInt(f.qty);
    }
    const states: ReportState[] = [];
    if (created) {
      states.push({ execType: "0", ordStatus: "0", cum: 0, quote: 0n, execSeq: 0 });
      if ((o.ordType === "3" || o.ordType === "4") && !o.triggered) book.waiting.add(o.id);
    }
    // docs/API.md 17.2: the change that triggered a stop is reported as Triggered (L), then its fills.
    const triggered = o.triggered && book.waiting.delete(o.id);
    if (triggered)
      states.push({ execType: "L", ordStatus: ordStatus(o, cum, false), cum, quote, execSeq: 0 });
    const amended =
      claim?.replace === true ||
      (known !== undefined && (known.amount !== o.amount || known.price !== o.price)) ||
      (!created && !triggered && fills.length === 0 && !o.cancelled);
    if (amended && !created)
      states.push({ execType: "5", ordStatus: ordStatus(o, cum, false), cum, quote, execSeq: 0 });
    for (const f of fills) {
      cum += f.qty;
      quote += BigInt(f.px) * BigInt(f.qty);
      states.push({
        execType: "F",
        ordStatus: ordStatus(o, cum, false),
        cum,
        quote,
        execSeq: f.trade.execSeq,
        fill: f,
      });
    }
    if (o.cancelled) states.push({ execType: "4", ordStatus: "4", cum, quote, execSeq: 0 });
    // The change's number goes on its last report that is not a fill.
    const last = states[states.length - 1];
    if (last !== undefined && last.execType !== "F") last.execSeq = view.execSeq;
    if (o.cancelled || o.used >= o.amount) {
      book.orders.delete(o.id);
      book.waiting.delete(o.id);
      const ids = this.replacedOf.get(o.id);
      if (ids !== undefined) {
        this.replacedOf.delete(o.id);
        const map = this.replaced.get(user);
        for (const id of ids) map?.delete(id);
        if (map?.size === 0) this.replaced.delete(user);
      }
    } else book.orders.set(o.id, { amount: o.amount, price: o.price });
    for (const c of book.conns) {
      if (c.state !== FIX_ON || view.execSeq <= c.resumeCut) continue;
      const msgs: OutMsg[] = [];
      for (const s of states) {
        // A fill numbered at or below a resume's cut is in its replay (docs/API.md 16).
        if (s.execType === "F" && s.execSeq <= c.resumeCut) continue;
        if (claim !== undefined && claim.conn === c && (s.execType === "4" || s.execType === "5")) {
          msgs.push(execReport(o, { ...s, clOrdId: claim.clOrdId, origClOrdId: o.clOrdId }));
        } else msgs.push(execReport(o, s));
      }
      if (msgs.length > 0) this.out.push(c, msgs);
    }
  }

  /**
   * docs/API.md 16 and 17.3: the user's executions in (from, cut] as ExecutionReports with
   * PossResend(97)=Y (trades as ExecType=F, order states as ExecType=I), in one slot behind the
   * Logon's answer; live reports at or below `cut` are left out (`resumeCut`).
   */
  replay(c: FixConn, from: number, cut: number): void {
    const ctx = this.deps.ctx;
    c.resumeCut = cut;
    const slot = this.out.slot(c);
    // A failure to read the executions or to make their reports ends the session alike.
    replayRows(ctx, c.userId, from, cut)
      .then((rows) => replayReports(ctx, rows))
      .then(
        (msgs) => this.out.fill(c, slot, msgs),
        (err) => {
          // docs/FIX.md 7: no live report may pass the executions it could not send.
          log().error({ err: String(err) }, "FIX resume: the executions could not be read");
          this.out.abort(c, slot, RESUME_FAILED);
        },
      );
  }
}

/** The Logout's Text of a resume whose executions could not be read (docs/FIX.md 7). */
const RESUME_FAILED = "resume failed: the executions could not be read";

/**
 * The replay's reports. A fill's state after it is the order's state in the replay (its latest, with
 * its `executedQuote`) less the later fills of the replay.
 */
function replayReports(ctx: EntryContext, rows: readonly Execution[]): OutMsg[] {
  const config = ctx.config;
  const orders = new Map<number, FixOrder>();
  const execSeqs = new Map<number, number>();
  /** Per order, the lots and ticks × lots of its replayed fills not yet reported. */
  const later = new Map<number, [number, bigint]>();
  for (const r of rows) {
    if (r.event === "order") {
      const view = orderRowView(r.order, config);
      orders.set(view.id, fixOrderOf(view, config));
      execSeqs.set(view.id, view.execSeq);
    } else {
      const left = later.get(r.orderId) ?? [0, 0n];
      const qty = r.trade.amount;
      later.set(r.orderId, [left[0] + qty, left[1] + BigInt(qty) * BigInt(r.trade.price)]);
    }
  }
  const out: OutMsg[] = [];
  for (const r of rows) {
    if (r.event === "trade") {
      const o = orders.get(r.orderId);
      if (o === undefined) continue;
      const fill = fillOf(tradeRowView(r.trade, config), r.maker, o.pair);
      const left = later.get(r.orderId)!;
      left[0] -= fill.qty;
      left[1] -= BigInt(fill.px) * BigInt(fill.qty);
      const cum = o.used - left[0];
      out.push(
        execReport(o, {
          execType: "F",
          ordStatus: ordStatus(o, cum, false),
          cum,
          quote: quoteOf(o) - left[1],
          execSeq: r.execSeq,
          fill,
          possResend: true,
        }),
      );
    } else {
      const o = orders.get(r.order.id)!;
      out.push(
        execReport(o, {
          execType: "I",
          ordStatus: ordStatus(o, o.used, o.cancelled),
          cum: o.used,
          quote: quoteOf(o),
          execSeq: execSeqs.get(o.id) ?? r.execSeq,
          possResend: true,
        }),
      );
    }
  }
  return out;
}
