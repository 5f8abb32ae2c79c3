import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { openDatabase } from "../../src/db/open.ts";
import { INT, KIND_COUNT, KINDS, ORDER, ORDER_UPDATE, STR, SYM } from "../../src/protocol/writer-batch.ts";
import { tempDir } from "../db/helpers.ts";

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
        assert.ok(cols.size > 0, `no table ${k.table}`);
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
});
