/**
 * The stream's publisher (docs/API.md 12): what the core commits reaches the subscribed
 * connections. The WebSocket route (src/stream/stream-route.ts) admits a connection and hands it here.
 *
 *   open      subscribe to one uWS topic per channel, THEN send the snapshots (exchanges, status,
 *             books)
 *   commit    Exchange → afterCommit → StreamHub (CommitListener): serialise once, queue, and
 *             app.publish in batches (FLUSH below)
 *   sweep     SWEEP_MS after a publish, a subscriber holding more than the bound of unsent
 *             bytes is closed with 1008 (uWS itself would skip its messages instead)
 *
 * Everything runs on the main thread, in commit order, so a snapshot taken in `open` is the book
 * as of the last published delta: the deltas that follow apply to it exactly.
 *
 * Topics are the channel names as subscribed (`orders:btc_usdt`, `user_orders:<uid>`), so the
 * message of a topic is the same bytes for every subscriber: one serialisation per message.
 * Nothing is serialised for a topic nobody holds.
 */
import type { TemplatedApp, WebSocket } from "@trufflesuite/uws-js-unofficial";
import type { ExchangeConfig } from "../config/exchange-config.ts";
import type { CommitListener, Exchange, OrderView, UserTradeView } from "../core/exchange.ts";
import { PAIR_STATUS_NAMES, type PairStatuses, type PairStatusName } from "../core/pair-status.ts";
import { l3Events } from "../core/read-models/l3-view.ts";
import { type PairMarket, type PublicTrade, scaled } from "../core/read-models/pair-market.ts";
import type { Metrics } from "../core/services/metrics.ts";
import { nowMicro } from "../util/time.ts";
import { CLOSE_GOING_AWAY, CLOSE_SLOW_CONSUMER } from "../wire/close-codes.ts";
import { serialize } from "../wire/schemas.ts";
import {
  CH_BBO,
  CH_EXCHANGES,
  CH_ORDERS,
  CH_ORDERS_L3,
  CH_STATUS,
  CH_USER_HISTORY,
  CH_USER_ORDERS,
  type Channel,
} from "./channels.ts";
import type { Conn } from "./stream-conn.ts";

/** The coalescing period of the `exchanges` channel (docs/API.md 12.2: at most one message per 100 ms). */
export const EXCHANGES_PERIOD_MS = 100;
/**
 * Delay of the slow-consumer sweep after a publish. A timer (not setImmediate) runs after uWS has
 * written the publishes of the previous loop turn, and a few ms between sweeps bound their cost
 * (~20 µs per 1,000 subscribers) while letting a stuck buffer pass the bound by only what is
 * published in that time.
 */
export const SWEEP_MS = 5;
/*
 * FLUSH: how messages reach uWS. uWS writes what was published in an event-loop turn at the end of
 * the turn, one write per subscribed socket, and that write costs far more than the messages in it.
 * Measured with 1,000 subscribers of one topic on 2 cores (uWS 20.30, loopback), per turn: 8
 * messages → 1.3M deliveries/s and 3 s of server CPU per 4M deliveries; 32 → 4.2M/s and 1 s;
 * from ~32 pending messages per subscriber uWS drains inside publish() (48–256: 3.3–4.0M/s).
 * So a flush hands uWS at most DELIVERIES_PER_TURN deliveries, and the next flush waits until
 * the write cost of the last one has passed (FLUSH_COST_US per socket, at most MAX_FLUSH_GAP_MS),
 * unless a full batch is waiting. A message after a quiet spell goes out at once; under load
 * messages wait at most the gap (5 ms with 1,000 subscribers, nothing noticeable with a few).
 */
/**
 * Deliveries (messages × subscribers) per flush: 64 messages for 1,000 subscribers. End to end
 * (bench/stream/fanout.bench.ts) 64 beat 32: commits arrive in bursts, and bigger flushes cut
 * the wait in the hub (p50 17 ms instead of 28) and raised the delivered rate by 5–10%.
 */
export const DELIVERIES_PER_TURN = 64_000;
/** Server CPU per socket written in one turn (measured ~5.6 µs on loopback). */
const FLUSH_COST_US = 5;
const MAX_FLUSH_GAP_MS = 5;
/** Past this many waiting messages everything goes to uWS at once (and the sweep sees the laggards). */
const MAX_QUEUED = 65_536;
const EXCHANGES = "exchanges";
const STATUS = "status";

type Socket = WebSocket<Conn>;

