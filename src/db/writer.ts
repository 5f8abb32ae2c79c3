/**
 * Main-thread side of the database writer.
 *
 *   main thread                          writer thread (workers/db/writer-worker.ts)
 *   record methods append to `cur` ──┐
 *   afterCommit(cb) adds to `cur`    │ setImmediate / ack
 *                                    └─ postMessage(batch: one slot buffer) ──▶ BEGIN; journal row; COMMIT
 *   callbacks of that batch run  ◀──────────────────────────── {ack, seq} ◀──┘  (the journal file)
 *                                                                              │ the batch
 *                                        apply thread (workers/db/apply-worker.ts)  ▼
 *   applied() resolves  ◀────────────── {applied, through} ◀── every 16 batches, handed over at once:
 *   (a read asks the writer thread with {apply} when it must wait)  BEGIN; their rows; applied mark;
 *                                                               COMMIT (the exchange file)
 *
 * Group commit: at most one batch is in flight. While it is, every new record and callback
 * accumulates in the next batch, which is sent the moment the ack arrives; so under load each
 * transaction carries everything that arrived during the previous fsync, and at rest a lone record
 * waits one setImmediate. A callback registered with `afterCommit` runs only after the transaction
 * holding every record added before it has committed (its batch or an earlier one).
 *
 * Committed means journaled (src/protocol/db/journal.ts): the ack follows the commit of one row holding
 * the batch in the journal file, and the batch's rows (orders, trades, balances...) reach their
 * tables in the exchange file in a later transaction of the apply thread, which the start-up replay
 * redoes if the process dies first. The two files have two write locks, so a bulk apply never
 * holds up a journal commit (BENCHMARKS.md, "Changes kept").
 * Other connections therefore see a batch's rows only once `applied()` says so: every read of
 * those tables waits for it (src/db/reader.ts `before`, wired in src/boot.ts).
 *
 * On any writer error the writer is failed for good: no further callback ever runs (nothing more
 * may be reported durable), `onFatal` listeners are told, and records are dropped.
 */
import path from "node:path";
import { MessageChannel, type Worker } from "node:worker_threads";
import type { RecordSink, WriterStats } from "../core/record-sink.ts";
import { DEFAULT_WAL_AUTOCHECKPOINT_PAGES, type Synchronous } from "../protocol/db/db-open.ts";
import {
  API_KEY,
  BALANCE,
  CANDLE,
  CURRENCY,
  KIND_COUNT,
  KINDS,
  META,
  MMP_SETTING,
  NONCE,
  ORDER,
  ORDER_UPDATE,
  PAIR,
  REVOKE_KEY,
  type RecordKind,
  TRADE,
  TRANSFER,
  USER,
} from "../protocol/db/writer-batch.ts";
import type {
  ApplyWorkerData,
  CheckpointWorkerData,
  FromApplier,
  FromWriter,
  ToWriter,
  WriterWorkerData,
} from "../protocol/db/writer-messages.ts";
import { log } from "../util/log.ts";
import { startWorker } from "../util/threads.ts";

/** Default of WriterOptions.userRowsFlushAt. */
export const DEFAULT_USER_ROWS_FLUSH_AT = 8192;
/** Defaults of WriterOptions.applyAfterBatches, applyAfterRecords and applyQuietMs. */
export const DEFAULT_APPLY_AFTER_BATCHES = 16;
export const DEFAULT_APPLY_AFTER_RECORDS = 2048;
export const DEFAULT_APPLY_QUIET_MS = 10;

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
   * Default DEFAULT_USER_ROWS_FLUSH_AT (8,192: each flush rewrites a page or more of every user
   * with new rows, so the bigger the flush the fewer pages per row; the readers' tail scan grows
   * with it, to about 0.25 ms per user-orders page at 8,192: bench/db/user-tail.bench.ts);
   * 1 writes every row with its batch.
   */
  userRowsFlushAt?: number;
  /**
   * The writer thread journals each batch on the ack path and the apply thread writes its rows
   * later, several batches in one transaction (workers/db/apply-worker.ts): once this many wait
   * (default DEFAULT_APPLY_AFTER_BATCHES), ...
   */
  applyAfterBatches?: number;
  /** ... or once their records reach this many (default DEFAULT_APPLY_AFTER_RECORDS), ... */
  applyAfterRecords?: number;
  /**
   * ... or when no batch came for this many milliseconds (default DEFAULT_APPLY_QUIET_MS), and
   * whenever `applied()` asks.
   */
  applyQuietMs?: number;
}

