/**
 * Main-thread side of one pair worker: owns the two rings, writes command records, and consumes
 * event records on the event loop without ever blocking it.
 *
 *   send*() ──command ring──▶ pair worker ──event ring──▶ pump() ──▶ onEvent(f64, offset)
 *
 * The pump drains every available event record and goes back to the event loop after
 * `maxEventsPerTurn` records (so HTTP and timers keep running under load). When the ring is empty
 * it re-checks it on the next `mainPollTurns` event-loop turns (setImmediate), then sleeps with
 * Atomics.waitAsync (the worker notifies only after we announce the sleep; see src/protocol/pair/ring.ts).
 * The pump is a callback that setImmediate schedules again, not an async loop: a turn of polling
 * then costs one Immediate instead of a Promise, an Immediate and an async resumption (the pump
 * was the largest allocation site of closed-loop create-order, bench:load's heap sampling).
 * postMessage is used once, for the worker's ready handshake.
 */
import type { Worker } from "node:worker_threads";
import type { Side } from "../protocol/pair/engine.ts";
import {
  CANCEL_CMD,
  CMD_KIND,
  CMD_SEQ,
  CMD_SLOT_WORDS,
  EV_SLOT_WORDS,
  FUNDS_CMD,
  LIMIT_CMD,
  MARKET_CMD,
  MMP_RESET_CMD,
  MMP_SET_CMD,
  MOVE_CMD,
  OCO_CMD,
  OP_CANCEL,
  OP_FUNDS,
  OP_LIMIT,
  OP_MARKET,
  OP_MMP_RESET,
  OP_MMP_SET,
  OP_MOVE,
  OP_OCO,
  OP_QUOTE,
  OP_QUOTE_LEVEL,
  OP_REDUCE,
  OP_SHUTDOWN,
  OP_STOP,
  type PairWorkerData,
  QUOTE_CMD,
  QUOTE_LEVEL_CMD,
  READY_MESSAGE,
  REDUCE_CMD,
  STOP_CMD,
} from "../protocol/pair/records.ts";
import { SpscRing } from "../protocol/pair/ring.ts";
import { startWorker } from "../util/threads.ts";

// .ts under tsx, .js in the build (dist/), as in src/db/writer-threads.ts.
const EXT = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
const PAIR_WORKER_URL = new URL(`../../workers/pair/pair-worker${EXT}`, import.meta.url);

// Defaults chosen with bench/ring/wake.bench.ts; the numbers are in BENCHMARKS.md, "The ring and waking".
export const DEFAULT_COMMAND_SLOTS = 1024;
export const DEFAULT_EVENT_SLOTS = 8192;
/** ≈ 2 µs of polling (one poll ≈ 7.7 ns here) before the worker sleeps in Atomics.wait. */
export const DEFAULT_WORKER_SPIN = 260;
/** Events become visible at least every 256 commands (≈ 100 µs of matching) under load. */
export const DEFAULT_PUBLISH_EVERY = 256;
/** The pump re-checks an empty event ring on 16 event-loop turns before sleeping in waitAsync. */
export const DEFAULT_MAIN_POLL_TURNS = 16;
export const DEFAULT_MAX_EVENTS_PER_TURN = 4096;

/**
 * How a pair worker waits for commands (LMAX Disruptor's names):
 * - `blocking` (BlockingWaitStrategy with a short spin): polls about 2 µs, then sleeps in
 *   Atomics.wait until the main thread notifies it. An idle pair costs nothing, but a command that
 *   finds its worker asleep pays a futex wake, measured at 10-25 µs of CPU across vCPUs here.
 * - `busy-spin` (BusySpinWaitStrategy): never sleeps, so a command is picked up within
 *   nanoseconds and no wake is ever paid, at the price of one core per pair at 100% forever, even
 *   idle. Only for machines with a core to spare per pair beyond the main, writer and checkpointer
 *   threads; on fewer, a spinning worker takes the core the main thread needs (bench/ring/wake.bench.ts:
 *   0.86M/s against 1.34M/s pipelined on 2 vCPUs).
 */
export type WaitStrategy = "blocking" | "busy-spin";

/** Threads besides the pair workers that want a core of their own: main, writer, checkpointer. */
const OTHER_BUSY_THREADS = 3;

/** `auto` is busy-spin when every pair worker and the other busy threads get a core each. */
export function chooseWaitStrategy(
  choice: "auto" | WaitStrategy,
  cores: number,
  pairs: number,
): WaitStrategy {
  if (choice !== "auto") return choice;
  return cores >= pairs + OTHER_BUSY_THREADS ? "busy-spin" : "blocking";
}

