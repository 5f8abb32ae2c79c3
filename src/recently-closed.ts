/**
 * Why the last RECENT_CLOSED orders whose final rows have committed are closed: a cancel (or an
 * amend) of one of them is answered from here instead of from its row. A market maker's cancel
 * that lost the race with a fill is the common case of a cancel of a closed order; each used to be
 * a database read, which waits for the bulk apply of every batch before it (src/db/writer.ts
 * `applied()`), and under load those reads made the cancel's slowest answers. A closed order never
 * changes again and its row is committed, so the answer is the row's answer. Older orders still go
 * to the database.
 */

import { Code } from "./errors.ts";

/** The cancel error for an order that is no longer open. */
export function closedError(o: { cancelled: boolean; used: number; amount: number }): number {
  if (o.cancelled) return Code.ORDER_ALREADY_CANCELLED;
  if (o.used === o.amount) return Code.ORDER_ALREADY_EXECUTED;
  return Code.ORDER_NOT_FOUND;
}

/** Closed orders remembered: a ring, the oldest forgotten first. */
export const RECENT_CLOSED = 65_536;

export class RecentlyClosed {
  private readonly ids = new Float64Array(RECENT_CLOSED);
  private readonly users = new Int32Array(RECENT_CLOSED);
  /** The cancel error of each (a catalogue code). */
  private readonly codes = new Int32Array(RECENT_CLOSED);
  /** Order id -> its slot. */
  private readonly slots = new Map<number, number>();
  private next = 0;

  /** Order `id` of `user` is closed for good, and a cancel of it is answered `code`. */
  add(id: number, user: number, code: number): void {
    const s = this.next;
    this.next = s === RECENT_CLOSED - 1 ? 0 : s + 1;
    const old = this.ids[s];
    if (old !== 0 && this.slots.get(old) === s) this.slots.delete(old);
    this.ids[s] = id;
    this.users[s] = user;
    this.codes[s] = code;
    this.slots.set(id, s);
  }

  /**
   * The cancel error of order `id` for `user` (another user's order is "not found" like an
   * unknown one), or -1 when it is not remembered.
   */
  errorFor(user: number, id: number, notFound: number): number {
    const s = this.slots.get(id);
    if (s === undefined) return -1;
    return this.users[s] === user ? this.codes[s] : notFound;
  }
}
