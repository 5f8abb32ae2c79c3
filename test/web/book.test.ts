/**
 * The page's live book (src/client/local-book.ts, which the page imports): applied from `orders:`
 * by seq, resynced from the REST book on a gap (docs/API.md 12.3), and, fed by the real stream, equal to
 * the REST book.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { LiveBook } from "../../src/client/local-book.ts";
import type { BookData as Book } from "../../src/client/types.ts";
import {
  cancelOrder,
  createOrder,
  get,
  StreamClient,
  startServer,
  type TestServer,
} from "../stream/helpers.ts";

const lv = (price: number, amount: number) => ({ price, amount });
const sides = (b: LiveBook) => ({ buy: b.levels("buy"), sell: b.levels("sell") });

/** Resolves once `book` has called back `n` times in all. */
function counter() {
  let calls = 0;
  let waiters: [number, () => void][] = [];
  return {
    changed: () => {
      calls++;
      const due = waiters.filter(([n]) => calls >= n);
      waiters = waiters.filter(([n]) => calls < n);
      for (const [, f] of due) f();
    },
    reach: (n: number) =>
      new Promise<void>((resolve) => {
        if (calls >= n) resolve();
        else waiters.push([n, resolve]);
      }),
  };
}

describe("LiveBook by seq", () => {
  test("applies the snapshot, then each next seq; a stale message is ignored", () => {
    const book = new LiveBook(
      () => Promise.reject(new Error("no resync expected")),
      () => {},
    );
    book.receive({ buy: [lv(10, 1), lv(9, 2)], sell: [lv(11, 3)], seq: 5 });
    book.receive({ buy: [lv(10, 0)], sell: [lv(12, 1)], seq: 6 });
    book.receive({ buy: [lv(10, 7)], sell: [], seq: 6 }); // already applied
    book.receive({ buy: [lv(8, 4)], sell: [lv(11, 0)], seq: 7 });
    assert.deepEqual(sides(book), {
      buy: [
        [9, 2],
        [8, 4],
      ],
      sell: [[12, 1]],
    });
    assert.equal(book.seq, 7);
    assert.equal(book.resyncs, 0);
  });

  test("on a gap reloads the REST book and applies the held messages newer than it", async () => {
    const rest: Book[] = [{ buy: [lv(10, 5)], sell: [lv(11, 1)], seq: 8 }];
    const c = counter();
    const book = new LiveBook(async () => rest.shift()!, c.changed);
    book.receive({ buy: [lv(10, 1)], sell: [], seq: 5 });
    book.receive({ buy: [lv(10, 2)], sell: [], seq: 7 }); // 6 is missing: resync
    book.receive({ buy: [lv(10, 9)], sell: [], seq: 8 }); // in the REST book already
    book.receive({ buy: [lv(9, 3)], sell: [], seq: 9 });
    await c.reach(2);
    assert.equal(book.resyncs, 1);
    assert.equal(book.seq, 9);
    assert.deepEqual(sides(book), {
      buy: [
        [10, 5],
        [9, 3],
      ],
      sell: [[11, 1]],
    });
    book.receive({ buy: [], sell: [lv(11, 0)], seq: 10 });
    assert.deepEqual(book.levels("sell"), []);
  });

  test("reloads again while the REST book is older than the held messages", async () => {
    const rest: Book[] = [
      { buy: [lv(10, 1)], sell: [], seq: 6 },
      { buy: [lv(10, 4)], sell: [], seq: 9 },
    ];
    const c = counter();
    const book = new LiveBook(async () => rest.shift()!, c.changed);
    book.receive({ buy: [], sell: [], seq: 5 });
    book.receive({ buy: [lv(10, 3)], sell: [], seq: 8 }); // gap: 6, 7 missing
    book.receive({ buy: [lv(10, 4)], sell: [], seq: 9 });
    book.receive({ buy: [lv(7, 1)], sell: [], seq: 10 });
    await c.reach(2);
    assert.equal(book.seq, 10);
    assert.deepEqual(book.levels("buy"), [
      [10, 4],
      [7, 1],
    ]);
  });

  test("without seq trusts the stream: snapshot then deltas", () => {
    const book = new LiveBook(
      () => Promise.reject(new Error("no resync expected")),
      () => {},
    );
    book.receive({ buy: [lv(1, 1)], sell: [lv(2, 2)] });
    book.receive({ buy: [lv(1, 0), lv(0.5, 3)], sell: [] });
    assert.deepEqual(sides(book), { buy: [[0.5, 3]], sell: [[2, 2]] });
    assert.equal(book.seq, null);
  });
});

describe("LiveBook on the real stream", () => {
  let server: TestServer;
  before(async () => {
    server = await startServer(2);
  });
  after(async () => {
    await server.close();
  });

  test("ends equal to the REST book after orders, fills and cancels", async () => {
    const [a, b] = server.users;
    const c = counter();
    const book = new LiveBook(
      async () => (await get<Book>(server, "/trade/pairs/eth_usdt/orders")).body,
      c.changed,
    );
    const stream = await StreamClient.connect(server, "streams=orders:eth_usdt");
    try {
      let seen = 0;
      const feed = () => {
        for (const m of stream.unread()) {
          book.receive(m.data as Book);
          seen++;
        }
      };
      const spec = (directionType: "buy" | "sell", price: string, amount: string) => ({
        pairName: "eth_usdt",
        tradeType: "limit" as const,
        directionType,
        price,
        amount,
      });
      await createOrder(server, a, spec("sell", "2000.5", "1.5"));
      await createOrder(server, a, spec("sell", "2001", "2"));
      await createOrder(server, b, spec("buy", "1999", "0.25"));
      await createOrder(server, b, spec("buy", "2000.5", "1")); // fills part of the best ask
      const rest = await createOrder(server, b, spec("buy", "1998", "3"));
      await get(server, "/trade/pairs/eth_usdt/orders"); // nothing in flight after this
      assert.equal((await cancelOrder(server, b, rest.id)).status, 200);
      // snapshot + one message per change: 5 orders (the fill changes one level) + 1 cancel
      await stream.until(() => stream.messages.length >= 7, 10_000, "seven book messages");
      feed();
      assert.equal(seen, 7);
      const want = (await get<Book>(server, "/trade/pairs/eth_usdt/orders")).body;
      assert.deepEqual(sides(book), {
        buy: want.buy.map((l) => [l.price, l.amount]),
        sell: want.sell.map((l) => [l.price, l.amount]),
      });
      assert.deepEqual(book.levels("sell")[0], [2000.5, 0.5]);
    } finally {
      stream.close();
    }
  });
});
