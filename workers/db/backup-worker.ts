/**
 * The backup thread (docs/API.md 11, src/db/backup.ts): started at the first backup and idle between
 * backups, it copies the exchange file with `VACUUM INTO` from a read-only connection of its own, and
 * answers what it made; one task at a time.
 *
 * `VACUUM INTO` reads one snapshot (WAL: the writer and apply threads go on committing meanwhile)
 * into `<file>.partial`, which is synced and then renamed, and the folder synced: a file under its
 * final name is always whole. The copy has no journal: the main thread waited for the apply thread
 * to write the rows of every acknowledged batch before it started this thread, so the snapshot
 * holds them.
 *
 * The copy takes a core for about a second per 60 MiB (bench/db/backup.bench.ts): the thread
 * first lowers its own scheduling priority (Linux: a thread's nice value is its own), so that on a
 * busy machine the order path's threads go first and the backup takes what is left.
 */
import { closeSync, fsyncSync, openSync, readlinkSync, renameSync, rmSync, statSync } from "node:fs";
import { setPriority } from "node:os";
import path from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import type { BackupTask, BackupWorkerData, FromBackup } from "../../src/protocol/db/backup-tasks.ts";
import { EXEC_EPOCH_BUMP } from "../../src/protocol/db/backup-tasks.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";

const port = parentPort!;
const data = workerData as BackupWorkerData;

/** Nice value of the backup thread: about a tenth of the CPU share of a normal thread when the cores are contended. */
const BACKUP_NICE = 10;

/** Lowers this thread's priority; best effort (elsewhere than Linux it stays as it is). */
function yieldToOrders(): void {
  try {
    // "<pid>/task/<tid>": setpriority(2) on a thread id changes that thread alone.
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, BACKUP_NICE);
  } catch {
    // no /proc or not allowed: the copy runs at the normal priority
  }
}

/** Writes the file or folder at `p` to disk. */
function syncPath(p: string): void {
  const fd = openSync(p, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function backup(file: string): FromBackup {
  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  try {
    vacuumInto.run(partial);
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
  try {
    // The first start on the copy begins a new execution epoch (docs/API.md 16): it may lack
    // changes whose numbers clients have already seen. A plain connection: the copy keeps the
    // journal mode VACUUM INTO gave it, and nothing is left beside it.
    const rw = new Database(partial, { fileMustExist: true });
    try {
      rw.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, 1)").run(EXEC_EPOCH_BUMP);
    } finally {
      rw.close();
    }
    syncPath(partial);
    const copy = openDatabase(partial, { readonly: true });
    let lastOrderId: number;
    let lastTradeId: number;
    try {
      lastOrderId = copy.prepare<[], number>("SELECT COALESCE(MAX(id), 0) FROM orders").pluck().get()!;
      lastTradeId = copy.prepare<[], number>("SELECT COALESCE(MAX(id), 0) FROM trades").pluck().get()!;
    } finally {
      copy.close();
    }
    renameSync(partial, file);
    syncPath(path.dirname(file));
    return { t: "done", bytes: statSync(file).size, lastOrderId, lastTradeId };
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
}

yieldToOrders();
// Idle between backups, it holds no snapshot (no transaction is open) and so holds up no checkpoint.
const db = openDatabase(data.path, { readonly: true });
const vacuumInto = db.prepare<[string]>("VACUUM INTO ?");
port.on("message", (task: BackupTask) => {
  let answer: FromBackup;
  try {
    answer = backup(task.file);
  } catch (err) {
    answer = { t: "error", message: (err as Error).message };
  }
  port.postMessage(answer);
});
port.postMessage({ t: "ready" } satisfies FromBackup);
