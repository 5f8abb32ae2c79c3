/**
 * Opening a connection with the settings every part of the server relies on: WAL (readers never
 * block the writer and see only committed transactions), the chosen durability level, and a busy
 * timeout for the short moments two connections touch the same lock (checkpoints, startup).
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { migrate } from "./migrate.ts";

export type Synchronous = "FULL" | "NORMAL";

/**
 * WAL pages after which a commit checkpoints (SQLite's default is 1,000). Each transaction writes
 * every page it dirtied to the WAL again, and the per-user indexes (orders by user, user trades,
 * balances) dirty scattered pages, so a small threshold copies the same hot pages into the
 * database file over and over. At 10,000 pages (about 40 MB of WAL), persisting an order costs
 * 13–16% less CPU (main and writer threads) with 20 or 60 orders per transaction, the p99 wait for a
 * commit is the same or lower, and the longest one (a commit that checkpoints) is 0.6–4.4 ms longer
 * (bench/db/wal-checkpoint.bench.ts).
 */
export const DEFAULT_WAL_AUTOCHECKPOINT_PAGES = 10_000;
/** A WAL file larger than this is truncated back to it when the log restarts after a checkpoint. */
const JOURNAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

export interface OpenOptions {
  /**
   * FULL (default): a commit returns after the WAL is fsynced; it survives power loss.
   * NORMAL: the WAL is fsynced only at checkpoints; a commit survives a crash of the process
   * (kill -9) but the last transactions may be lost on power loss.
   */
  synchronous?: Synchronous;
  /** Read-only connection (page reads): no migrations, no journal mode change. */
  readonly?: boolean;
  /** Milliseconds to wait on a locked database before failing (default 5000). */
  busyTimeoutMs?: number;
  /** Write connections: see DEFAULT_WAL_AUTOCHECKPOINT_PAGES (the default). */
  walAutocheckpointPages?: number;
  /**
   * Write connections: the DDL this file holds instead of the exchange's migrations (the journal
   * file, src/protocol/db/journal.ts); it must be idempotent (`IF NOT EXISTS`).
   */
  schema?: string;
}

/**
 * Creates `dir` and any missing parents, one level at a time. `fs.mkdirSync(dir, {recursive: true})`
 * loops forever (100% CPU) when a parent exists but refuses new entries with ENOENT, as `/proc`
 * does; here every failure throws with the folder it was about.
 */
export function makeFolder(dir: string): void {
  const missing: string[] = [];
  let at = path.resolve(dir);
  for (;;) {
    try {
      if (!fs.statSync(at).isDirectory()) throw new Error(`${at} is not a folder`);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    missing.push(at);
    const parent = path.dirname(at);
    if (parent === at) break;
    at = parent;
  }
  for (const folder of missing.reverse()) {
    try {
      fs.mkdirSync(folder);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
}

/** A connection (better-sqlite3 instance). */
export type Db = Database.Database;

export function openDatabase(file: string, opts: OpenOptions = {}): Db {
  const sync = opts.synchronous ?? "FULL";
  if (sync !== "FULL" && sync !== "NORMAL")
    throw new Error(`synchronous must be FULL or NORMAL, not ${sync}`);
  const readonly = opts.readonly === true;
  if (!readonly && file !== ":memory:") makeFolder(path.dirname(path.resolve(file)));
  const db = new Database(file, { readonly, fileMustExist: readonly });
  try {
    db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 5000}`);
    // Integrity between tables is kept by the application (one writer); FK checks would only cost.
    db.pragma("foreign_keys = OFF");
    // Sorts and statement journals (the writer's bulk INSERT ... SELECT of user rows, ORDER BY of
    // pages) stay in memory: on disk each is a temp file in /var/tmp opened, written with a
    // pwrite per page and deleted, syscalls the commit path pays for nothing.
    db.pragma("temp_store = MEMORY");
    if (!readonly) {
      const mode = db.pragma("journal_mode = WAL", { simple: true });
      if (mode !== "wal" && file !== ":memory:")
        throw new Error(`could not switch ${file} to WAL (got ${mode})`);
      db.pragma(`synchronous = ${sync}`);
      const pages = opts.walAutocheckpointPages ?? DEFAULT_WAL_AUTOCHECKPOINT_PAGES;
      if (!Number.isInteger(pages) || pages < 0) throw new Error(`bad WAL checkpoint threshold ${pages}`);
      db.pragma(`wal_autocheckpoint = ${pages}`);
      db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
      if (opts.schema === undefined) migrate(db);
      else db.exec(opts.schema);
    }
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
