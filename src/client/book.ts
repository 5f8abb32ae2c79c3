/**
 * A live local copy of one pair's order book from the `orders:{pair}` stream (CONTRACT 7, 9).
 *
 * The stream's first message is a snapshot of every level; each later message lists only the
 * changed levels (`amount` 0: the level is gone). When the server numbers the book (`seq`,
 * CONTRACT 9), every message carries the previous `seq` + 1, and a jump means a message was
 * missed: the feed then re-reads the REST book (which carries its `seq`), applies the messages it
 * buffered meanwhile whose `seq` is above the REST one, and goes on. A closed connection (a slow
 * consumer gets 1008) reconnects and starts again from the new snapshot.
 */
import { ExchangeClient, type Level, ok } from "./index.ts";
import { StreamClient, type StreamMessage } from "./stream.ts";

/** A book message's data: a snapshot or the changed levels (levels may carry eventTimeMicro). */
export interface BookData {
  buy: Level[];
  sell: Level[];
  seq?: number;
}

export type ApplyResult = "applied" | "stale" | "gap";

/** The levels of one book, a snapshot plus deltas, with the sequence checks of CONTRACT 9. */
export class LocalBook {
  /** The `seq` of the last snapshot or change applied; undefined on servers without seq. */
  seq: number | undefined;
  private readonly buy = new Map<number, number>();
  private readonly sell = new Map<number, number>();

  /** Replaces every level (a stream snapshot or a REST book). */
  reset(snapshot: BookData): void {
    this.buy.clear();
    this.sell.clear();
    for (const l of snapshot.buy) if (l.amount !== 0) this.buy.set(l.price, l.amount);
    for (const l of snapshot.sell) if (l.amount !== 0) this.sell.set(l.price, l.amount);
    this.seq = snapshot.seq;
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
    return "applied";
  }

  /** The book as `GET .../orders` answers it: buy descending, sell ascending. */
  book(): BookData {
    const side = (m: Map<number, number>, dir: number) =>
      [...m].sort((a, b) => (a[0] - b[0]) * dir).map(([price, amount]) => ({ price, amount }));
    const out: BookData = { buy: side(this.buy, -1), sell: side(this.sell, 1) };
    if (this.seq !== undefined) out.seq = this.seq;
    return out;
  }
}

export interface BookFeedOptions {
  /** Server origin or REST base; a function is read at each (re)connect. */
  baseUrl: string | (() => string);
  pairName: string;
  /** Called after every change with the whole book. */
  onBook?: (book: BookData) => void;
  /** Called when the feed resyncs (`gap`: from REST by seq; `reconnect`: after a close). */
  onResync?: (reason: "gap" | "reconnect") => void;
  /** Called when the feed gives up (resync failed repeatedly, or reconnecting failed). */
  onError?: (error: Error) => void;
  /** Reconnect when the server closes the connection (default true). */
  reconnect?: boolean;
}

const MAX_RESYNC_TRIES = 5;
/** Reconnect attempts after a close, RECONNECT_DELAY_MS apart (10 s in all), before giving up. */
const RECONNECT_TRIES = 100;
const RECONNECT_DELAY_MS = 100;

export class OrderBookFeed {
  readonly local = new LocalBook();
  /** Resyncs done so far (gaps and reconnects). */
  resyncs = 0;
  private readonly options: BookFeedOptions;
  private readonly client: ExchangeClient;
  private stream: StreamClient | null = null;
  private snapshotSeen = false;
  /** Messages received while a REST resync is in flight; null when none is. */
  private buffer: BookData[] | null = null;
  private closed = false;
  private readyResolve: (() => void) | null = null;

  private constructor(options: BookFeedOptions) {
    this.options = options;
    this.client = new ExchangeClient({ baseUrl: options.baseUrl });
  }

  private get baseUrl(): string {
    const base = this.options.baseUrl;
    return typeof base === "function" ? base() : base;
  }

  /** Connects and resolves once the first snapshot is applied. */
  static async open(options: BookFeedOptions): Promise<OrderBookFeed> {
    const feed = new OrderBookFeed(options);
    const ready = new Promise<void>((resolve) => {
      feed.readyResolve = resolve;
    });
    await feed.connect();
    await ready;
    return feed;
  }

  /** The current book. */
  book(): BookData {
    return this.local.book();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stream?.close();
  }

  private async connect(): Promise<void> {
    this.snapshotSeen = false;
    const stream = await StreamClient.connect({
      baseUrl: this.baseUrl,
      streams: [`orders:${this.options.pairName}`],
      keep: false,
      onMessage: (m) => this.onMessage(m),
      onClose: () => this.onClose(),
    });
    this.stream = stream;
    if (this.closed) await stream.close(); // closed while connecting
  }

  private onMessage(message: StreamMessage): void {
    const data = message.data as BookData;
    if (!this.snapshotSeen) {
      this.snapshotSeen = true;
      this.buffer = null;
      this.local.reset(data);
      this.changed();
      this.readyResolve?.();
      this.readyResolve = null;
      return;
    }
    if (this.buffer !== null) {
      this.buffer.push(data);
      return;
    }
    if (this.local.apply(data) === "gap") {
      this.buffer = [data];
      void this.resync(1);
      return;
    }
    this.changed();
  }

  /** Re-reads the REST book and applies the buffered messages above its seq. */
  private async resync(attempt: number): Promise<void> {
    this.resyncs++;
    this.options.onResync?.("gap");
    try {
      const rest = ok(await this.client.orderBook(this.options.pairName), "order book");
      if (rest.seq === undefined) throw new Error("the REST book carries no seq");
      this.local.reset(rest);
      const pending = this.buffer ?? [];
      this.buffer = null;
      for (const data of pending) {
        if (this.local.apply(data) === "gap") {
          if (attempt >= MAX_RESYNC_TRIES) throw new Error(`book seq gap persists after ${attempt} resyncs`);
          this.buffer = pending.slice(pending.indexOf(data));
          return this.resync(attempt + 1);
        }
      }
      this.changed();
    } catch (error) {
      this.buffer = null;
      this.options.onError?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private onClose(): void {
    if (this.closed || this.options.reconnect === false) return;
    this.resyncs++;
    this.options.onResync?.("reconnect");
    void this.reconnect(1);
  }

  /** Connects again (the new snapshot replaces the book), retrying while the server is away. */
  private async reconnect(attempt: number): Promise<void> {
    if (this.closed) return;
    try {
      await this.connect();
    } catch (error) {
      if (attempt >= RECONNECT_TRIES) {
        this.options.onError?.(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, RECONNECT_DELAY_MS));
      return this.reconnect(attempt + 1);
    }
  }

  private changed(): void {
    this.options.onBook?.(this.local.book());
  }
}
