/**
 * Market data for makers (docs/API.md 12.5) as live feeds over the stream:
 *
 * - `L3BookFeed`: the order-by-order book of `orders_l3:{pair}` (l3-book.ts), applied by seq. A seq
 *   jump, or an event the local book cannot place (it has diverged), drops the book and subscribes
 *   again: the new connection's first message is a fresh snapshot. It exposes each side's orders in
 *   priority order, the L2 levels they sum to, and an order's queue position.
 * - `BboFeed`: the best bid and offer of `bbo:{pair}`, the latest message kept.
 *
 * Both reconnect after a close (a slow consumer gets 1008, a restarted server comes back) and start
 * again from the new connection's first message.
 */
import { L3Book } from "./l3-book.ts";
import { reconnect, StreamClient, type StreamMessage } from "./stream.ts";
import type { Bbo, DirectionType, L3Order, L3Snapshot, L3Update, Level } from "./types.ts";

interface ChannelOptions {
  baseUrl: string | (() => string);
  channel: string;
  /** Each message; `first` for a connection's first one (the on-connect snapshot). */
  onData: (data: unknown, first: boolean) => void;
  /** Called after a close, before connecting again. */
  onReconnect: () => void;
  onError?: (error: Error) => void;
  reconnect?: boolean;
}

/** One channel on its own connection, connected again after every close or on `resubscribe`. */
class Channel {
  private stream: StreamClient | null = null;
  /** Bumped per connection: messages and closes of an older one are ignored. */
  private generation = 0;
  private closed = false;

  constructor(private readonly options: ChannelOptions) {}

  async connect(): Promise<void> {
    const generation = ++this.generation;
    let first = true;
    const base = this.options.baseUrl;
    const stream = await StreamClient.connect({
      baseUrl: typeof base === "function" ? base() : base,
      streams: [this.options.channel],
      keep: false,
      onMessage: (m: StreamMessage) => {
        if (generation !== this.generation) return;
        this.options.onData(m.data, first);
        first = false;
      },
      onClose: () => {
        // Only a connection that opened closes here (StreamOptions.onClose).
        if (generation !== this.generation || this.closed || this.options.reconnect === false) return;
        this.options.onReconnect();
        void this.retry();
      },
    });
    this.stream = stream;
    if (this.closed || generation !== this.generation) await stream.close();
  }

  /** Drops the connection and subscribes again (its first message is a new snapshot). */
  async resubscribe(): Promise<void> {
    const old = this.stream;
    this.generation++; // the old connection's close and late messages are ignored from here
    this.stream = null;
    await old?.close();
    await this.retry();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.generation++;
    await this.stream?.close();
  }

  private retry(): Promise<void> {
    return reconnect(
      () => this.connect(),
      () => this.closed,
      (error) => this.options.onError?.(error),
    );
  }
}

/** Why an L3 feed started again from a snapshot. */
export type L3ResyncReason = "gap" | "diverged" | "reconnect";

export interface L3FeedOptions {
  /** Server origin or REST base; a function is read at each (re)connect. */
  baseUrl: string | (() => string);
  pairName: string;
  /** Called after the snapshot and after each update applied. */
  onUpdate?: (book: L3Book) => void;
  /**
   * Called when the feed drops its book and subscribes again: `gap` (a seq was skipped),
   * `diverged` (an event named an order the book does not hold there), `reconnect` (the server
   * closed the connection).
   */
  onResync?: (reason: L3ResyncReason, detail?: string) => void;
  /** Called when reconnecting failed for good. */
  onError?: (error: Error) => void;
  /** Reconnect when the server closes the connection (default true). */
  reconnect?: boolean;
}

/** A live L3 book of one pair from `orders_l3:{pair}` (docs/API.md 7.6.2). */
export class L3BookFeed {
  /** The local L3 book (replaced in place on every snapshot). */
  readonly book = new L3Book();
  /** Resubscriptions so far (gaps, divergences, reconnects). */
  resyncs = 0;
  private readonly channel: Channel;
  private haveSnapshot = false;
  private readyResolve: (() => void) | null = null;

  private constructor(private readonly options: L3FeedOptions) {
    this.channel = new Channel({
      baseUrl: options.baseUrl,
      channel: `orders_l3:${options.pairName}`,
      onData: (data, first) => this.receive(data, first),
      onReconnect: () => {
        this.resyncs++;
        this.haveSnapshot = false;
        options.onResync?.("reconnect");
      },
      onError: options.onError,
      reconnect: options.reconnect,
    });
  }

