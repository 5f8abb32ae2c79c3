/**
 * Why the last RECENT_CLOSED orders whose final rows have committed are closed: a cancel (or an
 * amend) of one of them is answered from here instead of from its row. A market maker's cancel
 * that lost the race with a fill is the common case of a cancel of a closed order; each used to be
 * a database read, which waits for the bulk apply of every batch before it (src/db/writer.ts
 * `applied()`), and under load those reads made the cancel's slowest answers. A closed order never
 * changes again and its row is committed, so the answer is the row's answer. Older orders still go
 * to the database.
 */

import { Code } from "../errors/catalogue.ts";

/** The cancel error for an order that is no longer open. */
export function closedError(o: { cancelled: boolean; used: number; amount: number }): number {
  if (o.cancelled) return Code.ORDER_ALREADY_CANCELLED;
  if (o.used === o.amount) return Code.ORDER_ALREADY_EXECUTED;
  return Code.ORDER_NOT_FOUND;
}

/** Closed orders remembered: a ring, the oldest forgotten first. */
export const RECENT_CLOSED = 65_536;

/**
 * Slots of the id index: a power of two, four times the ring, so that ids a ring apart (the ids
 * of orders closing in about the order they were made) never share a slot.
 */
export const INDEX_SLOTS = 4 * RECENT_CLOSED;
const INDEX_MASK = INDEX_SLOTS - 1;

export class RecentlyClosed {
  private readonly ids = new Float64Array(RECENT_CLOSED);
  private readonly users = new Int32Array(RECENT_CLOSED);
  /** The cancel error of each (a catalogue code). */
  private readonly codes = new Int32Array(RECENT_CLOSED);
  /**
   * Order id -> 1 + its ring slot (0: none), direct-mapped by the id's low bits: no Map to update
   * and no garbage per closed order. Two remembered ids with the same low bits keep only the later
   * one; the other is then answered from its row, like an order older than the ring.
   */
  private readonly index = new Int32Array(INDEX_SLOTS);
  private next = 0;

  /** Order `id` of `user` is closed for good, and a cancel of it is answered `code`. */
  add(id: number, user: number, code: number): void {
    const s = this.next;
    this.next = s === RECENT_CLOSED - 1 ? 0 : s + 1;
    const old = this.ids[s];
    if (old !== 0) {
      const o = old & INDEX_MASK;
      if (this.index[o] === s + 1) this.index[o] = 0;
    }
    this.ids[s] = id;
    this.users[s] = user;
    this.codes[s] = code;
    this.index[id & INDEX_MASK] = s + 1;
  }

  /**
   * The cancel error of order `id` for `user` (another user's order is "not found" like an
   * unknown one), or -1 when it is not remembered.
   */
  errorFor(user: number, id: number, notFound: number): number {
    const s = this.index[id & INDEX_MASK] - 1;
    if (s < 0 || this.ids[s] !== id) return -1;
    return this.users[s] === user ? this.codes[s] : notFound;
  }
}
