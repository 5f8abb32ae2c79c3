/**
 * The local order book of one pair, shared by the client library (book.ts, `OrderBookFeed`) and the
 * web page (web/src/main.ts): no Node and no DOM, only the wire types, so the page's build includes
 * it as it is.
 *
 * `LocalBook` holds the levels and applies the sequence rules of docs/API.md 12.3 to one message.
 * `LiveBook` keeps a `LocalBook` live from a connection's `orders:{pair}` messages: the first one is
 * the snapshot, every later one the changed levels (amount 0: the level is gone). When messages
 * carry `seq`, each must be the previous + 1; on a jump the book is re-read from REST (which carries
 * its own `seq`), the messages that arrive meanwhile are held, and those newer than the REST book
 * are applied on top. Without `seq` the stream alone is trusted (it is consistent by docs/API.md 12).
 * When messages carry `checksum` (docs/API.md 12.5), the book after each one must give that checksum;
 * a mismatch (a divergence `seq` cannot show) resyncs from REST the same way.
 */
import { bookChecksum, CHECKSUM_LEVELS } from "./checksum.ts";
import type { BookData } from "./types.ts";

export type { BookData };

export type ApplyResult = "applied" | "stale" | "gap";

/** Why a live book re-read the REST book: a seq jump, or a checksum that did not match. */
export type ResyncReason = "gap" | "checksum";

/** The levels of one book, a snapshot plus deltas, with the sequence checks of docs/API.md 12.3. */
export class LocalBook {
  /** The `seq` of the last snapshot or change applied; undefined on servers without seq. */
  seq: number | undefined;
  /** True once a snapshot or change carried `checksum`: `book()` then carries it too, as REST does. */
  hasChecksum = false;
  /**
   * Unix ms of the book's last change (docs/API.md 20.2): a REST book's `time`, or the millisecond of
   * a stream message's levels' `eventTimeMicro` (docs/API.md 12.4); undefined until one is known.
   */
  time: number | undefined;
  private readonly buy = new Map<number, number>();
  private readonly sell = new Map<number, number>();

  /** Replaces every level (a stream snapshot or a REST book). */
  reset(snapshot: BookData): void {
    this.buy.clear();
    this.sell.clear();
    for (const l of snapshot.buy) if (l.amount !== 0) this.buy.set(l.price, l.amount);
    for (const l of snapshot.sell) if (l.amount !== 0) this.sell.set(l.price, l.amount);
    this.seq = snapshot.seq;
    this.hasChecksum = snapshot.checksum !== undefined;
    this.time = timeOf(snapshot);
  }

  /**
   * Applies changed levels. `stale`: already included (seq at or below ours), nothing done.
   * `gap`: seq jumps past ours + 1, nothing done (the caller resyncs).
   */
  apply(change: BookData): ApplyResult {
    if (change.seq !== undefined && this.seq !== undefined) {
      if (change.seq <= this.seq) return "stale";
      if (change.seq !== this.seq + 1) return "gap";
    }
    for (const l of change.buy) {
      if (l.amount === 0) this.buy.delete(l.price);
      else this.buy.set(l.price, l.amount);
    }
    for (const l of change.sell) {
      if (l.amount === 0) this.sell.delete(l.price);
      else this.sell.set(l.price, l.amount);
    }
    if (change.seq !== undefined) this.seq = change.seq;
    if (change.checksum !== undefined) this.hasChecksum = true;
    this.time = timeOf(change) ?? this.time;
    return "applied";
  }

  /** One side's levels as `[price, amount]`, best first: bids descending, asks ascending. */
  levels(side: "buy" | "sell"): [number, number][] {
    const dir = side === "buy" ? -1 : 1;
    return [...(side === "buy" ? this.buy : this.sell)].sort((a, b) => (a[0] - b[0]) * dir);
  }

  /** The best `n` levels of one side, best first. */
  best(side: "buy" | "sell", n: number): [number, number][] {
    return this.levels(side).slice(0, n);
  }

  /** docs/API.md 12.5: the checksum of the book as it is now. */
  checksum(): number {
    return bookChecksum(this.best("sell", CHECKSUM_LEVELS), this.best("buy", CHECKSUM_LEVELS));
  }

  /**
   * False when `data` carries a checksum that this book (after applying `data`) does not give;
   * true when it matches or carries none.
   */
  verify(data: BookData): boolean {
    return data.checksum === undefined || data.checksum === this.checksum();
  }

  /** The book as `GET .../orders` answers it: buy descending, sell ascending (and seq, checksum). */
  book(): BookData {
    const side = (s: "buy" | "sell") => this.levels(s).map(([price, amount]) => ({ price, amount }));
    const out: BookData = { buy: side("buy"), sell: side("sell") };
    if (this.seq !== undefined) out.seq = this.seq;
    if (this.hasChecksum) out.checksum = this.checksum();
    if (this.time !== undefined) out.time = this.time;
    return out;
  }
}

/**
 * The time a book or a message gives (docs/API.md 20.2): the REST book's `time`, else the millisecond
 * of its levels' `eventTimeMicro` (one stamp per message, docs/API.md 12.4; Unix µs as decimal text,
 * cut to ms without a float); undefined when it has neither (a stream snapshot of an empty book).
 */
