/**
 * A live local copy of one pair's order book from the `orders:{pair}` stream (docs/API.md 12, 12.3).
 *
 * The stream's first message is a snapshot of every level; each later message lists only the
 * changed levels (`amount` 0: the level is gone). When the server numbers the book (`seq`,
 * docs/API.md 12.3), every message carries the previous `seq` + 1, and a jump means a message was
 * missed: the feed then re-reads the REST book (which carries its `seq`), applies the messages it
 * buffered meanwhile whose `seq` is above the REST one, and goes on. A closed connection (a slow
 * consumer gets 1008) reconnects and starts again from the new snapshot. When messages carry
 * `checksum` (docs/API.md 12.5), the book after each must give it; on a mismatch the feed re-reads the
 * REST book as on a gap and reports `checksum` to `onResync`.
 */

import { type BookData, LiveBook, type LocalBook, type ResyncReason } from "./local-book.ts";
import { ExchangeClient, ok } from "./rest.ts";
import { reconnect, StreamClient, type StreamMessage } from "./stream.ts";

// The book itself is local-book.ts, which the web page shares.
export { type ApplyResult, type BookData, LocalBook, type ResyncReason } from "./local-book.ts";

export interface BookFeedOptions {
  /** Server origin or REST base; a function is read at each (re)connect. */
  baseUrl: string | (() => string);
  pairName: string;
  /** Called after every change with the whole book. */
  onBook?: (book: BookData) => void;
  /**
   * Called when the feed resyncs: `gap` (a seq was skipped) and `checksum` (the book after a
   * message did not give its docs/API.md 12.5 checksum) re-read the REST book; `reconnect` follows a
   * close and starts again from the new snapshot.
   */
  onResync?: (reason: ResyncReason | "reconnect") => void;
  /** Called when the feed gives up (resync failed repeatedly, or reconnecting failed). */
  onError?: (error: Error) => void;
  /** Reconnect when the server closes the connection (default true). */
  reconnect?: boolean;
}

export class OrderBookFeed {
  private readonly live: LiveBook;
  /** Reconnects after a close. */
  private reconnects = 0;
  private readonly options: BookFeedOptions;
  private readonly client: ExchangeClient;
  private stream: StreamClient | null = null;
  private closed = false;
  private readyResolve: (() => void) | null = null;

  private constructor(options: BookFeedOptions) {
    this.options = options;
    this.client = new ExchangeClient({ baseUrl: options.baseUrl });
    this.live = new LiveBook(
      async () => ok(await this.client.orderBook(options.pairName), "order book"),
      () => this.changed(),
      { onResync: (reason) => options.onResync?.(reason), onError: (error) => options.onError?.(error) },
    );
  }

  /** The levels as the feed holds them. */
  get local(): LocalBook {
    return this.live.local;
  }

  /** Resyncs done so far (REST reads for gaps and checksum mismatches, and reconnects). */
  get resyncs(): number {
    return this.live.resyncs + this.reconnects;
  }

  /** Messages (or snapshots) whose checksum the local book did not give, each followed by a resync. */
  get checksumMismatches(): number {
    return this.live.checksumMismatches;
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
    this.live.restart();
    // onClose comes only for a connection that opened: a failed attempt is the running loop's to
    // retry (or open()'s to report), not the start of another loop.
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
    this.live.receive(message.data as BookData);
  }

  private onClose(): void {
    if (this.closed || this.options.reconnect === false) return;
    this.reconnects++;
    this.options.onResync?.("reconnect");
    void this.reconnect();
  }

  /** Connects again (the new snapshot replaces the book), retrying while the server is away. */
  private reconnect(): Promise<void> {
    return reconnect(
      () => this.connect(),
      () => this.closed,
      (error) => this.options.onError?.(error),
    );
  }

  private changed(): void {
    this.readyResolve?.(); // the first snapshot is in
    this.readyResolve = null;
    this.options.onBook?.(this.live.book());
  }
}