/** The worker's polls of an empty command ring before it sleeps (PairChannelOptions.workerSpin). */
export function workerSpinFor(strategy: WaitStrategy): number {
  return strategy === "busy-spin" ? Number.POSITIVE_INFINITY : DEFAULT_WORKER_SPIN;
}

export interface PairChannelOptions {
  pairName: string;
  /** The pair's minimum order value in ticks × lots (docs/API.md 20.5): the book refuses a market order below it. */
  minNotional?: bigint;
  /** The pair's last trade price in ticks, -1 or absent: never traded (docs/API.md 18). */
  lastPrice?: number;
  /**
   * Called once per event record, in order; read the words at `offset` (names in
   * src/protocol/pair/records.ts) before returning: the slot is reused after the handler returns.
   */
  onEvent: (f64: Float64Array, offset: number) => void;
  commandSlots?: number;
  eventSlots?: number;
  /** Polls of an empty command ring before the worker sleeps (Infinity: it never sleeps). */
  workerSpin?: number;
  /** Commands the worker runs between two publishes of its events (1: every command). */
  publishEvery?: number;
  /**
   * Event-loop turns (setImmediate) the pump re-checks an empty event ring before sleeping in
   * Atomics.waitAsync (0: sleep at once; Infinity: never sleep, pure polling).
   */
  mainPollTurns?: number;
  /**
   * Publish the commands written in one event-loop turn together at its end (setImmediate), so a
   * sleeping worker is woken once per turn rather than once per command (default true). Waking a
   * thread (Atomics.notify, a futex wake across vCPUs) cost 26% of the main thread's busy time in
   * a profile of closed-loop create-order; commands wait at most for the rest of the turn.
   */
  publishPerTurn?: boolean;
  /** Event records handled before the pump yields to the event loop. */
  maxEventsPerTurn?: number;
  /** Initial order capacity of the worker's book. */
  initialCapacity?: number;
}

export class PairChannel {
  readonly pairName: string;
  /** Resolves when the worker has built its book and reads commands; rejects if it dies first. */
  readonly ready: Promise<void>;
  /** Resolves with the worker's exit code. */
  readonly exited: Promise<number>;

  private readonly worker: Worker;
  private readonly commands: SpscRing;
  private readonly events: SpscRing;
  private readonly onEvent: (f64: Float64Array, offset: number) => void;
  private readonly mainPollTurns: number;
  private readonly maxEventsPerTurn: number;
  private readonly pumped: Promise<void>;
  private pumpedResolve: () => void = () => {};
  /** Empty checks of the event ring since the last event (the pump sleeps after mainPollTurns). */
  private idleTurns = 0;
  private seq = 0;
  private corked = false;
  private readonly publishPerTurn: boolean;
  private publishScheduled = false;
  private closing = false;
  private gone = false;
  private failure: unknown = undefined;

  constructor(options: PairChannelOptions) {
    this.pairName = options.pairName;
    this.onEvent = options.onEvent;
    this.mainPollTurns = options.mainPollTurns ?? DEFAULT_MAIN_POLL_TURNS;
    this.publishPerTurn = options.publishPerTurn ?? true;
    this.maxEventsPerTurn = options.maxEventsPerTurn ?? DEFAULT_MAX_EVENTS_PER_TURN;
    this.commands = SpscRing.create(options.commandSlots ?? DEFAULT_COMMAND_SLOTS, CMD_SLOT_WORDS);
    this.events = SpscRing.create(options.eventSlots ?? DEFAULT_EVENT_SLOTS, EV_SLOT_WORDS);
    const workerData: PairWorkerData = {
      pairName: options.pairName,
      commandsSab: this.commands.sab,
      eventsSab: this.events.sab,
      spinIterations: options.workerSpin ?? DEFAULT_WORKER_SPIN,
      publishEvery: options.publishEvery ?? DEFAULT_PUBLISH_EVERY,
      initialCapacity: options.initialCapacity ?? 1024,
      minNotional: options.minNotional ?? 0n,
      lastPrice: options.lastPrice ?? -1,
    };
    const worker = startWorker(PAIR_WORKER_URL, { workerData, name: `pair ${options.pairName}` });
    this.worker = worker;

    let readyResolve: () => void = () => {};
    let readyReject: (err: unknown) => void = () => {};
    this.ready = new Promise<void>((resolve, reject) => {
      readyResolve = resolve;
      readyReject = reject;
    });
    // Callers that never await `ready` must not get an unhandled rejection; `close()` reports.
    this.ready.catch(() => {});
    let exitedResolve: (code: number) => void = () => {};
    this.exited = new Promise<number>((resolve) => {
      exitedResolve = resolve;
    });
    worker.on("message", (m) => {
      if (m === READY_MESSAGE) readyResolve();
    });
    worker.on("error", (err) => {
      this.failure ??= err;
    });
    worker.once("exit", (code) => {
      this.gone = true;
      // Unblock a pump sleeping in waitAsync and a close() waiting for command space.
      this.events.wakeConsumer();
      this.commands.wakeProducer();
      readyReject(this.failure ?? new Error(`pair worker ${this.pairName} exited with code ${code}`));
      exitedResolve(code);
    });
    this.pumped = new Promise<void>((resolve) => {
      this.pumpedResolve = resolve;
    });
    this.pumpTurn();
  }

