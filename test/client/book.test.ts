/**
 * The client's local order book: the sequence rules of CONTRACT 9 on LocalBook, and OrderBookFeed
 * following a real server's `orders:{pair}` stream until it equals the REST book.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { LocalBook, OrderBookFeed } from "../../src/client/book.ts";
import type { OrderBook } from "../../src/client/index.ts";
import { limit, sleep, TestServer } from "../e2e/harness.ts";

describe("LocalBook", () => {
  test("applies changed levels to a snapshot; amount 0 removes a level", () => {
    const book = new LocalBook();
    book.reset({ buy: [{ price: 10, amount: 1 }], sell: [{ price: 12, amount: 2 }] });
    book.apply({ buy: [{ price: 11, amount: 3 }], sell: [{ price: 12, amount: 0 }] });
    assert.deepEqual(book.book(), {
      buy: [
        { price: 11, amount: 3 },
        { price: 10, amount: 1 },
      ],
      sell: [],
    });
  });

  test("lists buy descending and sell ascending, as the REST book does", () => {
    const book = new LocalBook();
    book.reset({
      buy: [
        { price: 1, amount: 1 },
        { price: 3, amount: 1 },
        { price: 2, amount: 1 },
      ],
      sell: [
        { price: 9, amount: 1 },
        { price: 7, amount: 1 },
      ],
    });
    const b = book.book();
    assert.deepEqual(
      b.buy.map((l) => l.price),
      [3, 2, 1],
    );
    assert.deepEqual(
      b.sell.map((l) => l.price),
      [7, 9],
    );
  });

  test("applies seq + 1, ignores an old seq and reports a jump as a gap without applying it", () => {
    const book = new LocalBook();
    book.reset({ buy: [], sell: [], seq: 5 });
    assert.equal(book.apply({ buy: [{ price: 1, amount: 1 }], sell: [], seq: 6 }), "applied");
    assert.equal(book.apply({ buy: [{ price: 1, amount: 9 }], sell: [], seq: 6 }), "stale");
    assert.equal(book.apply({ buy: [{ price: 2, amount: 1 }], sell: [], seq: 8 }), "gap");
    assert.deepEqual(book.book(), { buy: [{ price: 1, amount: 1 }], sell: [], seq: 6 });
  });

  test("without seq (an older server) every change applies in arrival order", () => {
    const book = new LocalBook();
    book.reset({ buy: [], sell: [] });
    assert.equal(book.apply({ buy: [{ price: 1, amount: 1 }], sell: [] }), "applied");
    assert.equal(book.seq, undefined);
  });
});

describe("OrderBookFeed on a real server", () => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start();
  });
  after(async () => {
    await server?.close();
  });

  test("follows the stream until the local book equals GET .../orders", async () => {
    const [a, b] = await server.newUsers(2, { usdt: "100000", btc: "10" });
    await a.client.createOrder(limit("btc_usdt", "buy", "100", "1"));
    const books: OrderBook[] = [];
    const errors: Error[] = [];
    const feed = await OrderBookFeed.open({
      baseUrl: server.origin,
      pairName: "btc_usdt",
      onBook: (book) => books.push(book),
      onError: (error) => errors.push(error),
    });
    try {
      assert.deepEqual(feed.book().buy, [{ price: 100, amount: 1 }]);
      await a.client.createOrder(limit("btc_usdt", "buy", "101", "0.5"));
      await b.client.createOrder(limit("btc_usdt", "sell", "105", "2"));
      await b.client.createOrder(limit("btc_usdt", "sell", "100.5", "0.7")); // fills 0.5 at 101
      const rest = await server.public.orderBook("btc_usdt");
      assert.equal(rest.status, 200);
      const want = rest.body as OrderBook;
      for (let i = 0; i < 100 && JSON.stringify(feed.book()) !== JSON.stringify(want); i++) await sleep(20);
      assert.deepEqual(feed.book(), want);
      assert.deepEqual(errors, []);
      assert.ok(books.length >= 4, `one book per change, got ${books.length}`);
    } finally {
      await feed.close();
      await server.cancelOpenOrders();
    }
  });
});