interface Level {
  price: number;
  amount: number;
  eventTimeMicro: string;
}

export interface HubOptions {
  config: ExchangeConfig;
  /** The core, for the pairs' read models. */
  exchange: Pick<Exchange, "market" | "wantL3">;
  metrics: Metrics;
  /** Unsent bytes per connection above which it is closed with 1008 (docs/API.md 12.2). */
  maxBackpressureBytes: number;
  log?: (line: string) => void;
  /** Each pair's status at start (the `status` channel); every pair trading when absent. */
  statuses?: Pick<PairStatuses, "get">;
}

/** Messages and bytes published on one topic (the benchmark checks deliveries against them). */
export interface TopicStats {
  messages: number;
  bytes: number;
}

export class StreamHub implements CommitListener {
  readonly metrics: Metrics;
  private readonly app: TemplatedApp;
  private readonly config: ExchangeConfig;
  private readonly exchange: Pick<Exchange, "market" | "wantL3">;
  private readonly bound: number;
  private readonly log: (line: string) => void;
  private readonly ordersTopic: string[];
  private readonly historyTopic: string[];
  private readonly bboTopic: string[];
  private readonly l3Topic: string[];
  /** Open connections, and the subscribed ones per topic. */
  private readonly conns = new Set<Socket>();
  private readonly topics = new Map<string, Map<Socket, Conn>>();
  /** Topics of the user channels per user id (a uid may be written in more than one letter case). */
  private readonly userOrderTopics = new Map<number, string[]>();
  private readonly userTradeTopics = new Map<number, string[]>();
  /** Last eventTimeMicro given out per pair, for levels and exchange records: strictly increasing. */
  private readonly clock: number[];
  /** The serialised book snapshot per pair and the book version it shows. */
  private readonly snapshots: { version: number; message: string }[];
  /**
   * Each pair's status as last published: a `status` snapshot shows this, not the admin call's
   * change before its commit; that change reaches the connection as the message after the commit.
   */
  private readonly status: PairStatusName[];
  /** Pairs traded (committed) since the last `exchanges` message. */
  private readonly exchangesDirty: boolean[];
  private exchangesTimer: NodeJS.Timeout | null = null;
  private lastExchangesMs = Number.NEGATIVE_INFINITY;
  /** Messages waiting for a later turn (see `publish`), oldest first from `length - queued`. */
  private queueTopics: string[] = [];
  private queueMessages: string[] = [];
  private queued = 0;
  /** Subscribers the queued messages will reach, summed per message. */
  private queuedDeliveries = 0;
  /** A flush happened in this event-loop turn; messages may join it until the turn ends. */
  private turnOpen = false;
  private turnDeliveries = 0;
  /** The most subscribers of one topic flushed in this turn (≈ the sockets uWS writes to). */
  private turnSockets = 0;
  private lastFlushMs = Number.NEGATIVE_INFINITY;
  private flushGapMs = 0;
  private flushTimer: NodeJS.Timeout | null = null;
  /** Topics published to since the last sweep. */
  private readonly published = new Set<string>();
  private sweepTimer: NodeJS.Timeout | null = null;
  private sweepRound = 0;
  private closed = false;
  readonly stats = new Map<string, TopicStats>();
  /** Connections closed as slow consumers. */
  slowClosed = 0;

  constructor(app: TemplatedApp, options: HubOptions) {
    this.app = app;
    this.config = options.config;
    this.exchange = options.exchange;
    this.metrics = options.metrics;
    this.bound = options.maxBackpressureBytes;
    this.log = options.log ?? console.log;
    const pairs = this.config.pairs;
    this.ordersTopic = pairs.map((p) => `orders:${p.name}`);
    this.historyTopic = pairs.map((p) => `history:${p.name}`);
    this.bboTopic = pairs.map((p) => `bbo:${p.name}`);
    this.l3Topic = pairs.map((p) => `orders_l3:${p.name}`);
    this.clock = pairs.map((p) => this.exchange.market(p.index).lastMicro);
    this.snapshots = pairs.map(() => ({ version: -1, message: "" }));
    this.exchangesDirty = pairs.map(() => false);
    this.status = pairs.map((p) => PAIR_STATUS_NAMES[options.statuses?.get(p.index) ?? 0]);
  }

  // ------------------------------------------------------------------ connections

