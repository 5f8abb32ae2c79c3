/** src/util/id-table.ts: the answers' table from request id to callback, checked against a Map. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { IdTable } from "../../src/util/id-table.ts";
import { mulberry32 } from "../support/prng.ts";

/** Random adds and removals, both kept in a Map too; every id is looked up after each step. */
function againstMap(ids: () => number, steps: number, seed: number): void {
  const rand = mulberry32(seed);
  const table = new IdTable<string>();
  const ref = new Map<number, string>();
  for (let s = 0; s < steps; s++) {
    const keys = [...ref.keys()];
    if (keys.length === 0 || rand() < 0.55) {
      const id = ids();
      if (ref.has(id)) continue;
      table.set(id, `v${id}`);
      ref.set(id, `v${id}`);
    } else {
      const id = keys[Math.floor(rand() * keys.length)];
      if (rand() < 0.5) assert.equal(table.take(id), ref.get(id));
      else assert.equal(table.delete(id), true);
      ref.delete(id);
      assert.equal(table.get(id), undefined);
      assert.equal(table.delete(id), false);
    }
    assert.equal(table.size, ref.size);
    for (const [id, v] of ref) assert.equal(table.get(id), v, `id ${id} at step ${s}`);
  }
}

function fillAndEmpty(table: IdTable<object>, n: number): WeakRef<object>[] {
  const refs: WeakRef<object>[] = [];
  for (let id = 1; id <= n; id++) {
    const value = { id };
    refs.push(new WeakRef(value));
    table.set(id, value);
  }
  for (let id = 1; id <= n; id++) table.take(id);
  return refs;
}

describe("IdTable", () => {
  test("holds what a Map holds for ids counting up, as request ids do", () => {
    let next = 1;
    againstMap(() => next++, 3000, 1);
  });

  test("holds what a Map holds for ids that share their low bits (long probe runs, wrap-around)", () => {
    const rand = mulberry32(7);
    // Multiples of 1024 all have the same home slot in any table of up to 1024 slots.
    againstMap(() => (1 + Math.floor(rand() * 200)) * 1024 + (rand() < 0.2 ? 1023 : 0), 3000, 2);
  });

  test("holds ids above 2^32 apart from those below with the same low bits", () => {
    const table = new IdTable<number>();
    table.set(5, 1);
    table.set(2 ** 32 + 5, 2);
    table.set(2 ** 40 + 5, 3);
    assert.equal(table.get(5), 1);
    assert.equal(table.take(2 ** 32 + 5), 2);
    assert.equal(table.get(2 ** 40 + 5), 3);
    assert.equal(table.get(2 ** 32 + 5), undefined);
  });

  test("keeps no reference to a value once its id is removed", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const table = new IdTable<object>();
    // Enough to grow the table a few times, then all removed again (in a function of its own: the
    // test's frame would hold on to the last value it made).
    let refs = fillAndEmpty(table, 500);
    assert.equal(table.size, 0);
    // WeakRef targets stay alive until the end of the current job.
    await new Promise((r) => setImmediate(r));
    gc();
    refs = refs.filter((r) => r.deref() !== undefined);
    assert.equal(refs.length, 0);
  });
});