  /** Seq of the last command accepted by a send method (0 before any). */
  get lastSeq(): number {
    return this.seq;
  }

  /**
   * Queues a limit order (`flags`: TIF_* | FLAG_POST_ONLY, see MatchingBook.limit); false when the
   * command ring is full or the channel is closing or dead.
   */
  sendLimit(
    orderId: number,
    user: number,
    side: Side,
    price: number,
    qty: number,
    flags = 0,
    time = 0,
  ): boolean {
    const o = this.reserve(OP_LIMIT);
    if (o < 0) return false;
    const f = this.commands.f64;
    f[o + LIMIT_CMD.orderId] = orderId;
    f[o + LIMIT_CMD.user] = user;
    f[o + LIMIT_CMD.side] = side;
    f[o + LIMIT_CMD.price] = price;
    f[o + LIMIT_CMD.qty] = qty;
    f[o + LIMIT_CMD.flags] = flags;
    f[o + LIMIT_CMD.time] = time;
    this.sent();
    return true;
  }

  /** Queues a market order (`budget`: see MatchingBook.market); false when the ring is full. */
  sendMarket(
    orderId: number,
    user: number,
    side: Side,
    qty: number,
    budget: number,
    flags = 0,
    time = 0,
  ): boolean {
    const o = this.reserve(OP_MARKET);
    if (o < 0) return false;
    const f = this.commands.f64;
    f[o + MARKET_CMD.orderId] = orderId;
    f[o + MARKET_CMD.user] = user;
    f[o + MARKET_CMD.side] = side;
    f[o + MARKET_CMD.qty] = qty;
    f[o + MARKET_CMD.budget] = budget;
    f[o + MARKET_CMD.flags] = flags;
    f[o + MARKET_CMD.time] = time;
    this.sent();
    return true;
  }

  /**
   * Queues a quote (MatchingBook.quoteBegin / quoteLevel): one QUOTE record and one QUOTE_LEVEL
   * record per level, `levels` as [orderId, side, price, qty] per level (bids then asks), all with
   * one seq and published together; false (nothing written) when the ring has not enough free slots.
   */
  sendQuote(user: number, levels: Float64Array, time: number): boolean {
    const n = levels.length / 4;
    if (this.closing || this.gone || this.commands.freeSlots() < n + 1) return false;
    const f = this.commands.f64;
    const o = this.reserve(OP_QUOTE);
    f[o + QUOTE_CMD.user] = user;
    f[o + QUOTE_CMD.levels] = n;
    f[o + QUOTE_CMD.time] = time;
    for (let i = 0; i < n; i++) {
      const l = this.commands.tryReserve();
      f[l + CMD_KIND] = OP_QUOTE_LEVEL;
      f[l + CMD_SEQ] = this.seq;
      f[l + QUOTE_LEVEL_CMD.orderId] = levels[i * 4];
      f[l + QUOTE_LEVEL_CMD.side] = levels[i * 4 + 1];
      f[l + QUOTE_LEVEL_CMD.price] = levels[i * 4 + 2];
      f[l + QUOTE_LEVEL_CMD.qty] = levels[i * 4 + 3];
    }
    // Published at once, corked or not: the worker must never wait inside a quote.
    this.commands.publish();
    return true;
  }

  /** Queues MMP settings (MatchingBook.mmpSet); false when the command ring is full. */
  sendMmpSet(user: number, intervalSeconds: number, qtyLimit: number, frozenSeconds: number): boolean {
    const o = this.reserve(OP_MMP_SET);
    if (o < 0) return false;
    const f = this.commands.f64;
    f[o + MMP_SET_CMD.user] = user;
    f[o + MMP_SET_CMD.intervalSeconds] = intervalSeconds;
    f[o + MMP_SET_CMD.qtyLimit] = qtyLimit;
    f[o + MMP_SET_CMD.frozenSeconds] = frozenSeconds;
    this.sent();
    return true;
  }

