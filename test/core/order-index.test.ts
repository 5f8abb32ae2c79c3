/** The core's open orders by id (src/core/order-index.ts) against a Map, over any mix of operations. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { OrderIndex } from "../../src/core/order-index.ts";

type Op = { kind: "set" | "delete" | "get"; id: number };

describe("OrderIndex", () => {
  it("answers get, has, delete, size and values as a Map does", () => {
    // Ids near each other (same page), far apart (other pages), around page edges, and a few
    // ids only (pages that empty and fill again).
    const id = fc.oneof(
      fc.integer({ min: 1, max: 10_000 }),
      fc.integer({ min: 4090, max: 4100 }),
      fc.integer({ min: 1, max: 2 ** 40 }),
      fc.constantFrom(1, 2, 4097),
    );
    const op = fc.record({ kind: fc.constantFrom<Op["kind"]>("set", "delete", "get"), id });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), (ops: Op[]) => {
        const index = new OrderIndex<{ id: number; n: number }>();
        const model = new Map<number, { id: number; n: number }>();
        ops.forEach(({ kind, id }, n) => {
          if (kind === "set") {
            const o = { id, n };
            index.set(id, o);
            model.set(id, o);
          } else if (kind === "delete") assert.equal(index.delete(id), model.delete(id));
          assert.equal(index.get(id), model.get(id));
          assert.equal(index.has(id), model.has(id));
          assert.equal(index.size, model.size);
        });
        const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;
        assert.deepEqual([...index.values()].sort(byId), [...model.values()].sort(byId));
      }),
      { numRuns: 200 },
    );
  });
});
