/**
 * The local L3 book (docs/API.md 7.6.2) driven by recorded `orders_l3:` messages: queues in time
 * priority, `open`/`change`/`done`, seq rules, the L2 levels and checksum it derives, and the
 * queue position of an order.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { bookChecksum } from "../../src/client/checksum.ts";
import { L3Book } from "../../src/client/l3-book.ts";
import type { L3Event } from "../../src/client/types.ts";

const ev = (type: L3Event["type"], id: number, side: "buy" | "sell", price: number, amount: number) => ({
  type,
  id,
  side,
  price,
  amount,
});

function recorded(): L3Book {
  const book = new L3Book();
  book.reset({
    seq: 10,
    buy: [
      { id: 3, price: 100, amount: 0.1 },
      { id: 5, price: 100, amount: 0.2 },
      { id: 1, price: 99.5, amount: 1 },
    ],
    sell: [
      { id: 4, price: 101, amount: 2 },
      { id: 6, price: 102, amount: 0.0000001 },
    ],
  });
  return book;
}

describe("L3Book", () => {
  test("keeps the snapshot's priority order and sums each level exactly", () => {
    const book = recorded();
    assert.deepEqual(
      book.ordersOf("buy").map((o) => o.id),
      [3, 5, 1],
    );
    assert.deepEqual(book.levels("buy"), [
      [100, 0.3],
      [99.5, 1],
    ]);
    assert.deepEqual(book.levels("sell"), [
      [101, 2],
      [102, 0.0000001],
    ]);
    assert.equal(
      book.checksum(),
      bookChecksum(
        [
          [101, 2],
          [102, 0.0000001],
        ],
        [
          [100, 0.3],
          [99.5, 1],
        ],
      ),
    );
  });

  test("open joins the back of its level, change keeps the place, done leaves", () => {
    const book = recorded();
    assert.equal(book.apply({ seq: 11, events: [ev("open", 7, "buy", 100, 0.5)] }), "applied");
    // A fill: the taker sells 0.15 into the best bid's front order.
    assert.equal(
      book.apply({ seq: 12, events: [ev("done", 3, "buy", 100, 0), ev("change", 5, "buy", 100, 0.15)] }),
      "applied",
    );
    // An amend that loses the place: done then open, at the back.
    assert.equal(
      book.apply({ seq: 13, events: [ev("done", 5, "buy", 100, 0), ev("open", 5, "buy", 100, 0.4)] }),
      "applied",
    );
    assert.deepEqual(book.ordersOf("buy"), [
      { id: 7, price: 100, amount: 0.5 },
      { id: 5, price: 100, amount: 0.4 },
      { id: 1, price: 99.5, amount: 1 },
    ]);
    assert.deepEqual(book.l2(), {
      seq: 13,
      buy: [
        { price: 100, amount: 0.9 },
        { price: 99.5, amount: 1 },
      ],
      sell: [
        { price: 101, amount: 2 },
        { price: 102, amount: 0.0000001 },
      ],
      checksum: book.checksum(),
    });
    assert.equal(book.order(3), undefined);
  });

  test("positionOf is the amount resting ahead at the same price", () => {
    const book = recorded();
    book.apply({ seq: 11, events: [ev("open", 7, "buy", 100, 0.5)] });
    assert.equal(book.positionOf(3), 0);
    assert.equal(book.positionOf(5), 0.1);
    assert.equal(book.positionOf(7), 0.3); // 0.1 + 0.2 exactly, not 0.30000000000000004
    assert.equal(book.positionOf(1), 0);
    assert.equal(book.positionOf(42), undefined);
    book.apply({ seq: 12, events: [ev("change", 3, "buy", 100, 0.05)] });
    assert.equal(book.positionOf(7), 0.25);
  });

  test("ignores an old seq and reports a jump without applying it", () => {
    const book = recorded();
    assert.equal(book.apply({ seq: 10, events: [ev("done", 4, "sell", 101, 0)] }), "stale");
    assert.equal(book.apply({ seq: 12, events: [ev("done", 4, "sell", 101, 0)] }), "gap");
    assert.equal(book.seq, 10);
    assert.equal(book.order(4)?.amount, 2);
  });

  test("refuses an event for an order it does not hold there (the book has diverged)", () => {
    const book = recorded();
    assert.throws(() => book.apply({ seq: 11, events: [ev("change", 99, "buy", 100, 1)] }), /order 99/);
    assert.throws(() => recorded().apply({ seq: 11, events: [ev("done", 4, "sell", 100, 0)] }), /order 4/);
    assert.throws(() => recorded().apply({ seq: 11, events: [ev("open", 4, "sell", 101, 1)] }), /twice/);
  });

  test("a snapshot of the book it holds gives back the same book", () => {
    const book = recorded();
    book.apply({ seq: 11, events: [ev("open", 8, "sell", 101, 3), ev("done", 6, "sell", 102, 0)] });
    const copy = new L3Book();
    copy.reset(book.snapshot());
    assert.deepEqual(copy.snapshot(), book.snapshot());
    assert.deepEqual(copy.l2(), book.l2());
  });
});
