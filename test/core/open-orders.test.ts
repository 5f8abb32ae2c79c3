/**
 * The core's open orders (src/core/open-orders.ts), with real OrderState records (src/core/command.ts):
 * the index by id and by user, each rest's time priority, the orders closing until their final row
 * commits and then recently closed, why an id is not an open order of a user as cancel-order
 * answers it (docs/API.md 7.2), the orders of a session tag (docs/API.md 8.9) and the ended tags, kept ten
 * minutes and no longer.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OrderState } from "../../src/core/command.ts";
import { OpenOrders } from "../../src/core/open-orders.ts";
import { Code } from "../../src/errors/catalogue.ts";
import { BUY } from "../../src/protocol/pair/engine.ts";

/** An order record as the sequencer makes it for a create (src/core/sequencer.ts newOrder). */
function order(id: number, user: number, pair: number, session = 0): OrderState {
  return {
    id,
    user,
    pair,
    side: BUY,
    type: 0,
    price: 10_000,
    amount: 10,
    used: 0,
    cancelled: false,
    createMicro: 0,
    updateMicro: 0,
    budget: 0n,
    executed: 0n,
    flags: 0,
    clientOrderId: undefined,
    rowSent: false,
    session,
    amending: null,
    userSlot: -1,
    restSeq: 0,
    execSeq: 0,
    stopPrice: 0,
    stopDirection: 0,
    triggerMicro: 0,
    cancelReason: 0,
    trailingDelta: 0,
    ocoId: 0,
    oco: null,
  };
}

const ids = (orders: OrderState[]) => orders.map((o) => o.id).sort((a, b) => a - b);

