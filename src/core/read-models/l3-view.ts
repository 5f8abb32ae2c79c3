/**
 * The order-by-order book of one pair (docs/API.md 7.6.2), kept on the main thread only while someone
 * wants it (`Exchange.wantL3`): an `orders_l3:{pair}` subscriber, or a REST L3 read in the last
 * L3_IDLE_MS. Nobody asking costs nothing per order: the book is built from the core's open orders
 * when first wanted, then follows the L3 events the core records from the pair worker's events,
 * applied when their command commits (src/core/results.ts), in the same step as the L2 levels.
 *
 *   wantL3 ──▶ snapshot of the open orders at a command boundary, as of book seq `from`
 *          ──▶ each later committed book change: its events (Publication.l3) applied
 *          ──▶ ready once the committed seq reaches `from` (the snapshot may be ahead of it)
 *
 * Events are flat numbers, L3_FIELDS per event: type (L3_OPEN, L3_CHANGE, L3_DONE), order id,
 * side (0 buy, 1 sell), price (ticks), remaining amount (lots; 0 for done).
 */
import { scaled } from "../../util/numbers.ts";

export const L3_OPEN = 0;
export const L3_CHANGE = 1;
export const L3_DONE = 2;
/** Numbers per event in an event list. */
export const L3_FIELDS = 5;
/** A REST read keeps the book followed this long when no stream subscriber holds it (ms). */
export const L3_IDLE_MS = 60_000;

const TYPE_NAMES = ["open", "change", "done"] as const;

export interface L3Entry {
  id: number;
  price: number;
  amount: number;
}

export interface L3Snapshot {
  seq: number;
  buy: L3Entry[];
  sell: L3Entry[];
}

export interface L3Event {
  type: (typeof TYPE_NAMES)[number];
  id: number;
  side: "buy" | "sell";
  price: number;
  amount: number;
}

interface Resting {
  id: number;
  side: number;
  price: number;
  amount: number;
}

export class L3Book {
  /** The book seq the snapshot shows; -1 until it is taken. */
  from = -1;
  /** `orders_l3:{pair}` subscribers holding it. */
  subscribers = 0;
  /** Date.now() of the last REST read. */
  lastRead = 0;
  private readonly orders = new Map<number, Resting>();
  /** Per side (0 buy, 1 sell): price → the orders at that price in time priority (Map order). */
  private readonly levels = [
    new Map<number, Map<number, Resting>>(),
    new Map<number, Map<number, Resting>>(),
  ];
  private waiters: (() => void)[] = [];

  /** The book shows the committed seq `seq` (the snapshot is taken and `seq` reached it). */
  readyAt(seq: number): boolean {
    return this.from >= 0 && seq >= this.from;
  }

  /** Runs `fn` once the book is ready (the caller checks `readyAt` first for "now"). */
  whenReady(fn: () => void): void {
    this.waiters.push(fn);
  }

  /** Someone waits for readiness. */
  get waiting(): boolean {
    return this.waiters.length > 0;
  }

  /** The book became ready: every waiter runs, in the order they asked. */
  fireReady(): void {
    const list = this.waiters;
    this.waiters = [];
    for (const fn of list) fn();
  }

  /** An order rests at the back of its price (an order already listed is moved there). */
  open(id: number, side: number, price: number, amount: number): void {
    this.remove(id);
    const o: Resting = { id, side, price, amount };
    this.orders.set(id, o);
    const levels = this.levels[side];
    let level = levels.get(price);
    if (level === undefined) {
      level = new Map();
      levels.set(price, level);
    }
    level.set(id, o);
  }

  /** Applies a committed change's events, in order. */
  apply(events: readonly number[]): void {
    for (let i = 0; i < events.length; i += L3_FIELDS) {
      const type = events[i];
      const id = events[i + 1];
      if (type === L3_OPEN) this.open(id, events[i + 2], events[i + 3], events[i + 4]);
      else if (type === L3_DONE) this.remove(id);
      else {
        const o = this.orders.get(id);
        if (o !== undefined) o.amount = events[i + 4];
      }
    }
  }

  private remove(id: number): void {
    const o = this.orders.get(id);
    if (o === undefined) return;
    this.orders.delete(id);
    const levels = this.levels[o.side];
    const level = levels.get(o.price)!;
    level.delete(id);
    if (level.size === 0) levels.delete(o.price);
  }

  /** The remaining amount of resting order `id` (0: not in the book). */
  amountOf(id: number): number {
    return this.orders.get(id)?.amount ?? 0;
  }

  /** Resting orders. */
  get size(): number {
    return this.orders.size;
  }

  /** The snapshot (13.2): bids descending, asks ascending, each price in time priority. */
  snapshot(seq: number, priceDecimals: number, amountDecimals: number): L3Snapshot {
    const side = (s: 0 | 1): L3Entry[] => {
      const levels = this.levels[s];
      const prices = [...levels.keys()].sort(s === 0 ? (a, b) => b - a : (a, b) => a - b);
      const out: L3Entry[] = [];
      for (const price of prices) {
        const p = scaled(price, priceDecimals);
        for (const o of levels.get(price)!.values())
          out.push({ id: o.id, price: p, amount: scaled(o.amount, amountDecimals) });
      }
      return out;
    };
    return { seq, buy: side(0), sell: side(1) };
  }
}

/** A change's events as the stream sends them (13.2). */
export function l3Events(
  events: readonly number[],
  priceDecimals: number,
  amountDecimals: number,
): L3Event[] {
  const out = new Array<L3Event>(events.length / L3_FIELDS);
  for (let i = 0, j = 0; i < events.length; i += L3_FIELDS, j++) {
    out[j] = {
      type: TYPE_NAMES[events[i]],
      id: events[i + 1],
      side: events[i + 2] === 0 ? "buy" : "sell",
      price: scaled(events[i + 3], priceDecimals),
      amount: scaled(events[i + 4], amountDecimals),
    };
  }
  return out;
}