  /** Queues an MMP reset (MatchingBook.mmpReset); false when the command ring is full. */
  sendMmpReset(user: number): boolean {
    const o = this.reserve(OP_MMP_RESET);
    if (o < 0) return false;
    this.commands.f64[o + MMP_RESET_CMD.user] = user;
    this.sent();
    return true;
  }

  /**
   * Queues a stop order (docs/API.md 18, workers/matching/stops.ts: `mode` STOP_* bits, `price` 0
   * for a stop-market); false when the command ring is full.
   */
  sendStop(
    orderId: number,
    user: number,
    mode: number,
    price: number,
    qty: number,
    flags: number,
    stopPrice: number,
    trailingDelta = 0,
  ): boolean {
    const o = this.reserve(OP_STOP);
    if (o < 0) return false;
    const f = this.commands.f64;
    f[o + STOP_CMD.orderId] = orderId;
    f[o + STOP_CMD.user] = user;
    f[o + STOP_CMD.mode] = mode;
    f[o + STOP_CMD.price] = price;
    f[o + STOP_CMD.qty] = qty;
    f[o + STOP_CMD.flags] = flags;
    f[o + STOP_CMD.stopPrice] = stopPrice;
    f[o + STOP_CMD.trailingDelta] = trailingDelta;
    this.sent();
    return true;
  }

  /** docs/API.md 18: an OCO's two legs in one command (OCO_CMD); false when the ring is full. */
  sendOco(
    orderId: number,
    user: number,
    mode: number,
    price: number,
    qty: number,
    stopPrice: number,
    stopLimitPrice: number,
    time: number,
  ): boolean {
    const o = this.reserve(OP_OCO);
    if (o < 0) return false;
    const f = this.commands.f64;
    f[o + OCO_CMD.orderId] = orderId;
    f[o + OCO_CMD.user] = user;
    f[o + OCO_CMD.mode] = mode;
    f[o + OCO_CMD.price] = price;
    f[o + OCO_CMD.qty] = qty;
    f[o + OCO_CMD.stopPrice] = stopPrice;
    f[o + OCO_CMD.stopLimitPrice] = stopLimitPrice;
    f[o + OCO_CMD.time] = time;
    this.sent();
    return true;
  }

  /**
   * The budget of a triggered market buy whose step waits for it (OP_FUNDS): part of that step,
   * so it takes no seq of its own (the worker answers it with the step's events and END). False
   * when the command ring is full.
   */
  sendFunds(orderId: number, budget: number): boolean {
    const o = this.closing || this.gone ? -1 : this.commands.tryReserve();
    if (o < 0) return false;
    const f = this.commands.f64;
    f[o + CMD_KIND] = OP_FUNDS;
    f[o + CMD_SEQ] = this.seq;
    f[o + FUNDS_CMD.orderId] = orderId;
    f[o + FUNDS_CMD.budget] = budget;
    this.sent();
    return true;
  }

  /** Queues a cancel; false when the command ring is full. */
  sendCancel(orderId: number): boolean {
    const o = this.reserve(OP_CANCEL);
    if (o < 0) return false;
    this.commands.f64[o + CANCEL_CMD.orderId] = orderId;
    this.sent();
    return true;
  }

  /** Queues a reduce by `by` lots (MatchingBook.reduce); false when the command ring is full. */
  sendReduce(orderId: number, by: number): boolean {
    const o = this.reserve(OP_REDUCE);
    if (o < 0) return false;
    const f = this.commands.f64;
    f[o + REDUCE_CMD.orderId] = orderId;
    f[o + REDUCE_CMD.by] = by;
    this.sent();
    return true;
  }

  /**
   * Queues a move to `price` with the open quantity changed by `delta` lots (MatchingBook.move);
   * false when the command ring is full. For a waiting stop order (docs/API.md 18): `stopPrice` its
   * new stop price, `trailingDelta` a trailing stop's new delta (0: unchanged).
   */
  sendMove(
    orderId: number,
    price: number,
    delta: number,
    flags: number,
    time = 0,
    stopPrice = 0,
    trailingDelta = 0,
  ): boolean {
    const o = this.reserve(OP_MOVE);
    if (o < 0) return false;
    const f = this.commands.f64;
    f[o + MOVE_CMD.orderId] = orderId;
    f[o + MOVE_CMD.price] = price;
    f[o + MOVE_CMD.delta] = delta;
    f[o + MOVE_CMD.flags] = flags;
    f[o + MOVE_CMD.time] = time;
    f[o + MOVE_CMD.stopPrice] = stopPrice;
    f[o + MOVE_CMD.trailingDelta] = trailingDelta;
    this.sent();
    return true;
  }

