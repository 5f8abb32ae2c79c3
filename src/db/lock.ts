/**
 * One server per database. Two servers on one file both acknowledge orders, and the journal each
 * applies was written by the other, so acknowledged orders are lost. The first thing a server does
 * with its database is take this lock, and it holds it for the life of the process.
 *
 * The lock is a small SQLite file beside the database (`<db>.lock`) opened in exclusive locking
 * mode and written once: SQLite then keeps its exclusive (POSIX fcntl) lock on that file until the
 * connection closes, and the kernel drops it when the process ends in any way, kill -9 included,
 * so a stale lock never needs cleaning up. The database and its journal keep their own WAL locking
 * untouched: the writer, apply, checkpoint and reader threads open them as before. SQLite shares
 * one lock table per process, so a second exchange in the same process is refused as well.
 */
import path from "node:path";
import Database from "better-sqlite3";
import { ConfigError } from "../config/config-error.ts";
import { makeFolder } from "../protocol/db/db-open.ts";

export interface DbLock {
  readonly file: string;
  /** Drops the lock (after the last write of a graceful stop). */
  release(): void;
}

/**
 * Takes the lock of database `dbPath`, creating its folder if missing. Throws a ConfigError when
 * another live server holds it or when the folder or the lock file cannot be made.
 */
export function lockDatabase(dbPath: string): DbLock {
  const file = `${dbPath}.lock`;
  try {
    makeFolder(path.dirname(path.resolve(dbPath)));
  } catch (err) {
    throw new ConfigError(`database ${dbPath}: cannot create its folder: ${(err as Error).message}`);
  }
  let db: Database.Database;
  try {
    // timeout 0: a held lock answers SQLITE_BUSY at once instead of after better-sqlite3's 5 s.
    db = new Database(file, { timeout: 0 });
  } catch (err) {
    throw new ConfigError(`database ${dbPath}: cannot open ${file}: ${(err as Error).message}`);
  }
  try {
    db.pragma("locking_mode = EXCLUSIVE");
    // The file's content does not matter, only its lock: no fsync on each start, no journal file.
    db.pragma("synchronous = OFF");
    db.pragma("journal_mode = MEMORY");
    db.exec(
      "BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL); DELETE FROM holder; " +
        `INSERT INTO holder (pid) VALUES (${process.pid}); COMMIT`,
    );
  } catch (err) {
    db.close();
    const code = (err as { code?: string }).code ?? "";
    if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
      throw new ConfigError(`database ${dbPath} is in use by another running server (${file} is locked)`);
    throw new ConfigError(`database ${dbPath}: cannot lock ${file}: ${(err as Error).message}`);
  }
  let held = true;
  return {
    file,
    release() {
      if (!held) return;
      held = false;
      db.close();
    },
  };
}
