/**
 * The writer thread: owns the only read-write connection while the server runs.
 *
 *   batch (from src/db/writer.ts) ──▶ BEGIN IMMEDIATE; one journal row; COMMIT (synchronous as set) ──▶ ack
 *                                     keep the batch's copy in `pending`
 *   16 batches / 2,048 records,   ──▶ BEGIN IMMEDIATE; applyBatches(every pending batch, in order);
 *   10 ms of quiet, "apply", close     DELETE their journal rows; COMMIT (synchronous NORMAL) ──▶ applied
 *
 * The ack path writes one row (the batch as received, migration 006), a few WAL pages whatever the
 * batch holds, and its commit is what makes the batch durable; the main thread releases the
 * answers that depended on it at the ack. The batch's rows (orders, trades, balances, candles,
 * user rows...) are written later, several batches in one transaction, by the one apply code
 * (src/protocol/batch-apply.ts), which the start-up replay (src/protocol/journal.ts) uses too; that
 * transaction deletes the journal rows it applied, so the tables plus the journal rows left always
 * hold every acknowledged change, and a crash at any point leaves either the journal rows or their
 * rows, never both or neither. It commits at synchronous NORMAL: should a power loss take it, its
 * journal rows come back with it (a WAL transaction is whole or absent), and the next journal
 * commit's fsync covers its frames anyway.
 *
 * Other connections (the reader pool) see a batch's rows only after its bulk apply: the main side
 * makes every read of them wait for `applied` (src/db/writer.ts), which asks for an apply now.
 *
 * On the first error the thread answers every later batch with an error too, so nothing after a
 * lost write is ever acknowledged. An error while applying comes after the acks of the batches
 * applied: the apply rolls back, their journal rows stay, and the next start's replay meets the
 * same error rather than lose them.
 */
import { parentPort, workerData } from "node:worker_threads";
import { type BatchApplier, createBatchApplier } from "../../src/protocol/batch-apply.ts";
import { type Db, openDatabase } from "../../src/protocol/db-open.ts";
import {
  type JournalBatch,
  type JournalWriter,
  journalWriter,
  replayJournal,
} from "../../src/protocol/journal.ts";
import {
  type FromWriter,
  KIND_COUNT,
  slotsOf,
  type ToWriter,
  type WriterWorkerData,
} from "../../src/protocol/writer-batch.ts";

type Batch = Extract<ToWriter, { t: "batch" }>;

const port = parentPort!;
const data = workerData as WriterWorkerData;

function post(m: FromWriter): void {
  port.postMessage(m);
}

let db: Db;
let applier: BatchApplier;
let journal: JournalWriter;
try {
  db = openDatabase(data.path, {
    synchronous: data.synchronous,
    walAutocheckpointPages: data.walAutocheckpointPages,
  });
  // What an earlier run journaled and did not apply (the server replays before it recovers; a
  // writer started on its own does it here). Its symbol table goes with it: this run's symbol ids
  // start again from 0.
  replayJournal(db);
  applier = createBatchApplier(db, data.userRowsFlushAt);
  journal = journalWriter(db);
  // Catch up at start: nothing is in flight, so every stored order and trade is settled.
  db.transaction(applier.catchUp).immediate();
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
/** Symbols already in journal_syms. */
let symsJournaled = 0;

const journalTx = db.transaction((b: JournalBatch | null) => {
  const syms = applier.syms;
  for (; symsJournaled < syms.length; symsJournaled++) journal.appendSym(symsJournaled, syms[symsJournaled]);
  if (b !== null) journal.append(b);
});

const bulkTx = db.transaction((batches: readonly JournalBatch[], close: boolean) => {
  applier.applyBatches(batches);
  if (close) applier.flushUserRows();
  if (batches.length === 0) return;
  const through = batches[batches.length - 1].seq;
  const deleted = journal.deleteThrough(through);
  // Another connection that replayed the journal under this writer would have written these rows
  // already: refuse (roll back) rather than write them twice.
  if (deleted !== batches.length)
    throw new Error(`journal holds ${deleted} of the ${batches.length} batches applied through ${through}`);
});

const relaxSync = data.synchronous !== "NORMAL";

/** Writes the rows of every pending batch in one transaction and tells the main side. */
function applyPending(asked: boolean, close = false): void {
  if (quiet !== null) {
    clearTimeout(quiet);
    quiet = null;
  }
  if (pending.length > 0 || close) {
    // Not durable by itself, and need not be: see the header.
    if (relaxSync) db.pragma("synchronous = NORMAL");
    try {
      bulkTx.immediate(pending, close);
    } finally {
      if (relaxSync) db.pragma(`synchronous = ${data.synchronous}`);
    }
    pending.length = 0;
    pendingRecords = 0;
  }
  post({ t: "applied", through: lastSeq, asked });
}

let quiet: NodeJS.Timeout | null = null;
const onQuiet = (): void => {
  quiet = null;
  guarded(lastSeq, () => applyPending(false));
};

let broken: string | null = null;

/** Runs `fn`; on an error fails the writer for good and reports it under `seq`. */
function guarded(seq: number, fn: () => void): void {
  if (broken !== null) return;
  try {
    fn();
  } catch (err) {
    broken = (err as Error).message;
    post({ t: "error", seq, message: broken });
  }
}

function onBatch(m: Batch): void {
  lastSeq = m.seq;
  for (const name of m.syms) applier.syms.push(name);
  let records = 0;
  for (let k = 0; k < KIND_COUNT; k++) records += m.counts[k];
  let kept: JournalBatch | null = null;
  if (records > 0) {
    // Copied out now: the sender writes its buffer again for a later batch once this one is acked.
    const slots = new Float64Array(m.slots, 0, slotsOf(m.counts)).slice();
    kept = { seq: m.seq, counts: m.counts, slots, strs: m.strs, settledBelow: m.settledBelow };
  }
  // A batch of callbacks only needs no transaction: the earlier batches are already committed.
  if (kept !== null || m.syms.length > 0) journalTx.immediate(kept);
  post({ t: "ack", seq: m.seq, records });
  if (kept === null) return;
  pending.push(kept);
  pendingRecords += records;
  // After the ack: the main thread runs the batch's callbacks while its rows are written.
  if (pending.length >= data.applyAfterBatches || pendingRecords >= data.applyAfterRecords)
    applyPending(false);
  else if (quiet === null) {
    quiet = setTimeout(onQuiet, data.applyQuietMs);
    // The port keeps the thread alive; this timer must not once the port is closed.
    quiet.unref();
  } else quiet.refresh();
}

port.on("message", (m: ToWriter) => {
  if (m.t === "close") {
    try {
      // Fold the WAL into the main file so the next start reads one file; TRUNCATE leaves the
      // WAL empty (a reader still holding a snapshot only makes this a partial checkpoint).
      if (broken === null) {
        applyPending(false, true);
        db.pragma("wal_checkpoint(TRUNCATE)");
      }
      db.close();
      post({ t: "closed" });
    } catch (err) {
      post({ t: "error", seq: -1, message: (err as Error).message });
    }
    port.close();
    return;
  }
  if (broken !== null) {
    if (m.t === "batch") post({ t: "error", seq: m.seq, message: `writer already failed: ${broken}` });
    return;
  }
  if (m.t === "apply") guarded(lastSeq, () => applyPending(true));
  else guarded(m.seq, () => onBatch(m));
});

post({ t: "ready" });
