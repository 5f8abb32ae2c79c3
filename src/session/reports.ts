/**
 * Execution reports of the trading sessions (docs/API.md 13): after each commit, an order's change,
 * a trade, an MMP state change and a pair's status go to the logged-on sessions of the user that
 * asked for reports (a pair's status to every logged-on session), behind the answers already
 * queued (outbox.ts). `bothListeners` joins them with the stream hub as the core's one listener.
 */
import type { CommitListener, OrderView, UserTradeView } from "../core/exchange.ts";
import { UserReports } from "../entry/user-reports.ts";
import { addToSet, removeFromSet } from "../util/set-map.ts";
import { reportFrame } from "../wire/render.ts";
import { serialize } from "../wire/schemas.ts";
import type { Outbox } from "./outbox.ts";
import { type Socket, STATE_ON } from "./session-conn.ts";

export class SessionReports extends UserReports {
  /** Logged-on sessions that receive reports, per user id. */
  private readonly sessions = new Map<number, Set<Socket>>();

  constructor(
    private readonly outbox: Outbox,
    /** Every open session (pair statuses go to each logged-on one). */
    private readonly conns: ReadonlySet<Socket>,
  ) {
    super();
  }

  protected reporting(user: number): boolean {
    return this.sessions.has(user);
  }

  /** A session logged on with reports: it gets its user's from now on. */
  add(user: number, ws: Socket): void {
    addToSet(this.sessions, user, ws);
  }

  remove(user: number, ws: Socket): void {
    removeFromSet(this.sessions, user, ws);
  }

  /** An execution report to each session of the user, but one whose resume's replay holds it. */
  private pushReport(set: ReadonlySet<Socket>, execSeq: number, text: string): void {
    for (const ws of set) {
      const c = ws.getUserData();
      if (execSeq > c.resumeCut) this.outbox.push(ws, c, { text, answer: false });
    }
  }

  orderChanged(user: number, view: OrderView): void {
    const set = this.sessions.get(user);
    if (set === undefined || this.closed) return;
    // The data as user_orders carries it: the stream message with `"stream":""` in place of the event.
    const text = reportFrame({ execSeq: view.execSeq, event: "order", data: view });
    this.pushReport(set, view.execSeq, text);
  }

  userTrade(user: number, view: UserTradeView): void {
    const set = this.sessions.get(user);
    if (set === undefined || this.closed) return;
    const text = reportFrame({ execSeq: view.execSeq, event: "trade", data: view });
    this.pushReport(set, view.execSeq, text);
  }

  /**
   * docs/API.md 8.10: the user's MMP state on a pair changed (a trigger, a reset), after the commit of
   * the command that changed it. Sent with the reports (a logon with `reports: false` gets none).
   */
  mmpChanged(user: number, pairName: string, frozen: boolean, frozenUntil: number): void {
    const set = this.sessions.get(user);
    if (set === undefined || this.closed) return;
    const text = `{"event":"mmp","data":${serialize.mmpEvent({ pairName, frozen, frozenUntil })}}`;
    for (const ws of set) this.outbox.push(ws, ws.getUserData(), { text, answer: false });
  }

  /**
   * A pair's status changed (docs/API.md 13), after its commit: every logged-on session is told,
   * with or without reports, since it is the venue's state and not a report of the user's orders
   * (DECISIONS.md "Pair status published").
   */
  pairStatusChanged(_pair: number, pairName: string, status: string): void {
    if (this.closed) return;
    const text = `{"event":"pairStatus","data":${serialize.pairStatus({ pairName, status })}}`;
    for (const ws of this.conns) {
      const c = ws.getUserData();
      if (c.state === STATE_ON) this.outbox.push(ws, c, { text, answer: false });
    }
  }
}

/** Two commit listeners as one: the stream hub and the sessions' reports. */
export function bothListeners(a: CommitListener, b: CommitListener): CommitListener {
  return {
    wantsOrders: (u) => a.wantsOrders(u) || b.wantsOrders(u),
    wantsUserTrades: (u) => a.wantsUserTrades(u) || b.wantsUserTrades(u),
    wantsTrades: (p) => a.wantsTrades(p) || b.wantsTrades(p),
    orderChanged: (u, v, created) => {
      if (a.wantsOrders(u)) a.orderChanged(u, v, created);
      if (b.wantsOrders(u)) b.orderChanged(u, v, created);
    },
    userTrade: (u, v, orderId, maker) => {
      if (a.wantsUserTrades(u)) a.userTrade(u, v, orderId, maker);
      if (b.wantsUserTrades(u)) b.userTrade(u, v, orderId, maker);
    },
    publicTrades: (p, t) => a.publicTrades(p, t),
    levelsChanged: (p, l, s) => a.levelsChanged(p, l, s),
    mmpChanged: (u, p, f, until) => {
      a.mmpChanged?.(u, p, f, until);
      b.mmpChanged?.(u, p, f, until);
    },
    pairStatusChanged: (p, name, status) => {
      a.pairStatusChanged?.(p, name, status);
      b.pairStatusChanged?.(p, name, status);
    },
    bboChanged: (p) => a.bboChanged(p),
    l3Changed: (p, s, e) => a.l3Changed(p, s, e),
  };
}
