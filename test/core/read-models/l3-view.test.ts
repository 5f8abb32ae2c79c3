/** The order-by-order book (src/core/read-models/l3-view.ts): events applied in order, snapshots in priority order. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { L3_CHANGE, L3_DONE, L3_OPEN, L3Book, l3Events } from "../../../src/core/read-models/l3-view.ts";

describe("L3Book", () => {
  it("lists bids descending and asks ascending, each price in time priority; an open of a listed order moves it to the back", () => {
    const b = new L3Book();
    b.open(1, 0, 100, 5);
    b.open(2, 0, 101, 1);
    b.open(3, 0, 100, 2);
    b.open(4, 1, 103, 3);
    b.open(5, 1, 102, 4);
    b.apply([L3_CHANGE, 1, 0, 100, 4, L3_DONE, 1, 0, 100, 0, L3_OPEN, 1, 0, 100, 6, L3_DONE, 5, 1, 102, 0]);
    assert.deepEqual(b.snapshot(7, 0, 0), {
      seq: 7,
      buy: [
        { id: 2, price: 101, amount: 1 },
        { id: 3, price: 100, amount: 2 },
        { id: 1, price: 100, amount: 6 },
      ],
      sell: [{ id: 4, price: 103, amount: 3 }],
    });
    assert.equal(b.size, 3 + 1);
  });

  it("is ready once the committed seq reaches its snapshot's, and runs its waiters once", () => {
    const b = new L3Book();
    assert.equal(b.readyAt(100), false, "no snapshot yet");
    b.from = 5;
    assert.equal(b.readyAt(4), false);
    let runs = 0;
    b.whenReady(() => runs++);
    assert.equal(b.waiting, true);
    b.fireReady();
    b.fireReady();
    assert.equal(runs, 1);
    assert.equal(b.readyAt(5), true);
  });

  it("writes events as the stream sends them", () => {
    assert.deepEqual(l3Events([L3_OPEN, 9, 1, 2501001, 500_000, L3_DONE, 8, 0, 2500000, 0], 2, 6), [
      { type: "open", id: 9, side: "sell", price: 25010.01, amount: 0.5 },
      { type: "done", id: 8, side: "buy", price: 25000, amount: 0 },
    ]);
  });
});
