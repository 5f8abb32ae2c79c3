/**
 * Main-thread side of the database writer.
 *
 *   main thread                                   writer thread (workers/db/writer-worker.ts)
 *   record methods append to `cur` ──┐
 *   afterCommit(cb) adds to `cur`    │ setImmediate / ack
 *                                    └─ postMessage(batch, transfer buffers) ──▶ BEGIN; apply; COMMIT
 *   callbacks of that batch run  ◀──────────────────────────── {ack, seq} ◀──┘
 *
 * Group commit: at most one batch is in flight. While it is, every new record and callback
 * accumulates in the next batch, which is sent the moment the ack arrives; so under load each
 * transaction carries everything that arrived during the previous fsync, and at rest a lone record
 * waits one setImmediate. A callback registered with `afterCommit` runs only after the transaction
 * holding every record added before it has committed (its batch or an earlier one).
 *
 * On any writer error the writer is failed for good: no further callback ever runs (nothing more
 * may be reported durable), `onFatal` listeners are told, and records are dropped.
 */
import path from "node:path";
import type { Worker } from "node:worker_threads";
import { DEFAULT_WAL_AUTOCHECKPOINT_PAGES, type Synchronous } from "../protocol/db-open.ts";
import { startWorker } from "../threads.ts";
import {
  BAL_AVAILABLE,
  BAL_CURRENCY,
  BAL_RESERVED,
  BAL_USER,
  CDL_CLOSE,
  CDL_HIGH,
  CDL_LOW,
  CDL_OPEN,
  CDL_PAIR,
  CDL_PERIOD,
  CDL_START,
  CDL_VOLUME,
  type CheckpointWorkerData,
  CURRENCY_NAME,
  CURRENCY_SCALE,
  type FromWriter,
  K_API_KEY,
  K_BALANCE,
  K_CANDLE,
  K_CURRENCY,
  K_META,
  K_NONCE,
  K_ORDER,
  K_PAIR,
  K_REVOKE_KEY,
  K_TRADE,
  K_TRANSFER,
  K_USER,
  KEY_MICRO,
  KEY_SECRET,
  KEY_TOKEN,
  KEY_USER,
  KIND_COUNT,
  META_KEY,
  META_VALUE,
  NONCE_TOKEN,
  NONCE_VALUE,
  ORD_AMOUNT,
  ORD_CANCELLED,
  ORD_CLIENT_ID,
  ORD_CREATE,
  ORD_FLAGS,
  ORD_ID,
  ORD_PAIR,
  ORD_PRICE,
  ORD_SIDE,
  ORD_TYPE,
  ORD_UPDATE,
  ORD_USED,
  ORD_USER,
  PAIR_AMOUNT_DECIMALS,
  PAIR_NAME,
  PAIR_PRICE_DECIMALS,
  REVOKE_TOKEN,
  STRIDE,
  type ToWriter,
  TR_AMOUNT,
  TR_ID,
  TR_MAKER_FEE,
  TR_MAKER_ORDER,
  TR_MAKER_TYPE,
  TR_MAKER_USER,
  TR_MICRO,
  TR_PAIR,
  TR_PRICE,
  TR_TAKER_FEE,
  TR_TAKER_ORDER,
  TR_TAKER_SIDE,
  TR_TAKER_TYPE,
  TR_TAKER_USER,
  USER_ID,
  USER_MICRO,
  USER_UID,
  type WriterWorkerData,
  XFER_AMOUNT,
  XFER_CURRENCY,
  XFER_DEPOSIT,
  XFER_KIND,
  XFER_MICRO,
  XFER_USER,
  XFER_WITHDRAW,
} from "./batch-layout.ts";

/** Default of WriterOptions.userRowsFlushAt. */
export const DEFAULT_USER_ROWS_FLUSH_AT = 1024;

