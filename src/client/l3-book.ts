/**
 * The local order-by-order (L3) book of one pair (docs/API.md 7.6.2): a snapshot (`GET .../orders/l3`
 * or the `orders_l3:{pair}` on-connect message) plus each later message's events, applied by
 * `seq` as docs/API.md 12.3 numbers the book. No Node and no DOM, like local-book.ts.
 *
 * Each price level is a queue in time priority: `open` joins the back of its level, `change`
 * keeps its place, `done` leaves. The L2 levels are the queues' sums, added exactly (checksum.ts),
 * so they equal what `GET .../orders` answers at the same seq, and so does their checksum.
 */
import { bookChecksum, CHECKSUM_LEVELS, sumExact } from "./checksum.ts";
import type { DirectionType, L3Event, L3Order, L3Snapshot, L3Update, Level } from "./types.ts";

export type L3ApplyResult = "applied" | "stale" | "gap";

interface Resting {
  id: number;
  side: DirectionType;
  price: number;
  amount: number;
}

export class L3Book {
  /** The seq of the snapshot or the last update applied; undefined before a snapshot. */
  seq: number | undefined;
  private readonly orders = new Map<number, Resting>();
  /** Per side: price → the orders resting there, oldest first. */
  private readonly queues = { buy: new Map<number, Resting[]>(), sell: new Map<number, Resting[]>() };

  /** Replaces every order with a snapshot's (sides in priority order, as docs/API.md 7.6.2 sends them). */
  reset(snapshot: L3Snapshot): void {
    this.orders.clear();
    this.queues.buy.clear();
    this.queues.sell.clear();
    for (const side of ["buy", "sell"] as const) {
      for (const o of snapshot[side]) this.open({ id: o.id, side, price: o.price, amount: o.amount });
    }
    this.seq = snapshot.seq;
  }

  /**
   * Applies one update. `stale`: its seq is at or below ours, nothing done. `gap`: its seq is past
   * ours + 1, nothing done (the caller resyncs). Throws when an event names an order the book does
   * not hold in that place: the book has diverged and must be resynced as on a gap.
   */
  apply(update: L3Update): L3ApplyResult {
    if (this.seq === undefined) throw new Error("L3Book: an update before the snapshot");
    if (update.seq <= this.seq) return "stale";
    if (update.seq !== this.seq + 1) return "gap";
    for (const e of update.events) this.event(e);
    this.seq = update.seq;
    return "applied";
  }

  /** The resting order with this id, or undefined. */
  order(id: number): L3Order | undefined {
    const o = this.orders.get(id);
    return o === undefined ? undefined : { id: o.id, price: o.price, amount: o.amount };
  }

  /** Resting orders. */
  get size(): number {
    return this.orders.size;
  }

  /** One side's orders in priority order: best price first, then time. */
  ordersOf(side: DirectionType): L3Order[] {
    const out: L3Order[] = [];
    for (const price of this.prices(side)) {
      for (const o of this.queues[side].get(price)!) out.push({ id: o.id, price: o.price, amount: o.amount });
    }
    return out;
  }

  /** The book as `GET .../orders/l3` answers it. */
  snapshot(): L3Snapshot {
    return { seq: this.seq ?? 0, buy: this.ordersOf("buy"), sell: this.ordersOf("sell") };
  }

  /** One side's L2 levels as `[price, amount]`, best first (each amount the exact sum of its queue). */
  levels(side: DirectionType): [number, number][] {
    return this.prices(side).map((price) => [
      price,
      sumExact(this.queues[side].get(price)!.map((o) => o.amount)),
    ]);
  }

  /** The L2 book of the same seq, as `GET .../orders` answers it (with its docs/API.md 12.5 checksum). */
  l2(): { buy: Level[]; sell: Level[]; seq: number; checksum: number } {
    const side = (s: DirectionType) => this.levels(s).map(([price, amount]) => ({ price, amount }));
    return { buy: side("buy"), sell: side("sell"), seq: this.seq ?? 0, checksum: this.checksum() };
  }

  /** docs/API.md 12.5 checksum of the derived L2 book. */
  checksum(): number {
    return bookChecksum(
      this.levels("sell").slice(0, CHECKSUM_LEVELS),
      this.levels("buy").slice(0, CHECKSUM_LEVELS),
    );
  }

  /**
   * The queue position of a resting order: the amount resting ahead of it at its price (orders
   * that came before it there), which must trade before it does. 0 at the front of its level;
   * undefined when the order is not resting.
   */
  positionOf(orderId: number): number | undefined {
    const o = this.orders.get(orderId);
    if (o === undefined) return undefined;
    const queue = this.queues[o.side].get(o.price)!;
    const ahead: number[] = [];
    for (const q of queue) {
      if (q === o) break;
      ahead.push(q.amount);
    }
    return ahead.length === 0 ? 0 : sumExact(ahead);
  }

  /** Prices of one side, best first. */
  private prices(side: DirectionType): number[] {
    const dir = side === "buy" ? -1 : 1;
    return [...this.queues[side].keys()].sort((a, b) => (a - b) * dir);
  }

  private event(e: L3Event): void {
    if (e.type === "open") {
      if (this.orders.has(e.id)) throw new Error(`L3Book: order ${e.id} opened twice`);
      this.open({ id: e.id, side: e.side, price: e.price, amount: e.amount });
      return;
    }
    const o = this.orders.get(e.id);
    if (o === undefined || o.side !== e.side || o.price !== e.price)
      throw new Error(`L3Book: ${e.type} of order ${e.id}, which does not rest at ${e.side} ${e.price}`);
    if (e.type === "change") {
      o.amount = e.amount;
      return;
    }
    this.orders.delete(e.id);
    const queue = this.queues[o.side].get(o.price)!;
    queue.splice(queue.indexOf(o), 1);
    if (queue.length === 0) this.queues[o.side].delete(o.price);
  }

  private open(o: Resting): void {
    this.orders.set(o.id, o);
    const queue = this.queues[o.side].get(o.price);
    if (queue === undefined) this.queues[o.side].set(o.price, [o]);
    else queue.push(o);
  }
}
