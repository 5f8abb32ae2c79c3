/**
 * The core's open orders (shared by the stages of src/core/command.ts): the resting orders by id,
 * each user's list of them (cancel-all), the orders closed by a command whose final row is not
 * committed yet (`closing`), and those whose final row has committed lately (`recentlyClosed`).
 *
 *   setOpen(o)        R2: the order rests (or a stored one is restored into its book)
 *   close(o)          R2: it left the book; cancels see it in `closing` until its row commits
 *   committed(o)      OUT: its final row committed; it moves to the recently closed ones
 *
 * R1 reads it to judge cancels and amends, the sequencer to choose a cancel-all's targets, the
 * results stage to move closed orders on at commit.
 */

import { Code } from "../errors/catalogue.ts";
import type { OrderState } from "./command.ts";
import { OrderIndex } from "./order-index.ts";
import { closedError, RecentlyClosed } from "./recently-closed.ts";

/** How long an ended session tag is remembered (OpenOrders.endSession). */
const ENDED_SESSION_MS = 10 * 60_000;

export class OpenOrders {
  /** Resting orders (and the taker of a command in progress once it rests), by id. */
  readonly open = new OrderIndex<OrderState>();
  /** The resting orders of each user (cancel-all). */
  private readonly byUser = new Map<number, OrderState[]>();
  /** Session tags that ended in the last ENDED_SESSION_MS, with when (ms), oldest first. */
  private readonly endedSessions = new Map<number, number>();
  /** The resting orders of each session tag (docs/API.md 8.9, cancel-on-disconnect). */
  private readonly bySession = new Map<number, Set<OrderState>>();
  /** Closed orders whose final row is not committed yet (a cancel's answer needs them). */
  readonly closing = new Map<number, OrderState>();
  /** Orders whose final rows have committed, and why they are closed (src/core/recently-closed.ts). */
  readonly recentlyClosed = new RecentlyClosed();
  /** Rests so far (OrderState.restSeq). */
  private rests = 0;

  get(id: number): OrderState | undefined {
    return this.open.get(id);
  }

  has(id: number): boolean {
    return this.open.has(id);
  }

  /** The open order `orderId` of `user`, or undefined. */
  own(user: number, orderId: number): OrderState | undefined {
    const o = this.open.get(orderId);
    return o !== undefined && o.user === user ? o : undefined;
  }

  /**
   * A follower (docs/OPERATIONS.md, "A second box: follower"): the resting orders are `orders` from
   * now on, as its database holds them; nothing is closing (no command runs on a follower).
   */
  replaceAll(orders: readonly OrderState[]): void {
    for (const o of [...this.open.values()]) this.open.delete(o.id);
    this.byUser.clear();
    this.bySession.clear();
    this.closing.clear();
    for (const o of orders) this.setOpen(o);
  }

  /** `o` rests in its book (again, after a move: at the back of its new price). */
  setOpen(o: OrderState): void {
    o.restSeq = ++this.rests;
    this.open.set(o.id, o);
    // A moved order rests again: it is listed already.
    if (o.userSlot >= 0) return;
    let mine = this.byUser.get(o.user);
    if (mine === undefined) {
      mine = [];
      this.byUser.set(o.user, mine);
    }
    o.userSlot = mine.push(o) - 1;
    if (o.session !== 0) {
      let set = this.bySession.get(o.session);
      if (set === undefined) {
        set = new Set();
        this.bySession.set(o.session, set);
      }
      set.add(o);
    }
  }

  /** `o` is closed (filled or cancelled) by the command in progress. */
  close(o: OrderState): void {
    if (this.open.get(o.id) === o) {
      this.open.delete(o.id);
      // Out of its user's list in O(1): the last order takes its slot.
      const mine = this.byUser.get(o.user)!;
      const last = mine.pop()!;
      if (last !== o) {
        mine[o.userSlot] = last;
        last.userSlot = o.userSlot;
      }
      o.userSlot = -1;
      if (mine.length === 0) this.byUser.delete(o.user);
      if (o.session !== 0) {
        const set = this.bySession.get(o.session);
        if (set?.delete(o) && set.size === 0) this.bySession.delete(o.session);
      }
    }
    this.closing.set(o.id, o);
  }

  /** Whether `o` was closed and its final row is not committed yet. */
  isClosing(o: OrderState): boolean {
    return this.closing.get(o.id) === o;
  }

  /** The final row of the closed order `o` committed: from now on the database answers for it. */
  committed(o: OrderState): void {
    if (this.closing.get(o.id) === o) {
      this.closing.delete(o.id);
      this.recentlyClosed.add(o.id, o.user, closedError(o));
    }
  }

  /** The open orders of `user` on every pair, appended to `out`. */
  userOrders(user: number, out: OrderState[]): OrderState[] {
    const mine = this.byUser.get(user);
    if (mine !== undefined) for (const o of mine) out.push(o);
    return out;
  }

  /** The open orders of `user` on pair `pair`, appended to `out`. */
  userOrdersOn(user: number, pair: number, out: OrderState[]): OrderState[] {
    const mine = this.byUser.get(user);
    if (mine !== undefined) for (const o of mine) if (o.pair === pair) out.push(o);
    return out;
  }

  /**
   * The session tag `session` ended (its cancels go out now). A create or quote of it still waiting
   * on the main thread (a client order id check, a market buy, a quote in flight, the arrival gate:
   * milliseconds) is refused when its R1 runs (`sessionEnded`) instead of resting with the tag of a
   * session whose cancels went. Kept ENDED_SESSION_MS, far beyond any such wait.
   */
  endSession(session: number, now = Date.now()): void {
    const ended = this.endedSessions;
    ended.set(session, now);
    for (const [s, at] of ended) {
      if (now - at < ENDED_SESSION_MS) break;
      ended.delete(s);
    }
  }

  /** Whether the session tag `session` (not 0) ended lately (`endSession`). */
  sessionEnded(session: number): boolean {
    return this.endedSessions.size !== 0 && this.endedSessions.has(session);
  }

  /** The open orders created under the session tag `session`, appended to `out`. */
  sessionOrders(session: number, out: OrderState[]): OrderState[] {
    const mine = this.bySession.get(session);
    if (mine !== undefined) for (const o of mine) out.push(o);
    return out;
  }

  /**
   * Why `orderId` is not an open order of `user`, as cancel-order answers it (docs/API.md 7.2): another
   * user's order and an unknown id alike are "not found". -1 when only the database can tell (the
   * order closed, its row is committed, and it is not among the recently closed ones).
   */
  notOpenError(user: number, orderId: number): number {
    const c = this.closing.get(orderId);
    if (c !== undefined) return c.user === user ? closedError(c) : Code.ORDER_NOT_FOUND;
    if (this.open.has(orderId)) return Code.ORDER_NOT_FOUND;
    return this.recentlyClosed.errorFor(user, orderId, Code.ORDER_NOT_FOUND);
  }

  /**
   * Ids of the user's orders on a pair that are open, or were until a change not yet committed:
   * the candidates of an open-orders read, which the committed rows then decide (docs/API.md 8.6).
   */
  openOrderIds(user: number, pair: number): number[] {
    const ids: number[] = [];
    const mine = this.byUser.get(user);
    if (mine !== undefined) for (const o of mine) if (o.pair === pair) ids.push(o.id);
    for (const o of this.closing.values()) if (o.user === user && o.pair === pair) ids.push(o.id);
    return ids;
  }
}