function timeOf(data: BookData): number | undefined {
  if (data.time !== undefined) return data.time;
  const level = data.buy[0] ?? data.sell[0];
  const micro = level?.eventTimeMicro;
  if (micro === undefined || !/^\d{4,}$/.test(micro)) return undefined;
  return Number(micro.slice(0, -3));
}

export interface LiveBookOptions {
  /** Called before each REST read that repairs a gap or a checksum mismatch, with the reason. */
  onResync?: (reason: ResyncReason) => void;
  /**
   * Called when the book gives up on a gap (the REST read failed, or the gap persisted over
   * MAX_RESYNC_READS reads); the held messages are dropped. Without it `changed` is called instead.
   */
  onError?: (error: Error) => void;
  /** Retry a failed REST read after this pause (it counts as a read); without it, give up at once. */
  retryDelayMs?: number;
}

/** REST reads for one gap before giving up. */
const MAX_RESYNC_READS = 5;

/** A `LocalBook` fed by one connection's `orders:` messages, resynced from REST on a seq gap. */
export class LiveBook {
  readonly local = new LocalBook();
  /** REST reads done to repair gaps and checksum mismatches. */
  resyncs = 0;
  /** Snapshots and messages whose checksum the book did not give (each starts a resync). */
  checksumMismatches = 0;
  private haveSnapshot = false;
  /** Messages received while a REST resync is in flight; null when none is. */
  private held: BookData[] | null = null;
  /** Bumped by `restart`: a resync begun before it drops its result. */
  private epoch = 0;

  /**
   * `load` reads the REST book (`GET .../orders`); `changed` is called after every change the book
   * takes (the snapshot, each applied message, the end of a resync).
   */
  constructor(
    private readonly load: () => Promise<BookData>,
    private readonly changed: () => void,
    private readonly options: LiveBookOptions = {},
  ) {}

  /** The `seq` of the book; null before a snapshot or on servers without seq. */
  get seq(): number | null {
    return this.local.seq ?? null;
  }

  /** A new connection: its first message is a snapshot again; a resync in flight is dropped. */
  restart(): void {
    this.haveSnapshot = false;
    this.held = null;
    this.epoch++;
  }

  /** One `orders:` message. */
  receive(data: BookData): void {
    if (!this.haveSnapshot) {
      this.haveSnapshot = true;
      this.held = null;
      this.epoch++;
      this.local.reset(data);
      if (!this.local.verify(data)) {
        this.mismatch();
        return;
      }
      this.changed();
      return;
    }
    if (this.held !== null) {
      this.held.push(data);
      return;
    }
    const result = this.local.apply(data);
    if (result === "gap") {
      this.held = [data];
      void this.resync("gap");
      return;
    }
    if (result === "applied" && !this.local.verify(data)) {
      this.mismatch();
      return;
    }
    this.changed();
  }

  /** The book diverged from the server's (docs/API.md 12.5): drop it and re-read the REST book. */
  private mismatch(): void {
    this.checksumMismatches++;
    this.held = [];
    void this.resync("checksum");
  }

  /** Best first: asks ascending, bids descending. */
  levels(side: "buy" | "sell"): [number, number][] {
    return this.local.levels(side);
  }

  /** The book as `GET .../orders` answers it. */
  book(): BookData {
    return this.local.book();
  }

  /**
   * Re-reads the REST book until the held messages follow it, then applies those above its seq;
   * the REST book and each message applied must give their checksums, or the book is read again.
   */
  private async resync(reason: ResyncReason): Promise<void> {
    const epoch = this.epoch;
    let failure = new Error("book resync failed");
    for (let read = 1; read <= MAX_RESYNC_READS; read++) {
      this.resyncs++;
      this.options.onResync?.(reason);
      let rest: BookData;
      try {
        rest = await this.load();
        if (rest.seq === undefined) throw new Error("the REST book carries no seq");
      } catch (error) {
        if (epoch !== this.epoch) return;
        failure = error instanceof Error ? error : new Error(String(error));
        if (this.options.retryDelayMs === undefined) break;
        await new Promise((resolve) => setTimeout(resolve, this.options.retryDelayMs));
        if (epoch !== this.epoch) return;
        continue;
      }
      if (epoch !== this.epoch) return; // a new connection's snapshot replaced the book meanwhile
      this.local.reset(rest);
      const held = this.held ?? [];
      if (!this.local.verify(rest)) {
        this.checksumMismatches++;
        failure = new Error(`the REST book's checksum does not match its levels after ${read} reads`);
        continue;
      }
      let failedAt = -1;
      for (let i = 0; i < held.length && failedAt === -1; i++) {
        const result = this.local.apply(held[i]);
        if (result === "gap") {
          // The REST book is older than the held messages: read it again (they stay held).
          failedAt = i;
          failure = new Error(`book seq gap persists after ${read} resyncs`);
        } else if (result === "applied" && !this.local.verify(held[i])) {
          // The book diverged again: the later messages alone cannot repair it.
          this.checksumMismatches++;
          failedAt = held.length;
          failure = new Error(`book checksum mismatch persists after ${read} resyncs`);
        }
      }
      if (failedAt === -1) {
        this.held = null;
        this.changed();
        return;
      }
      this.held = held.slice(failedAt);
    }
    this.held = null;
    if (this.options.onError !== undefined) this.options.onError(failure);
    else this.changed();
  }
}