describe("OpenOrders", () => {
  it("finds a resting order by id, and as its user's own only for that user", () => {
    const open = new OpenOrders();
    const o = order(1, 7, 0);
    open.setOpen(o);
    assert.equal(open.get(1), o);
    assert.equal(open.has(1), true);
    assert.equal(open.own(7, 1), o);
    assert.equal(open.own(8, 1), undefined, "another user's order is not theirs");
    assert.equal(open.own(7, 2), undefined);
  });

  it("lists each user's open orders by pair, and keeps the lists right when orders close from the middle", () => {
    const open = new OpenOrders();
    const orders = [order(1, 7, 0), order(2, 7, 1), order(3, 7, 0), order(4, 8, 0), order(5, 7, 0)];
    for (const o of orders) open.setOpen(o);
    assert.deepEqual(ids(open.userOrdersOn(7, 0, [])), [1, 3, 5]);
    assert.deepEqual(ids(open.userOrdersOn(7, 1, [])), [2]);
    assert.deepEqual(ids(open.userOrdersOn(8, 0, [])), [4]);
    // The first order closes: the last one takes its slot in the user's list.
    open.close(orders[0]);
    assert.equal(orders[0].userSlot, -1);
    assert.equal(open.has(1), false);
    assert.deepEqual(ids(open.userOrdersOn(7, 0, [])), [3, 5]);
    open.close(orders[4]);
    open.close(orders[2]);
    assert.deepEqual(open.userOrdersOn(7, 0, []), []);
    assert.deepEqual(ids(open.userOrdersOn(7, 1, [])), [2]);
    // Appends to what it is given.
    assert.deepEqual(ids(open.userOrdersOn(8, 0, [orders[1]])), [2, 4]);
  });

  it("gives each rest a later time priority, and a moved order rests again without being listed twice", () => {
    const open = new OpenOrders();
    const a = order(1, 7, 0);
    const b = order(2, 7, 0);
    open.setOpen(a);
    open.setOpen(b);
    assert.ok(a.restSeq > 0 && b.restSeq > a.restSeq);
    // A move: it rests again, behind b.
    open.setOpen(a);
    assert.ok(a.restSeq > b.restSeq);
    assert.deepEqual(ids(open.userOrdersOn(7, 0, [])), [1, 2]);
    open.close(a);
    assert.deepEqual(ids(open.userOrdersOn(7, 0, [])), [2]);
  });

  it("keeps a closed order among the closing ones until its final row commits, then among the recently closed", () => {
    const open = new OpenOrders();
    const o = order(1, 7, 0);
    open.setOpen(o);
    o.cancelled = true;
    open.close(o);
    assert.equal(open.isClosing(o), true);
    assert.equal(open.get(1), undefined);
    // Still a candidate of an open-orders read until its row commits (docs/API.md 8.6).
    assert.deepEqual(open.openOrderIds(7, 0), [1]);
    assert.equal(open.notOpenError(7, 1), Code.ORDER_ALREADY_CANCELLED);
    open.committed(o);
    assert.equal(open.isClosing(o), false);
    assert.deepEqual(open.openOrderIds(7, 0), []);
    // The recently closed orders answer for it now, without the database.
    assert.equal(open.notOpenError(7, 1), Code.ORDER_ALREADY_CANCELLED);
    assert.equal(open.notOpenError(8, 1), Code.ORDER_NOT_FOUND);
  });

  it("answers why an id is not a user's open order: executed, cancelled or not found as its closing record says, not found for another user's, -1 when only the database can tell", () => {
    const open = new OpenOrders();
    const filled = order(1, 7, 0);
    const cancelled = order(2, 7, 0);
    const partly = order(3, 7, 0);
    const others = order(4, 8, 0);
    for (const o of [filled, cancelled, partly, others]) open.setOpen(o);
    filled.used = filled.amount;
    cancelled.cancelled = true;
    partly.used = 4;
    open.close(filled);
    open.close(cancelled);
    open.close(partly);
    assert.equal(open.notOpenError(7, 1), Code.ORDER_ALREADY_EXECUTED);
    assert.equal(open.notOpenError(7, 2), Code.ORDER_ALREADY_CANCELLED);
    assert.equal(open.notOpenError(7, 3), Code.ORDER_NOT_FOUND);
    assert.equal(open.notOpenError(8, 1), Code.ORDER_NOT_FOUND, "another user's closing order");
    assert.equal(open.notOpenError(7, 4), Code.ORDER_NOT_FOUND, "another user's open order");
    assert.equal(open.notOpenError(7, 99), -1, "unknown here: the database decides");
  });

  it("lists the open and the closing orders of a user on a pair as the candidates of an open-orders read", () => {
    const open = new OpenOrders();
    const a = order(1, 7, 0);
    const b = order(2, 7, 0);
    const c = order(3, 7, 1);
    const d = order(4, 8, 0);
    for (const o of [a, b, c, d]) open.setOpen(o);
    open.close(b);
    open.close(d);
    assert.deepEqual(open.openOrderIds(7, 0).sort(), [1, 2]);
    assert.deepEqual(open.openOrderIds(7, 1), [3]);
    assert.deepEqual(open.openOrderIds(8, 0), [4]);
    assert.deepEqual(open.openOrderIds(9, 0), []);
  });

  it("lists the open orders of a session tag, not those of other tags nor untagged ones, and drops them as they close", () => {
    const open = new OpenOrders();
    const a = order(1, 7, 0, 5);
    const b = order(2, 8, 1, 5);
    const c = order(3, 7, 0, 6);
    const d = order(4, 7, 0);
    for (const o of [a, b, c, d]) open.setOpen(o);
    assert.deepEqual(ids(open.sessionOrders(5, [])), [1, 2]);
    assert.deepEqual(ids(open.sessionOrders(6, [])), [3]);
    assert.deepEqual(open.sessionOrders(0, []), [], "untagged orders belong to no session");
    open.close(a);
    assert.deepEqual(ids(open.sessionOrders(5, [])), [2]);
    // A moved order rests again: listed once.
    open.setOpen(b);
    assert.deepEqual(ids(open.sessionOrders(5, [])), [2]);
    open.close(b);
    assert.deepEqual(open.sessionOrders(5, []), []);
  });

  it("remembers an ended session tag for ten minutes and forgets it once a later tag ends after that", () => {
    const open = new OpenOrders();
    const t0 = 1_000_000;
    assert.equal(open.sessionEnded(5), false);
    open.endSession(5, t0);
    assert.equal(open.sessionEnded(5), true);
    assert.equal(open.sessionEnded(6), false);
    open.endSession(6, t0 + 10 * 60_000 - 1);
    assert.equal(open.sessionEnded(5), true, "not yet ten minutes");
    open.endSession(7, t0 + 10 * 60_000);
    assert.equal(open.sessionEnded(5), false, "ten minutes after it ended: forgotten");
    assert.equal(open.sessionEnded(6), true);
    assert.equal(open.sessionEnded(7), true);
    // The memory stays bounded: a burst of ended tags, then one much later, leaves only the later one.
    for (let s = 100; s < 10_100; s++) open.endSession(s, t0 + 20 * 60_000);
    open.endSession(1, t0 + 40 * 60_000);
    for (const s of [6, 7, 100, 10_099]) assert.equal(open.sessionEnded(s), false, `${s}`);
    assert.equal(open.sessionEnded(1), true);
  });
});