export interface WriterOptions {
  /** Default FULL. See OpenOptions.synchronous. */
  synchronous?: Synchronous;
  /**
   * See OpenOptions.walAutocheckpointPages. Default: DEFAULT_WAL_AUTOCHECKPOINT_PAGES without a
   * checkpointer thread, WAL_SAFETY_VALVE_PAGES with one.
   */
  walAutocheckpointPages?: number;
  /**
   * Milliseconds between the PASSIVE checkpoints of the checkpointer thread
   * (workers/db/checkpoint-worker.ts), which keeps checkpoints out of the commits. 0: no such
   * thread; the writer's commits checkpoint by themselves. Default DEFAULT_CHECKPOINT_INTERVAL_MS.
   */
  checkpointIntervalMs?: number;
  /**
   * New orders (trades) whose `user_orders` (`user_trades`) rows the writer holds back before
   * writing them all at once, sorted by user, inside the next transaction (migration 002). Until
   * then the readers find them in the short tail of `orders` (`trades`) above the mark in `meta`.
   * Default 1024; 1 writes every row with its batch.
   */
  userRowsFlushAt?: number;
}

export interface WriterStats {
  /** Batches acknowledged (each one transaction, or none when it held only callbacks). */
  batches: number;
  /** Records in those batches, as added (before the writer coalesces repeated upserts). */
  records: number;
}

export type TransferKind = "deposit" | "withdraw";

/** Growable column of fixed-stride records of one kind. */
class Rows {
  buf: Float64Array;
  /** Records held. */
  n = 0;
  constructor(
    readonly stride: number,
    capacity: number,
  ) {
    this.buf = new Float64Array(stride * capacity);
  }
  /** Reserves one record and returns the index of its first slot. Read `buf` after calling. */
  add(): number {
    const at = this.n * this.stride;
    if (at + this.stride > this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.n++;
    return at;
  }
}

class Batch {
  readonly rows: (Rows | null)[] = new Array(KIND_COUNT).fill(null);
  readonly strs: string[] = [];
  readonly syms: string[] = [];
  readonly callbacks: (() => void)[] = [];
  /** No record and no callback yet. */
  empty = true;
}

const MIN_CAPACITY = 16;

/**
 * One PASSIVE checkpoint a second: at 10,000 orders a second that copies about as many WAL pages
 * per checkpoint as the writer's own threshold did (DEFAULT_WAL_AUTOCHECKPOINT_PAGES), so hot pages
 * are copied as rarely, but never inside a commit.
 */
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 1000;
/**
 * With the checkpointer thread, the writer still checkpoints by itself past this many WAL pages
 * (about 400 MB): only if the checkpointer cannot keep up or failed.
 */
export const WAL_SAFETY_VALVE_PAGES = 100_000;
// Under tsx the sources run as .ts; a compiled build would carry .js files side by side.
const EXT = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
const WORKER_URL = new URL(`../../workers/db/writer-worker${EXT}`, import.meta.url);
const CHECKPOINT_URL = new URL(`../../workers/db/checkpoint-worker${EXT}`, import.meta.url);

export class DbWriter {
  private cur = new Batch();
  private inFlight: Batch | null = null;
  private scheduled = false;
  private seq = 0;
  private readonly symIds = new Map<string, number>();
  /** Per kind, the record count of the last batch sent: initial capacity of the next one. */
  private readonly capacity: number[] = new Array(KIND_COUNT).fill(MIN_CAPACITY);
  private failure: Error | null = null;
  private readonly fatalListeners: ((err: Error) => void)[] = [];
  private readonly sendHooks: (() => void)[] = [];
  private settledBelow: (() => number) | null = null;
  private readonly flushRejects = new Set<(err: Error) => void>();
  private closing: Promise<void> | null = null;
  /** The close message has been posted: nothing more may be sent. */
  private closeSent = false;
  private closedAck = false;
  private committedBatches = 0;
  private committedRecords = 0;

  private constructor(
    private readonly worker: Worker,
    private readonly checkpointer: Worker | null,
  ) {
    worker.on("message", this.onMessage);
    worker.on("error", (err) => this.fail(new Error(`database writer thread crashed: ${err.message}`)));
    worker.on("exit", (code) => {
      if (!this.closedAck) this.fail(new Error(`database writer thread exited unexpectedly (code ${code})`));
    });
  }

