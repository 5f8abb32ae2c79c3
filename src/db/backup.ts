/**
 * Online backup (CONTRACT 14 "Backup while running"): `POST /admin/backup` and `exchange backup`.
 *
 * A backup is one task of the reader pool (src/db/reader.ts `backup`): it waits, like every read,
 * until the apply thread has written the rows of every batch acknowledged before the call
 * (`DbWriter.applied`), then `VACUUM INTO` copies one snapshot of the exchange file on that
 * thread's own read-only connection. Neither the main thread nor the writer and apply threads do
 * the copy, so orders keep being answered meanwhile (bench/db/backup.bench.ts). The copy needs no
 * journal: it is the state of the tables at an applied mark at or past the call's, which a server
 * started with `--db` on it reads like any database it closed itself (held-back user rows are
 * caught up at its start).
 */
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import type { DbReader } from "./reader.ts";

/** The answer of `POST /admin/backup`. */
export interface BackupResult {
  /** The copy's name inside the backup folder. */
  file: string;
  bytes: number;
  /** The highest order (trade) id in the copy; 0 when it has none. */
  lastOrderId: number;
  lastTradeId: number;
}

export class Backups {
  /** The backup folder, absolute. */
  readonly dir: string;
  /** Backups run one after the other: a second call waits for the first. */
  private last: Promise<unknown> = Promise.resolve();

  constructor(
    dir: string,
    private readonly reader: Pick<DbReader, "backup">,
  ) {
    this.dir = path.resolve(dir);
  }

  /** Takes a backup; resolves once the copy is whole and on disk. */
  take(): Promise<BackupResult> {
    const run = this.last.then(
      () => this.copy(),
      () => this.copy(),
    );
    this.last = run.catch(() => undefined);
    return run;
  }

  private async copy(): Promise<BackupResult> {
    mkdirSync(this.dir, { recursive: true });
    const file = this.nextName();
    const made = await this.reader.backup(path.join(this.dir, file));
    return { file, ...made };
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