  /** A connection opened: subscribe first, then send the snapshots (no delta can fall between). */
  open(ws: Socket): void {
    const c = ws.getUserData();
    // Everything already in the read model goes out before this socket subscribes: a queued delta
    // is in the snapshot below, so this connection must not receive it.
    if (this.queued > 0) this.flushAll();
    this.conns.add(ws);
    this.metrics.streamConnections.inc();
    for (const ch of c.channels) if (ch.kind !== CH_ORDERS_L3) this.subscribe(ws, c, ch);
    let bytes = 0;
    for (const ch of c.channels) {
      let message: string | null = null;
      if (ch.kind === CH_EXCHANGES) {
        message = this.exchangesMessage(this.config.pairs.map((p) => p.index));
      } else if (ch.kind === CH_ORDERS) {
        message = this.bookSnapshot(ch.pair, ch.name);
      } else if (ch.kind === CH_STATUS) {
        const data = this.config.pairs.map((p) => ({ pairName: p.name, status: this.status[p.index] }));
        message = serialize.streamStatusSnapshot({ stream: STATUS, data });
      } else if (ch.kind === CH_BBO) {
        message = serialize.streamBbo({ stream: ch.name, data: this.exchange.market(ch.pair).bbo() });
      }
      if (message !== null) {
        ws.send(message, false, false);
        bytes += message.length;
      }
    }
    c.allowance = bytes;
    for (const ch of c.channels) if (ch.kind === CH_ORDERS_L3) this.openL3(ws, c, ch);
  }

  private subscribe(ws: Socket, c: Conn, ch: Channel): void {
    ws.subscribe(ch.name);
    let subs = this.topics.get(ch.name);
    if (subs === undefined) {
      subs = new Map();
      this.topics.set(ch.name, subs);
      if (ch.kind === CH_USER_ORDERS) addTopic(this.userOrderTopics, c.userId, ch.name);
      else if (ch.kind === CH_USER_HISTORY) addTopic(this.userTradeTopics, c.userId, ch.name);
    }
    subs.set(ws, c);
  }

  /**
   * `orders_l3:{pair}` (docs/API.md 12.5): the core follows the pair's L3 book while it has
   * subscribers. The connection subscribes and gets the snapshot once that book is the committed
   * one: at once when it is followed already, else after the commit that reaches its snapshot.
   */
  private openL3(ws: Socket, c: Conn, ch: Channel): void {
    const book = this.exchange.wantL3(ch.pair);
    book.subscribers++;
    const start = (): void => {
      if (this.closed || !this.conns.has(ws)) return;
      // As in `open`: what is queued is in the snapshot, so it must not reach this socket.
      if (this.queued > 0) this.flushAll();
      this.subscribe(ws, c, ch);
      const m = this.exchange.market(ch.pair);
      const data = book.snapshot(m.seq, m.priceDecimals, m.amountDecimals);
      const message = serialize.streamL3Book({ stream: ch.name, data });
      ws.send(message, false, false);
      c.allowance += message.length;
    };
    if (book.readyAt(this.exchange.market(ch.pair).seq)) start();
    else book.whenReady(start);
  }

  /** A connection closed (by either side, or by the sweep): forget its subscriptions. */
  close(ws: Socket): void {
    if (!this.conns.delete(ws)) return;
    this.metrics.streamConnections.dec();
    const c = ws.getUserData();
    for (const ch of c.channels) {
      if (ch.kind === CH_ORDERS_L3) {
        // The same book it counted itself in: a book with subscribers is never dropped.
        const book = this.exchange.market(ch.pair).l3;
        if (book !== null && book.subscribers > 0) book.subscribers--;
      }
      const subs = this.topics.get(ch.name);
      if (subs === undefined) continue;
      subs.delete(ws);
      if (subs.size > 0) continue;
      this.topics.delete(ch.name);
      if (ch.kind === CH_USER_ORDERS) removeTopic(this.userOrderTopics, c.userId, ch.name);
      else if (ch.kind === CH_USER_HISTORY) removeTopic(this.userTradeTopics, c.userId, ch.name);
    }
  }

  /** Server shutdown: no more timers; every connection gets 1001 after what it was already sent. */
  shutdown(): void {
    if (this.queued > 0) this.flushAll();
    this.closed = true;
    if (this.exchangesTimer !== null) clearTimeout(this.exchangesTimer);
    if (this.sweepTimer !== null) clearTimeout(this.sweepTimer);
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    this.exchangesTimer = null;
    this.sweepTimer = null;
    for (const ws of [...this.conns]) ws.end(CLOSE_GOING_AWAY, "server shutting down");
  }

