/**
 * The writer thread: the ack path. It owns the only read-write connection to the journal file
 * (src/protocol/db/journal.ts) while the server runs.
 *
 *   batch (from src/db/writer.ts) ──▶ BEGIN IMMEDIATE; one journal row; COMMIT (synchronous as set) ──▶ ack
 *                                     keep the batch's copy in `pending`
 *   16 batches / 2,048 records,   ──▶ every pending batch to the apply thread in one message
 *   10 ms of quiet, "apply", close
 *   {applied, key} from there     ──▶ the journal rows up to `key` are deleted with the next commit
 *
 * The ack path writes one row (the batch as received), a few WAL pages of the journal file
 * whatever the batch holds, and its commit is what makes the batch durable; the main thread
 * releases the answers that depended on it at the ack. The batch's rows (orders, trades,
 * balances, user rows...) are written to the exchange file by the apply thread
 * (workers/db/apply-worker.ts), several batches in one transaction, on another core and under
 * another file's write lock: a bulk apply never holds up a journal commit. The batches go over
 * together, not one message each: a message wakes the apply thread, and a wake costs a sleeping
 * thread's CPU tens of µs on a small VM (BENCHMARKS.md, "The ring and waking").
 *
 * On the first error (its own or the apply thread's) the thread answers every later batch with an
 * error too, so nothing after a lost write is ever acknowledged. An apply error comes after the
 * acks of the batches it held: their journal rows stay, and the next start's replay meets the
 * same error rather than lose them.
 *
 * Close: the main thread's "close" goes on to the apply thread (after every batch), which applies
 * what is left and closes; then the journal rows it applied are deleted, the journal's WAL is
 * folded into its file, and this thread closes and posts "closed".
 */
import { parentPort, workerData } from "node:worker_threads";
import { batchFrame } from "../../src/protocol/db/batch-frame.ts";
import type { Db } from "../../src/protocol/db/db-open.ts";
import {
  type JournalBatch,
  type JournalRow,
  type JournalWriter,
  journalWriter,
  openJournal,
} from "../../src/protocol/db/journal.ts";
import { KIND_COUNT, slotsOf } from "../../src/protocol/db/writer-batch.ts";
import type {
  ApplierToJournal,
  FromWriter,
  JournalToApplier,
  ToWriter,
  WriterWorkerData,
} from "../../src/protocol/db/writer-messages.ts";

type Batch = Extract<ToWriter, { t: "batch" }>;

const port = parentPort!;
const data = workerData as WriterWorkerData;
const applier = data.port;

function post(m: FromWriter): void {
  port.postMessage(m);
}

let db: Db;
let journal: JournalWriter;
try {
  db = openJournal(data.path, {
    synchronous: data.synchronous,
    walAutocheckpointPages: data.walAutocheckpointPages,
  });
  journal = journalWriter(db);
} catch (err) {
  post({ t: "error", seq: 0, message: (err as Error).message });
  // In a worker, process.exit ends only this thread; start() rejects with the message above.
  process.exit(1);
}

/** Journaled batches not handed to the apply thread yet, in seq order, and their new symbols. */
let pending: JournalBatch[] = [];
let pendingSyms: string[] = [];
let pendingRecords = 0;
/** Seq of the last batch journaled. */
let lastSeq = 0;

/** Symbols of this run: the journal's symbol table, appended as batches bring new ones. */
let syms = 0;
/** The apply thread has written the rows of every batch up to this key; those up to `deleted` are gone. */
let appliedKey = data.base;
let deletedKey = data.base;

/** The main thread asked for each committed row as a BATCH frame with its ack ("frames"). */
let frames = false;

const journalTx = db.transaction((b: Batch, kept: JournalBatch | null): JournalRow | null => {
  for (const name of b.syms) journal.appendSym(syms++, name);
  const row = kept === null ? null : journal.append(data.base + b.seq, kept);
  // With followers possible, the last `journalKeep` keys stay for them to read (DECISIONS.md,
  // "A second box: follower"); keys have gaps, so that is at most that many rows.
  const through = appliedKey - data.journalKeep;
  if (through > deletedKey) {
    journal.deleteThrough(through);
    deletedKey = through;
  }
  return row;
});

