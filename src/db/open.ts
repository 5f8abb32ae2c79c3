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
}

/** A connection (better-sqlite3 instance). */
export type Db = Database.Database;

export function openDatabase(file: string, opts: OpenOptions = {}): Db {
  const sync = opts.synchronous ?? "FULL";
  if (sync !== "FULL" && sync !== "NORMAL")
    throw new Error(`synchronous must be FULL or NORMAL, not ${sync}`);
  const readonly = opts.readonly === true;
  if (!readonly && file !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const db = new Database(file, { readonly, fileMustExist: readonly });
  try {
    db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 5000}`);
    // Integrity between tables is kept by the application (one writer); FK checks would only cost.
    db.pragma("foreign_keys = OFF");
    if (!readonly) {
      const mode = db.pragma("journal_mode = WAL", { simple: true });
      if (mode !== "wal" && file !== ":memory:")
        throw new Error(`could not switch ${file} to WAL (got ${mode})`);
      db.pragma(`synchronous = ${sync}`);
      migrate(db);
    }
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
