/**
 * The apply thread: owns the only read-write connection to the exchange file while the server
 * runs, and writes the rows of the batches the writer thread journaled (workers/db/writer-worker.ts).
 *
 *   start                          replay what an earlier run journaled and did not apply, catch
 *                                  the user rows up; "ready" with the applied mark (journal keys
 *                                  of this run are mark + seq)
 *   batches, from the writer       kept in `pending`, in seq order
 *   16 batches / 2,048 records,  ──▶ BEGIN IMMEDIATE; applyBatches(every pending batch, in order);
 *   10 ms of quiet, "apply", close     applied mark = last key; COMMIT ──▶ "applied" to main and writer
 *
 * The bulk apply is the one apply code (src/protocol/batch-apply.ts) the start-up replay
 * (src/protocol/journal.ts) uses too. It commits with the synchronous level as set (FULL: fsynced)
 * before the writer thread may delete the journal rows it covers, so the tables plus the journal
 * rows above the mark always hold every acknowledged change, power loss included.
 *
 * Other connections (the reader pool) see a batch's rows only after its bulk apply: the main side
 * makes every read of them wait for "applied" (src/db/writer.ts), asking for an apply now.
 *
 * On an error the thread applies nothing more: the main thread and the writer thread are told
 * (the writer then acknowledges no later batch), and the journal rows stay for the next start.
 */
import { parentPort, workerData } from "node:worker_threads";
import { type BatchApplier, createBatchApplier } from "../../src/protocol/batch-apply.ts";
import { type Db, openDatabase } from "../../src/protocol/db-open.ts";
import { appliedMark, type JournalBatch, markApplied, replayJournal } from "../../src/protocol/journal.ts";
import {
  type ApplierToJournal,
  type ApplyWorkerData,
  type FromApplier,
  type JournalToApplier,
  KIND_COUNT,
  type ToApplier,
} from "../../src/protocol/writer-batch.ts";

const port = parentPort!;
const data = workerData as ApplyWorkerData;
const writer = data.port;

function post(m: FromApplier): void {
  port.postMessage(m);
}

function tellWriter(m: ApplierToJournal): void {
  writer.postMessage(m);
}

let db: Db;
let applier: BatchApplier;
let base: number;
let setMark: (key: number) => void;
try {
  db = openDatabase(data.path, {
    synchronous: data.synchronous,
    walAutocheckpointPages: data.walAutocheckpointPages,
  });
  // What an earlier run journaled and did not apply (the server replays before it recovers; a
  // writer started on its own does it here). This run's symbol ids start again from 0.
  replayJournal(db);
  applier = createBatchApplier(db, data.userRowsFlushAt);
  // Catch up at start: nothing is in flight, so every stored order and trade is settled.
  db.transaction(applier.catchUp).immediate();
  base = appliedMark(db);
  setMark = markApplied(db);
} catch (err) {
  post({ t: "error", seq: 0, message: (err as Error).message });
  // In a worker, process.exit ends only this thread; start() rejects with the message above.
  process.exit(1);
}

/** Journaled batches whose rows are not written yet, in seq order. */
const pending: JournalBatch[] = [];
let pendingRecords = 0;
/** Seq of the last batch received: once `pending` is empty, every batch up to it is applied. */
let lastSeq = 0;
/** An "apply" waits for the batches up to this seq to come (0: none waits). */
let wanted = 0;

const bulkTx = db.transaction((batches: readonly JournalBatch[], close: boolean) => {
  applier.applyBatches(batches);
  if (close) applier.flushUserRows();
  if (batches.length > 0) setMark(base + batches[batches.length - 1].seq);
});

/** Writes the rows of every pending batch in one transaction and tells the main side. */
function applyPending(asked: boolean, close = false): void {
  if (quiet !== null) {
    clearTimeout(quiet);
    quiet = null;
  }
  if (pending.length > 0 || close) {
    bulkTx.immediate(pending, close);
    pending.length = 0;
    pendingRecords = 0;
    tellWriter({ t: "applied", key: base + lastSeq });
  }
  post({ t: "applied", through: lastSeq, asked });
}

let quiet: NodeJS.Timeout | null = null;
const onQuiet = (): void => {
  quiet = null;
  guarded(() => applyPending(false));
};

let broken: string | null = null;

/** Runs `fn`; on an error fails the thread for good and reports it. */
function guarded(fn: () => void): void {
  if (broken !== null) return;
  try {
    fn();
  } catch (err) {
    broken = (err as Error).message;
    post({ t: "error", seq: lastSeq, message: broken });
    tellWriter({ t: "error", message: broken });
  }
}

function onBatch(m: Extract<JournalToApplier, { t: "batch" }>): void {
  lastSeq = m.seq;
  for (const name of m.syms) applier.syms.push(name);
  const b = m.batch;
  if (b !== null) {
    pending.push(b);
    for (let k = 0; k < KIND_COUNT; k++) pendingRecords += b.counts[k];
  }
  if (wanted > 0 && lastSeq >= wanted) {
    wanted = 0;
    applyPending(true);
  } else if (pending.length >= data.applyAfterBatches || pendingRecords >= data.applyAfterRecords)
    applyPending(false);
  else if (b === null) return;
  else if (quiet === null) {
    quiet = setTimeout(onQuiet, data.applyQuietMs);
    // The ports keep the thread alive; this timer must not once they are closed.
    quiet.unref();
  } else quiet.refresh();
}

writer.on("message", (m: JournalToApplier) => {
  if (m.t === "batch") {
    guarded(() => onBatch(m));
    return;
  }
  // Close: fold the WAL into the main file so the next start reads one file; TRUNCATE leaves the
  // WAL empty (a reader still holding a snapshot only makes this a partial checkpoint).
  guarded(() => {
    applyPending(false, true);
    db.pragma("wal_checkpoint(TRUNCATE)");
  });
  try {
    db.close();
  } catch (err) {
    post({ t: "error", seq: -1, message: (err as Error).message });
  }
  tellWriter({ t: "closed", key: broken === null ? base + lastSeq : base });
  writer.close();
  port.close();
});

port.on("message", (m: ToApplier) => {
  if (m.need > lastSeq) wanted = Math.max(wanted, m.need);
  else guarded(() => applyPending(true));
});

post({ t: "ready", base });