  /** Starts the writer thread; resolves once its connection is open and migrated. */
  static async start(file: string, opts: WriterOptions = {}): Promise<DbWriter> {
    const interval = opts.checkpointIntervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS;
    const data: WriterWorkerData = {
      entry: WORKER_URL.href,
      path: path.resolve(file),
      synchronous: opts.synchronous ?? "FULL",
      walAutocheckpointPages:
        opts.walAutocheckpointPages ??
        (interval > 0 ? WAL_SAFETY_VALVE_PAGES : DEFAULT_WAL_AUTOCHECKPOINT_PAGES),
      userRowsFlushAt: opts.userRowsFlushAt ?? DEFAULT_USER_ROWS_FLUSH_AT,
    };
    const worker = startWorker(WORKER_URL, { workerData: data });
    await DbWriter.started(worker, "database writer");
    let checkpointer: Worker | null = null;
    if (interval > 0) {
      // Opened after the writer migrated the database.
      const cpData: CheckpointWorkerData = {
        entry: CHECKPOINT_URL.href,
        path: data.path,
        synchronous: data.synchronous,
        intervalMs: interval,
      };
      checkpointer = startWorker(CHECKPOINT_URL, { workerData: cpData });
      try {
        await DbWriter.started(checkpointer, "WAL checkpointer");
      } catch (err) {
        await worker.terminate();
        throw err;
      }
      // A failed checkpoint is retried at the next interval, and the writer's safety valve bounds
      // the WAL meanwhile: worth a line in the log, not a stop.
      checkpointer.on("message", (m: { t: string; message?: string }) => {
        if (m.t === "error") console.error(`WAL checkpoint failed: ${m.message}`);
      });
    }
    return new DbWriter(worker, checkpointer);
  }