export type TransferKind = "deposit" | "withdraw";

/**
 * Growable column of fixed-stride records of one kind, reused from batch to batch: a batch's
 * records are copied out when it is sent, so the next one starts writing at 0 again.
 */
class Rows {
  buf: Float64Array;
  /** Records held. */
  n = 0;
  constructor(readonly stride: number) {
    this.buf = new Float64Array(stride * MIN_CAPACITY);
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

/** What a batch holds besides its records (those are in DbWriter.rows until it is sent). */
class Batch {
  readonly strs: string[] = [];
  readonly syms: string[] = [];
  readonly callbacks: (() => void)[] = [];
  /** No record and no callback yet. */
  empty = true;
}

const MIN_CAPACITY = 16;
const APPLIED = Promise.resolve();
/** The smallest buffer a batch is sent in: 2^10 slots (8 KiB). */
const MIN_WIRE_BITS = 10;

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
const APPLY_URL = new URL(`../../workers/db/apply-worker${EXT}`, import.meta.url);
const CHECKPOINT_URL = new URL(`../../workers/db/checkpoint-worker${EXT}`, import.meta.url);

export class DbWriter implements RecordSink {
  private cur = new Batch();
  /** Records of the current batch, per kind. */
  private readonly rows: Rows[] = KINDS.map((k) => new Rows(k.stride));
  /**
   * Buffers a batch's records are sent in, side by side, kind after kind; index i holds 2^i slots.
   * They are SharedArrayBuffers: postMessage shares the one a batch uses instead of copying it.
   * The main thread writes a buffer again only for a later batch, and a later batch is sent only
   * after the writer acknowledged this one (at most one batch is in flight), which it does after
   * it has read every record: the writer never sees a buffer change under it. A batch takes the
   * smallest that holds it.
   */
  private readonly wires: Float64Array[] = [];
  private inFlight: Batch | null = null;
  private scheduled = false;
  private seq = 0;
  private readonly symIds = new Map<string, number>();
  private failure: Error | null = null;
  private readonly fatalListeners: ((err: Error) => void)[] = [];
  private readonly sendHooks: (() => void)[] = [];
  private settledBelow: (() => number) | null = null;
  private tradesThrough: () => number = () => Number.MAX_SAFE_INTEGER;
  private readonly flushRejects = new Set<(err: Error) => void>();
  private closing: Promise<void> | null = null;
  /** The close message has been posted: nothing more may be sent. */
  private closeSent = false;
  private closedAck = false;
  /** Seq of the last acknowledged batch. */
  private ackedSeq = 0;
  /** Every batch up to this seq has its rows committed to their tables, not only its journal row. */
  private appliedThrough = 0;
  /** `applied()` calls waiting, in `need` order (the seq acknowledged when each was made). */
  private readonly appliedWaiters: { need: number; resolve: () => void; reject: (err: Error) => void }[] = [];
  /** An "apply" message is out and not answered yet. */
  private applyAsked = false;
  private committedBatches = 0;
  private committedRecords = 0;
  /** Slot offset of the record `add` reserved last. */
  private at = 0;
  /**
   * `order()` only: orders sent as ORDER and still open: their later records are ORDER_UPDATE
   * (fewer columns, no insert attempt). An order leaves the set with its closing record, so it
   * holds about the open orders. One recovered from the database is not in it: its first record
   * is ORDER, an upsert.
   */
  private readonly openSent = new Set<number>();

  private constructor(
    /** The writer (journal) thread: the ack path. */
    private readonly worker: Worker,
    /** The apply thread: the batches' rows. */
    private readonly applier: Worker,
    private readonly checkpointer: Worker | null,
  ) {
    worker.on("message", this.onMessage);
    applier.on("message", this.onMessage);
    for (const [w, what] of [
      [worker, "database writer"],
      [applier, "database apply"],
    ] as const) {
      w.on("error", (err) => this.fail(new Error(`${what} thread crashed: ${err.message}`)));
      w.on("exit", (code) => {
        // On close the apply thread ends first, then the writer thread says "closed".
        const expected = w === applier ? this.closeSent : this.closedAck;
        if (!expected) this.fail(new Error(`${what} thread exited unexpectedly (code ${code})`));
      });
    }
  }

  /**
   * Starts the apply thread (which replays what an earlier run journaled and did not apply), then
   * the writer thread; resolves once both connections are open and migrated.
   */
  static async start(file: string, opts: WriterOptions = {}): Promise<DbWriter> {
    const interval = opts.checkpointIntervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS;
    const dbFile = path.resolve(file);
    const synchronous = opts.synchronous ?? "FULL";
    const walAutocheckpointPages =
      opts.walAutocheckpointPages ??
      (interval > 0 ? WAL_SAFETY_VALVE_PAGES : DEFAULT_WAL_AUTOCHECKPOINT_PAGES);
    // The writer thread hands the journaled batches to the apply thread over this channel.
    const channel = new MessageChannel();
    const applyData: ApplyWorkerData = {
      entry: APPLY_URL.href,
      path: dbFile,
      synchronous,
      walAutocheckpointPages,
      userRowsFlushAt: opts.userRowsFlushAt ?? DEFAULT_USER_ROWS_FLUSH_AT,
      port: channel.port2,
    };
    // First the apply thread: it replays what an earlier run left and tells the journal's base.
    const applier = startWorker(APPLY_URL, { workerData: applyData, transferList: [channel.port2] });
    const base = (await DbWriter.started(applier, "database apply")).base!;
    const data: WriterWorkerData = {
      entry: WORKER_URL.href,
      path: dbFile,
      synchronous,
      walAutocheckpointPages,
      base,
      applyAfterBatches: opts.applyAfterBatches ?? DEFAULT_APPLY_AFTER_BATCHES,
      applyAfterRecords: opts.applyAfterRecords ?? DEFAULT_APPLY_AFTER_RECORDS,
      applyQuietMs: opts.applyQuietMs ?? DEFAULT_APPLY_QUIET_MS,
      port: channel.port1,
    };
    const worker = startWorker(WORKER_URL, { workerData: data, transferList: [channel.port1] });
    try {
      await DbWriter.started(worker, "database writer");
    } catch (err) {
      await applier.terminate();
      throw err;
    }
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
        await applier.terminate();
        throw err;
      }
      // A failed checkpoint is retried at the next interval, and the writer's safety valve bounds
      // the WAL meanwhile: worth a line in the log, not a stop.
      checkpointer.on("message", (m: { t: string; message?: string }) => {
        if (m.t === "error") log().error({ error: m.message }, `WAL checkpoint failed: ${m.message}`);
      });
    }
    return new DbWriter(worker, applier, checkpointer);
  }

