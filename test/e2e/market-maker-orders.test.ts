/**
 * Time in force, post-only and amend end to end (docs/API.md 8.2, 8.3) on the real server: what trades,
 * what rests, what is refused, what each order record says, and that reservations stay exact (the
 * audits of audit.ts rebuild every balance and book from the outside).
 */

import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import type { Order } from "../../src/client/index.ts";
import { SessionSocket } from "../session/helpers.ts";
import { waitFor } from "../wait.ts";
import { auditExchange, textBook } from "./audit.ts";
import { dec } from "./decimal.ts";
import {
  expectError,
  expectOk,
  limit,
  placeLimit,
  sharedServer,
  type TestServer,
  type TestUser,
} from "./harness.ts";

describe("time in force, post-only and amend", () => {
  let server: TestServer;
  sharedServer((s) => {
    server = s;
  });
  // After each test's orders are cancelled: the whole exchange audited from the outside.
  afterEach(async () => {
    if (server?.running) await auditExchange(server);
  });
  const place = placeLimit;

  async function book(pair: string) {
    return textBook(expectOk(await server.public.orderBook(pair), `book ${pair}`));
  }

  async function reserved(user: TestUser, currency: string): Promise<bigint> {
    return (await server.balances(user)).get(currency)?.reserved ?? 0n;
  }

  describe("IOC", () => {
    it("fills what it can at its limit and cancels the rest, resting nothing", async () => {
      const maker = await server.newUser({ btc: "1" });
      const taker = await server.newUser({ usdt: "10000" });
      await place(maker, "btc_usdt", "sell", "100", "0.3");
      await place(maker, "btc_usdt", "sell", "105", "0.3");
      const o = expectOk(
        await taker.client.createOrder({ ...limit("btc_usdt", "buy", "101", "0.5"), timeInForce: "IOC" }),
      );
      assert.equal(o.amountUsed, 0.3);
      assert.equal(o.isCancelled, true);
      assert.equal(o.timeInForce, "IOC");
      assert.deepEqual((await book("btc_usdt")).buy, []);
      assert.equal(await reserved(taker, "usdt"), 0n);
    });

    it("ends cancelled with nothing to match, and not cancelled when fully filled", async () => {
      const maker = await server.newUser({ btc: "1" });
      const taker = await server.newUser({ usdt: "10000" });
      const none = expectOk(
        await taker.client.createOrder({ ...limit("btc_usdt", "buy", "50", "0.1"), timeInForce: "IOC" }),
      );
      assert.equal(none.amountUsed, 0);
      assert.equal(none.isCancelled, true);
      await place(maker, "btc_usdt", "sell", "100", "0.2");
      const full = expectOk(
        await taker.client.createOrder({ ...limit("btc_usdt", "buy", "100", "0.2"), timeInForce: "IOC" }),
      );
      assert.equal(full.amountUsed, 0.2);
      assert.equal(full.isCancelled, false);
    });
  });

  describe("FOK", () => {
    it("executes completely when other users' orders at its price or better cover it", async () => {
      const maker = await server.newUser({ btc: "1" });
      const taker = await server.newUser({ usdt: "10000" });
      await place(maker, "btc_usdt", "sell", "100", "0.2");
      await place(maker, "btc_usdt", "sell", "101", "0.3");
      const o = expectOk(
        await taker.client.createOrder({ ...limit("btc_usdt", "buy", "101", "0.5"), timeInForce: "FOK" }),
      );
      assert.equal(o.amountUsed, 0.5);
      assert.equal(o.isCancelled, false);
      assert.equal(o.timeInForce, "FOK");
      assert.equal(expectOk(await taker.client.userHistory()).total, 2);
    });

    it("trades nothing when one lot is missing, and is stored and streamed as cancelled", async () => {
      const maker = await server.newUser({ btc: "1" });
      const taker = await server.newUser({ usdt: "10000" });
      await place(maker, "btc_usdt", "sell", "100", "0.2");
      const before = await book("btc_usdt");
      const stream = await server.stream([`user_orders:${taker.uid}`], taker);
      try {
        const o = expectOk(
          await taker.client.createOrder({
            ...limit("btc_usdt", "buy", "100", "0.200001"),
            timeInForce: "FOK",
          }),
        );
        assert.equal(o.amountUsed, 0);
        assert.equal(o.isCancelled, true);
        const m = await stream.next((x) => (x.data as Order).id === o.id);
        assert.equal((m.data as Order).isCancelled, true);
        assert.equal((m.data as Order).timeInForce, "FOK");
        assert.deepEqual(await book("btc_usdt"), before);
        const stored = expectOk(await taker.client.order(o.id));
        assert.equal(stored.isCancelled, true);
        assert.equal(stored.amountUsed, 0);
        assert.equal(expectOk(await taker.client.userHistory()).total, 0);
        assert.equal(await reserved(taker, "usdt"), 0n);
      } finally {
        await stream.close();
      }
    });

    it("does not count the user's own orders, and leaves them resting when it is killed", async () => {
      const maker = await server.newUser({ btc: "1" });
      const u = await server.newUser({ usdt: "10000", btc: "1" });
      await place(maker, "btc_usdt", "sell", "100", "0.1");
      const own = await place(u, "btc_usdt", "sell", "99", "0.5");
      const o = expectOk(
        await u.client.createOrder({ ...limit("btc_usdt", "buy", "100", "0.2"), timeInForce: "FOK" }),
      );
      assert.equal(o.isCancelled, true);
      assert.equal(o.amountUsed, 0);
      assert.deepEqual(
        expectOk(await u.client.openOrders("btc_usdt")).map((x) => x.id),
        [own.id],
        "the own order is not self-trade cancelled",
      );
    });
  });

  describe("post-only", () => {
    it("rests when it would not trade and says so in its record", async () => {
      const u = await server.newUser({ usdt: "1000" });
      const maker = await server.newUser({ btc: "1" });
      await place(maker, "btc_usdt", "sell", "100", "0.1");
      const o = expectOk(
        await u.client.createOrder({ ...limit("btc_usdt", "buy", "99.99", "1"), postOnly: true }),
      );
      assert.equal(o.postOnly, true);
      assert.equal("timeInForce" in o, false);
      const listed = expectOk(await u.client.openOrders("btc_usdt"));
      assert.equal(listed[0].postOnly, true);
      const g = expectOk(
        await u.client.createOrder({
          ...limit("btc_usdt", "buy", "99", "1"),
          postOnly: true,
          timeInForce: "GTC",
        }),
      );
      assert.equal(g.timeInForce, "GTC");
    });

    it("is refused with errors.price when its price reaches any opposite order, own included", async () => {
      const u = await server.newUser({ usdt: "1000", btc: "1" });
      const maker = await server.newUser({ btc: "1" });
      await place(maker, "btc_usdt", "sell", "100", "0.1");
      const before = await server.balanceTable(u);
      for (const price of ["100", "150"]) {
        const res = await u.client.createOrder({ ...limit("btc_usdt", "buy", price, "0.1"), postOnly: true });
        assert.deepEqual(expectError(res, 400, "price"), ["Post-only order would take liquidity"]);
      }
      await place(u, "btc_usdt", "buy", "90", "0.1");
      const own = await u.client.createOrder({ ...limit("btc_usdt", "sell", "90", "0.1"), postOnly: true });
      expectError(own, 400, "price", "own resting bid");
      assert.equal(expectOk(await u.client.openOrders("btc_usdt")).length, 1);
      assert.equal(expectOk(await u.client.userHistory()).total, 0);
      const after = await server.balanceTable(u);
      assert.deepEqual(after.btc, before.btc);
    });
  });

  describe("amend-order", () => {
    it("keeps the order's place when only its amount goes down", async () => {
      const a = await server.newUser({ usdt: "1000" });
      const b = await server.newUser({ usdt: "1000" });
      const seller = await server.newUser({ btc: "1" });
      const first = await place(a, "btc_usdt", "buy", "100", "0.5");
      const second = await place(b, "btc_usdt", "buy", "100", "0.5");
      const amended = expectOk(await a.client.amendOrder({ orderId: first.id, amount: "0.2" }));
      assert.equal(amended.id, first.id);
      assert.equal(amended.amount, 0.2);
      assert.equal(amended.price, 100);
      assert.ok(typeof amended.updateTime === "string");
      assert.equal(await reserved(a, "usdt"), dec("20"));
      await place(seller, "btc_usdt", "sell", "100", "0.2");
      assert.equal(
        expectOk(await a.client.order(first.id)).amountUsed,
        0.2,
        "the amended order filled first",
      );
      assert.equal(expectOk(await b.client.order(second.id)).amountUsed, 0);
    });

    it("sends the order to the back of its level when its amount goes up", async () => {
      const a = await server.newUser({ usdt: "1000" });
      const b = await server.newUser({ usdt: "1000" });
      const seller = await server.newUser({ btc: "1" });
      const first = await place(a, "btc_usdt", "buy", "100", "0.2");
      const second = await place(b, "btc_usdt", "buy", "100", "0.2");
      expectOk(await a.client.amendOrder({ orderId: first.id, amount: "0.3" }));
      assert.equal(await reserved(a, "usdt"), dec("30"));
      await place(seller, "btc_usdt", "sell", "100", "0.2");
      assert.equal(expectOk(await b.client.order(second.id)).amountUsed, 0.2, "the other order filled first");
      assert.equal(expectOk(await a.client.order(first.id)).amountUsed, 0);
      assert.deepEqual((await book("btc_usdt")).buy, [{ price: "100", amount: "0.3" }]);
    });

    it("moves the order to a new price where it may trade, at the makers' prices", async () => {
      const u = await server.newUser({ usdt: "1000" });
      const seller = await server.newUser({ btc: "1" });
      const o = await place(u, "btc_usdt", "buy", "90", "0.5");
      await place(seller, "btc_usdt", "sell", "95", "0.2");
      const stream = await server.stream([`user_orders:${u.uid}`], u);
      try {
        const moved = expectOk(await u.client.amendOrder({ orderId: o.id, price: "96" }));
        assert.equal(moved.price, 96);
        assert.equal(moved.amountUsed, 0.2);
        assert.equal(moved.isCancelled, false);
        await stream.next((m) => (m.data as Order).id === o.id && (m.data as Order).price === 96);
        const trades = expectOk(await u.client.userHistory()).items;
        assert.equal(trades[0].price, 95);
        // 0.3 still open at 96: reserved exactly 28.8.
        assert.equal(await reserved(u, "usdt"), dec("28.8"));
        assert.deepEqual((await book("btc_usdt")).buy, [{ price: "96", amount: "0.3" }]);
        // Move down and reduce at once.
        const down = expectOk(await u.client.amendOrder({ orderId: o.id, price: "80", amount: "0.4" }));
        assert.equal(down.amount, 0.4);
        assert.equal(await reserved(u, "usdt"), dec("16"));
      } finally {
        await stream.close();
      }
    });

    it("may fill completely when moved across the book", async () => {
      const u = await server.newUser({ usdt: "1000" });
      const seller = await server.newUser({ btc: "1" });
      const o = await place(u, "btc_usdt", "buy", "90", "0.1");
      await place(seller, "btc_usdt", "sell", "95", "0.5");
      const moved = expectOk(await u.client.amendOrder({ orderId: o.id, price: "99" }));
      assert.equal(moved.amountUsed, 0.1);
      assert.equal(await reserved(u, "usdt"), 0n);
      expectError(
        await u.client.amendOrder({ orderId: o.id, amount: "0.2" }),
        400,
        "orderId",
        "now executed",
      );
    });

    it("refuses an increase the balance cannot cover, and changes nothing", async () => {
      const u = await server.newUser({ usdt: "100" });
      const o = await place(u, "btc_usdt", "buy", "100", "0.5");
      const res = await u.client.amendOrder({ orderId: o.id, amount: "1.5" });
      expectError(res, 400, "amount");
      assert.equal(await reserved(u, "usdt"), dec("50"));
      expectError(await u.client.amendOrder({ orderId: o.id, price: "300" }), 400, "amount");
      assert.deepEqual(expectOk(await u.client.order(o.id)), o);
    });

    it("refuses an amount not above what executed, a post-only order that would trade, and empty or bad bodies", async () => {
      const u = await server.newUser({ usdt: "1000" });
      const seller = await server.newUser({ btc: "1" });
      const o = await place(u, "btc_usdt", "buy", "100", "0.5");
      await place(seller, "btc_usdt", "sell", "100", "0.2");
      for (const amount of ["0.2", "0.1"]) {
        const res = await u.client.amendOrder({ orderId: o.id, amount });
        assert.deepEqual(expectError(res, 400, "amount"), [
          "Amount must be above the amount already executed",
        ]);
      }
      expectOk(await u.client.amendOrder({ orderId: o.id, amount: "0.200001" }));
      await place(seller, "btc_usdt", "sell", "110", "0.1");
      const p = expectOk(
        await u.client.createOrder({ ...limit("btc_usdt", "buy", "105", "0.1"), postOnly: true }),
      );
      expectError(await u.client.amendOrder({ orderId: p.id, price: "110" }), 400, "price");
      assert.deepEqual(expectOk(await u.client.order(p.id)), p);
      expectOk(await u.client.amendOrder({ orderId: p.id, price: "109.99" }));
      expectError(await u.client.amendOrder({ orderId: p.id }), 400, "body");
      expectError(await u.client.amendOrder({ orderId: p.id, price: "1.001" }), 400, "price");
      expectError(await u.client.amendOrder({ orderId: p.id, amount: "0" }), 400, "amount");
      expectError(await u.client.amendOrder({ orderId: "x", amount: "1" }), 400, "orderId");
      const extra = await u.client.raw("POST", "/1.0/trade/amend-order", {
        body: JSON.stringify({ orderId: p.id, amount: "0.2", postOnly: false }),
        headers: { "Content-Type": "application/json" },
        sign: true,
      });
      expectError(extra, 400, "postOnly");
    });

    it("answers cancelled, executed, unknown and other users' orders as cancel-order does", async () => {
      const u = await server.newUser({ usdt: "1000" });
      const other = await server.newUser({ usdt: "1000", btc: "1" });
      const c = await place(u, "btc_usdt", "buy", "100", "0.1");
      expectOk(await u.client.cancelOrder(c.id));
      assert.deepEqual(
        expectError(await u.client.amendOrder({ orderId: c.id, amount: "1" }), 400, "orderId"),
        ["Order already cancelled"],
      );
      const theirs = await place(other, "btc_usdt", "buy", "100", "0.1");
      assert.deepEqual(
        expectError(await u.client.amendOrder({ orderId: theirs.id, amount: "1" }), 400, "orderId"),
        ["Order not found"],
      );
      expectError(await u.client.amendOrder({ orderId: 999_999_999, amount: "1" }), 400, "orderId");
      const filled = await place(u, "btc_usdt", "buy", "100", "0.1");
      await place(other, "btc_usdt", "sell", "99", "0.1");
      const ex = await u.client.amendOrder({ orderId: filled.id, amount: "1" });
      assert.deepEqual(expectError(ex, 400, "orderId"), ["Order already executed"]);
    });

    it("applies many amends of one order pipelined in one session in the order they were sent", async () => {
      const u = await server.newUser({ usdt: "10000" });
      const o = await place(u, "btc_usdt", "buy", "100", "1");
      const s = await SessionSocket.logon(server, u, { reports: false });
      try {
        // One session runs its calls in the order they arrive (docs/API.md 13): the last one sent wins.
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            s.call("order.amend", { orderId: o.id, price: String(101 + i) }),
          ),
        );
        assert.deepEqual(
          answers.map((a) => [a.status, (a.result as Order).price]),
          Array.from({ length: 10 }, (_, i) => [200, 101 + i]),
          "each amend answered with the price it set",
        );
        const answered = s.frames.filter((f) => "status" in f && f.id !== 1).map((f) => f.id);
        assert.deepEqual(answered, [2, 3, 4, 5, 6, 7, 8, 9, 10, 11], "answered in the order sent");
        assert.equal(expectOk(await u.client.order(o.id)).price, 110);
        assert.equal(await reserved(u, "usdt"), dec("110"));
        assert.deepEqual(await book("btc_usdt"), { buy: [{ price: "110", amount: "1" }], sell: [] });
      } finally {
        s.close();
      }
    });

    it("applies each of many amends of one order sent at once over REST exactly once", async () => {
      const u = await server.newUser({ usdt: "10000" });
      const o = await place(u, "btc_usdt", "buy", "100", "1");
      const stream = await server.stream([`user_orders:${u.uid}`], u);
      try {
        // Separate connections: the order they reach the server in is not theirs to choose. What
        // holds whatever it is: every amend applied once, and the order ends as the last one applied
        // left it (user_orders sends the order after each change in commit order, docs/API.md 12.2).
        const prices = Array.from({ length: 10 }, (_, i) => 101 + i);
        const answers = await Promise.all(
          prices.map((price) => u.client.amendOrder({ orderId: o.id, price: String(price) })),
        );
        assert.deepEqual(
          answers.map((a) => expectOk(a).price),
          prices,
          "each amend answered with the price it set",
        );
        const changes = await waitFor(
          () => {
            const seen = stream.messages.filter((m) => (m.data as Order).id === o.id);
            return seen.length >= prices.length && seen.map((m) => (m.data as Order).price);
          },
          { what: "the ten amends on user_orders" },
        );
        assert.deepEqual(
          [...changes].sort((a, b) => a - b),
          prices,
          "each amend streamed once",
        );
        const last = changes[changes.length - 1];
        assert.equal(expectOk(await u.client.order(o.id)).price, last);
        assert.equal(await reserved(u, "usdt"), dec(String(last)));
        assert.deepEqual(await book("btc_usdt"), { buy: [{ price: String(last), amount: "1" }], sell: [] });
      } finally {
        await stream.close();
      }
    });
  });

  describe("durability", () => {
    it("keeps an acknowledged amend after kill -9", async () => {
      const u = await server.newUser({ usdt: "1000", btc: "1" });
      const buy = await place(u, "btc_usdt", "buy", "100", "0.5");
      const sell = await place(u, "btc_usdt", "sell", "200", "0.5");
      const a = expectOk(await u.client.amendOrder({ orderId: buy.id, price: "101", amount: "0.4" }));
      const b = expectOk(await u.client.amendOrder({ orderId: sell.id, amount: "0.3" }));
      await server.kill();
      await server.restart();
      const { updateTime: _a, ...aStored } = a;
      const { updateTime: _b, ...bStored } = b;
      const open = expectOk(await u.client.openOrders("btc_usdt"));
      assert.deepEqual(open, [bStored, aStored]);
      assert.equal(await reserved(u, "usdt"), dec("40.4"));
      assert.equal(await reserved(u, "btc"), dec("0.3"));
    });
  });
});
