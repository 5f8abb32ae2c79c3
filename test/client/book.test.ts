/**
 * The client's local order book: the sequence rules of docs/API.md 12.3 on LocalBook, and OrderBookFeed
 * following a real server's `orders:{pair}` stream until it equals the REST book.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { type BookData, LocalBook, OrderBookFeed } from "../../src/client/book.ts";
import { bookChecksum } from "../../src/client/checksum.ts";
import type { OrderBook } from "../../src/client/index.ts";
import { LiveBook, type ResyncReason } from "../../src/client/local-book.ts";
import { limit, TestServer } from "../e2e/harness.ts";
import { waitFor } from "../wait.ts";

/**
 * A book's levels, seq and checksum: what the feed and the REST book share exactly. Their `time`
 * (docs/API.md 20.2) is the same only after a REST read: after a stream message the feed's is the
 * stream's stamp of the change (docs/API.md 12.4); the tests below check it apart.
 */
function followed(book: BookData | OrderBook): BookData {
  const { time: _time, ...levels } = book;
  return levels;
}

/** Waits until the feed's local book equals `want` (the REST book read after the last change). */
function untilBook(feed: OrderBookFeed, rest: OrderBook): Promise<true> {
  const want = followed(rest);
  return waitFor(() => isDeepStrictEqual(followed(feed.book()), want), {
    what: "the local book to equal the REST book",
    detail: () => `local ${JSON.stringify(feed.book())}, REST ${JSON.stringify(want)}`,
  });
}

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

  test("carries the book's time: a REST book's, then the millisecond of each message's stream stamp", () => {
    const book = new LocalBook();
    book.reset({ buy: [{ price: 10, amount: 1 }], sell: [], seq: 4, time: 1764201600123 });
    assert.equal(book.book().time, 1764201600123);
    book.apply({ buy: [{ price: 11, amount: 1, eventTimeMicro: "1764201600456789" }], sell: [], seq: 5 });
    assert.equal(book.book().time, 1764201600456);
    book.apply({ buy: [{ price: 11, amount: 2, eventTimeMicro: "1764201600456999" }], sell: [], seq: 5 });
    assert.equal(book.book().time, 1764201600456, "a stale message changes nothing");
    book.reset({ buy: [], sell: [], seq: 6 });
    assert.equal(book.book().time, undefined, "an empty snapshot has no stamp");
    assert.ok(!("time" in book.book()));
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

/** A recorded message with the checksum of the book it leads to (docs/API.md 12.5). */
function withChecksum(data: BookData, after: [number, number][][]): BookData {
  return { ...data, checksum: bookChecksum(after[1], after[0]) };
}

describe("LiveBook checksum (docs/API.md 12.5)", () => {
  const snapshot = withChecksum(
    { buy: [{ price: 10, amount: 1 }], sell: [{ price: 12, amount: 2 }], seq: 1 },
    [[[10, 1]], [[12, 2]]],
  );
  const rest = withChecksum(
    {
      buy: [
        { price: 11, amount: 0.5 },
        { price: 10, amount: 1 },
      ],
      sell: [{ price: 12, amount: 2 }],
      seq: 2,
    },
    [
      [
        [11, 0.5],
        [10, 1],
      ],
      [[12, 2]],
    ],
  );

  test("a message whose checksum the book gives is applied without a resync", () => {
    const book = new LiveBook(
      () => Promise.reject(new Error("no resync expected")),
      () => {},
    );
    book.receive(snapshot);
    book.receive(
      withChecksum({ buy: [{ price: 11, amount: 0.5 }], sell: [], seq: 2 }, [
        [
          [11, 0.5],
          [10, 1],
        ],
        [[12, 2]],
      ]),
    );
    assert.equal(book.resyncs, 0);
    assert.equal(book.checksumMismatches, 0);
    assert.deepEqual(book.book(), rest);
  });

  test("a checksum mismatch re-reads the REST book and applies the messages after it", async () => {
    const reasons: ResyncReason[] = [];
    let changes = 0;
    let loads = 0;
    const book = new LiveBook(
      async () => {
        loads++;
        // A message that arrives while the REST book is read is held and applied after it.
        book.receive(
          withChecksum({ buy: [], sell: [{ price: 13, amount: 1 }], seq: 3 }, [
            [
              [11, 0.5],
              [10, 1],
            ],
            [
              [12, 2],
              [13, 1],
            ],
          ]),
        );
        return rest;
      },
      () => changes++,
      { onResync: (reason) => reasons.push(reason) },
    );
    book.receive(snapshot);
    // The level came through with a wrong amount (0.4 where the server holds 0.5): seq is fine,
    // the checksum is not.
    book.receive({ ...rest, buy: [{ price: 11, amount: 0.4 }], sell: [] });
    await waitFor(() => changes === 2, { what: "the resync to end" });
    assert.deepEqual(reasons, ["checksum"]);
    assert.equal(loads, 1);
    assert.equal(book.checksumMismatches, 1);
    assert.deepEqual(book.levels("buy"), [
      [11, 0.5],
      [10, 1],
    ]);
    assert.deepEqual(book.levels("sell"), [
      [12, 2],
      [13, 1],
    ]);
    assert.equal(book.seq, 3);
  });

  test("gives up after five reads when the REST book never gives its own checksum", async () => {
    const errors: Error[] = [];
    let loads = 0;
    const book = new LiveBook(
      async () => {
        loads++;
        return { ...rest, checksum: 1 };
      },
      () => {},
      { onError: (e) => errors.push(e) },
    );
    book.receive({ ...snapshot, checksum: 2 });
    await waitFor(() => errors.length === 1, { what: "the resync to give up" });
    assert.equal(loads, 5);
    assert.match(errors[0].message, /checksum/);
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
    const books: BookData[] = [];
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
      await untilBook(feed, want);
      assert.deepEqual(followed(feed.book()), followed(want));
      assert.deepEqual(errors, []);
      assert.ok(books.length >= 4, `one book per change, got ${books.length}`);
      // docs/API.md 20.2: the stream's stamp of the last change, a moment after its committed time.
      const time = feed.book().time;
      assert.ok(want.time !== undefined && want.time > 0, `the REST book's time: ${want.time}`);
      assert.ok(
        time !== undefined && time >= want.time && time - want.time < 1000,
        `the feed's time ${time} follows the REST book's ${want.time}`,
      );
    } finally {
      await feed.close();
      await server.cancelOpenOrders();
    }
  });

  test("reconnects after the server restarts and starts again from the new snapshot", async () => {
    const [a] = await server.newUsers(1, { usdt: "100000" });
    const resyncs: string[] = [];
    const feed = await OrderBookFeed.open({
      baseUrl: () => server.origin, // the restarted server listens on another port
      pairName: "eth_usdt",
      onResync: (reason) => resyncs.push(reason),
    });
    try {
      await a.client.createOrder(limit("eth_usdt", "buy", "10", "1"));
      await server.restart();
      await a.client.createOrder(limit("eth_usdt", "buy", "11", "2"));
      const want = (await server.public.orderBook("eth_usdt")).body as OrderBook;
      assert.deepEqual(
        want.buy.map((l) => l.price),
        [11, 10],
      );
      await untilBook(feed, want);
      assert.deepEqual(followed(feed.book()), followed(want));
      assert.ok(resyncs.includes("reconnect"), `resyncs: ${resyncs.join(",")}`);
    } finally {
      await feed.close();
      // A clean-up that fails after a failed restart must not hide the restart's own error.
      await server.cancelOpenOrders().catch(() => {});
    }
  });

  test("on a seq gap re-reads the REST book and applies only what follows it", async () => {
    // The feed's gap detection rests on the REST book's seq (docs/API.md section 9).
    const rest = (await server.public.orderBook("eth_btc")).body as OrderBook;
    assert.ok(
      Number.isSafeInteger(rest.seq),
      `the REST book carries an integer seq: ${JSON.stringify(rest)}`,
    );
    const [a] = await server.newUsers(1, { btc: "100" });
    const errors: Error[] = [];
    const feed = await OrderBookFeed.open({
      baseUrl: server.origin,
      pairName: "eth_btc",
      onError: (e) => errors.push(e),
    });
    try {
      // Lose the next message on its way in, as a network path that drops one would: the one after
      // it then jumps two seqs, and the feed must resync from REST.
      const inner = feed as unknown as { onMessage(m: object): void };
      const deliver = inner.onMessage.bind(feed);
      let dropped = 0;
      inner.onMessage = (m) => {
        if (dropped === 0) dropped++;
        else deliver(m);
      };
      await a.client.createOrder(limit("eth_btc", "buy", "0.05", "1"));
      await a.client.createOrder(limit("eth_btc", "buy", "0.04", "1"));
      const want = (await server.public.orderBook("eth_btc")).body as OrderBook;
      await untilBook(feed, want);
      assert.equal(dropped, 1);
      assert.deepEqual(followed(feed.book()), followed(want));
      assert.equal(feed.book().time, want.time, "after a REST read, the REST book's time");
      assert.equal(feed.resyncs, 1);
      assert.deepEqual(errors, []);
    } finally {
      await feed.close();
      await server.cancelOpenOrders();
    }
  });
});
