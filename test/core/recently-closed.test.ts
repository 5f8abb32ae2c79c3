/** Why recently closed orders are closed (src/core/recently-closed.ts): a bounded ring with a direct-mapped id index. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { closedError, INDEX_SLOTS, RECENT_CLOSED, RecentlyClosed } from "../../src/core/recently-closed.ts";
import { Code } from "../../src/errors/catalogue.ts";

describe("RecentlyClosed", () => {
  it("answers the owner's cancel error, 'not found' to another user, and -1 for an unknown id", () => {
    const r = new RecentlyClosed();
    r.add(10, 1, Code.ORDER_ALREADY_EXECUTED);
    r.add(11, 2, Code.ORDER_ALREADY_CANCELLED);
    assert.equal(r.errorFor(1, 10, Code.ORDER_NOT_FOUND), Code.ORDER_ALREADY_EXECUTED);
    assert.equal(r.errorFor(2, 11, Code.ORDER_NOT_FOUND), Code.ORDER_ALREADY_CANCELLED);
    assert.equal(r.errorFor(2, 10, Code.ORDER_NOT_FOUND), Code.ORDER_NOT_FOUND);
    assert.equal(r.errorFor(1, 12, Code.ORDER_NOT_FOUND), -1);
  });

  it("forgets the oldest orders once it holds RECENT_CLOSED, and only those", () => {
    const r = new RecentlyClosed();
    const extra = 1000;
    for (let id = 1; id <= RECENT_CLOSED + extra; id++) r.add(id, id % 7, Code.ORDER_ALREADY_EXECUTED);
    for (const id of [1, 500, extra]) assert.equal(r.errorFor(id % 7, id, Code.ORDER_NOT_FOUND), -1, `${id}`);
    for (const id of [extra + 1, RECENT_CLOSED, RECENT_CLOSED + extra])
      assert.equal(r.errorFor(id % 7, id, Code.ORDER_NOT_FOUND), Code.ORDER_ALREADY_EXECUTED, `${id}`);
  });

  it("keeps the later of two ids sharing an index slot, and forgetting the earlier one keeps it", () => {
    const r = new RecentlyClosed();
    const a = 7;
    const b = a + INDEX_SLOTS;
    r.add(a, 1, Code.ORDER_ALREADY_EXECUTED);
    r.add(b, 2, Code.ORDER_ALREADY_CANCELLED);
    // The earlier id is no longer remembered: its cancel is judged by its row, like an old order.
    assert.equal(r.errorFor(1, a, Code.ORDER_NOT_FOUND), -1);
    assert.equal(r.errorFor(2, b, Code.ORDER_NOT_FOUND), Code.ORDER_ALREADY_CANCELLED);
    // The ring wraps over a's slot (the oldest): b's entry stays.
    for (let i = 0; i < RECENT_CLOSED - 1; i++) r.add(a + 1 + i, 3, Code.ORDER_ALREADY_EXECUTED);
    assert.equal(r.errorFor(2, b, Code.ORDER_NOT_FOUND), Code.ORDER_ALREADY_CANCELLED);
    r.add(a + RECENT_CLOSED, 3, Code.ORDER_ALREADY_EXECUTED);
    assert.equal(r.errorFor(2, b, Code.ORDER_NOT_FOUND), -1, "b is the oldest now, and forgotten");
    // Ids beyond 2^32 index by their low bits too.
    const big = 2 ** 40 + 5;
    r.add(big, 4, Code.ORDER_ALREADY_EXECUTED);
    assert.equal(r.errorFor(4, big, Code.ORDER_NOT_FOUND), Code.ORDER_ALREADY_EXECUTED);
    assert.equal(r.errorFor(4, 5, Code.ORDER_NOT_FOUND), -1);
  });

  it("gives the cancel error of an order's final state", () => {
    assert.equal(closedError({ cancelled: true, used: 3, amount: 5 }), Code.ORDER_ALREADY_CANCELLED);
    assert.equal(closedError({ cancelled: false, used: 5, amount: 5 }), Code.ORDER_ALREADY_EXECUTED);
    assert.equal(closedError({ cancelled: false, used: 3, amount: 5 }), Code.ORDER_NOT_FOUND);
  });
});
