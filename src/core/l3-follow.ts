/**
 * Which pairs' L3 books (docs/API.md 7.6.2, src/core/read-models/l3-view.ts) are followed, beside the read model:
 * a book is started by the first `want` (an `orders_l3:{pair}` subscriber or a REST L3 read), its
 * snapshot taken from the open orders at a command boundary (now, or at the END of the command in
 * the worker: `atEnd`), and dropped by `sweep` once nobody wants it. While a pair's book is
 * followed, R2 records its L3 events into `PairState.l3` (src/core/pair-events.ts) and the results
 * stage applies them at the commit (src/core/results.ts).
 */

import { isWaitingStop, type OrderState } from "./command.ts";
import type { OpenOrders } from "./open-orders.ts";
import type { PairState } from "./pairs.ts";
import { L3_IDLE_MS, L3Book } from "./read-models/l3-view.ts";

export class L3Follow {
  /** Drops L3 books nobody wants (`sweep`); started by the first `want`. */
  private timer: NodeJS.Timeout | null = null;

  constructor(
    /** The core's pairs, by index (the core's own array: pairs added later are seen). */
    private readonly pairs: readonly PairState[],
    private readonly openOrders: OpenOrders,
    /** Every pair records its L3 events for the journal (ExchangeOptions.journalSteps): never stopped. */
    private readonly always = false,
  ) {}

  /**
   * The pair's order-by-order book, followed from now on. It is ready once the committed seq
   * reaches the snapshot's (`L3Book.readyAt`, `whenReady`).
   */
  want(pair: number): L3Book {
    const p = this.pairs[pair];
    const m = p.market;
    if (m.l3 !== null) return m.l3;
    const book = new L3Book();
    m.l3 = book;
    if (p.seq.current() === undefined) this.take(p);
    else p.l3Pending = true;
    if (this.timer === null) {
      this.timer = setInterval(() => this.sweep(Date.now()), L3_IDLE_MS / 6);
      this.timer.unref();
    }
    return book;
  }

  /**
   * Stops following the L3 books nobody wants any more: no stream subscriber, nobody waiting, and
   * no REST read for L3_IDLE_MS.
   */
  sweep(now: number): void {
    for (const p of this.pairs) {
      const book = p?.market.l3;
      if (book == null || book.subscribers > 0 || book.waiting || now - book.lastRead < L3_IDLE_MS) continue;
      // Recorded for the journal all the same: the events of a command in progress stay.
      if (!this.always) p!.l3 = null;
      p!.l3Pending = false;
      p!.market.l3 = null;
    }
  }

  /** The pair's command in progress ended: a wanted book's snapshot is taken now. */
  atEnd(p: PairState): void {
    if (p.l3Pending) this.take(p);
  }

  /**
   * Between two commands every open order of the pair rests as the book holds it; the order each
   * last rested in (`restSeq`, OpenOrders.setOpen) is its time priority. That is the book of seq
   * `bookSeq`, which the commits may not have reached yet.
   */
  private take(p: PairState): void {
    p.l3Pending = false;
    const book = p.market.l3!;
    const pair = p.spec.index;
    const mine: OrderState[] = [];
    // docs/API.md 18: a waiting stop is in no book.
    for (const o of this.openOrders.open.values()) if (o.pair === pair && !isWaitingStop(o)) mine.push(o);
    mine.sort((a, b) => a.restSeq - b.restSeq);
    for (const o of mine) book.open(o.id, o.side, o.price, o.amount - o.used);
    book.from = p.bookSeq;
    p.l3 = [];
    if (book.readyAt(p.market.seq)) book.fireReady();
  }
}