  /**
   * A command was written: publish it now, or (publishPerTurn) once at the end of this event-loop
   * turn together with every other command written in it.
   */
  private sent(): void {
    if (this.corked) return;
    if (!this.publishPerTurn) {
      this.commands.publish();
      return;
    }
    if (this.publishScheduled) return;
    this.publishScheduled = true;
    setImmediate(this.publishTurn);
  }

  private readonly publishTurn = (): void => {
    this.publishScheduled = false;
    if (!this.corked) this.commands.publish();
  };

  /** Until `uncork`, sends only write their records; `uncork` publishes them with one store. */
  cork(): void {
    this.corked = true;
  }

  uncork(): void {
    this.corked = false;
    this.commands.publish();
  }

  /**
   * Resolves once the command ring has a free slot (never blocks). Rejects once the channel is
   * closing or its worker has exited, since no command will be accepted any more.
   */
  async writable(): Promise<void> {
    if (!this.closing) await this.spaceOrGone();
    if (this.closing || this.gone) {
      throw this.failure ?? new Error(`pair worker ${this.pairName} is closing or has exited`);
    }
  }

  /**
   * Sends SHUTDOWN after the queued commands, waits for the worker to exit and for every event to
   * be handed to `onEvent`; resolves with the exit code, or rejects with the first failure (worker
   * error, or an exception thrown by `onEvent`).
   */
  async close(): Promise<number> {
    if (!this.closing) {
      if (this.corked) this.uncork();
      this.closing = true;
      for (;;) {
        const o = this.gone ? -1 : this.commands.tryReserve();
        if (o >= 0) {
          this.header(o, OP_SHUTDOWN);
          this.commands.publish();
          break;
        }
        if (this.gone) break;
        await this.spaceOrGone();
      }
    }
    const code = await this.exited;
    await this.pumped;
    if (this.failure !== undefined) throw this.failure;
    return code;
  }

  private async spaceOrGone(): Promise<void> {
    // Commands written this turn and not yet published hold slots only the worker can free.
    if (!this.corked) this.commands.publish();
    while (!this.gone && this.commands.freeSlots() === 0) {
      await this.commands.waitForSpaceAsync();
    }
  }

  /** A reserved command slot with its header (kind, next seq) written, or -1 (see `sendLimit`). */
  private reserve(kind: number): number {
    const o = this.closing || this.gone ? -1 : this.commands.tryReserve();
    if (o >= 0) this.header(o, kind);
    return o;
  }

  private header(o: number, kind: number): void {
    const f = this.commands.f64;
    f[o + CMD_KIND] = kind;
    f[o + CMD_SEQ] = ++this.seq;
  }

  /**
   * One turn of the pump: handles every event record available (up to maxEventsPerTurn, then the
   * rest next turn), then schedules itself for the next turn, or sleeps in waitAsync once the ring
   * stayed empty for mainPollTurns turns. Ends (resolving `pumped`) once the worker is gone and
   * its events are handled; an exception of `onEvent` ends it too, and terminates the worker.
   */
  private readonly pumpTurn = (): void => {
    try {
      const ring = this.events;
      const f = ring.f64;
      const onEvent = this.onEvent;
      let handled = 0;
      for (;;) {
        const n = ring.available();
        if (n === 0) break;
        for (let i = 0; i < n; i++) onEvent(f, ring.peekOffset(i));
        ring.release(n);
        this.idleTurns = 0;
        handled += n;
        if (handled >= this.maxEventsPerTurn) {
          setImmediate(this.pumpTurn);
          return;
        }
      }
      if (this.gone) {
        this.pumpedResolve();
        return;
      }
      if (this.idleTurns < this.mainPollTurns) {
        this.idleTurns++;
        setImmediate(this.pumpTurn);
        return;
      }
      ring.waitForDataAsync().then(this.pumpTurn, this.pumpFailed);
    } catch (err) {
      this.pumpFailed(err);
    }
  };

  private readonly pumpFailed = (err: unknown): void => {
    this.failure ??= err;
    void this.worker.terminate();
    this.pumpedResolve();
  };
}
