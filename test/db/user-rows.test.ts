/**
 * Per-user rows written in bulk (migration 002): the writer holds new orders' user_orders rows and
 * new trades' user_trades rows back and writes them together; readers combine the rows up to the
 * writer's marks with the tails of orders and trades above them. Real writer thread, real reader
 * pool, a real SQLite file.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { DbReader } from "../../src/db/reader.ts";
import { DbWriter } from "../../src/db/writer.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";
import { MIGRATIONS_DIR, migrate, readMigrations } from "../../src/protocol/db/migrate.ts";
import { tempDir } from "./helpers.ts";

const tmp = tempDir("user-rows");
after(tmp.cleanup);

/** An order of `user` as the exchange writes it on creation (all fields but the ids are constant). */
function order(w: DbWriter, id: number, user: number, used = 0): void {
  w.order(id, user, "btc_usdt", 0, 0, 100, 10, used, false, id, id);
}

function mark(db: Database.Database, key: string): number {
  return db.prepare<[string], number>("SELECT value FROM meta WHERE key = ?").pluck().get(key)!;
}

function stored(file: string): { through: number; rows: string[] } {
  const db = openDatabase(file, { readonly: true });
  try {
    const through = mark(db, "user_orders_through");
    const rows = db
      .prepare<[], { u: number; o: number }>("SELECT user_id AS u, order_id AS o FROM user_orders ORDER BY o")
      .all()
      .map((r) => `${r.u}:${r.o}`);
    return { through, rows };
  } finally {
    db.close();
  }
}

async function ids(reader: DbReader, user: number, page: number, size: number) {
  const p = await reader.userOrders(user, page, size);
  return { total: p.total, ids: p.items.map((o) => o.id) };
}

