/**
 * Execution numbers written in bulk (migration 012): the apply thread appends each number to
 * `executions_tail` and moves the tail into `executions`, sorted by user, once it holds the
 * user-rows flush size, at close and at start; the reader takes a user's numbers from both. Real
 * writer and apply threads, a real reader pool, a real SQLite file.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { DbReader } from "../../src/db/reader.ts";
import { DbWriter } from "../../src/db/writer.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";
import { EXEC_ORDER } from "../../src/protocol/db/rows.ts";
import { tempDir } from "./helpers.ts";

const tmp = tempDir("executions-tail");
after(tmp.cleanup);

const USERS = [1, 2, 3];

/** Order `id` of `user`, created with number `execSeq`, and that number. */
function created(w: DbWriter, id: number, user: number, execSeq: number): void {
  w.order(id, user, "btc_usdt", 0, 0, 100, 10, 0, false, id, id, 0, undefined, execSeq);
  w.execution(user, execSeq, EXEC_ORDER, id);
}

/** How many numbers each table holds. */
function counts(file: string): { flushed: number; tail: number } {
  const db = openDatabase(file, { readonly: true });
  try {
    const n = (table: string) => db.prepare<[], number>(`SELECT COUNT(*) FROM ${table}`).pluck().get()!;
    return { flushed: n("executions"), tail: n("executions_tail") };
  } finally {
    db.close();
  }
}

async function numbers(reader: DbReader, user: number, after: number, limit: number): Promise<number[]> {
  return (await reader.executions(user, after, Number.MAX_SAFE_INTEGER, limit)).map((e) => e.execSeq);
}

describe("execution numbers written in bulk", () => {
  it("reads each user's numbers across the table and the tail, in order, at any page's seam", async () => {
    const w = await DbWriter.start(tmp.dbPath, { userRowsFlushAt: 8 });
    w.settledOrderIds(() => Number.MAX_SAFE_INTEGER);
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
      // 5 numbers: fewer than 8, all in the tail.
      await batch(5);
      assert.deepEqual(counts(tmp.dbPath), { flushed: 0, tail: 5 });
      assert.deepEqual(await numbers(reader, 1, 0, 100), [1, 2]);
      // 5 more: 10 held, moved in the batch's transaction.
      await batch(5);
      assert.deepEqual(counts(tmp.dbPath), { flushed: 10, tail: 0 });
      // 3 more: users' first numbers in the table, their latest in the tail.
      await batch(3);
      assert.deepEqual(counts(tmp.dbPath), { flushed: 10, tail: 3 });
      for (const u of USERS) {
        const all = Array.from({ length: last.get(u)! }, (_, i) => i + 1);
        assert.deepEqual(await numbers(reader, u, 0, 100), all, `user ${u}`);
        // Every page size and start: the same numbers, none twice, none skipped at the seam.
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
      // An upper bound inside the tail.
      assert.deepEqual(
        (await reader.executions(1, 2, 4, 100)).map((e) => e.execSeq),
        [3, 4],
      );
    } finally {
      await reader.close();
      await w.close();
    }
    // Closing moves the tail.
    assert.deepEqual(counts(tmp.dbPath), { flushed: 13, tail: 0 });
  });

  it("moves a tail a crash left at start, and reads the same numbers", async () => {
    // As after a crash: numbers 14 and 15 of user 1 committed in the tail, not yet moved.
    const db = new Database(tmp.dbPath);
    db.prepare("INSERT INTO executions_tail VALUES (1, 6, 0, 14), (1, 7, 0, 15)").run();
    db.close();
    const w = await DbWriter.start(tmp.dbPath, { userRowsFlushAt: 8 });
    try {
      assert.deepEqual(counts(tmp.dbPath), { flushed: 15, tail: 0 });
      const file = openDatabase(tmp.dbPath, { readonly: true });
      try {
        assert.deepEqual(
          file.prepare("SELECT exec_seq FROM executions WHERE user_id = 1 ORDER BY exec_seq").pluck().all(),
          [1, 2, 3, 4, 5, 6, 7],
        );
      } finally {
        file.close();
      }
    } finally {
      await w.close();
    }
  });
});
