/**
 * Execution numbers kept as blocks (migration 012): the apply thread writes, per user and per bulk
 * apply, one block of the numbers it applied; the reader finds the block holding a number on the
 * key and reads on. Real writer and apply threads, a real reader pool, real SQLite files.
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
import { EXEC_ORDER, EXEC_TRADE } from "../../src/protocol/db/rows.ts";
import { tempDir } from "./helpers.ts";

const tmp = tempDir("execution-blocks");
after(tmp.cleanup);

const USERS = [1, 2, 3];

/** Order `id` of `user`, created with number `execSeq`, and that number. */
function created(w: DbWriter, id: number, user: number, execSeq: number): void {
  w.order(id, user, "btc_usdt", 0, 0, 100, 10, 0, false, id, id, 0, undefined, execSeq);
  w.execution(user, execSeq, EXEC_ORDER, id);
}

/** Every block, as `user:first-last:refs`. */
function blocks(file: string): string[] {
  const db = openDatabase(file, { readonly: true });
  try {
    return db
      .prepare<[], [number, number, number, string]>(
        "SELECT user_id, first_seq, last_seq, refs FROM execution_blocks ORDER BY user_id, first_seq",
      )
      .raw()
      .all()
      .map(([u, first, last, refs]) => `${u}:${first}-${last}:${refs}`);
  } finally {
    db.close();
  }
}

async function numbers(reader: DbReader, user: number, after: number, limit: number, upTo = 1e9) {
  return (await reader.executions(user, after, upTo, limit)).map((e) => e.execSeq);
}

describe("execution numbers kept as blocks", () => {
  it("writes a block per user per bulk apply and reads every page across their seams", async () => {
    // Each flush is applied on its own (applyAfterBatches 1): one block per user per flush.
    const w = await DbWriter.start(tmp.dbPath, { applyAfterBatches: 1 });
    const reader = DbReader.start(tmp.dbPath, { before: () => w.applied() });
    const last = new Map<number, number>(USERS.map((u) => [u, 0]));
    let id = 0;
    /** One batch of `n` orders, round robin over the users. */
    const batch = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const user = USERS[id % USERS.length];
        const seq = last.get(user)! + 1;
        last.set(user, seq);
        created(w, ++id, user, seq);
      }
      await w.flush();
      await w.applied();
    };
    try {
      await batch(5);
      await batch(4);
      await batch(3);
      assert.deepEqual(blocks(tmp.dbPath), [
        "1:1-2:1,4",
        "1:3-3:7",
        "1:4-4:10",
        "2:1-2:2,5",
        "2:3-3:8",
        "2:4-4:11",
        "3:1-1:3",
        "3:2-3:6,9",
        "3:4-4:12",
      ]);
      for (const u of USERS) {
        const all = Array.from({ length: last.get(u)! }, (_, i) => i + 1);
        assert.deepEqual(await numbers(reader, u, 0, 100), all, `user ${u}`);
        // Every start and page size: the same numbers, none twice, none skipped at a seam.
        for (let after = 0; after <= all.length; after++) {
          for (const limit of [1, 2, 3]) {
            assert.deepEqual(
              await numbers(reader, u, after, limit),
              all.slice(after, after + limit),
              `user ${u} after ${after} limit ${limit}`,
            );
          }
        }
      }
      // An upper bound inside a block, and one at or below the start.
      assert.deepEqual(await numbers(reader, 2, 1, 100, 3), [2, 3]);
      assert.deepEqual(await numbers(reader, 2, 3, 100, 3), []);
      assert.deepEqual(await numbers(reader, 4, 0, 100), []);
    } finally {
      await reader.close();
      await w.close();
    }
  });

  it("tells trades from order changes, and skips an order's earlier changes", async () => {
    const file = path.join(tmp.dir, "trades.db");
    const w = await DbWriter.start(file);
    const reader = DbReader.start(file, { before: () => w.applied() });
    try {
      // User 1's order 1 rests (1); user 2's order 2 takes it: trade 1 is 1 for user 2 and 2 for
      // user 1, then order 2 is 2 for user 2, order 1 (filled) 3 for user 1.
      w.order(1, 1, "btc_usdt", 1, 0, 100, 10, 0, false, 1, 1, 0, undefined, 1);
      w.execution(1, 1, EXEC_ORDER, 1);
      w.trade(1, "btc_usdt", 100, 10, 2, 1, 2, 1, 0, 0, 0, 5, 0, 0, 1, 2);
      w.execution(2, 1, EXEC_TRADE, 1);
      w.execution(1, 2, EXEC_TRADE, 1);
      w.order(2, 2, "btc_usdt", 0, 0, 100, 10, 10, false, 2, 2, 0, undefined, 2);
      w.execution(2, 2, EXEC_ORDER, 2);
      w.order(1, 1, "btc_usdt", 1, 0, 100, 10, 10, false, 1, 2, 0, undefined, 3);
      w.execution(1, 3, EXEC_ORDER, 1);
      await w.flush();
      await w.applied();
      assert.deepEqual(blocks(file), ["1:1-3:1,-1,1", "2:1-2:-1,2"]);
      const one = await reader.executions(1, 0, 100, 100);
      // Order 1's creation (1) is an earlier change: only its latest (3) is read.
      assert.deepEqual(
        one.map((e) => [e.execSeq, e.event]),
        [
          [2, "trade"],
          [3, "order"],
        ],
      );
      const two = await reader.executions(2, 0, 100, 100);
      assert.deepEqual(
        two.map((e) => [e.execSeq, e.event]),
        [
          [1, "trade"],
          [2, "order"],
        ],
      );
    } finally {
      await reader.close();
      await w.close();
    }
  });

  it("migrates the rows of migration 011 into blocks of one number", () => {
    const file = path.join(tmp.dir, "v11.db");
    const through11 = path.join(tmp.dir, "through-011");
    fs.mkdirSync(through11);
    for (const m of readMigrations().filter((m) => m.version <= 11)) {
      fs.copyFileSync(path.join(MIGRATIONS_DIR, m.name), path.join(through11, m.name));
    }
    const db = new Database(file);
    try {
      migrate(db, through11);
      db.prepare("INSERT INTO executions VALUES (1, 1, 0, 7), (1, 2, 1, 3), (2, 1, 1, 3)").run();
      migrate(db);
      assert.deepEqual(
        db
          .prepare("SELECT user_id, first_seq, last_seq, refs FROM execution_blocks ORDER BY 1, 2")
          .raw()
          .all(),
        [
          [1, 1, 1, "7"],
          [1, 2, 2, "-3"],
          [2, 1, 1, "-3"],
        ],
      );
      assert.equal(
        db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name = 'executions'").pluck().get(),
        0,
      );
    } finally {
      db.close();
    }
  });
});
