import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { IdIndex } from "../../workers/matching/id-index.ts";

describe("IdIndex", () => {
  it("behaves like a Map under random sets, gets and deletes", () => {
    const key = fc.oneof(
      fc.integer({ min: 1, max: 64 }),
      fc.integer({ min: 1, max: 2 ** 31 }),
      fc.integer({ min: 2 ** 32, max: Number.MAX_SAFE_INTEGER }),
    );
    const op = fc.tuple(
      fc.constantFrom("set", "delete", "get"),
      key,
      fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
        const index = new IdIndex(4);
        const model = new Map<number, number>();
        for (const [kind, k, v] of ops) {
          if (kind === "set") {
            index.set(k, v);
            model.set(k, v);
          } else if (kind === "delete") {
            assert.equal(index.delete(k), model.get(k) ?? -1);
            model.delete(k);
          } else {
            assert.equal(index.get(k), model.get(k) ?? -1);
          }
          assert.equal(index.size, model.size);
        }
        for (const [k, v] of model) assert.equal(index.get(k), v);
      }),
      { numRuns: 300 },
    );
  });

  it("keeps every key reachable after heavy churn of sequential ids", () => {
    const index = new IdIndex(16);
    const live = new Set<number>();
    let next = 1;
    for (let round = 0; round < 20_000; round++) {
      index.set(next, next % 1000);
      live.add(next);
      next++;
      // Delete an older id about half the time, as cancels and fills do.
      if (round % 2 === 0) {
        const victim = next - 1 - (round % 97);
        if (live.delete(victim)) assert.equal(index.delete(victim), victim % 1000);
      }
    }
    assert.equal(index.size, live.size);
    for (const id of live) assert.equal(index.get(id), id % 1000);
    assert.equal(index.get(next), -1);
  });
});
