/** Why recently closed orders are closed (src/recently-closed.ts): a bounded ring over a map. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "../src/errors.ts";
import { closedError, RECENT_CLOSED, RecentlyClosed } from "../src/recently-closed.ts";

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

  it("gives the cancel error of an order's final state", () => {
    assert.equal(closedError({ cancelled: true, used: 3, amount: 5 }), Code.ORDER_ALREADY_CANCELLED);
    assert.equal(closedError({ cancelled: false, used: 5, amount: 5 }), Code.ORDER_ALREADY_EXECUTED);
    assert.equal(closedError({ cancelled: false, used: 3, amount: 5 }), Code.ORDER_NOT_FOUND);
  });
});