  /** Connects and resolves once the first snapshot is in. */
  static async open(options: L3FeedOptions): Promise<L3BookFeed> {
    const feed = new L3BookFeed(options);
    const ready = new Promise<void>((resolve) => {
      feed.readyResolve = resolve;
    });
    await feed.channel.connect();
    await ready;
    return feed;
  }

  /** The book seq of the state held. */
  get seq(): number {
    return this.book.seq ?? 0;
  }

  /** One side's orders in priority order (best price, then time). */
  ordersOf(side: DirectionType): L3Order[] {
    return this.book.ordersOf(side);
  }

  /** One side's L2 levels, best first, each the exact sum of its orders. */
  levels(side: DirectionType): Level[] {
    return this.book.levels(side).map(([price, amount]) => ({ price, amount }));
  }

  /** The book as `GET .../orders/l3` answers it. */
  snapshot(): L3Snapshot {
    return this.book.snapshot();
  }

  /** The amount resting ahead of an order at its price; undefined when it is not resting. */
  positionOf(orderId: number): number | undefined {
    return this.book.positionOf(orderId);
  }

  async close(): Promise<void> {
    await this.channel.close();
  }

  private receive(data: unknown, first: boolean): void {
    if (first || !this.haveSnapshot) {
      this.book.reset(data as L3Snapshot);
      this.haveSnapshot = true;
      this.readyResolve?.();
      this.readyResolve = null;
      this.options.onUpdate?.(this.book);
      return;
    }
    let result: string;
    try {
      result = this.book.apply(data as L3Update);
    } catch (error) {
      this.resync("diverged", error instanceof Error ? error.message : String(error));
      return;
    }
    if (result === "gap") this.resync("gap", `seq ${(data as L3Update).seq} after ${this.book.seq}`);
    else if (result === "applied") this.options.onUpdate?.(this.book);
  }

  private resync(reason: L3ResyncReason, detail: string): void {
    this.resyncs++;
    this.haveSnapshot = false;
    this.options.onResync?.(reason, detail);
    // The old connection's later messages are ignored from here; the new one's first is a snapshot.
    void this.channel.resubscribe();
  }
}

export interface BboFeedOptions {
  baseUrl: string | (() => string);
  pairName: string;
  /** Each best bid and offer as it arrives (the on-connect one first). */
  onBbo?: (bbo: Bbo) => void;
  /** Called after the server closed the connection, before connecting again. */
  onReconnect?: () => void;
  onError?: (error: Error) => void;
  reconnect?: boolean;
}

/** The best bid and offer of one pair from `bbo:{pair}` (docs/API.md 7.6.1). */
export class BboFeed {
  /** The newest best bid and offer; set before `open` resolves. */
  latest: Bbo | null = null;
  private readonly channel: Channel;
  private readyResolve: (() => void) | null = null;

  private constructor(options: BboFeedOptions) {
    this.channel = new Channel({
      baseUrl: options.baseUrl,
      channel: `bbo:${options.pairName}`,
      onData: (data) => {
        const bbo = data as Bbo;
        // After a reconnect the on-connect message may repeat the last one seen.
        if (this.latest !== null && bbo.seq < this.latest.seq) return;
        this.latest = bbo;
        this.readyResolve?.();
        this.readyResolve = null;
        options.onBbo?.(bbo);
      },
      onReconnect: () => options.onReconnect?.(),
      onError: options.onError,
      reconnect: options.reconnect,
    });
  }

  /** Connects and resolves once the on-connect best bid and offer is in. */
  static async open(options: BboFeedOptions): Promise<BboFeed> {
    const feed = new BboFeed(options);
    const ready = new Promise<void>((resolve) => {
      feed.readyResolve = resolve;
    });
    await feed.channel.connect();
    await ready;
    return feed;
  }

  async close(): Promise<void> {
    await this.channel.close();
  }
}

/** Subscribes to `bbo:{pair}`: calls `onBbo` with each best bid and offer until `close`. */
export function subscribeBbo(
  baseUrl: string | (() => string),
  pairName: string,
  onBbo: (bbo: Bbo) => void,
): Promise<BboFeed> {
  return BboFeed.open({ baseUrl, pairName, onBbo });
}
