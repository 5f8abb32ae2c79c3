/**
 * The live order book of one pair from the `orders:{pair}` channel: the first message after
 * connecting is the full book, every later one the changed levels (amount 0: the level is gone).
 *
 * When messages carry `seq` (CONTRACT 9) each must be the previous + 1; on a jump the book is
 * reloaded from REST (`GET .../orders`, which carries its own `seq`), the messages that arrive
 * meanwhile are held, and those newer than the REST book are applied on top. Without `seq` the
 * stream alone is trusted (it is consistent by CONTRACT 7).
 */
import type { Book, Level } from "./types.ts";

interface Delta {
  buy: Level[];
  sell: Level[];
  seq?: number;
}

export class LiveBook {
  readonly buy = new Map<number, number>();
  readonly sell = new Map<number, number>();
  seq: number | null = null;
  /** Resyncs done (shown in the page for diagnosis). */
  resyncs = 0;
  #haveSnapshot = false;
  #held: Delta[] | null = null;
  readonly #load: () => Promise<Book>;
  readonly #changed: () => void;

  constructor(load: () => Promise<Book>, changed: () => void) {
    this.#load = load;
    this.#changed = changed;
  }

  /** One `orders:` message. */
  receive(data: Delta): void {
    if (!this.#haveSnapshot) {
      this.#haveSnapshot = true;
      this.#replace(data);
      this.#changed();
      return;
    }
    if (this.#held !== null) {
      this.#held.push(data);
      return;
    }
    if (typeof data.seq === "number" && this.seq !== null) {
      if (data.seq <= this.seq) return; // already in the book
      if (data.seq !== this.seq + 1) {
        this.#held = [data];
        void this.#resync();
        return;
      }
    }
    this.#apply(data);
    this.#changed();
  }

  /** Best first: asks ascending, bids descending. */
  levels(side: "buy" | "sell"): [number, number][] {
    const m = side === "buy" ? this.buy : this.sell;
    const out = [...m.entries()];
    out.sort(side === "buy" ? (a, b) => b[0] - a[0] : (a, b) => a[0] - b[0]);
    return out;
  }

  #replace(book: Delta): void {
    this.buy.clear();
    this.sell.clear();
    for (const l of book.buy) this.buy.set(l.price, l.amount);
    for (const l of book.sell) this.sell.set(l.price, l.amount);
    this.seq = typeof book.seq === "number" ? book.seq : null;
  }

  #apply(d: Delta): void {
    for (const l of d.buy) {
      if (l.amount === 0) this.buy.delete(l.price);
      else this.buy.set(l.price, l.amount);
    }
    for (const l of d.sell) {
      if (l.amount === 0) this.sell.delete(l.price);
      else this.sell.set(l.price, l.amount);
    }
    if (typeof d.seq === "number") this.seq = d.seq;
  }

  async #resync(): Promise<void> {
    this.resyncs++;
    for (let attempt = 0; attempt < 5; attempt++) {
      let book: Book;
      try {
        book = await this.#load();
      } catch {
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      this.#replace(book);
      const held = this.#held ?? [];
      let gap = false;
      for (const d of held) {
        if (typeof d.seq !== "number" || this.seq === null || d.seq <= this.seq) continue;
        if (d.seq !== this.seq + 1) {
          gap = true;
          break;
        }
        this.#apply(d);
      }
      if (!gap) {
        this.#held = null;
        this.#changed();
        return;
      }
      // The REST book is older than the held messages: load it again (held messages stay).
    }
    this.#held = null;
    this.#changed();
  }
}
