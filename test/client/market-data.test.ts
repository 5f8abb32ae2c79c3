/**
 * The client's market data for makers against a real server (docs/API.md 12.5): OrderBookFeed checks
 * every `orders:` message's checksum and resyncs from REST when its book diverges; L3BookFeed,
 * after 500 crossing and cancelling orders, holds exactly `GET .../orders/l3`, its levels are
 * `GET .../orders` (checksum included) and queue positions follow time priority; BboFeed follows
 * the best bid and offer.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { OrderBookFeed } from "../../src/client/book.ts";
import type {
  BatchOrderResult,
  CreatedOrder,
  CreateOrderRequest,
  OrderBook,
} from "../../src/client/index.ts";
import { BboFeed, L3BookFeed } from "../../src/client/market-data.ts";
import type { Bbo, L3Snapshot } from "../../src/client/types.ts";
import { limit, TestServer } from "../e2e/harness.ts";
import { mulberry32 } from "../support/prng.ts";
import { waitFor } from "../wait.ts";

describe("market data for makers on a real server", () => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start();
  });
  after(async () => {
    await server?.close();
  });

  test("OrderBookFeed resyncs from REST when a message's checksum does not match its book", async () => {
    const [a] = await server.newUsers(1, { btc: "100" });
    const reasons: string[] = [];
    const errors: Error[] = [];
    const feed = await OrderBookFeed.open({
      baseUrl: server.origin,
      pairName: "eth_btc",
      onResync: (reason) => reasons.push(reason),
      onError: (e) => errors.push(e),
    });
    try {
      assert.equal(typeof feed.book().checksum, "number", "the snapshot carries checksum");
      // Damage the next message on its way in, as a faulty path would: its seq follows, so only
      // the checksum can show that the local book is now wrong.
      const inner = feed as unknown as { onMessage(m: { data: OrderBook }): void };
      const deliver = inner.onMessage.bind(feed);
      let damaged = 0;
      inner.onMessage = (m) => {
        if (damaged === 0 && m.data.buy.length > 0) {
          damaged++;
          deliver({
            ...m,
            data: { ...m.data, buy: m.data.buy.map((l) => ({ ...l, amount: l.amount + 1 })) },
          });
        } else deliver(m);
      };
      await a.client.createOrder(limit("eth_btc", "buy", "0.05", "1"));
      await a.client.createOrder(limit("eth_btc", "buy", "0.04", "1"));
      // Levels, seq and checksum as REST has them; the feed's `time` is its last message's or the
      // resync's REST read's (docs/API.md 20.2), compared apart.
      const { time: _time, ...want } = (await server.public.orderBook("eth_btc")).body as OrderBook;
      const levels = () => {
        const { time, ...rest } = feed.book();
        assert.equal(typeof time, "number");
        return rest;
      };
      await waitFor(() => isDeepStrictEqual(levels(), want), {
        what: "the feed to resync to the REST book",
        detail: () => `local ${JSON.stringify(feed.book())}, REST ${JSON.stringify(want)}`,
      });
      assert.equal(damaged, 1);
      assert.deepEqual(reasons, ["checksum"]);
      assert.equal(feed.checksumMismatches, 1);
      assert.deepEqual(errors, []);
    } finally {
      await feed.close();
      await server.cancelOpenOrders();
    }
  });

  test("L3BookFeed equals GET .../orders/l3 after 500 crossing and cancelling orders", async () => {
    const users = await server.newUsers(2, { btc: "1000", usdt: "100000000" });
    const resyncs: string[] = [];
    const feed = await L3BookFeed.open({
      baseUrl: server.origin,
      pairName: "btc_usdt",
      onResync: (reason, detail) => resyncs.push(`${reason}: ${detail ?? ""}`),
    });
    const bbos: Bbo[] = [];
    const bbo = await BboFeed.open({
      baseUrl: server.origin,
      pairName: "btc_usdt",
      onBbo: (b) => bbos.push(b),
    });
    try {
      const rnd = mulberry32(13);
      const resting: { user: number; id: number }[] = [];
      let placed = 0;
      while (placed < 500) {
        // Batches of 20 (docs/API.md 8.5) from one user at a time; a third of them cross.
        const user = placed % 40 < 20 ? 0 : 1;
        const orders: CreateOrderRequest[] = [];
        for (let i = 0; i < 20; i++) {
          const buy = rnd() < 0.5;
          const cross = rnd() < 0.33;
          const offset = (1 + Math.floor(rnd() * 30)) / 100;
          const price = 100 + (buy === cross ? offset : -offset);
          const amount = (1 + Math.floor(rnd() * 5000)) / 1e6;
          orders.push(limit("btc_usdt", buy ? "buy" : "sell", price.toFixed(2), amount.toFixed(6)));
        }
        const answer = await users[user].client.createOrders(orders);
        assert.equal(answer.status, 200, answer.text);
        for (const r of answer.body as BatchOrderResult[]) {
          assert.ok("id" in r, JSON.stringify(r));
          const o = r as CreatedOrder;
          if (!o.isCancelled && o.amountUsed < o.amount) resting.push({ user, id: o.id });
        }
        placed += orders.length;
        // Cancel a quarter of what rests (some of it filled meanwhile: 400, which is fine).
        const cancel = resting.splice(0, Math.floor(resting.length / 4));
        for (const u of [0, 1]) {
          const ids = cancel.filter((c) => c.user === u).map((c) => c.id);
          if (ids.length > 0) assert.equal((await users[u].client.cancelOrders(ids)).status, 200);
        }
      }
      const l3Answer = await server.public.orderBookL3("btc_usdt");
      assert.equal(l3Answer.status, 200, l3Answer.text);
      const l3 = l3Answer.body as L3Snapshot;
      await waitFor(() => feed.seq >= l3.seq, { what: "the feed to reach the REST seq", timeoutMs: 30_000 });
      assert.deepEqual(feed.snapshot(), l3);
      assert.ok(l3.buy.length + l3.sell.length > 0, "some orders rest");
      // Nothing changed since: the L2 book derived from it is the REST book, checksum included.
      const { time: _time, ...l2 } = (await server.public.orderBook("btc_usdt")).body as OrderBook;
      assert.equal(l2.seq, l3.seq);
      assert.deepEqual(feed.book.l2(), l2);
      // Queue position: what rests ahead at the same price, in time order.
      for (const side of ["buy", "sell"] as const) {
        const orders = feed.ordersOf(side);
        for (let i = 0; i < orders.length; i++) {
          let ahead = 0n;
          for (let j = 0; j < i; j++) {
            if (orders[j].price === orders[i].price) ahead += BigInt(Math.round(orders[j].amount * 1e6));
          }
          assert.equal(
            Math.round(feed.positionOf(orders[i].id)! * 1e6),
            Number(ahead),
            `order ${orders[i].id}`,
          );
        }
      }
      assert.deepEqual(resyncs, []);
      // The best bid and offer followed the book: the last one received is the REST one.
      const want = (await server.public.bbo("btc_usdt")).body as Bbo;
      const top = (b: Bbo | null) => (b === null ? null : [b.bid, b.bidAmount, b.ask, b.askAmount]);
      await waitFor(() => isDeepStrictEqual(top(bbo.latest), top(want)), {
        what: "the BBO feed to show the REST BBO",
        detail: () => `feed ${JSON.stringify(bbo.latest)}, REST ${JSON.stringify(want)}`,
      });
      assert.deepEqual(top(want), [
        l2.buy[0]?.price ?? 0,
        l2.buy[0]?.amount ?? 0,
        l2.sell[0]?.price ?? 0,
        l2.sell[0]?.amount ?? 0,
      ]);
      assert.ok(bbos.length > 1);
    } finally {
      await feed.close();
      await bbo.close();
      await server.cancelOpenOrders();
    }
  });
});