describe("per-user rows written in bulk", () => {
  it("finds every order through the tail, then through the rows, across flushes and a reopen", async () => {
    const file = tmp.dbPath;
    let settledBelow = 1;
    const w = await DbWriter.start(file, { userRowsFlushAt: 8 });
    w.settledOrderIds(() => settledBelow);
    const reader = DbReader.start(file, { before: () => w.applied() });
    try {
      // Batch 1: orders 1..5 (users 1, 2, 1, 2, 1), all settled: 5 held, fewer than 8, none written.
      for (let id = 1; id <= 5; id++) order(w, id, 2 - (id % 2));
      settledBelow = 6;
      await w.flush();
      await w.applied();
      assert.deepEqual(stored(file), { through: 0, rows: [] });
      assert.deepEqual(await ids(reader, 1, 1, 10), { total: 3, ids: [5, 3, 1] });

      // Batch 2: order 6 is still in a pair worker; 7..10 come back first. 9 held: all written,
      // and the mark moves only to 5, below the unsettled 6.
      for (let id = 7; id <= 10; id++) order(w, id, 2 - (id % 2));
      await w.flush();
      await w.applied();
      assert.deepEqual(stored(file), {
        through: 5,
        rows: ["1:1", "2:2", "1:3", "2:4", "1:5", "1:7", "2:8", "1:9", "2:10"],
      });
      assert.deepEqual(await ids(reader, 2, 1, 10), { total: 4, ids: [10, 8, 4, 2] });

      // Batch 3: order 6 ends, and order 3 is filled (a maker update below the mark). Order 6 is
      // only in the tail; 8 and 10 are in both, and are counted once.
      order(w, 6, 2);
      order(w, 3, 1, 10);
      settledBelow = 11;
      await w.flush();
      await w.applied();
      assert.equal(stored(file).through, 5);
      assert.deepEqual(await ids(reader, 2, 1, 2), { total: 5, ids: [10, 8] });
      assert.deepEqual(await ids(reader, 2, 2, 2), { total: 5, ids: [6, 4] });
      assert.deepEqual(await ids(reader, 2, 3, 2), { total: 5, ids: [2] });
      assert.deepEqual(await ids(reader, 1, 1, 10), { total: 5, ids: [9, 7, 5, 3, 1] });
      assert.equal((await reader.userOrders(1, 1, 10)).items.find((o) => o.id === 3)!.amountUsed, 10);
    } finally {
      await reader.close();
      // Closing writes what is held and moves the mark to the last settled id.
      await w.close();
    }
    assert.deepEqual(stored(file), {
      through: 10,
      rows: ["1:1", "2:2", "1:3", "2:4", "1:5", "2:6", "1:7", "2:8", "1:9", "2:10"],
    });
  });

  it("catches up at start with the orders a crash left above the mark", async () => {
    // As after a crash: orders 8..10 committed, their rows and the mark not.
    const db = new Database(tmp.dbPath);
    db.exec("DELETE FROM user_orders WHERE order_id > 7; UPDATE meta SET value = 7");
    db.close();
    const w = await DbWriter.start(tmp.dbPath, { userRowsFlushAt: 8 });
    await w.close();
    const after = stored(tmp.dbPath);
    assert.equal(after.through, 10);
    assert.equal(after.rows.length, 10);
  });

  it("catches a follower up only to the orders its leader said are settled", async () => {
    // A follower's database: orders 9 and 10 are stored, but its leader has said only the orders
    // up to 8 are settled (a lower id may still come in its next batches).
    const db = new Database(tmp.dbPath);
    db.exec(
      "DELETE FROM user_orders WHERE order_id > 7; UPDATE meta SET value = 7 WHERE key = 'user_orders_through'; " +
        "INSERT INTO meta (key, value) VALUES ('replication_settled_through', 8)",
    );
    db.close();
    const w = await DbWriter.start(tmp.dbPath, { userRowsFlushAt: 8 });
    await w.close();
    const after = stored(tmp.dbPath);
    assert.equal(after.through, 8);
    assert.equal(after.rows.length, 10, "the rows of the stored orders are written all the same");
  });

  it("migrates a database of the first schema: rows for every order, the mark at the last", () => {
    const file = path.join(tmp.dir, "v1.db");
    const first = path.join(tmp.dir, "only-001");
    fs.mkdirSync(first);
    fs.copyFileSync(path.join(MIGRATIONS_DIR, "001_init.sql"), path.join(first, "001_init.sql"));
    const db = new Database(file);
    migrate(db, first);
    assert.equal(db.pragma("user_version", { simple: true }), 1);
    const ins = db.prepare(
      `INSERT INTO orders (id, user_id, pair, side, type, price, amount, amount_used, is_cancelled,
         create_micro, update_micro) VALUES (?, ?, 'btc_usdt', 0, 0, 1, 1, 0, 0, 1, 1)`,
    );
    for (const [id, user] of [
      [4, 2],
      [9, 1],
      [12, 2],
    ])
      ins.run(id, user);
    db.prepare(
      `INSERT INTO trades (id, pair, price, amount, taker_order_id, maker_order_id, taker_user_id,
         maker_user_id, taker_side, taker_type, maker_type, time_micro)
       VALUES (7, 'btc_usdt', 1, 1, 9, 4, 1, 2, 0, 0, 0, 1)`,
    ).run();
    // 002, then every later migration.
    assert.deepEqual(
      migrate(db),
      readMigrations()
        .map((m) => m.version)
        .filter((v) => v >= 2),
    );
    assert.equal(mark(db, "user_trades_through"), 7);
    const indexes = db
      .prepare<[], string>("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'orders'")
      .pluck()
      .all();
    assert.equal(indexes.includes("orders_user"), false);
    db.close();
    assert.deepEqual(stored(file), { through: 12, rows: ["2:4", "1:9", "2:12"] });
  });

  it("keeps only the keys of user_trades from migration 008, and reads every row as before", () => {
    const file = path.join(tmp.dir, "v7.db");
    const upTo7 = path.join(tmp.dir, "up-to-007");
    fs.mkdirSync(upTo7);
    for (const m of readMigrations().filter((m) => m.version <= 7)) {
      fs.copyFileSync(path.join(MIGRATIONS_DIR, m.name), path.join(upTo7, m.name));
    }
    const db = new Database(file);
    migrate(db, upTo7);
    assert.equal(db.pragma("user_version", { simple: true }), 7);
    const trade = db.prepare(
      `INSERT INTO trades (id, pair, price, amount, taker_order_id, maker_order_id, taker_user_id,
         maker_user_id, taker_side, taker_type, maker_type, time_micro, taker_fee_rate, maker_fee_rate)
       VALUES (?, ?, ?, ?, 0, 0, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    // A taker selling at market into a limit buy, a limit taker buying from a limit seller, and
    // users on either side, with fee rates of their own.
    trade.run(1, "btc_usdt", 100, 5, 1, 2, 1, 1, 0, 11, 2000, 1000);
    trade.run(2, "eth_btc", 7, 3, 2, 3, 0, 0, 0, 12, 1500, 0);
    trade.run(3, "eth_usdt", 9, 1, 3, 1, 1, 0, 0, 13, 0, 500);
    // Version 7 stored each user's whole row, as the writer flushed it (trade_sides).
    db.exec(`INSERT INTO user_trades (user_id, trade_id, pair, side, type, price, amount, time_micro, fee_rate)
               SELECT user_id, trade_id, pair, side, type, price, amount, time_micro, fee_rate FROM trade_sides`);
    const everyRow = (table: string) =>
      db
        .prepare(
          `SELECT user_id, trade_id, pair, side, type, price, amount, time_micro, fee_rate FROM ${table}
             ORDER BY user_id, trade_id`,
        )
        .all();
    const before = everyRow("user_trades");
    assert.equal(before.length, 6);
    assert.deepEqual(
      migrate(db),
      readMigrations()
        .map((m) => m.version)
        .filter((v) => v >= 8),
    );
    assert.deepEqual(everyRow("user_trade_rows"), before);
    assert.deepEqual(
      db.prepare<[], string>("SELECT name FROM pragma_table_info('user_trades')").pluck().all(),
      ["user_id", "trade_id"],
    );
    db.close();
  });

  it("finds a user's trades from the user's side through the tail, then through the rows", async () => {
    const file = path.join(tmp.dir, "trades.db");
    const w = await DbWriter.start(file, { userRowsFlushAt: 4 });
    const reader = DbReader.start(file, { before: () => w.applied() });
    /** Trade `id`: `taker` sells at market into `maker`'s limit buy when `sell`, else buys at a limit. */
    const trade = (id: number, taker: number, maker: number, sell: boolean) =>
      w.trade(
        id,
        "eth_btc",
        100 + id,
        id,
        1000 + id,
        2000 + id,
        taker,
        maker,
        sell ? 1 : 0,
        sell ? 1 : 0,
        0,
        id,
      );
    const view = async (user: number, page: number, size: number) => {
      const p = await reader.userTrades(user, page, size);
      return { total: p.total, items: p.items.map((t) => `${t.id}:${t.side}${t.type}`) };
    };
    try {
      trade(1, 1, 2, true);
      trade(2, 1, 2, true);
      trade(3, 2, 3, false);
      await w.flush();
      await w.applied();
      const db = openDatabase(file, { readonly: true });
      assert.equal(db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM user_trades").get()!.n, 0);
      assert.equal(mark(db, "user_trades_through"), 0);
      // From the tail: user 1 sold at market (side 1, type 1); user 2 bought with a limit order as
      // the maker of 1 and 2 (0, 0) and as the taker of 3 (0, 0); user 3 sold as a limit maker (1, 0).
      assert.deepEqual(await view(1, 1, 10), { total: 2, items: ["2:11", "1:11"] });
      assert.deepEqual(await view(2, 1, 10), { total: 3, items: ["3:00", "2:00", "1:00"] });
      assert.deepEqual(await view(3, 1, 10), { total: 1, items: ["3:10"] });

      // Trades 4 and 5 bring 5 held: all written, the mark at 5. Trade 6 stays in the tail.
      trade(4, 3, 2, true);
      trade(5, 1, 3, false);
      await w.flush();
      await w.applied();
      trade(6, 2, 1, true);
      await w.flush();
      await w.applied();
      assert.equal(mark(db, "user_trades_through"), 5);
      assert.equal(db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM user_trades").get()!.n, 10);
      db.close();
      assert.deepEqual(await view(2, 1, 2), { total: 5, items: ["6:11", "4:00"] });
      assert.deepEqual(await view(2, 2, 2), { total: 5, items: ["3:00", "2:00"] });
      assert.deepEqual(await view(2, 3, 2), { total: 5, items: ["1:00"] });
      assert.deepEqual(await view(1, 1, 10), { total: 4, items: ["6:00", "5:00", "2:11", "1:11"] });
      const recent = await reader.recentForUser(3, 2);
      assert.deepEqual(
        recent.trades.map((t) => `${t.id}:${t.side}${t.type}`),
        ["5:10", "4:11"],
      );
    } finally {
      await reader.close();
      await w.close();
    }
    // Closing writes the held trade; a restart after a crash that lost rows and the mark catches up.
    let db = new Database(file);
    assert.equal(mark(db, "user_trades_through"), 6);
    const all = () =>
      db
        .prepare<[], { u: number; t: number; s: number; y: number }>(
          "SELECT user_id AS u, trade_id AS t, side AS s, type AS y FROM user_trade_rows ORDER BY t, u",
        )
        .all()
        .map((r) => `${r.u}:${r.t}:${r.s}${r.y}`);
    const before = all();
    assert.equal(before.length, 12);
    db.exec(
      "DELETE FROM user_trades WHERE trade_id > 3; UPDATE meta SET value = 3 WHERE key = 'user_trades_through'",
    );
    db.close();
    const again = await DbWriter.start(file);
    await again.close();
    db = new Database(file);
    assert.deepEqual(all(), before);
    assert.equal(mark(db, "user_trades_through"), 6);
    db.close();
  });
});
