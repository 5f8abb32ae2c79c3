/**
 * Orders end to end: create-order answers, reservations, matching at the maker's price, partial
 * fills, market orders, self-trade prevention, cancel rules and exact balances over the three pairs
 * that share currencies. Expected balances are computed here with exact decimals (decimal.ts).
 *
 * One server for the file; every test uses its own users and cancels their open orders afterwards,
 * so each test starts from empty books.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Order } from "../../src/client/index.ts";
import { auditExchange, textBook } from "./audit.ts";
import { dec, divRoundHalfUp, fmt, mul } from "./decimal.ts";
import {
  expectError,
  expectOk,
  limit,
  market,
  placeLimit,
  sharedServer,
  type TestServer,
  type TestUser,
} from "./harness.ts";

const DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const ORDER_FIELDS = [
  "amount",
  "amountUsed",
  "createTime",
  "directionType",
  "execSeq",
  "executedQuote",
  "id",
  "isCancelled",
  "pairName",
  "price",
  "tradeType",
  "updateTime",
].sort();

/** Milliseconds of a `YYYY-MM-DD HH:MM:SS` UTC datetime. */
function utcMs(datetime: string): number {
  return Date.parse(`${datetime.replace(" ", "T")}Z`);
}

describe("orders", () => {
  let server: TestServer;
  sharedServer((s) => {
    server = s;
  });
  const place = placeLimit;

  async function orderOf(user: TestUser, id: number): Promise<Order> {
    const found = (await server.allOrders(user)).find((o) => o.id === id);
    assert.ok(found !== undefined, `order ${id} not in user-orders`);
    return found;
  }

  async function book(pair: string) {
    return textBook(expectOk(await server.public.orderBook(pair), `book ${pair}`));
  }

  describe("create-order", () => {
    it("accepts the minimum amount, the maximum amount and the maximum price exactly", async () => {
      const u = await server.newUser({ usdt: "1", btc: "10000" });
      const v = await server.newUser({ usdt: "20" });
      const min = await place(u, "btc_usdt", "buy", "1", "0.000001");
      assert.equal(min.amount, 0.000001);
      const max = await place(u, "btc_usdt", "sell", "9999999", "10000");
      assert.equal(max.amount, 10000);
      const top = await place(v, "btc_usdt", "buy", "10000000", "0.000001");
      assert.equal(top.price, 10000000);
      assert.equal(top.amountUsed, 0.000001, "it bought at the maker's price");
      assert.equal((await server.balances(u)).get("btc")!.reserved, dec("9999.999999"));
      assert.equal((await server.balances(v)).get("usdt")!.available, dec("20") - dec("9.999999"));
    });

    it("answers a new limit order with every field of 2.1 including updateTime", async () => {
      const u = await server.newUser({ usdt: "1000" });
      const started = Date.now();
      const res = await u.client.createOrder(limit("btc_usdt", "buy", "100.5", "0.5"));
      const o = expectOk(res, "create");
      assert.deepEqual(Object.keys(o).sort(), ORDER_FIELDS);
      assert.ok(Number.isSafeInteger(o.id) && o.id > 0, `id ${o.id} must be a positive integer`);
      assert.equal(o.pairName, "btc_usdt");
      assert.equal(o.tradeType, "limit");
      assert.equal(o.directionType, "buy");
      assert.equal(typeof o.price, "number");
      assert.equal(typeof o.amount, "number");
      assert.equal(typeof o.amountUsed, "number");
      assert.equal(o.price, 100.5);
      assert.equal(o.amount, 0.5);
      assert.equal(o.amountUsed, 0);
      assert.equal(o.executedQuote, 0, "nothing executed yet (5.1)");
      assert.equal(o.isCancelled, false);
      assert.match(o.createTime, DATETIME);
      assert.match(o.updateTime, DATETIME);
      assert.ok(o.updateTime >= o.createTime, "updateTime must not be before createTime");
      // UTC (docs/API.md 1): within a few seconds of now, whatever the local time zone.
      assert.ok(
        Math.abs(utcMs(o.createTime) - started) < 10_000,
        `createTime ${o.createTime} is not now in UTC`,
      );
      assert.match(res.text, /"price":100\.5[,}]/);

      const page = expectOk(await u.client.userOrders("btc_usdt"), "user-orders");
      assert.equal(page.total, 1);
      const { updateTime: _updateTime, ...withoutUpdate } = o;
      assert.deepEqual(page.items, [withoutUpdate]);
    });

    it("gives later orders strictly greater ids", async () => {
      const u = await server.newUser({ usdt: "10" });
      const a = await place(u, "btc_usdt", "buy", "1", "0.01");
      const b = await place(u, "eth_usdt", "buy", "1", "0.01");
      const c = await place(u, "btc_usdt", "buy", "1", "0.01");
      assert.ok(a.id < b.id && b.id < c.id, `ids ${a.id}, ${b.id}, ${c.id} must increase`);
    });

    it("reserves price × amount of the quote currency for a limit buy", async () => {
      const u = await server.newUser({ usdt: "1000" });
      await place(u, "btc_usdt", "buy", "100.5", "0.5");
      const cost = mul(dec("100.5"), dec("0.5"));
      assert.deepEqual(await server.balanceTable(u), {
        btc: ["0", "0"],
        usdt: [fmt(dec("1000") - cost), fmt(cost)],
        eth: ["0", "0"],
      });
      assert.deepEqual(await book("btc_usdt"), { buy: [{ price: "100.5", amount: "0.5" }], sell: [] });
    });

    it("reserves the amount of the base currency for a limit sell", async () => {
      const u = await server.newUser({ btc: "2" });
      await place(u, "btc_usdt", "sell", "30000", "0.75");
      assert.deepEqual(await server.balanceTable(u), {
        btc: ["1.25", "0.75"],
        usdt: ["0", "0"],
        eth: ["0", "0"],
      });
      assert.deepEqual(await book("btc_usdt"), { buy: [], sell: [{ price: "30000", amount: "0.75" }] });
    });

    it("refuses a limit order above the available balance with 400 amount and changes nothing", async () => {
      const u = await server.newUser({ usdt: "100", btc: "0.5" });
      expectError(await u.client.createOrder(limit("btc_usdt", "buy", "100.01", "1")), 400, "amount", "buy");
      expectError(
        await u.client.createOrder(limit("btc_usdt", "sell", "100", "0.500001")),
        400,
        "amount",
        "sell",
      );
      expectError(await u.client.createOrder(limit("eth_usdt", "sell", "100", "1")), 400, "amount", "no eth");
      assert.deepEqual(await server.balanceTable(u), {
        btc: ["0.5", "0"],
        usdt: ["100", "0"],
        eth: ["0", "0"],
      });
      assert.equal(expectOk(await u.client.userOrders("btc_usdt")).total, 0);
      assert.deepEqual(await book("btc_usdt"), { buy: [], sell: [] });
    });

    it("shares one available balance between pairs that have the same quote currency", async () => {
      const u = await server.newUser({ usdt: "100" });
      await place(u, "btc_usdt", "buy", "100", "0.8");
      expectError(await u.client.createOrder(limit("eth_usdt", "buy", "30", "1")), 400, "amount");
      await place(u, "eth_usdt", "buy", "20", "1");
      assert.deepEqual(await server.balanceTable(u), {
        btc: ["0", "0"],
        usdt: ["0", "100"],
        eth: ["0", "0"],
      });
    });
  });

  describe("matching", () => {
    it("trades at the resting order's price and refunds a buyer who offered more", async () => {
      const seller = await server.newUser({ btc: "1" });
      const buyer = await server.newUser({ usdt: "10000" });
      const maker = await place(seller, "btc_usdt", "sell", "20000", "0.4");
      const taker = await place(buyer, "btc_usdt", "buy", "20100", "0.4");
      assert.equal(taker.amountUsed, 0.4);
      assert.equal(taker.isCancelled, false);
      assert.equal(taker.price, 20100, "a limit order keeps its own price");

      const cost = mul(dec("20000"), dec("0.4")); // at the maker's price: 8000, not 8040
      assert.deepEqual(await server.balanceTable(buyer), {
        btc: ["0.4", "0"],
        usdt: [fmt(dec("10000") - cost), "0"],
        eth: ["0", "0"],
      });
      assert.deepEqual(await server.balanceTable(seller), {
        btc: ["0.6", "0"],
        usdt: [fmt(cost), "0"],
        eth: ["0", "0"],
      });
      const makerNow = await orderOf(seller, maker.id);
      assert.equal(makerNow.amountUsed, 0.4);
      assert.equal(makerNow.isCancelled, false);

      const buyerTrades = expectOk(await buyer.client.userHistory()).items;
      assert.equal(buyerTrades.length, 1);
      assert.deepEqual(
        { ...buyerTrades[0], id: 0, tradeTime: "" },
        {
          id: 0,
          pairName: "btc_usdt",
          tradeType: "limit",
          directionType: "buy",
          price: 20000,
          amount: 0.4,
          tradeTime: "",
          fee: 0,
          feeCurrency: "btc",
          // The buyer's first execution: its trade, numbered below the order change it made
          // (docs/API.md 16).
          execSeq: 1,
          // docs/API.md 20: the buyer's order, which came in and took the resting one.
          orderId: taker.id,
          liquidity: "taker",
        },
      );
      assert.match(buyerTrades[0].tradeTime, DATETIME);
      const sellerTrades = expectOk(await seller.client.userHistory()).items;
      assert.equal(sellerTrades.length, 1);
      assert.equal(sellerTrades[0].id, buyerTrades[0].id, "both sides see the same trade id");
      assert.equal(sellerTrades[0].directionType, "sell");
      assert.equal(sellerTrades[0].price, 20000);
      assert.equal(sellerTrades[0].orderId, maker.id, "the seller's trade names its resting order");
      assert.equal(sellerTrades[0].liquidity, "maker");

      const history = expectOk(await server.public.history("btc_usdt"));
      assert.equal(history[0].directionType, "buy", "public history shows the taker's direction");
      assert.equal(history[0].tradeType, "limit");
      assert.equal(history[0].price, 20000);
      assert.equal(history[0].amount, 0.4);
      assert.equal(history[0].id, buyerTrades[0].id, "docs/API.md 20: the public item's trade id");
      assert.deepEqual(await book("btc_usdt"), { buy: [], sell: [] });
    });

    it("fills a resting order in parts and keeps its remainder in the book", async () => {
      const seller = await server.newUser({ btc: "1" });
      const b1 = await server.newUser({ usdt: "10000" });
      const b2 = await server.newUser({ usdt: "30000" });
      const maker = await place(seller, "btc_usdt", "sell", "25000", "1");
      const first = await place(b1, "btc_usdt", "buy", "25000", "0.3");
      assert.equal(first.amountUsed, 0.3);
      assert.equal((await orderOf(seller, maker.id)).amountUsed, 0.3);
      assert.deepEqual(await book("btc_usdt"), { buy: [], sell: [{ price: "25000", amount: "0.7" }] });
      assert.deepEqual((await server.balanceTable(seller)).btc, ["0", "0.7"]);

      const second = await place(b2, "btc_usdt", "buy", "25000", "1");
      assert.equal(second.amountUsed, 0.7);
      assert.equal(second.isCancelled, false);
      assert.deepEqual(await book("btc_usdt"), { buy: [{ price: "25000", amount: "0.3" }], sell: [] });
      const makerNow = await orderOf(seller, maker.id);
      assert.equal(makerNow.amountUsed, 1);
      assert.equal(makerNow.isCancelled, false);
      assert.deepEqual(await server.balanceTable(b2), {
        btc: ["0.7", "0"],
        usdt: [fmt(dec("30000") - mul(dec("25000"), dec("1"))), fmt(mul(dec("25000"), dec("0.3")))],
        eth: ["0", "0"],
      });
      assert.deepEqual(await server.balanceTable(seller), {
        btc: ["0", "0"],
        usdt: ["25000", "0"],
        eth: ["0", "0"],
      });
    });

    it("matches best price first and, at one price, the oldest order first", async () => {
      const s1 = await server.newUser({ btc: "1" });
      const s2 = await server.newUser({ btc: "1" });
      const s3 = await server.newUser({ btc: "1" });
      const buyer = await server.newUser({ usdt: "1000" });
      const late = await place(s1, "btc_usdt", "sell", "101", "0.1");
      const early = await place(s2, "btc_usdt", "sell", "102", "0.1");
      const later = await place(s3, "btc_usdt", "sell", "101", "0.1");
      const taker = await place(buyer, "btc_usdt", "buy", "102", "0.15");
      assert.equal(taker.amountUsed, 0.15);
      assert.equal((await orderOf(s1, late.id)).amountUsed, 0.1, "oldest at the best price fills first");
      assert.equal((await orderOf(s3, later.id)).amountUsed, 0.05);
      assert.equal((await orderOf(s2, early.id)).amountUsed, 0, "a worse price waits");
      const cost = mul(dec("101"), dec("0.15"));
      assert.deepEqual((await server.balanceTable(buyer)).usdt, [fmt(dec("1000") - cost), "0"]);
    });
  });

  describe("market orders", () => {
    it("walks the book, reports the average price rounded half-up and cancels what it cannot fill", async () => {
      const seller = await server.newUser({ btc: "1" });
      const buyer = await server.newUser({ usdt: "1000" });
      await place(seller, "btc_usdt", "sell", "100", "0.1");
      await place(seller, "btc_usdt", "sell", "100.01", "0.1");
      // The price sent with a market order is ignored.
      const o = expectOk(await buyer.client.createOrder(market("btc_usdt", "buy", "0.5", "1")), "market buy");
      const spent = mul(dec("100"), dec("0.1")) + mul(dec("100.01"), dec("0.1")); // 20.001
      const used = dec("0.2");
      const average = divRoundHalfUp(spent, used, 2); // 100.005 -> 100.01 (half-up, not half-even)
      assert.equal(fmt(average), "100.01");
      assert.equal(o.tradeType, "market");
      assert.equal(o.directionType, "buy");
      assert.equal(o.amount, 0.5);
      assert.equal(o.amountUsed, 0.2);
      assert.equal(o.isCancelled, true, "the unfilled remainder is cancelled at once");
      assert.equal(fmt(dec(o.price)), fmt(average));
      assert.deepEqual(await server.balanceTable(buyer), {
        btc: ["0.2", "0"],
        usdt: [fmt(dec("1000") - spent), "0"],
        eth: ["0", "0"],
      });
      assert.deepEqual(await server.balanceTable(seller), {
        btc: ["0.8", "0"],
        usdt: [fmt(spent), "0"],
        eth: ["0", "0"],
      });
      const history = expectOk(await server.public.history("btc_usdt")).slice(0, 2);
      assert.deepEqual(
        history.map((t) => [t.directionType, t.tradeType, t.price, t.amount]),
        [
          ["buy", "market", 100.01, 0.1],
          ["buy", "market", 100, 0.1],
        ],
      );
      const stored = await orderOf(buyer, o.id);
      const { updateTime: _u, ...final } = o;
      assert.deepEqual(stored, final, "a market order's answer is final");
    });

    it("fills a market sell against bids and releases the unsold remainder", async () => {
      const bidder = await server.newUser({ usdt: "100" });
      const seller = await server.newUser({ btc: "1" });
      await place(bidder, "btc_usdt", "buy", "50", "0.2");
      const o = expectOk(await seller.client.createOrder(market("btc_usdt", "sell", "0.5")), "market sell");
      assert.equal(o.amountUsed, 0.2);
      assert.equal(o.isCancelled, true);
      assert.equal(o.price, 50);
      assert.deepEqual(await server.balanceTable(seller), {
        btc: ["0.8", "0"],
        usdt: ["10", "0"],
        eth: ["0", "0"],
      });
      assert.deepEqual(await server.balanceTable(bidder), {
        btc: ["0.2", "0"],
        usdt: ["90", "0"],
        eth: ["0", "0"],
      });
    });

    it("marks a fully filled market order as executed, not cancelled", async () => {
      const seller = await server.newUser({ btc: "2" });
      const buyer = await server.newUser({ usdt: "500" });
      await place(seller, "btc_usdt", "sell", "1000", "1");
      const o = expectOk(await buyer.client.createOrder(market("btc_usdt", "buy", "0.4")), "market buy");
      assert.equal(o.amountUsed, 0.4);
      assert.equal(o.isCancelled, false);
      assert.equal(o.price, 1000);
      assert.deepEqual(await server.balanceTable(buyer), {
        btc: ["0.4", "0"],
        usdt: ["100", "0"],
        eth: ["0", "0"],
      });
    });

    it("refuses a market order with no opposite orders of other users and changes nothing", async () => {
      const u = await server.newUser({ usdt: "1000", btc: "1", eth: "1" });
      const own = await place(u, "btc_usdt", "sell", "100", "0.1");
      expectError(
        await u.client.createOrder(market("btc_usdt", "buy", "0.1")),
        400,
        "amount",
        "only own orders",
      );
      expectError(await u.client.createOrder(market("eth_btc", "sell", "0.5")), 400, "amount", "empty book");
      const orders = await server.allOrders(u);
      assert.equal(orders.length, 1, "no market order was created");
      assert.equal(orders[0].id, own.id);
      assert.equal(orders[0].isCancelled, false, "the own resting order is untouched");
      assert.equal(orders[0].amountUsed, 0);
      assert.deepEqual(await server.balanceTable(u), {
        btc: ["0.9", "0.1"],
        usdt: ["1000", "0"],
        eth: ["1", "0"],
      });
      assert.deepEqual(await book("btc_usdt"), { buy: [], sell: [{ price: "100", amount: "0.1" }] });
    });

    it("refuses a market buy that would cost more than the available balance", async () => {
      const seller = await server.newUser({ btc: "1" });
      const buyer = await server.newUser({ usdt: "120" });
      const a = await place(seller, "btc_usdt", "sell", "100", "0.5");
      const b = await place(seller, "btc_usdt", "sell", "200", "0.5");
      // 0.5 × 100 + 0.5 × 200 = 150 > 120
      expectError(await buyer.client.createOrder(market("btc_usdt", "buy", "1")), 400, "amount");
      assert.deepEqual(await server.balanceTable(buyer), {
        btc: ["0", "0"],
        usdt: ["120", "0"],
        eth: ["0", "0"],
      });
      assert.equal((await orderOf(seller, a.id)).amountUsed, 0);
      assert.equal((await orderOf(seller, b.id)).amountUsed, 0);
      assert.equal(expectOk(await buyer.client.userOrders("btc_usdt")).total, 0);

      // 0.5 × 100 + 0.1 × 200 = 70 ≤ 120; average 116.666... -> 116.67
      const o = expectOk(
        await buyer.client.createOrder(market("btc_usdt", "buy", "0.6")),
        "affordable market buy",
      );
      const spent = mul(dec("100"), dec("0.5")) + mul(dec("200"), dec("0.1"));
      assert.equal(o.amountUsed, 0.6);
      assert.equal(o.isCancelled, false);
      assert.equal(fmt(dec(o.price)), fmt(divRoundHalfUp(spent, dec("0.6"), 2)));
      assert.equal(o.price, 116.67);
      assert.deepEqual(await server.balanceTable(buyer), {
        btc: ["0.6", "0"],
        usdt: [fmt(dec("120") - spent), "0"],
        eth: ["0", "0"],
      });
    });
  });

  describe("self-trade prevention", () => {
    it("cancels the caller's own resting order that an incoming order meets and trades with others", async () => {
      const a = await server.newUser({ btc: "1", usdt: "1000" });
      const b = await server.newUser({ btc: "1" });
      const own = await place(a, "btc_usdt", "sell", "300", "0.1");
      await place(b, "btc_usdt", "sell", "301", "0.1");
      const incoming = await place(a, "btc_usdt", "buy", "301", "0.2");
      assert.equal(incoming.amountUsed, 0.1, "it trades with the other user only");
      assert.equal(incoming.isCancelled, false, "a limit order rests with its remainder");

      const stored = await orderOf(a, own.id);
      assert.equal(stored.isCancelled, true, "the own resting order is cancelled");
      assert.equal(stored.amountUsed, 0);
      const trades = expectOk(await a.client.userHistory()).items;
      assert.deepEqual(
        trades.map((t) => [t.directionType, t.price, t.amount]),
        [["buy", 301, 0.1]],
        "no trade with itself",
      );
      assert.deepEqual(await server.balanceTable(a), {
        btc: ["1.1", "0"],
        usdt: [fmt(dec("1000") - dec("30.1") - dec("30.1")), "30.1"],
        eth: ["0", "0"],
      });
      assert.deepEqual(await server.balanceTable(b), {
        btc: ["0.9", "0"],
        usdt: ["30.1", "0"],
        eth: ["0", "0"],
      });
      assert.deepEqual(await book("btc_usdt"), { buy: [{ price: "301", amount: "0.1" }], sell: [] });
    });

    it("reports the self-trade cancel on the owner's user_orders stream like any cancel", async () => {
      const a = await server.newUser({ btc: "1", usdt: "1000" });
      const own = await place(a, "btc_usdt", "sell", "500", "0.1");
      const stream = await server.stream([`user_orders:${a.uid}`], a);
      try {
        const incoming = await place(a, "btc_usdt", "buy", "500", "0.1");
        assert.equal(incoming.amountUsed, 0);
        const cancelled = await stream.next<Order>((m) => m.data.id === own.id && m.data.isCancelled, 5000);
        assert.equal(cancelled.stream, `user_orders:${a.uid}`);
        assert.deepEqual(
          cancelled.data,
          await orderOf(a, own.id),
          "the stream record equals the REST record",
        );
        const created = await stream.next<Order>((m) => m.data.id === incoming.id, 5000);
        const { updateTime: _u, ...view } = incoming;
        assert.deepEqual(created.data, view);
      } finally {
        await stream.close();
      }
    });
  });

  describe("cancel", () => {
    it("cancels an own open order, answers [] and releases the reservation", async () => {
      const u = await server.newUser({ usdt: "100" });
      const o = await place(u, "btc_usdt", "buy", "10", "1");
      assert.deepEqual((await server.balanceTable(u)).usdt, ["90", "10"]);
      const res = await u.client.cancelOrder(o.id);
      assert.deepEqual(expectOk(res, "cancel"), []);
      assert.equal(res.text.trim(), "[]");
      assert.deepEqual((await server.balanceTable(u)).usdt, ["100", "0"]);
      const stored = await orderOf(u, o.id);
      assert.equal(stored.isCancelled, true);
      assert.equal(stored.amountUsed, 0);
      assert.deepEqual(await book("btc_usdt"), { buy: [], sell: [] });
    });

    it("cancels a partly executed order and releases only the remainder", async () => {
      const seller = await server.newUser({ btc: "1" });
      const buyer = await server.newUser({ usdt: "100" });
      const o = await place(seller, "btc_usdt", "sell", "20", "1");
      await place(buyer, "btc_usdt", "buy", "20", "0.4");
      assert.deepEqual(expectOk(await seller.client.cancelOrder(o.id)), []);
      const stored = await orderOf(seller, o.id);
      assert.equal(stored.isCancelled, true);
      assert.equal(stored.amountUsed, 0.4);
      assert.deepEqual(await server.balanceTable(seller), {
        btc: ["0.6", "0"],
        usdt: ["8", "0"],
        eth: ["0", "0"],
      });
    });

    it("answers the same 400 orderId for an unknown id and for another user's order", async () => {
      const owner = await server.newUser({ usdt: "100" });
      const other = await server.newUser({ usdt: "100" });
      const o = await place(owner, "btc_usdt", "buy", "10", "1");
      const foreign = await other.client.cancelOrder(o.id);
      const unknown = await other.client.cancelOrder(2_000_000_000);
      expectError(foreign, 400, "orderId", "another user's order");
      expectError(unknown, 400, "orderId", "unknown id");
      assert.equal(foreign.text, unknown.text, "the two answers must not tell the cases apart");
      const stored = await orderOf(owner, o.id);
      assert.equal(stored.isCancelled, false, "another user's cancel changes nothing");
      assert.deepEqual((await server.balanceTable(owner)).usdt, ["90", "10"]);
    });

    it("refuses to cancel an order that is already cancelled", async () => {
      const u = await server.newUser({ usdt: "100" });
      const o = await place(u, "btc_usdt", "buy", "10", "1");
      expectOk(await u.client.cancelOrder(o.id));
      const again = expectError(await u.client.cancelOrder(o.id), 400, "orderId", "second cancel");
      const notFound = expectError(await u.client.cancelOrder(2_000_000_001), 400, "orderId", "unknown");
      assert.notDeepEqual(again, notFound, "already cancelled is not reported as not found");
      assert.deepEqual((await server.balanceTable(u)).usdt, ["100", "0"], "released once only");
    });

    it("refuses to cancel an order that is fully executed", async () => {
      const seller = await server.newUser({ btc: "1" });
      const buyer = await server.newUser({ usdt: "100" });
      const maker = await place(seller, "btc_usdt", "sell", "10", "0.1");
      const taker = await place(buyer, "btc_usdt", "buy", "10", "0.1");
      const makerAnswer = expectError(
        await seller.client.cancelOrder(maker.id),
        400,
        "orderId",
        "filled maker",
      );
      expectError(await buyer.client.cancelOrder(taker.id), 400, "orderId", "filled taker");
      const notFound = expectError(await seller.client.cancelOrder(2_000_000_002), 400, "orderId");
      const cancelledOrder = await place(buyer, "btc_usdt", "buy", "1", "1");
      expectOk(await buyer.client.cancelOrder(cancelledOrder.id));
      const cancelled = expectError(await buyer.client.cancelOrder(cancelledOrder.id), 400, "orderId");
      assert.notDeepEqual(makerAnswer, notFound, "executed is not reported as not found");
      assert.notDeepEqual(makerAnswer, cancelled, "executed is not reported as cancelled");
      const stored = await orderOf(seller, maker.id);
      assert.equal(stored.isCancelled, false);
      assert.equal(stored.amountUsed, 0.1);
    });
  });

  describe("balances over three pairs", () => {
    it("keeps exact balances when one user trades on three pairs that share currencies", async () => {
      const m = await server.newUser({ usdt: "100000", btc: "10", eth: "100" });
      const x = await server.newUser({ usdt: "1000" });

      // eth_usdt: x buys 0.12345 eth at 2000.01 (7 decimals of usdt).
      await place(m, "eth_usdt", "sell", "2000.01", "0.12345");
      const t1 = await place(x, "eth_usdt", "buy", "2000.01", "0.12345");
      assert.equal(t1.amountUsed, 0.12345);
      // eth_btc: x sells 0.1234 eth at 0.052345 btc (10 decimals of btc).
      await place(m, "eth_btc", "buy", "0.052345", "0.1234");
      const t2 = await place(x, "eth_btc", "sell", "0.052345", "0.1234");
      assert.equal(t2.amountUsed, 0.1234);
      // btc_usdt: x sells 0.000123 btc at 30000.07 (8 decimals of usdt).
      await place(m, "btc_usdt", "buy", "30000.07", "0.000123");
      const t3 = await place(x, "btc_usdt", "sell", "30000.07", "0.000123");
      assert.equal(t3.amountUsed, 0.000123);

      const ethUsdt = mul(dec("2000.01"), dec("0.12345"));
      const ethBtc = mul(dec("0.052345"), dec("0.1234"));
      const btcUsdt = mul(dec("30000.07"), dec("0.000123"));
      const xUsdt = dec("1000") - ethUsdt + btcUsdt;
      const xEth = dec("0.12345") - dec("0.1234");
      const xBtc = ethBtc - dec("0.000123");
      assert.equal(fmt(xUsdt), "756.78877411", "the test's own arithmetic");
      assert.deepEqual(await server.balanceTable(x), {
        btc: [fmt(xBtc), "0"],
        usdt: [fmt(xUsdt), "0"],
        eth: [fmt(xEth), "0"],
      });
      assert.deepEqual(await server.balanceTable(m), {
        btc: [fmt(dec("10") - ethBtc + dec("0.000123")), "0"],
        usdt: [fmt(dec("100000") + ethUsdt - btcUsdt), "0"],
        eth: [fmt(dec("100") - dec("0.12345") + dec("0.1234")), "0"],
      });
    });
  });

  describe("conservation", () => {
    it("holds every currency's deposits minus withdrawals over all users, with nothing negative", async () => {
      const u = await server.newUser({ usdt: "50", btc: "0.5" });
      await place(u, "btc_usdt", "buy", "10", "1");
      expectError(await server.withdraw(u, "usdt", "40.00000001"), 400, "amount", "withdraw above available");
      expectOk(await server.withdraw(u, "usdt", "40"), "withdraw");
      expectOk(await server.withdraw(u, "btc", "0.25"), "withdraw");
      assert.deepEqual(await server.balanceTable(u), {
        btc: ["0.25", "0"],
        usdt: ["0", "10"],
        eth: ["0", "0"],
      });
      // Every user of this file: ledger rebuilt from trades and open orders, books, conservation.
      await auditExchange(server);
    });
  });
});
