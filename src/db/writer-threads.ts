/**
 * Starting the database's threads for the writer (src/db/writer.ts): the apply thread first, which
 * replays what an earlier run journaled and did not apply and tells the journal's base, then the
 * writer (journal) thread, then, unless turned off, the WAL checkpointer. Each is waited for until
 * it says ready; a thread that fails to start ends those already started, and the start rejects.
 * WriterOptions and their defaults are here too.
 */
import path from "node:path";
import { MessageChannel, type Worker } from "node:worker_threads";
import { DEFAULT_WAL_AUTOCHECKPOINT_PAGES, type Synchronous } from "../protocol/db/db-open.ts";
import type {
  ApplyWorkerData,
  CheckpointWorkerData,
  FromApplier,
  FromWriter,
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
  /**
   * Journal keys kept below the applied mark for followers to read (docs/OPERATIONS.md, "A second
   * box: follower"); 0 (default): a row goes as soon as its batch is applied.
   */
  journalKeep?: number;
}

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

/** The threads of one writer, started and ready. */
export interface WriterThreads {
  /** The writer (journal) thread: the ack path. */
  readonly worker: Worker;
  /** The apply thread: the batches' rows. */
  readonly applier: Worker;
  /** The WAL checkpointer, or null when `checkpointIntervalMs` is 0. */
  readonly checkpointer: Worker | null;
  /** The applied mark at start: batch `seq` is journal key `base + seq`. */
  readonly base: number;
}

/**
 * Starts the apply thread (which replays what an earlier run journaled and did not apply), then
 * the writer thread, then the checkpointer; resolves once their connections are open and migrated.
 */
export async function startWriterThreads(file: string, opts: WriterOptions): Promise<WriterThreads> {
  const interval = opts.checkpointIntervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS;
  const dbFile = path.resolve(file);
  const synchronous = opts.synchronous ?? "FULL";
  const walAutocheckpointPages =
    opts.walAutocheckpointPages ?? (interval > 0 ? WAL_SAFETY_VALVE_PAGES : DEFAULT_WAL_AUTOCHECKPOINT_PAGES);
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
  const base = (await started(applier, "database apply")).base!;
  const data: WriterWorkerData = {
    entry: WORKER_URL.href,
    path: dbFile,
    synchronous,
    walAutocheckpointPages,
    base,
    applyAfterBatches: opts.applyAfterBatches ?? DEFAULT_APPLY_AFTER_BATCHES,
    applyAfterRecords: opts.applyAfterRecords ?? DEFAULT_APPLY_AFTER_RECORDS,
    applyQuietMs: opts.applyQuietMs ?? DEFAULT_APPLY_QUIET_MS,
    journalKeep: opts.journalKeep ?? 0,
    port: channel.port1,
  };
  const worker = startWorker(WORKER_URL, { workerData: data, transferList: [channel.port1] });
  try {
    await started(worker, "database writer");
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
      await started(checkpointer, "WAL checkpointer");
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
  return { worker, applier, checkpointer, base };
}

/** Resolves with its message once `worker` posts ready; rejects (and ends the thread) if it fails first. */
async function started(worker: Worker, what: string): Promise<{ base?: number }> {
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
