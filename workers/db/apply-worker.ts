/**
 * The apply thread: owns the only read-write connection to the exchange file while the server
 * runs, and writes the rows of the batches the writer thread journaled (workers/db/writer-worker.ts).
 *
 *   start                          replay what an earlier run journaled and did not apply, catch
 *                                  the user rows up; "ready" with the applied mark (journal keys
 *                                  of this run are mark + seq)
 *   batches, from the writer       BEGIN IMMEDIATE; applyBatches(the batches, in order);
 *   (every 16, see there)            applied mark = last key; COMMIT ──▶ "applied" to main
 *                                  fdatasync the WAL (FULL)          ──▶ "applied" to the writer
 *
 * The bulk apply is the one apply code (src/protocol/db/batch-apply.ts) the start-up replay
 * (src/protocol/db/journal.ts) uses too. At synchronous FULL its transaction commits without an
 * fsync (the connection runs at NORMAL), "applied" goes to the main side at once (the rows are
 * visible to every connection from the commit on), and then the WAL file is fdatasync'ed before
 * the writer thread hears of the apply and may delete the journal rows it covers: the tables plus
 * the journal rows above the mark always hold every acknowledged change, power loss included, and
 * a read waiting for the apply does not wait for its fsync (BENCHMARKS.md, "Changes kept"). A
 * power loss before the fdatasync takes the apply and its mark together; the journal rows are
 * still there and the next start applies them again.
 *
 * Other connections (the reader pool) see a batch's rows only after its bulk apply: the main side
 * makes every read of them wait for "applied" (src/db/writer.ts), asking the writer thread to hand
 * over what it holds now.
 *
 * On an error the thread applies nothing more: the main thread and the writer thread are told
 * (the writer then acknowledges no later batch), and the journal rows stay for the next start.
 */
import { closeSync, fdatasyncSync, openSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { type BatchApplier, createBatchApplier } from "../../src/protocol/db/batch-apply.ts";
import { type Db, openDatabase } from "../../src/protocol/db/db-open.ts";
import { appliedMarkOf, type JournalBatch, replayJournal } from "../../src/protocol/db/journal.ts";
import type {
  ApplierToJournal,
  ApplyWorkerData,
  FromApplier,
  JournalToApplier,
} from "../../src/protocol/db/writer-messages.ts";

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
let appliedMark: ReturnType<typeof appliedMarkOf>;
try {
  db = openDatabase(data.path, {
    // FULL: the WAL is synced by hand after each bulk apply (syncWal), not inside the commit.
    synchronous: data.synchronous === "FULL" ? "NORMAL" : data.synchronous,
    walAutocheckpointPages: data.walAutocheckpointPages,
  });
  // What an earlier run journaled and did not apply (the server replays before it recovers; a
  // writer started on its own does it here). This run's symbol ids start again from 0.
  replayJournal(db);
  applier = createBatchApplier(db, data.userRowsFlushAt);
  // Catch up at start: nothing is in flight, so every stored order and trade is settled.
  db.transaction(applier.catchUp).immediate();
  appliedMark = appliedMarkOf(db);
  base = appliedMark.get();
} catch (err) {
  post({ t: "error", seq: 0, message: (err as Error).message });
  // In a worker, process.exit ends only this thread; start() rejects with the message above.
  process.exit(1);
}

/** The applied mark as this thread last set it. */
let mark = base;

/** At FULL: an fd of the exchange file's WAL, opened at the first bulk apply (the file exists then). */
let walFd: number | null = null;

/** Makes every committed bulk apply durable (FULL only; at NORMAL nothing is synced per commit). */
function syncWal(): void {
  if (data.synchronous !== "FULL") return;
  walFd ??= openSync(`${data.path}-wal`, "r");
  fdatasyncSync(walFd);
}

const bulkTx = db.transaction((batches: readonly JournalBatch[], close: boolean) => {
  // Another connection that replayed the journal under this thread would have written these rows
  // already: refuse (roll back) rather than write them twice.
  const stored = appliedMark.get();
  if (stored !== mark)
    throw new Error(`journal applied through ${stored} by another connection, not ${mark}`);
  applier.applyBatches(batches);
  if (close) applier.flushUserRows();
  if (batches.length > 0) appliedMark.set(base + batches[batches.length - 1].seq);
});

/** Seq of the last batch handed over: every batch up to it is applied once its apply returns. */
let lastSeq = 0;

/** Writes the rows of `batches` in one transaction and tells the main side and the writer. */
function apply(m: Extract<JournalToApplier, { t: "apply" }>): void {
  for (const name of m.syms) applier.syms.push(name);
  const applied = m.batches.length > 0;
  if (applied) {
    bulkTx.immediate(m.batches, false);
    mark = base + m.batches[m.batches.length - 1].seq;
  }
  lastSeq = m.through;
  // Visible from the commit on: the reads waiting for these batches go now; the journal rows
  // they came from stay until the WAL holding them is on disk.
  post({ t: "applied", through: m.through, asked: m.asked });
  if (!applied) return;
  syncWal();
  tellWriter({ t: "applied", key: mark });
}

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

writer.on("message", (m: JournalToApplier) => {
  if (m.t === "apply") {
    guarded(() => apply(m));
    return;
  }
  // Close (every batch was handed over before it): the held user rows, then fold the WAL into the
  // main file so the next start reads one file; TRUNCATE leaves the WAL empty (a reader still
  // holding a snapshot only makes this a partial checkpoint).
  guarded(() => {
    bulkTx.immediate([], true);
    syncWal();
    db.pragma("wal_checkpoint(TRUNCATE)");
  });
  try {
    if (walFd !== null) closeSync(walFd);
    db.close();
  } catch (err) {
    post({ t: "error", seq: -1, message: (err as Error).message });
  }
  tellWriter({ t: "closed", key: mark });
  writer.close();
  port.close();
});

post({ t: "ready", base });
