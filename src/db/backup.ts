/**
 * Online backup (docs/API.md 11, docs/OPERATIONS.md "Backup and restore"): `POST /admin/backup` and `exchange backup`.
 *
 * A backup first waits, like every read, until the apply thread has written the rows of every
 * batch acknowledged before the call (`DbWriter.applied`); then the backup thread
 * (workers/db/backup-worker.ts, started at the first backup and idle between backups) copies one snapshot
 * of the exchange file with `VACUUM INTO` from a read-only connection of its own, at a lower
 * scheduling priority. Neither the main thread nor the writer and apply threads do the copy, so
 * orders keep being answered meanwhile (bench/db/backup.bench.ts). The copy needs no journal: it
 * is the state of the tables at an applied mark at or past the call's, which a server started
 * with `--db` on it reads like any database it closed itself (held-back user rows are caught up
 * at its start).
 */
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import type { Worker } from "node:worker_threads";
import type { BackupCopy, BackupTask, BackupWorkerData, FromBackup } from "../protocol/db/backup-tasks.ts";
import { startWorker } from "../util/threads.ts";

// Under tsx the sources run as .ts; a compiled build would carry .js files side by side.
const EXT = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
const WORKER_URL = new URL(`../../workers/db/backup-worker${EXT}`, import.meta.url);

/** The answer of `POST /admin/backup`. */
export interface BackupResult extends BackupCopy {
  /**
   * The backup folder, absolute: where to find the copy, whatever the server's working folder
   * (docs/API.md section 11).
   */
  dir: string;
  /** The copy's name inside the backup folder. */
  file: string;
}

export class Backups {
  /** The backup folder, absolute. */
  readonly dir: string;
  private readonly dbFile: string;
  /** Backups run one after the other: a second call waits for the first. */
  private last: Promise<unknown> = Promise.resolve();
  /** The backup thread, started at the first backup (a thread's start costs about 0.8 s of CPU). */
  private worker: Promise<Worker> | null = null;
  /** Settles with the thread's next answer. */
  private pending: { resolve: (m: FromBackup) => void; reject: (err: Error) => void } | null = null;
  private closed = false;

  /**
   * `dbFile`: the exchange file; `dir`: the backup folder (made at the first backup); `applied`:
   * resolves once the rows of every batch acknowledged before the call are in their tables
   * (`DbWriter.applied`).
   */
  constructor(
    dbFile: string,
    dir: string,
    private readonly applied: () => Promise<void>,
  ) {
    this.dbFile = path.resolve(dbFile);
    this.dir = path.resolve(dir);
  }

  /** Starts the thread and resolves once it runs; a thread that fails or ends is started again next time. */
  private thread(): Promise<Worker> {
    this.worker ??= new Promise<Worker>((resolve, reject) => {
      const data: BackupWorkerData = { entry: WORKER_URL.href, path: this.dbFile };
      const worker = startWorker(WORKER_URL, { workerData: data });
      const fail = (err: Error) => {
        this.worker = null;
        reject(err);
        this.pending?.reject(err);
        this.pending = null;
      };
      worker.on("message", (m: FromBackup) => {
        if (m.t === "ready") return resolve(worker);
        const p = this.pending;
        this.pending = null;
        p?.resolve(m);
      });
      worker.on("error", fail);
      worker.on("exit", (code) => fail(new Error(`backup thread exited (code ${code})`)));
    });
    return this.worker;
  }

  /** Takes a backup; resolves once the copy is whole and on disk. */
  take(): Promise<BackupResult> {
    // Asked now, so that it covers what was acknowledged before this call even if it waits.
    const applied = this.applied();
    const run = this.last.then(
      () => this.copy(applied),
      () => this.copy(applied),
    );
    this.last = run.catch(() => undefined);
    return run;
  }

  /** Ends the thread, if started (a backup under way is abandoned; its `.partial` file stays). */
  async close(): Promise<void> {
    this.closed = true;
    const worker = await this.worker?.catch(() => null);
    await worker?.terminate();
  }

  private async copy(applied: Promise<void>): Promise<BackupResult> {
    await applied;
    if (this.closed) throw new Error("the server is stopping");
    mkdirSync(this.dir, { recursive: true });
    const worker = await this.thread();
    const file = this.nextName();
    const answer = await new Promise<FromBackup>((resolve, reject) => {
      this.pending = { resolve, reject };
      worker.postMessage({ file: path.join(this.dir, file) } satisfies BackupTask);
    });
    if (answer.t === "error") throw new Error(answer.message);
    if (answer.t !== "done") throw new Error(`backup thread answered ${answer.t}`);
    const { t: _t, ...made } = answer;
    return { dir: this.dir, file, ...made };
  }

  /**
   * `exchange-<UTC time to the millisecond>.db` (e.g. `exchange-20261126T224501-123Z.db`, so names
   * sort by time), with `-2`, `-3`... if a file of that name is already there: never overwritten.
   */
  private nextName(): string {
    const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(".", "-");
    let name = `exchange-${stamp}.db`;
    for (let n = 2; existsSync(path.join(this.dir, name)); n++) name = `exchange-${stamp}-${n}.db`;
    return name;
  }
}