  /** Resolves once `worker` posts ready; rejects (and ends the thread) if it fails first. */
  private static async started(worker: Worker, what: string): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const onMessage = (m: FromWriter): void => {
        cleanup();
        if (m.t === "ready") resolve();
        else reject(new Error(`${what} failed to start: ${m.t === "error" ? m.message : m.t}`));
      };
      const onError = (err: Error): void => {
        cleanup();
        reject(err);
      };
      const onExit = (code: number): void => {
        cleanup();
        reject(new Error(`${what} thread exited during start (code ${code})`));
      };
      const cleanup = (): void => {
        worker.off("message", onMessage);
        worker.off("error", onError);
        worker.off("exit", onExit);
      };
      worker.on("message", onMessage);
      worker.on("error", onError);
      worker.on("exit", onExit);
    }).catch(async (err) => {
      await worker.terminate();
      throw err;
    });
  }

  // ---- records: append only (no I/O, no promise) ----------------------------------------------

  pair(name: string, priceDecimals: number, amountDecimals: number): void {
    const r = this.rows(K_PAIR);
    const o = r.add();
    const b = r.buf;
    b[o + PAIR_NAME] = this.sym(name);
    b[o + PAIR_PRICE_DECIMALS] = priceDecimals;
    b[o + PAIR_AMOUNT_DECIMALS] = amountDecimals;
    this.touch();
  }

  currency(name: string, scale: number): void {
    const r = this.rows(K_CURRENCY);
    const o = r.add();
    const b = r.buf;
    b[o + CURRENCY_NAME] = this.sym(name);
    b[o + CURRENCY_SCALE] = scale;
    this.touch();
  }

  user(id: number, uid: string, micro: number): void {
    const r = this.rows(K_USER);
    const o = r.add();
    const b = r.buf;
    b[o + USER_ID] = id;
    b[o + USER_UID] = this.str(uid);
    b[o + USER_MICRO] = micro;
    this.touch();
  }

  apiKey(token: string, userId: number, secret: string, micro: number): void {
    const r = this.rows(K_API_KEY);
    const o = r.add();
    const b = r.buf;
    b[o + KEY_TOKEN] = this.str(token);
    b[o + KEY_USER] = userId;
    b[o + KEY_SECRET] = this.str(secret);
    b[o + KEY_MICRO] = micro;
    this.touch();
  }

  revokeKey(token: string): void {
    const r = this.rows(K_REVOKE_KEY);
    const o = r.add();
    r.buf[o + REVOKE_TOKEN] = this.str(token);
    this.touch();
  }

  /** Last accepted nonce of a token (upsert; last wins). */
  nonce(token: string, nonce: bigint): void {
    const r = this.rows(K_NONCE);
    const o = r.add();
    const b = r.buf;
    b[o + NONCE_TOKEN] = this.str(token);
    b[o + NONCE_VALUE] = this.str(nonce.toString());
    this.touch();
  }

  /** Latest balance of (user, currency) (upsert; within a batch the last one wins). */
  balance(userId: number, currency: string, available: bigint, reserved: bigint): void {
    const r = this.rows(K_BALANCE);
    const o = r.add();
    const b = r.buf;
    b[o + BAL_USER] = userId;
    b[o + BAL_CURRENCY] = this.sym(currency);
    b[o + BAL_AVAILABLE] = this.str(available.toString());
    b[o + BAL_RESERVED] = this.str(reserved.toString());
    this.touch();
  }

  /** A deposit (amount > 0) or withdrawal (amount < 0), at the currency's ledger scale. */
  transfer(userId: number, currency: string, amount: bigint, kind: TransferKind, micro: number): void {
    const r = this.rows(K_TRANSFER);
    const o = r.add();
    const b = r.buf;
    b[o + XFER_USER] = userId;
    b[o + XFER_CURRENCY] = this.sym(currency);
    b[o + XFER_AMOUNT] = this.str(amount.toString());
    b[o + XFER_KIND] = kind === "deposit" ? XFER_DEPOSIT : XFER_WITHDRAW;
    b[o + XFER_MICRO] = micro;
    this.touch();
  }

  /** Inserts the order or updates its mutable fields (price, amountUsed, isCancelled, updateMicro). */
  order(
    id: number,
    userId: number,
    pair: string,
    side: number,
    type: number,
    price: number,
    amount: number,
    amountUsed: number,
    isCancelled: boolean,
    createMicro: number,
    updateMicro: number,
    flags = 0,
    clientOrderId?: string,
  ): void {
    const r = this.rows(K_ORDER);
    const o = r.add();
    const b = r.buf;
    b[o + ORD_ID] = id;
    b[o + ORD_USER] = userId;
    b[o + ORD_PAIR] = this.sym(pair);
    b[o + ORD_SIDE] = side;
    b[o + ORD_TYPE] = type;
    b[o + ORD_PRICE] = price;
    b[o + ORD_AMOUNT] = amount;
    b[o + ORD_USED] = amountUsed;
    b[o + ORD_CANCELLED] = isCancelled ? 1 : 0;
    b[o + ORD_CREATE] = createMicro;
    b[o + ORD_UPDATE] = updateMicro;
    b[o + ORD_FLAGS] = flags;
    b[o + ORD_CLIENT_ID] = clientOrderId === undefined ? -1 : this.str(clientOrderId);
    this.touch();
  }

  /** A trade, plus its two user_trades rows (the maker's side is the opposite of the taker's). */
  trade(
    id: number,
    pair: string,
    price: number,
    amount: number,
    takerOrderId: number,
    makerOrderId: number,
    takerUserId: number,
    makerUserId: number,
    takerSide: number,
    takerType: number,
    makerType: number,
    micro: number,
    takerFeeRate = 0,
    makerFeeRate = 0,
  ): void {
    const r = this.rows(K_TRADE);
    const o = r.add();
    const b = r.buf;
    b[o + TR_ID] = id;
    b[o + TR_PAIR] = this.sym(pair);
    b[o + TR_PRICE] = price;
    b[o + TR_AMOUNT] = amount;
    b[o + TR_TAKER_ORDER] = takerOrderId;
    b[o + TR_MAKER_ORDER] = makerOrderId;
    b[o + TR_TAKER_USER] = takerUserId;
    b[o + TR_MAKER_USER] = makerUserId;
    b[o + TR_TAKER_SIDE] = takerSide;
    b[o + TR_TAKER_TYPE] = takerType;
    b[o + TR_MAKER_TYPE] = makerType;
    b[o + TR_MICRO] = micro;
    b[o + TR_TAKER_FEE] = takerFeeRate;
    b[o + TR_MAKER_FEE] = makerFeeRate;
    this.touch();
  }

  /** Upsert of an integer in `meta` (a pair's book sequence: `book_seq:<pair>`). */
  meta(key: string, value: number): void {
    const r = this.rows(K_META);
    const o = r.add();
    const b = r.buf;
    b[o + META_KEY] = this.sym(key);
    b[o + META_VALUE] = value;
    this.touch();
  }

  /** Upsert of one candle (prices in ticks, volume in lots). */
  candle(
    pair: string,
    period: string,
    startMs: number,
    open: number,
    high: number,
    low: number,
    close: number,
    volume: number,
  ): void {
    const r = this.rows(K_CANDLE);
    const o = r.add();
    const b = r.buf;
    b[o + CDL_PAIR] = this.sym(pair);
    b[o + CDL_PERIOD] = this.sym(period);
    b[o + CDL_START] = startMs;
    b[o + CDL_OPEN] = open;
    b[o + CDL_HIGH] = high;
    b[o + CDL_LOW] = low;
    b[o + CDL_CLOSE] = close;
    b[o + CDL_VOLUME] = volume;
    this.touch();
  }

  // ---- commit notification ---------------------------------------------------------------------

  /**
   * Runs `cb` once every record added so far is committed. Callbacks run in registration order.
   * Never runs if the writer fails.
   */
  afterCommit(cb: () => void): void {
    this.cur.callbacks.push(cb);
    this.touch();
  }

  /**
   * Runs `fn` just before each batch is sealed and sent; records it adds join that batch. State
   * of which only the latest value is persisted (balances, candles) is handed over here once per
   * transaction instead of once per change (the writer keeps the last of repeated keys anyway, so
   * this saves the encoding and the copy, not SQLite work): every callback already in the batch
   * sees its changes committed, and later changes go with a later batch.
   */
  beforeSend(fn: () => void): void {
    this.sendHooks.push(fn);
  }

  /**
   * `fn` tells, as each batch is sealed (after the beforeSend hooks), the lowest order id that may
   * still get an order record in a later batch: every id below it has all its records in this
   * batch or an earlier one. The writer needs it to know which orders its `user_orders` rows
   * cover; without it those rows are still written, but readers keep scanning every order since
   * the writer started.
   */
  settledOrderIds(fn: () => number): void {
    this.settledBelow = fn;
  }

  /** Sends what is pending now (if nothing is in flight); resolves once all of it is committed. */
  flush(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closeSent) return Promise.reject(new Error("database writer is closed"));
    const done = new Promise<void>((resolve, reject) => {
      this.flushRejects.add(reject);
      this.afterCommit(() => {
        this.flushRejects.delete(reject);
        resolve();
      });
    });
    if (this.inFlight === null) this.send();
    return done;
  }

  /** `cb` is told once, when the writer fails; from then on nothing is written or acknowledged. */
  onFatal(cb: (err: Error) => void): void {
    this.fatalListeners.push(cb);
    if (this.failure) cb(this.failure);
  }

  /** The error that failed the writer, or null. */
  get failed(): Error | null {
    return this.failure;
  }

  get stats(): WriterStats {
    return { batches: this.committedBatches, records: this.committedRecords };
  }

  /**
   * Commits everything recorded so far (and whatever the callbacks it releases record), then
   * checkpoints the WAL, closes the connection and ends the thread. Records added after it
   * resolves are dropped. Rejects if the writer has failed.
   */
  close(): Promise<void> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    if (this.failure) {
      await this.checkpointer?.terminate();
      await this.worker.terminate();
      throw this.failure;
    }
    // Empty the pipeline, including what callbacks add meanwhile: afterwards nothing is in flight
    // and no record or callback is pending.
    do await this.flush();
    while (this.inFlight !== null || !this.cur.empty);
    // The checkpointer stops first, so the writer's final TRUNCATE checkpoint has the WAL alone.
    if (this.checkpointer !== null) {
      const cp = this.checkpointer;
      const cpExited = new Promise<void>((resolve) => cp.once("exit", () => resolve()));
      cp.postMessage("close");
      await cpExited;
    }
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    this.closeSent = true;
    this.post({ t: "close" });
    await exited;
    if (this.failure) throw this.failure;
  }

  // ---- internals -----------------------------------------------------------------------------

  private rows(kind: number): Rows {
    const cur = this.cur;
    let r = cur.rows[kind];
    if (r === null) {
      r = new Rows(STRIDE[kind], this.capacity[kind]);
      cur.rows[kind] = r;
    }
    return r;
  }

  private str(s: string): number {
    const strs = this.cur.strs;
    strs.push(s);
    return strs.length - 1;
  }

  /** Interned id of a pair, currency or period name; a new name travels with the current batch. */
  private sym(name: string): number {
    let id = this.symIds.get(name);
    if (id === undefined) {
      id = this.symIds.size;
      this.symIds.set(name, id);
      this.cur.syms.push(name);
    }
    return id;
  }

  /** Marks the current batch non-empty; the first mark of a batch schedules its sending. */
  private touch(): void {
    const cur = this.cur;
    if (!cur.empty) return;
    cur.empty = false;
    // With a batch in flight, the ack sends this one; otherwise send it after this turn's work.
    if (this.inFlight === null && !this.scheduled) {
      this.scheduled = true;
      setImmediate(this.onImmediate);
    }
  }

  private readonly onImmediate = (): void => {
    this.scheduled = false;
    if (this.failure || this.closeSent) {
      this.cur = new Batch(); // dropped: nothing may be reported durable any more
      return;
    }
    if (this.inFlight === null && !this.cur.empty) this.send();
  };

  private send(): void {
    for (const fn of this.sendHooks) fn();
    const b = this.cur;
    this.cur = new Batch();
    this.inFlight = b;
    const bufs: (ArrayBuffer | null)[] = new Array(KIND_COUNT);
    const counts: number[] = new Array(KIND_COUNT);
    const transfer: ArrayBuffer[] = [];
    for (let k = 0; k < KIND_COUNT; k++) {
      const r = b.rows[k];
      if (r === null) {
        bufs[k] = null;
        counts[k] = 0;
      } else {
        const buf = r.buf.buffer as ArrayBuffer;
        bufs[k] = buf;
        counts[k] = r.n;
        transfer.push(buf);
        this.capacity[k] = Math.max(MIN_CAPACITY, r.n);
      }
    }
    const settledBelow = this.settledBelow === null ? -1 : this.settledBelow();
    this.post(
      { t: "batch", seq: ++this.seq, syms: b.syms, strs: b.strs, bufs, counts, settledBelow },
      transfer,
    );
  }

  private post(m: ToWriter, transfer?: ArrayBuffer[]): void {
    this.worker.postMessage(m, transfer);
  }

  private readonly onMessage = (m: FromWriter): void => {
    switch (m.t) {
      case "ack": {
        const done = this.inFlight;
        if (done === null || m.seq !== this.seq) {
          this.fail(new Error(`database writer acknowledged batch ${m.seq}, expected ${this.seq}`));
          return;
        }
        this.inFlight = null;
        this.committedBatches++;
        this.committedRecords += m.records;
        // Send the next batch first so the writer works while the callbacks run.
        if (!this.cur.empty) this.send();
        for (const cb of done.callbacks) {
          try {
            cb();
          } catch (err) {
            // One failing callback must not keep the others (other clients' answers) from running.
            queueMicrotask(() => {
              throw err;
            });
          }
        }
        return;
      }
      case "error":
        this.fail(new Error(`database write failed (batch ${m.seq}): ${m.message}`));
        return;
      case "closed":
        this.closedAck = true;
        return;
      case "ready":
        return;
    }
  };

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.inFlight = null;
    this.cur = new Batch();
    for (const reject of this.flushRejects) reject(err);
    this.flushRejects.clear();
    if (this.fatalListeners.length === 0) {
      // Nobody handles it: crash rather than run on with writes silently lost.
      process.nextTick(() => {
        throw err;
      });
    }
    for (const cb of this.fatalListeners) cb(err);
    void this.worker.terminate();
  }
}