  /** Index of a configured pair, for the channel parser. */
  readonly pairIndex = (name: string): number | undefined => this.config.pairsByName.get(name)?.index;

  /** Messages waiting in the hub for a later event-loop turn. */
  get backlog(): number {
    return this.queued;
  }

  /** Open connections (tests and metrics). */
  get connections(): number {
    return this.conns.size;
  }

  // ------------------------------------------------------------------ CommitListener

  levelsChanged(pair: number, levels: readonly number[], seq: number): void {
    const topic = this.ordersTopic[pair];
    if (this.closed || !this.topics.has(topic)) return;
    try {
      const m = this.exchange.market(pair);
      const t = String(this.tick(pair));
      // Per side, the last total each price reached in this change.
      const buy = new Map<number, number>();
      const sell = new Map<number, number>();
      for (let i = 0; i < levels.length; i += 3)
        (levels[i] === 0 ? buy : sell).set(levels[i + 1], levels[i + 2]);
      const data = {
        buy: changedLevels(buy, m, t, true),
        sell: changedLevels(sell, m, t, false),
        seq,
        checksum: m.checksum(),
      };
      this.publish(topic, serialize.streamLevels({ stream: topic, data }));
    } catch (err) {
      this.failed("levels", err);
    }
  }

  bboChanged(pair: number): void {
    const topic = this.bboTopic[pair];
    if (this.closed || !this.topics.has(topic)) return;
    try {
      this.publish(topic, serialize.streamBbo({ stream: topic, data: this.exchange.market(pair).bbo() }));
    } catch (err) {
      this.failed("bbo", err);
    }
  }

  /** A pair's status change, committed (docs/API.md 12.2): one message, never coalesced. */
  pairStatusChanged(pair: number, pairName: string, status: PairStatusName): void {
    this.status[pair] = status;
    if (this.closed || !this.topics.has(STATUS)) return;
    try {
      this.publish(STATUS, serialize.streamStatus({ stream: STATUS, data: { pairName, status } }));
    } catch (err) {
      this.failed("status", err);
    }
  }

  l3Changed(pair: number, seq: number, events: readonly number[]): void {
    const topic = this.l3Topic[pair];
    if (this.closed || !this.topics.has(topic)) return;
    try {
      const m = this.exchange.market(pair);
      const data = { seq, events: l3Events(events, m.priceDecimals, m.amountDecimals) };
      this.publish(topic, serialize.streamL3Change({ stream: topic, data }));
    } catch (err) {
      this.failed("orders_l3", err);
    }
  }

  wantsOrders(user: number): boolean {
    return this.userOrderTopics.has(user);
  }

  wantsUserTrades(user: number): boolean {
    return this.userTradeTopics.has(user);
  }

  wantsTrades(pair: number): boolean {
    return this.topics.has(this.historyTopic[pair]) || this.topics.has(EXCHANGES);
  }

  publicTrades(pair: number, trades: readonly PublicTrade[]): void {
    if (this.closed) return;
    if (this.topics.has(EXCHANGES)) this.traded(pair);
    const topic = this.historyTopic[pair];
    if (!this.topics.has(topic)) return;
    try {
      this.publish(topic, serialize.streamHistory({ stream: topic, data: trades }));
    } catch (err) {
      this.failed("history", err);
    }
  }

  orderChanged(user: number, view: OrderView): void {
    const topics = this.userOrderTopics.get(user);
    if (topics === undefined || this.closed) return;
    try {
      for (const topic of topics)
        this.publish(topic, serialize.streamOrder({ stream: topic, data: view, execSeq: view.execSeq }));
    } catch (err) {
      this.failed("user order", err);
    }
  }

  userTrade(user: number, view: UserTradeView): void {
    const topics = this.userTradeTopics.get(user);
    if (topics === undefined || this.closed) return;
    try {
      for (const topic of topics)
        this.publish(topic, serialize.streamUserTrade({ stream: topic, data: view, execSeq: view.execSeq }));
    } catch (err) {
      this.failed("user trade", err);
    }
  }

  // ------------------------------------------------------------------ messages

  /** The next eventTimeMicro of a pair: the clock, or one more than the last one given out. */
  private tick(pair: number): number {
    const now = nowMicro();
    const last = this.clock[pair];
    const t = now > last ? now : last + 1;
    this.clock[pair] = t;
    return t;
  }