let broken: string | null = null;

function onBatch(m: Batch): void {
  let records = 0;
  for (let k = 0; k < KIND_COUNT; k++) records += m.counts[k];
  let kept: JournalBatch | null = null;
  if (records > 0) {
    // Copied out now: the sender writes its buffer again for a later batch once this one is acked.
    const slots = new Float64Array(m.slots, 0, slotsOf(m.counts)).slice();
    kept = { seq: m.seq, counts: m.counts, slots, strs: m.strs, settledBelow: m.settledBelow };
  }
  const symFrom = syms;
  // A batch of callbacks only needs no transaction: the earlier batches are already committed.
  const row = kept !== null || m.syms.length > 0 ? journalTx.immediate(m, kept) : null;
  if (frames && row !== null) {
    const frame = batchFrame(row);
    port.postMessage({ t: "ack", seq: m.seq, records, frame, symFrom, syms: m.syms } satisfies FromWriter, [
      frame.buffer as ArrayBuffer,
    ]);
  } else post({ t: "ack", seq: m.seq, records });
  lastSeq = m.seq;
  for (const name of m.syms) pendingSyms.push(name);
  if (kept === null) return;
  pending.push(kept);
  pendingRecords += records;
  if (pending.length >= data.applyAfterBatches || pendingRecords >= data.applyAfterRecords) handOver(false);
  else if (quiet === null) {
    quiet = setTimeout(onQuiet, data.applyQuietMs);
    // The port keeps the thread alive; this timer must not once the port is closed.
    quiet.unref();
  } else quiet.refresh();
}

/** Hands every pending batch to the apply thread, which applies them at once. */
function handOver(asked: boolean): void {
  if (quiet !== null) {
    clearTimeout(quiet);
    quiet = null;
  }
  const batches = pending;
  const m: JournalToApplier = { t: "apply", through: lastSeq, syms: pendingSyms, batches, asked };
  applier.postMessage(
    m,
    batches.map((b) => b.slots.buffer as ArrayBuffer),
  );
  pending = [];
  pendingSyms = [];
  pendingRecords = 0;
}

let quiet: NodeJS.Timeout | null = null;
const onQuiet = (): void => {
  quiet = null;
  if (broken === null) handOver(false);
};

function fail(seq: number, message: string): void {
  if (broken !== null) return;
  broken = message;
  if (quiet !== null) clearTimeout(quiet);
  post({ t: "error", seq, message });
}

/** After the apply thread closed: the journal rows it applied go, then the connection. */
function close(key: number): void {
  try {
    if (broken === null) {
      db.transaction(() => {
        journal.deleteThrough(key);
        // Every row applied: the next run numbers its symbols from 0 again.
        if (db.prepare("SELECT COUNT(*) FROM journal").pluck().get() === 0)
          db.prepare("DELETE FROM journal_syms").run();
      }).immediate();
      db.pragma("wal_checkpoint(TRUNCATE)");
    }
    db.close();
    post({ t: "closed" });
  } catch (err) {
    post({ t: "error", seq: -1, message: (err as Error).message });
  }
  applier.close();
  port.close();
}

applier.on("message", (m: ApplierToJournal) => {
  if (m.t === "applied") appliedKey = m.key;
  else if (m.t === "closed") close(m.key);
  else fail(-1, m.message);
});

port.on("message", (m: ToWriter) => {
  if (m.t === "close") {
    if (broken === null) handOver(false);
    applier.postMessage({ t: "close" });
    return;
  }
  if (m.t === "frames") {
    frames = true;
    return;
  }
  if (m.t === "apply") {
    // Every batch before this message is journaled: all of them go now.
    if (broken === null) handOver(true);
    return;
  }
  if (broken !== null) {
    post({ t: "error", seq: m.seq, message: `writer already failed: ${broken}` });
    return;
  }
  try {
    onBatch(m);
  } catch (err) {
    fail(m.seq, (err as Error).message);
  }
});

post({ t: "ready" });
