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

  it("013 gives every stored order the exact sum of price × amount over its trades, past 2^63 too", () => {
    // A database at 012, as a server before this migration left it.
    const dir = path.join(tmp.dir, "before-013");
    fs.mkdirSync(dir);
    for (const m of readMigrations()) if (m.version < 13) fs.writeFileSync(path.join(dir, m.name), m.sql);
    const db = new Database(path.join(tmp.dir, "backfill.db"));
    assert.deepEqual(migrate(db, dir).at(-1), 12);
    const order = db.prepare(
      `INSERT INTO orders (id, user_id, pair, side, type, price, amount, amount_used, is_cancelled,
         create_micro, update_micro) VALUES (?, 1, 'btc_usdt', ?, 0, ?, ?, ?, 0, 1, 1)`,
    );
    const trade = db.prepare(
      `INSERT INTO trades (id, pair, price, amount, taker_order_id, maker_order_id, taker_user_id,
         maker_user_id, taker_side, taker_type, maker_type, time_micro)
       VALUES (?, 'btc_usdt', ?, ?, ?, ?, 1, 2, 0, 0, 0, 1)`,
    );
    // 1: a buy filled as taker at three prices; 2, 3, 4: the makers; 5: never filled;
    // 6 and 7: the largest ticks and lots a config allows (below 10^15 each), twice.
    const fills: [number, number, number, number][] = [
      [1, 2500001, 100_000, 2], // 25,000.01 × 0.1
      [1, 2500000, 150_000, 3], // 25,000.00 × 0.15
      [1, 2499999, 3, 4],
      [6, 999_999_999_999_999, 999_999_999_999_999, 7],
      [6, 999_999_999_999_998, 1, 7],
    ];
    const ids = [1, 2, 3, 4, 5, 6, 7];
    for (const id of ids) order.run(id, id === 1 || id === 6 ? 0 : 1, 2500000, 10_000_000, 0);
    for (const [i, [taker, price, amount, maker]] of fills.entries())
      trade.run(i + 1, price, amount, taker, maker);
    // 013, then every later migration.
    assert.equal(migrate(db)[0], 13);
    const expected = new Map<number, bigint>(ids.map((id) => [id, 0n]));
    for (const [taker, price, amount, maker] of fills) {
      const value = BigInt(price) * BigInt(amount);
      expected.set(taker, expected.get(taker)! + value);
      expected.set(maker, expected.get(maker)! + value);
    }
    const stored = db
      .prepare<[], { id: number; executed_quote: string }>(
        "SELECT id, executed_quote FROM orders ORDER BY id",
      )
      .all();
    assert.deepEqual(
      stored,
      ids.map((id) => ({ id, executed_quote: expected.get(id)!.toString() })),
    );
    assert.equal(stored[0].executed_quote, "625007599997");
    assert.ok(expected.get(6)! > 2n ** 63n);
    db.close();
  });
});