  /** `exchanges` message with the records of `pairs` (indices ascending: config order). */
  private exchangesMessage(pairs: number[]): string {
    const now = nowMicro();
    const data = pairs.map((i) => {
      const rec = this.exchange.market(i).exchange(now) as ReturnType<PairMarket["exchange"]> & {
        eventTimeMicro: string;
      };
      rec.eventTimeMicro = String(this.tick(i));
      return rec;
    });
    return serialize.streamExchanges({ stream: EXCHANGES, data });
  }

  /**
   * Every level of both sides, best first, all stamped with one eventTimeMicro. Reused while the
   * book does not change (a crowd connecting at once costs one serialisation): every delta after
   * it bumps the book version and gets a later stamp.
   */
  private bookSnapshot(pair: number, topic: string): string {
    const m = this.exchange.market(pair);
    const cached = this.snapshots[pair];
    if (cached.version === m.bookVersion) return cached.message;
    const t = String(this.tick(pair));
    const data = { buy: allLevels(m, 0, t), sell: allLevels(m, 1, t), seq: m.seq, checksum: m.checksum() };
    const message = serialize.streamLevels({ stream: topic, data });
    this.snapshots[pair] = { version: m.bookVersion, message };
    return message;
  }

  /**
   * Queues a message and flushes the queue in batches (see FLUSH): a flush writes to every
   * subscribed socket once, which costs far more than the messages themselves, so under load
   * messages that arrive within the flush gap go out together. The order is kept across topics.
   */
  private publish(topic: string, message: string): void {
    const deliveries = this.topics.get(topic)?.size ?? 0;
    if (this.turnOpen && this.queued === 0 && this.turnDeliveries < DELIVERIES_PER_TURN) {
      this.send(topic, message, deliveries);
      return;
    }
    this.queueTopics.push(topic);
    this.queueMessages.push(message);
    this.queued++;
    this.queuedDeliveries += deliveries;
    if (this.queued > MAX_QUEUED) this.flushAll();
    else if (!this.turnOpen) this.kick();
  }

