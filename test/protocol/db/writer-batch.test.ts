import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { openDatabase } from "../../../src/protocol/db/db-open.ts";
import {
  compileRunner,
  EXECUTION,
  INT,
  JOURNAL_ONLY,
  KIND_COUNT,
  KINDS,
  ORDER,
  ORDER_UPDATE,
  STR,
  SYM,
  TRANSFER,
} from "../../../src/protocol/db/writer-batch.ts";
import { tempDir } from "../../db/helpers.ts";

const tmp = tempDir("writer-batch");
after(tmp.cleanup);

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
  pk: number;
}

describe("writer batch field tables", () => {
  it("number the kinds 0..KIND_COUNT-1 in application order", () => {
    assert.equal(KINDS.length, KIND_COUNT);
    for (const [i, k] of KINDS.entries()) assert.equal(k.id, i, k.table);
  });

  it("give each column one slot: stride, offsets and slot types agree with the table", () => {
    for (const k of KINDS) {
      assert.equal(k.stride, k.columns.length, k.table);
      assert.equal(k.slots.length, k.stride, k.table);
      assert.equal(new Set(k.columns).size, k.stride, `${k.table}: a column named twice`);
      for (const [i, c] of k.columns.entries())
        assert.equal((k.at as Record<string, number>)[c], i, `${k.table}.${c}`);
      for (const s of k.slots) assert.ok(s === INT || s === STR || s === SYM, `${k.table}: slot type ${s}`);
    }
  });

  it("name only real columns, with slot types that match the column types of a migrated database", () => {
    const db = openDatabase(tmp.dbPath);
    try {
      for (const k of KINDS) {
        const cols = new Map(
          (db.prepare(`PRAGMA table_info(${k.table})`).all() as ColumnInfo[]).map((c) => [c.name, c]),
        );
        // A journal-only kind (a follower's live streams) has no table: nothing ever writes one.
        if (JOURNAL_ONLY.includes(k)) {
          assert.equal(cols.size, 0, `journal-only ${k.table} is a table`);
          assert.equal((k.sql.match(/\?/g) ?? []).length, k.stride);
          continue;
        }
        assert.ok(cols.size > 0, `no table ${k.table}`);
        // An EXECUTION record is one number of a block (migration 012): batch-apply.ts joins them
        // into execution_blocks rows, and its statement writes a block of one; its slots are no
        // columns.
        if (k !== EXECUTION)
          k.columns.forEach((name, i) => {
            const col = cols.get(name);
            assert.ok(col !== undefined, `${k.table} has no column ${name}`);
            // INT slots hold integers; STR and SYM slots bind text (bigints are stored as text).
            assert.equal(col.type, k.slots[i] === INT ? "INTEGER" : "TEXT", `${k.table}.${name}`);
          });
        // Every statement is valid SQL against the schema, with one parameter per slot.
        const stmt = db.prepare(k.sql);
        const params = (k.sql.match(/\?/g) ?? []).length;
        assert.equal(params, k.stride, `${k.table}: ${params} parameters for ${k.stride} slots`);
        assert.ok(stmt !== null);
      }
    } finally {
      db.close();
    }
  });

  it("write a new order whole: ORDER names every column of orders", () => {
    const db = openDatabase(tmp.dbPath);
    try {
      const all = (db.prepare("PRAGMA table_info(orders)").all() as ColumnInfo[]).map((c) => c.name);
      assert.deepEqual([...ORDER.columns].sort(), [...all].sort());
      // An order's later records carry only what may change, and find the row by id.
      for (const c of ORDER_UPDATE.columns) assert.ok(all.includes(c), c);
      assert.ok(ORDER_UPDATE.columns.includes("id"));
      assert.match(ORDER_UPDATE.sql, /^UPDATE orders SET .* WHERE id = \?$/);
    } finally {
      db.close();
    }
  });

  it("bind each slot by its type: INT as is, SYM as its name, STR as its string or NULL for -1", () => {
    const db = openDatabase(`${tmp.dir}/bind.db`);
    try {
      const run = compileRunner(TRANSFER);
      const b = new Float64Array(2 * TRANSFER.stride);
      const a = TRANSFER.at;
      b[a.user_id] = 7;
      b[a.currency] = 1;
      b[a.amount] = 0;
      b[a.kind] = 2;
      b[a.time_micro] = 123;
      const o = TRANSFER.stride;
      b[o + a.user_id] = 8;
      b[o + a.currency] = 0;
      b[o + a.amount] = 1;
      b[o + a.kind] = 3;
      b[o + a.time_micro] = 2 ** 52 + 1;
      const st = db.prepare(TRANSFER.sql);
      const strs = ["123456789012345678901234567890", "-5"];
      const syms = ["btc", "usdt", "deposit", "withdraw"];
      run(st, b, 0, strs, syms);
      run(st, b, o, strs, syms);
      assert.deepEqual(
        db.prepare("SELECT user_id, currency, amount, kind, time_micro FROM transfers").all(),
        [
          {
            user_id: 7,
            currency: "usdt",
            amount: "123456789012345678901234567890",
            kind: "deposit",
            time_micro: 123,
          },
          { user_id: 8, currency: "btc", amount: "-5", kind: "withdraw", time_micro: 2 ** 52 + 1 },
        ],
      );
      // A STR slot holding -1 binds NULL (an order without a client order id).
      const ob = new Float64Array(ORDER.stride);
      ob[ORDER.at.id] = 1;
      ob[ORDER.at.client_order_id] = -1;
      ob[ORDER.at.executed_quote] = 0;
      compileRunner(ORDER)(db.prepare(ORDER.sql), ob, 0, ["0"], ["btc_usdt"]);
      assert.deepEqual(db.prepare("SELECT id, pair, client_order_id FROM orders").all(), [
        { id: 1, pair: "btc_usdt", client_order_id: null },
      ]);
    } finally {
      db.close();
    }
  });
});
