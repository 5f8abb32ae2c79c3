/**
 * Schema migrations: `migrations/NNN_name.sql` files applied in number order. The number of the
 * last applied file is kept in `PRAGMA user_version`, so a database records its own schema level
 * without a bookkeeping table. Each file runs in its own transaction together with the
 * user_version bump: a crash leaves the database at the previous level, never half-migrated.
 */
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import type { Database } from "better-sqlite3";

export const MIGRATIONS_DIR = fileURLToPath(new URL("../../db/migrations/", import.meta.url));

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const FILE = /^(\d{3})_[A-Za-z0-9_-]+\.sql$/;

/** Reads the migration files of `dir`, checking that they number 1, 2, 3... without gaps. */
export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const files = fs
    .readdirSync(dir)
    .filter((f) => FILE.test(f))
    .sort();
  return files.map((name, i) => {
    const version = Number(FILE.exec(name)![1]);
    if (version !== i + 1) {
      throw new Error(`migrations in ${dir}: expected number ${i + 1} but found ${name}`);
    }
    return { version, name, sql: fs.readFileSync(`${dir}/${name}`, "utf8") };
  });
}

/**
 * Applies every migration newer than the database's user_version. Returns the versions applied
 * (empty when the database is current). A database newer than the code is refused: running old
 * code on it could misread columns it does not know.
 */
export function migrate(db: Database, dir: string = MIGRATIONS_DIR): number[] {
  const migrations = readMigrations(dir);
  const latest = migrations.length;
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > latest) {
    throw new Error(
      `database schema version ${current} is newer than this server knows (${latest}); refusing to open it`,
    );
  }
  const applied: number[] = [];
  for (const m of migrations) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      // PRAGMA takes no bound parameters; version is an integer parsed from the file name.
      db.pragma(`user_version = ${m.version}`);
    }).immediate();
    applied.push(m.version);
  }
  return applied;
}