  /** Flushes now if the queue fills a batch or the gap since the last flush has passed, else later. */
  private kick(): void {
    const full = this.queuedDeliveries >= DELIVERIES_PER_TURN;
    if (this.flushTimer !== null) {
      if (!full) return;
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    // A gap under a millisecond (a couple of hundred subscribers or fewer) is not worth a timer.
    const wait = this.lastFlushMs + this.flushGapMs - performance.now();
    if (full || wait < 1) this.flush();
    else this.flushTimer = setTimeout(this.flushLater, Math.ceil(wait));
  }

  private readonly flushLater = (): void => {
    this.flushTimer = null;
    if (!this.turnOpen && this.queued > 0) this.flush();
  };

  /** Opens this turn's batch: queued messages up to the turn's budget; more may join until it ends. */
  private flush(): void {
    this.turnOpen = true;
    this.turnDeliveries = 0;
    this.turnSockets = 0;
    this.lastFlushMs = performance.now();
    setImmediate(this.endTurn);
    this.sendQueued(false);
  }

  /** The turn's batch is written (uWS writes at the end of the turn): the next one may start. */
  private readonly endTurn = (): void => {
    this.turnOpen = false;
    // The next flush waits for the write cost of this one (FLUSH_COST_US per socket).
    this.flushGapMs = Math.min(MAX_FLUSH_GAP_MS, (this.turnSockets * FLUSH_COST_US) / 1000);
    if (this.queued > 0) this.kick();
  };

  /** Everything queued goes to uWS now (before a subscription, at shutdown, on overflow). */
  private flushAll(): void {
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    this.sendQueued(true);
  }

  /** Sends queued messages, oldest first: all of them, or as many as the turn's budget allows. */
  private sendQueued(all: boolean): void {
    const topics = this.queueTopics;
    const messages = this.queueMessages;
    const start = topics.length - this.queued;
    let end = start;
    while (end < topics.length && (all || this.turnDeliveries < DELIVERIES_PER_TURN)) {
      const deliveries = this.topics.get(topics[end])?.size ?? 0;
      this.queuedDeliveries -= deliveries;
      this.send(topics[end], messages[end], deliveries);
      end++;
    }
    this.queued -= end - start;
    if (this.queued === 0) {
      topics.length = 0;
      messages.length = 0;
      this.queuedDeliveries = 0;
    } else if (end > 4096 && end * 2 > topics.length) {
      this.queueTopics = topics.slice(end);
      this.queueMessages = messages.slice(end);
    }
  }

  private send(topic: string, message: string, deliveries: number): void {
    this.turnDeliveries += deliveries;
    if (deliveries > this.turnSockets) this.turnSockets = deliveries;
    this.app.publish(topic, message, false, false);
    let s = this.stats.get(topic);
    if (s === undefined) {
      s = { messages: 0, bytes: 0 };
      this.stats.set(topic, s);
    }
    s.messages++;
    s.bytes += message.length;
    this.published.add(topic);
    if (this.sweepTimer === null) {
      this.sweepTimer = setTimeout(this.sweep, SWEEP_MS);
      this.sweepTimer.unref();
    }
  }

  /** A pair's record changed: send the changed records at most once per EXCHANGES_PERIOD_MS. */
  private traded(pair: number): void {
    this.exchangesDirty[pair] = true;
    if (this.exchangesTimer !== null) return;
    const wait = Math.max(0, Math.ceil(this.lastExchangesMs + EXCHANGES_PERIOD_MS - performance.now()));
    // Even with no wait this runs after the current commit batch, so its pairs share one message.
    this.exchangesTimer = setTimeout(this.flushExchanges, wait);
    this.exchangesTimer.unref();
  }

  private readonly flushExchanges = (): void => {
    this.exchangesTimer = null;
    const pairs: number[] = [];
    for (let i = 0; i < this.exchangesDirty.length; i++) {
      if (this.exchangesDirty[i]) pairs.push(i);
      this.exchangesDirty[i] = false;
    }
    if (this.closed || pairs.length === 0 || !this.topics.has(EXCHANGES)) return;
    this.lastExchangesMs = performance.now();
    try {
      this.publish(EXCHANGES, this.exchangesMessage(pairs));
    } catch (err) {
      this.failed("exchanges", err);
    }
  };

  /**
   * Runs SWEEP_MS after a publish. A connection over the bound is closed with 1008: it has every
   * message published up to here queued, with no gap, and nothing after it.
   */
  private readonly sweep = (): void => {
    this.sweepTimer = null;
    const round = ++this.sweepRound;
    const bound = this.bound;
    const slow: Socket[] = [];
    for (const topic of this.published) {
      const subs = this.topics.get(topic);
      if (subs === undefined) continue;
      for (const [ws, c] of subs) {
        if (c.checked === round) continue;
        c.checked = round;
        const buffered = ws.getBufferedAmount();
        if (buffered <= bound) c.allowance = 0;
        else if (buffered > bound + c.allowance) slow.push(ws);
      }
    }
    this.published.clear();
    for (const ws of slow) {
      this.slowClosed++;
      ws.end(CLOSE_SLOW_CONSUMER, "slow consumer: unsent buffer over the limit");
    }
  };

  private failed(what: string, err: unknown): void {
    this.log(`stream: ${what} message failed: ${(err as Error)?.stack ?? String(err)}`);
  }
}

function addTopic(map: Map<number, string[]>, user: number, topic: string): void {
  const list = map.get(user);
  if (list === undefined) map.set(user, [topic]);
  else list.push(topic);
}

function removeTopic(map: Map<number, string[]>, user: number, topic: string): void {
  const list = map.get(user);
  if (list === undefined) return;
  const i = list.indexOf(topic);
  if (i !== -1) list.splice(i, 1);
  if (list.length === 0) map.delete(user);
}

/** Changed levels of one side, best first; `amount` is the new total (0: the level is gone). */
function changedLevels(changes: Map<number, number>, m: PairMarket, t: string, descending: boolean): Level[] {
  const out: Level[] = [];
  if (changes.size === 0) return out;
  const prices = [...changes.keys()];
  if (prices.length > 1) prices.sort(descending ? (a, b) => b - a : (a, b) => a - b);
  for (const price of prices) {
    out.push({
      price: scaled(price, m.priceDecimals),
      amount: scaled(changes.get(price)!, m.amountDecimals),
      eventTimeMicro: t,
    });
  }
  return out;
}

function allLevels(m: PairMarket, side: 0 | 1, t: string): Level[] {
  const s = side === 0 ? m.bids : m.asks;
  const out = new Array<Level>(s.size);
  for (let i = 0; i < out.length; i++) {
    out[i] = {
      price: scaled(s.priceAt(i), m.priceDecimals),
      amount: scaled(s.totalAt(i), m.amountDecimals),
      eventTimeMicro: t,
    };
  }
  return out;
}
