/**
 * The part of a commit listener (src/core/results.ts) that the execution reports of an interface
 * share: the trading sessions' (src/session/reports.ts, docs/API.md 13) and the FIX gateway's
 * (src/fix/fix-reports.ts, docs/API.md 17.2). They take a user's order changes and trades, after
 * their commit, for the users that have a connection taking reports; public data is not theirs.
 */
import type { CommitListener, OrderView, UserTradeView } from "../core/exchange.ts";

export abstract class UserReports implements CommitListener {
  /** True after shutdown: nothing more is queued. */
  closed = false;

  /** Whether `user` has a connection that takes reports now. */
  protected abstract reporting(user: number): boolean;

  abstract orderChanged(user: number, view: OrderView, created: boolean): void;
  abstract userTrade(user: number, view: UserTradeView, orderId: number, maker: boolean): void;

  wantsOrders(user: number): boolean {
    return !this.closed && this.reporting(user);
  }

  wantsUserTrades(user: number): boolean {
    return !this.closed && this.reporting(user);
  }

  wantsTrades(): boolean {
    return false;
  }

  publicTrades(): void {}
  levelsChanged(): void {}
  bboChanged(): void {}
  l3Changed(): void {}
}
