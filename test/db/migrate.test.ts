import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { DEFAULT_WAL_AUTOCHECKPOINT_PAGES, openDatabase } from "../../src/protocol/db/db-open.ts";
import { MIGRATIONS_DIR, migrate, readMigrations } from "../../src/protocol/db/migrate.ts";
import { tempDir } from "./helpers.ts";

const tmp = tempDir("migrate");
after(tmp.cleanup);

function tables(db: Database.Database): string[] {
  return db
    .prepare<[], { name: string }>("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
    .all()
    .map((r) => r.name);
}

describe("migrations", () => {
  it("creates the folder, the schema and sets user_version on a new database", () => {
    const db = openDatabase(tmp.dbPath);
    assert.equal(db.pragma("user_version", { simple: true }), readMigrations().length);
    assert.equal(db.pragma("journal_mode", { simple: true }), "wal");
    assert.equal(db.pragma("synchronous", { simple: true }), 2); // FULL
    assert.equal(db.pragma("wal_autocheckpoint", { simple: true }), DEFAULT_WAL_AUTOCHECKPOINT_PAGES);
    assert.equal(db.pragma("journal_size_limit", { simple: true }), 64 * 1024 * 1024);
    assert.equal(db.pragma("temp_store", { simple: true }), 2); // MEMORY: no temp files per sort or statement journal
    assert.deepEqual(tables(db), [
      "api_keys",
      "balances",
      "candles",
      "currencies",
      "execution_blocks",
      "journal",
      "journal_syms",
      "meta",
      "mmp_settings",
      "nonces",
      "orders",
      "pairs",
      "trades",
      "transfers",
      "user_orders",
      "user_trades",
      "users",
    ]);
    db.close();
  });

  it("is idempotent: reopening and migrating again applies nothing", () => {
    const db = openDatabase(tmp.dbPath, { synchronous: "NORMAL", walAutocheckpointPages: 1000 });
    assert.equal(db.pragma("synchronous", { simple: true }), 1); // NORMAL
    assert.equal(db.pragma("wal_autocheckpoint", { simple: true }), 1000);
    assert.deepEqual(migrate(db), []);
    assert.deepEqual(migrate(db), []);
    db.close();
  });

  it("applies only the migrations newer than user_version, each with its version", () => {
    const dir = path.join(tmp.dir, "migrations");
    fs.mkdirSync(dir);
    fs.copyFileSync(path.join(MIGRATIONS_DIR, "001_init.sql"), path.join(dir, "001_init.sql"));
    fs.writeFileSync(path.join(dir, "002_extra.sql"), "CREATE TABLE extra (x INTEGER) STRICT;");
    const db = new Database(path.join(tmp.dir, "m.db"));
    assert.deepEqual(migrate(db, dir), [1, 2]);
    assert.deepEqual(migrate(db, dir), []);
    assert.equal(db.pragma("user_version", { simple: true }), 2);
    fs.writeFileSync(path.join(dir, "003_bad.sql"), "CREATE TABLE extra (x INTEGER);");
    assert.throws(() => migrate(db, dir), /already exists/);
    assert.equal(db.pragma("user_version", { simple: true }), 2, "a failed migration leaves the level");
    db.close();
  });

  it("refuses a database newer than the code and a gap in the numbering", () => {
    const db = new Database(path.join(tmp.dir, "new.db"));
    db.pragma("user_version = 99");
    assert.throws(() => migrate(db), /newer than this server knows/);
    db.close();
    const dir = path.join(tmp.dir, "gap");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "001_a.sql"), "");
    fs.writeFileSync(path.join(dir, "003_c.sql"), "");
    assert.throws(() => readMigrations(dir), /expected number 2/);
  });

  it("opens read-only connections without migrating and refuses a missing file", () => {
    const ro = openDatabase(tmp.dbPath, { readonly: true });
    assert.equal(ro.readonly, true);
    ro.close();
    assert.throws(() => openDatabase(path.join(tmp.dir, "absent.db"), { readonly: true }));
  });
});