  /** Resolves with its message once `worker` posts ready; rejects (and ends the thread) if it fails first. */
  private static async started(worker: Worker, what: string): Promise<{ base?: number }> {
    return await new Promise<{ base?: number }>((resolve, reject) => {
      const onMessage = (m: FromWriter | FromApplier): void => {
        cleanup();
        if (m.t === "ready") resolve({ base: "base" in m ? m.base : undefined });
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
    const b = this.add(PAIR);
    const o = this.at;
    b[o + PAIR.at.name] = this.sym(name);
    b[o + PAIR.at.price_decimals] = priceDecimals;
    b[o + PAIR.at.amount_decimals] = amountDecimals;
  }

  currency(name: string, scale: number): void {
    const b = this.add(CURRENCY);
    const o = this.at;
    b[o + CURRENCY.at.name] = this.sym(name);
    b[o + CURRENCY.at.scale] = scale;
  }

  user(id: number, uid: string, micro: number): void {
    const b = this.add(USER);
    const o = this.at;
    b[o + USER.at.id] = id;
    b[o + USER.at.uid] = this.str(uid);
    b[o + USER.at.created_micro] = micro;
  }

  apiKey(token: string, userId: number, secret: string, micro: number): void {
    const b = this.add(API_KEY);
    const o = this.at;
    b[o + API_KEY.at.token] = this.str(token);
    b[o + API_KEY.at.user_id] = userId;
    b[o + API_KEY.at.secret] = this.str(secret);
    b[o + API_KEY.at.created_micro] = micro;
  }

  revokeKey(token: string): void {
    const b = this.add(REVOKE_KEY);
    const o = this.at;
    b[o + REVOKE_KEY.at.token] = this.str(token);
  }

  /** Last accepted nonce of a token (upsert; last wins). */
  nonce(token: string, nonce: bigint): void {
    const b = this.add(NONCE);
    const o = this.at;
    b[o + NONCE.at.token] = this.str(token);
    b[o + NONCE.at.last_nonce] = this.str(nonce.toString());
  }

  /** Latest balance of (user, currency) (upsert; within a batch the last one wins). */
  balance(userId: number, currency: string, available: bigint, reserved: bigint): void {
    const b = this.add(BALANCE);
    const o = this.at;
    b[o + BALANCE.at.user_id] = userId;
    b[o + BALANCE.at.currency] = this.sym(currency);
    b[o + BALANCE.at.available] = this.str(available.toString());
    b[o + BALANCE.at.reserved] = this.str(reserved.toString());
    b[o + BALANCE.at.through_trade] = this.tradesThrough();
  }

  /** A deposit (amount > 0) or withdrawal (amount < 0), at the currency's ledger scale. */
  transfer(userId: number, currency: string, amount: bigint, kind: TransferKind, micro: number): void {
    const b = this.add(TRANSFER);
    const o = this.at;
    b[o + TRANSFER.at.user_id] = userId;
    b[o + TRANSFER.at.currency] = this.sym(currency);
    b[o + TRANSFER.at.amount] = this.str(amount.toString());
    b[o + TRANSFER.at.kind] = this.sym(kind);
    b[o + TRANSFER.at.time_micro] = micro;
  }

  /**
   * The order as it stands, for a caller that does not track which orders it has sent (tests,
   * tools): the first record of an order (or the first after it closed) inserts the row, later
   * ones update its mutable fields (price, amount, amountUsed, isCancelled, updateMicro) and leave
   * the others as they were. The core knows this itself (OrderState.rowSent) and calls
   * insertOrder / updateOrder: no set of ids to look up per record. Arguments as insertOrder's.
   */
  order(...row: Parameters<DbWriter["insertOrder"]>): void {
    const [id, , , , , price, amount, amountUsed, isCancelled, , updateMicro] = row;
    const closed = isCancelled || amountUsed === amount;
    if (this.openSent.has(id)) {
      // Sent before (while open): only what changes. A closed order gets no further record.
      if (closed) this.openSent.delete(id);
      this.updateOrder(id, price, amount, amountUsed, isCancelled, updateMicro);
      return;
    }
    if (!closed) this.openSent.add(id);
    this.insertOrder(...row);
  }

  /** An order's whole row (ORDER is an upsert: a row recovered from the database is fine too). */
  insertOrder(
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
    const b = this.add(ORDER);
    const o = this.at;
    b[o + ORDER.at.id] = id;
    b[o + ORDER.at.user_id] = userId;
    b[o + ORDER.at.pair] = this.sym(pair);
    b[o + ORDER.at.side] = side;
    b[o + ORDER.at.type] = type;
    b[o + ORDER.at.price] = price;
    b[o + ORDER.at.amount] = amount;
    b[o + ORDER.at.amount_used] = amountUsed;
    b[o + ORDER.at.is_cancelled] = isCancelled ? 1 : 0;
    b[o + ORDER.at.create_micro] = createMicro;
    b[o + ORDER.at.update_micro] = updateMicro;
    b[o + ORDER.at.flags] = flags;
    b[o + ORDER.at.client_order_id] = clientOrderId === undefined ? -1 : this.str(clientOrderId);
  }

  /**
   * The mutable fields of an order whose row an earlier record inserted (or that was recovered
   * from its row): the row is updated, its other fields stay.
   */
  updateOrder(
    id: number,
    price: number,
    amount: number,
    amountUsed: number,
    isCancelled: boolean,
    updateMicro: number,
  ): void {
    const b = this.add(ORDER_UPDATE);
    const o = this.at;
    b[o + ORDER_UPDATE.at.id] = id;
    b[o + ORDER_UPDATE.at.price] = price;
    b[o + ORDER_UPDATE.at.amount] = amount;
    b[o + ORDER_UPDATE.at.amount_used] = amountUsed;
    b[o + ORDER_UPDATE.at.is_cancelled] = isCancelled ? 1 : 0;
    b[o + ORDER_UPDATE.at.update_micro] = updateMicro;
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
    const b = this.add(TRADE);
    const o = this.at;
    b[o + TRADE.at.id] = id;
    b[o + TRADE.at.pair] = this.sym(pair);
    b[o + TRADE.at.price] = price;
    b[o + TRADE.at.amount] = amount;
    b[o + TRADE.at.taker_order_id] = takerOrderId;
    b[o + TRADE.at.maker_order_id] = makerOrderId;
    b[o + TRADE.at.taker_user_id] = takerUserId;
    b[o + TRADE.at.maker_user_id] = makerUserId;
    b[o + TRADE.at.taker_side] = takerSide;
    b[o + TRADE.at.taker_type] = takerType;
    b[o + TRADE.at.maker_type] = makerType;
    b[o + TRADE.at.time_micro] = micro;
    b[o + TRADE.at.taker_fee_rate] = takerFeeRate;
    b[o + TRADE.at.maker_fee_rate] = makerFeeRate;
  }

  /** Upsert of an integer in `meta` (a pair's book sequence: `book_seq:<pair>`). */
  meta(key: string, value: number): void {
    const b = this.add(META);
    const o = this.at;
    b[o + META.at.key] = this.sym(key);
    b[o + META.at.value] = value;
  }

  /** Upsert of a user's MMP settings on a pair (CONTRACT 12.2; `qtyLimit` in lots). */
  mmpSetting(
    userId: number,
    pair: string,
    intervalSeconds: number,
    qtyLimit: number,
    frozenSeconds: number,
  ): void {
    const b = this.add(MMP_SETTING);
    const o = this.at;
    b[o + MMP_SETTING.at.user_id] = userId;
    b[o + MMP_SETTING.at.pair] = this.sym(pair);
    b[o + MMP_SETTING.at.interval_seconds] = intervalSeconds;
    b[o + MMP_SETTING.at.qty_limit] = qtyLimit;
    b[o + MMP_SETTING.at.frozen_seconds] = frozenSeconds;
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
    const b = this.add(CANDLE);
    const o = this.at;
    b[o + CANDLE.at.pair] = this.sym(pair);
    b[o + CANDLE.at.period] = this.sym(period);
    b[o + CANDLE.at.start_ms] = startMs;
    b[o + CANDLE.at.open] = open;
    b[o + CANDLE.at.high] = high;
    b[o + CANDLE.at.low] = low;
    b[o + CANDLE.at.close] = close;
    b[o + CANDLE.at.volume] = volume;
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

  /**
   * `fn` tells the id of the last trade whose legs the ledger holds now (the core's last trade id):
   * every balance record is stamped with it (migration 005). Without it a balance is taken to hold
   * every trade there will ever be (no trades are written through this writer then).
   */
  tradesThroughMark(fn: () => number): void {
    this.tradesThrough = fn;
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

  /**
   * Resolves once every batch acknowledged before the call has its rows committed to their tables
   * (orders, trades, balances, user rows...), not only its journal row: at once when they are,
   * otherwise after the apply thread, asked now, has applied what was journaled. Every read of
   * those tables from another connection waits on it first, so that a read right after an answer
   * sees what the answer reported (CONTRACT 6). Rejects if the writer has failed.
   */
  applied(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const need = this.ackedSeq;
    if (this.appliedThrough >= need || this.closedAck) return APPLIED;
    return new Promise<void>((resolve, reject) => {
      this.appliedWaiters.push({ need, resolve, reject });
      this.askApply();
    });
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
      await this.applier.terminate();
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
    // The writer thread passes the close on to the apply thread and closes after it.
    const exited = Promise.all(
      [this.worker, this.applier].map((w) => new Promise<void>((resolve) => w.once("exit", () => resolve()))),
    );
    this.closeSent = true;
    this.post({ t: "close" });
    await exited;
    if (this.failure) throw this.failure;
  }

  // ---- internals -----------------------------------------------------------------------------

  /**
   * Reserves one record of kind `k` in the current batch and returns the buffer to write it in;
   * the record's first slot is at `this.at`. (Two results without an object per record.)
   */
  private add(k: RecordKind): Float64Array {
    const r = this.rows[k.id];
    this.at = r.add();
    this.touch();
    return r.buf;
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
      this.drop(); // nothing may be reported durable any more
      return;
    }
    if (this.inFlight === null && !this.cur.empty) this.send();
  };

  private send(): void {
    for (const fn of this.sendHooks) fn();
    const b = this.cur;
    this.cur = new Batch();
    this.inFlight = b;
    const rows = this.rows;
    let total = 0;
    for (let k = 0; k < KIND_COUNT; k++) total += rows[k].n * rows[k].stride;
    let size = MIN_WIRE_BITS;
    while (1 << size < total) size++;
    let wire = this.wires[size];
    if (wire === undefined) {
      wire = new Float64Array(new SharedArrayBuffer(8 << size));
      this.wires[size] = wire;
    }
    const counts: number[] = new Array(KIND_COUNT);
    let at = 0;
    for (let k = 0; k < KIND_COUNT; k++) {
      const r = rows[k];
      const len = r.n * r.stride;
      counts[k] = r.n;
      if (len > 0) wire.set(r.buf.subarray(0, len), at);
      at += len;
      r.n = 0;
    }
    const settledBelow = this.settledBelow === null ? -1 : this.settledBelow();
    // Shared, not copied: `wire` is written again only after this batch's ack (see `wires`).
    this.post({
      t: "batch",
      seq: ++this.seq,
      syms: b.syms,
      strs: b.strs,
      slots: wire.buffer as SharedArrayBuffer,
      counts,
      settledBelow,
    });
  }

  /** Forgets the current batch: its records, strings and callbacks. */
  private drop(): void {
    this.cur = new Batch();
    for (const r of this.rows) r.n = 0;
  }

  /** Asks the apply thread to apply what was journaled, unless a request is already out. */
  private askApply(): void {
    // Once the close is sent, the writer applies everything before it answers "closed".
    if (this.applyAsked || this.closeSent) return;
    this.applyAsked = true;
    // After every batch sent: the writer thread hands them all to the apply thread.
    this.post({ t: "apply" });
  }

  /** Resolves the waiters the applied mark now covers; asks again for those it does not. */
  private releaseApplied(all: boolean): void {
    const waiters = this.appliedWaiters;
    let n = 0;
    while (n < waiters.length && (all || waiters[n].need <= this.appliedThrough)) n++;
    for (const w of waiters.splice(0, n)) w.resolve();
    // A request already out when they came may have been read before their batches.
    if (waiters.length > 0) this.askApply();
  }

  private post(m: ToWriter): void {
    this.worker.postMessage(m);
  }

  private readonly onMessage = (m: FromWriter | FromApplier): void => {
    switch (m.t) {
      case "ack": {
        const done = this.inFlight;
        if (done === null || m.seq !== this.seq) {
          this.fail(new Error(`database writer acknowledged batch ${m.seq}, expected ${this.seq}`));
          return;
        }
        this.inFlight = null;
        this.ackedSeq = m.seq;
        // A batch of callbacks only has no rows: applied as soon as every batch before it is.
        if (m.records === 0 && this.appliedThrough === m.seq - 1) this.appliedThrough = m.seq;
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
      case "applied":
        if (m.through > this.appliedThrough) this.appliedThrough = m.through;
        if (m.asked) this.applyAsked = false;
        this.releaseApplied(false);
        return;
      case "closed":
        // The close applied everything before it closed.
        this.closedAck = true;
        this.releaseApplied(true);
        return;
      case "ready":
        return;
    }
  };

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.inFlight = null;
    this.drop();
    for (const reject of this.flushRejects) reject(err);
    this.flushRejects.clear();
    for (const w of this.appliedWaiters.splice(0)) w.reject(err);
    if (this.fatalListeners.length === 0) {
      // Nobody handles it: crash rather than run on with writes silently lost.
      process.nextTick(() => {
        throw err;
      });
    }
    for (const cb of this.fatalListeners) cb(err);
    void this.worker.terminate();
    void this.applier.terminate();
  }
}
