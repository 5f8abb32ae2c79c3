/**
 * Stop orders end to end (docs/API.md 18): validation, the waiting state (open, `triggered: false`,
 * its hold, in no public view), the trigger by a trade in both directions, simultaneous triggers in
 * id order, a cascade in one step, a triggered stop-market buy that its balance cannot pay, cancels
 * of waiting orders, and a waiting order across a restart. A real server on its own SQLite file
 * and its pair workers; every answer is checked against the OpenAPI document.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { CreateOrderRequest, Order } from "../../src/client/index.ts";
import { SessionSocket } from "../session/helpers.ts";
import { waitFor } from "../wait.ts";
import { auditExchange } from "./audit.ts";
import { dec } from "./decimal.ts";
import { expectError, expectOk, limit, placeLimit, TestServer, type TestUser } from "./harness.ts";
import { read, tradeAt } from "./stop-helpers.ts";

type Direction = "up" | "down";

function stopLimit(
  pairName: string,
  side: "buy" | "sell",
  stopPrice: string,
  stopDirection: Direction,
  price: string,
  amount: string,
): CreateOrderRequest {
  return { ...limit(pairName, side, price, amount), stopPrice, stopDirection };
}

function stopMarket(
  pairName: string,
  side: "buy" | "sell",
  stopPrice: string,
  stopDirection: Direction,
  amount: string,
): CreateOrderRequest {
  return { pairName, tradeType: "market", directionType: side, amount, stopPrice, stopDirection };
}

async function reserved(server: TestServer, user: TestUser, currency: string): Promise<bigint> {
  return (await server.balances(user)).get(currency)!.reserved;
}

async function available(server: TestServer, user: TestUser, currency: string): Promise<bigint> {
  return (await server.balances(user)).get(currency)!.available;
}

describe("stop orders", () => {
  let server: TestServer;
  let users: TestUser[];
  before(async () => {
    server = await TestServer.start();
    users = await server.newUsers(8, { btc: "100", eth: "1000", usdt: "1000000" });
  });
  after(async () => {
    await server?.close();
  });

  it("takes stopPrice and stopDirection both or neither, without postOnly or mmp", async () => {
    const [u] = users;
    const base = limit("btc_usdt", "buy", "100", "0.1");
    expectError(await u.client.createOrder({ ...base, stopPrice: "90" }), 400, "stopDirection");
    expectError(await u.client.createOrder({ ...base, stopDirection: "up" }), 400, "stopPrice");
    expectError(
      await u.client.createOrder({ ...base, stopPrice: "90", stopDirection: "sideways" as Direction }),
      400,
      "stopDirection",
    );
    expectError(
      await u.client.createOrder({ ...base, stopPrice: "0", stopDirection: "up" }),
      400,
      "stopPrice",
    );
    expectError(
      await u.client.createOrder({ ...base, stopPrice: "1.001", stopDirection: "up" }),
      400,
      "stopPrice",
    );
    expectError(
      await u.client.createOrder({ ...base, stopPrice: "90", stopDirection: "up", postOnly: true }),
      400,
      "postOnly",
    );
    expectError(
      await u.client.createOrder({ ...base, stopPrice: "90", stopDirection: "up", mmp: true }),
      400,
      "mmp",
    );
    // Batches share the validation.
    const batch = expectOk(await u.client.createOrders([{ ...base, stopPrice: "90" }]));
    assert.deepEqual(Object.keys((batch[0] as { errors: object }).errors), ["stopDirection"]);
  });

  it("takes any stop on a pair that never traded, and refuses one the last trade price meets", async () => {
    const [u, maker, taker] = users;
    const up = expectOk(await u.client.createOrder(stopLimit("btc_usdt", "buy", "1", "up", "2", "0.1")));
    const down = expectOk(
      await u.client.createOrder(stopLimit("btc_usdt", "sell", "9999999", "down", "9999999", "0.1")),
    );
    expectOk(await u.client.cancelOrder(up.id));
    expectOk(await u.client.cancelOrder(down.id));
    await tradeAt(maker, taker, "btc_usdt", "100", "0.1");
    for (const [stop, direction] of [
      ["100", "up"],
      ["99", "up"],
      ["100", "down"],
      ["101", "down"],
    ] as const) {
      const res = await u.client.createOrder(stopLimit("btc_usdt", "buy", stop, direction, "100", "0.1"));
      const [message] = expectError(res, 400, "stopPrice", `${direction} ${stop} against 100`);
      assert.match(message, /last trade price/);
      assert.match(res.text, /STOP_WOULD_TRIGGER/);
    }
  });

  it("waits open with triggered false, holds what the contract says, is in no public view, and a cancel releases it", async () => {
    const [, , , s] = users;
    const usdtBefore = await reserved(server, s, "usdt");
    const btcBefore = await reserved(server, s, "btc");
    const buy = expectOk(await s.client.createOrder(stopLimit("btc_usdt", "buy", "110", "up", "120", "0.5")));
    assert.equal(buy.triggered, false);
    assert.equal(buy.stopPrice, 110);
    assert.equal(buy.stopDirection, "up");
    assert.equal(buy.isCancelled, false);
    assert.equal(buy.amountUsed, 0);
    const sell = expectOk(
      await s.client.createOrder(stopLimit("btc_usdt", "sell", "90", "down", "85", "0.3")),
    );
    const marketSell = expectOk(
      await s.client.createOrder(stopMarket("btc_usdt", "sell", "80", "down", "0.2")),
    );
    const marketBuy = expectOk(await s.client.createOrder(stopMarket("btc_usdt", "buy", "130", "up", "0.1")));
    assert.equal(marketBuy.triggered, false);
    // Stop-limit buy: price × amount of quote; sells: amount of base; stop-market buy: nothing.
    assert.equal((await reserved(server, s, "usdt")) - usdtBefore, dec("60"));
    assert.equal((await reserved(server, s, "btc")) - btcBefore, dec("0.5"));

    const byId = await read(s, sell.id);
    assert.equal(byId.triggered, false);
    assert.equal(byId.stopPrice, 90);
    assert.equal(byId.stopDirection, "down");
    const open = expectOk(await s.client.userOrders("btc_usdt", { page: 1, pageSize: 100 })).items;
    for (const o of [buy, sell, marketSell, marketBuy])
      assert.equal(open.find((x) => x.id === o.id)?.triggered, false, `order ${o.id} in user-orders`);

    // The book holds only the maker's rest of its sell at 100 (0.1 of it traded).
    const book = expectOk(await server.public.orderBook("btc_usdt"));
    assert.deepEqual(book.buy, []);
    assert.deepEqual(
      book.sell.map((l) => [l.price, l.amount]),
      [],
    );
    const bbo = expectOk(await server.public.bbo("btc_usdt"));
    assert.equal(bbo.bid, 0);
    const l3 = expectOk(await server.public.orderBookL3("btc_usdt"));
    const waiting = new Set([buy.id, sell.id, marketSell.id, marketBuy.id]);
    assert.ok(![...l3.buy, ...l3.sell].some((o) => waiting.has(o.id)), "no waiting order in L3");

    // A cancel of a waiting order releases its hold at once.
    expectOk(await s.client.cancelOrder(buy.id));
    assert.equal((await reserved(server, s, "usdt")) - usdtBefore, 0n);
    assert.equal((await read(s, buy.id)).isCancelled, true);
    // cancel-all cancels waiting orders too.
    const all = expectOk(await s.client.cancelAllOrders("btc_usdt"));
    assert.deepEqual(all.cancelled, [sell.id, marketSell.id, marketBuy.id]);
    assert.equal(await reserved(server, s, "btc"), btcBefore);
  });

  it("an up stop triggers at a trade price >= its stop, a down stop at <=, not before", async () => {
    const [, maker, taker, s] = users;
    // Last trade at 100 on btc_usdt.
    const up = expectOk(await s.client.createOrder(stopLimit("btc_usdt", "buy", "105", "up", "106", "0.2")));
    const down = expectOk(await s.client.createOrder(stopMarket("btc_usdt", "sell", "95", "down", "0.1")));
    await tradeAt(maker, taker, "btc_usdt", "104.99", "0.1");
    await tradeAt(maker, taker, "btc_usdt", "95.01", "0.1");
    assert.equal((await read(s, up.id)).triggered, false, "104.99 is below 105");
    assert.equal((await read(s, down.id)).triggered, false, "95.01 is above 95");

    // A trade at exactly 105 triggers the up stop: it buys 0.2 at 106 from the ask there.
    await placeLimit(maker, "btc_usdt", "sell", "106", "0.2");
    const stream = await server.stream([`user_orders:${s.uid}`], s);
    try {
      await tradeAt(maker, taker, "btc_usdt", "105", "0.1");
      const upNow = await read(s, up.id);
      assert.equal(upNow.triggered, true);
      assert.match(upNow.triggerTime ?? "", /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      assert.equal(upNow.amountUsed, 0.2);
      assert.equal(upNow.id, up.id);
      const msg = await stream.next(
        (m) => (m.data as Order).id === up.id && (m.data as Order).triggered === true,
      );
      assert.equal((msg.data as Order).stopPrice, 105);
    } finally {
      stream.close();
    }

    // A trade at exactly 95 triggers the down stop-market sell, which sells into the bid there.
    await placeLimit(taker, "btc_usdt", "buy", "94", "1");
    await placeLimit(maker, "btc_usdt", "sell", "95", "0.1");
    await placeLimit(taker, "btc_usdt", "buy", "95", "0.1");
    const downNow = await read(s, down.id);
    assert.equal(downNow.triggered, true);
    assert.equal(downNow.amountUsed, 0.1);
    assert.equal(downNow.price, 94, "its average price");
    expectOk(await taker.client.cancelAllOrders("btc_usdt"));
    expectOk(await maker.client.cancelAllOrders("btc_usdt"));
  });

  it("triggers simultaneous stops in id order and runs their cascade in the same step", async () => {
    const [, maker, taker, , a, b, c] = users;
    await tradeAt(maker, taker, "eth_usdt", "100", "1");
    // b's stop is the higher; a's has the lower id although its stop is above b's.
    const first = expectOk(await a.client.createOrder(stopLimit("eth_usdt", "buy", "102", "up", "110", "1")));
    const second = expectOk(
      await b.client.createOrder(stopLimit("eth_usdt", "buy", "101", "up", "110", "1")),
    );
    // Reached only by the trades of the triggered orders: the cascade.
    const third = expectOk(await c.client.createOrder(stopMarket("eth_usdt", "buy", "104", "up", "1")));
    await placeLimit(maker, "eth_usdt", "sell", "103", "1");
    await placeLimit(maker, "eth_usdt", "sell", "104", "1");
    await placeLimit(maker, "eth_usdt", "sell", "105", "1");
    // One trade at 102 meets both stops.
    await tradeAt(maker, taker, "eth_usdt", "102", "1");
    const [o1, o2, o3] = [await read(a, first.id), await read(b, second.id), await read(c, third.id)];
    assert.equal(o1.triggered, true);
    assert.equal(o2.triggered, true);
    assert.equal(o3.triggered, true);
    // In id order: the first took 103, the second 104 (which triggered the third), the third 105.
    assert.equal(o1.executedQuote, 103);
    assert.equal(o2.executedQuote, 104);
    assert.equal(o3.executedQuote, 105);
    assert.equal(o3.price, 105);
    const history = expectOk(await server.public.history("eth_usdt"));
    assert.deepEqual(
      history.slice(0, 4).map((t) => t.price),
      [105, 104, 103, 102],
    );
  });

  it("cancels a triggered stop-market buy whole when its available balance cannot pay it", async () => {
    const [, maker, taker] = users;
    const poor = await server.newUser({ usdt: "50" });
    await tradeAt(maker, taker, "eth_usdt", "100", "1");
    const stop = expectOk(await poor.client.createOrder(stopMarket("eth_usdt", "buy", "101", "up", "1")));
    assert.equal(await reserved(server, poor, "usdt"), 0n, "a waiting stop-market buy holds nothing");
    await placeLimit(maker, "eth_usdt", "sell", "120", "2");
    await tradeAt(maker, taker, "eth_usdt", "101", "1");
    const o = await read(poor, stop.id);
    assert.equal(o.triggered, true);
    assert.equal(o.isCancelled, true);
    assert.equal(o.amountUsed, 0);
    assert.equal(o.cancelReason, "INSUFFICIENT_FUNDS");
    assert.equal(await reserved(server, poor, "usdt"), 0n);
    assert.equal(await available(server, poor, "usdt"), dec("50"));

    // With the funds it fills at the trigger.
    const rich = await server.newUser({ usdt: "1000" });
    const paid = expectOk(await rich.client.createOrder(stopMarket("eth_usdt", "buy", "102", "up", "1")));
    await tradeAt(maker, taker, "eth_usdt", "102", "0.5");
    const filled = await read(rich, paid.id);
    assert.equal(filled.triggered, true);
    assert.equal(filled.amountUsed, 1);
    assert.equal(filled.price, 120);
    assert.equal(await available(server, rich, "usdt"), dec("880"));
    assert.equal(await reserved(server, rich, "usdt"), 0n);

    // Without liquidity it ends cancelled whole too.
    expectOk(await maker.client.cancelAllOrders("eth_usdt"));
    const lonely = expectOk(await rich.client.createOrder(stopMarket("eth_usdt", "sell", "90", "down", "1")));
    await tradeAt(maker, taker, "eth_usdt", "90", "0.1");
    const none = await read(rich, lonely.id);
    assert.equal(none.isCancelled, true);
    assert.equal(none.cancelReason, "NO_LIQUIDITY");
    assert.equal(await reserved(server, rich, "eth"), 0n);
  });

  it("runs triggered stop-market buys among concurrent commands, and the exchange audits clean", async () => {
    const [, maker, taker] = users;
    const buyers = await server.newUsers(6, { usdt: "100000", eth: "10" });
    // Last trade on eth_usdt: 90.
    const stops = await Promise.all(
      buyers.map(async (b, i) => [
        expectOk(await b.client.createOrder(stopMarket("eth_usdt", "buy", String(91 + i), "up", "0.5"))),
        expectOk(await b.client.createOrder(stopLimit("eth_usdt", "sell", "80", "down", "79", "0.3"))),
      ]),
    );
    for (let price = 91; price <= 110; price++)
      await placeLimit(maker, "eth_usdt", "sell", String(price), "1");
    // The taker's buy triggers every stop-market buy (each waits for its budget in the worker) while
    // the buyers' own creates and cancels arrive on the same pair.
    const others = buyers.flatMap((b, i) => [
      b.client.createOrder(limit("eth_usdt", "buy", String(50 + i), "0.1")),
      b.client.createOrder(limit("eth_usdt", "sell", String(200 + i), "0.1")),
      b.client.cancelOrder(stops[i][1].id),
    ]);
    const [trigger, ...rest] = await Promise.all([
      taker.client.createOrder(limit("eth_usdt", "buy", "95", "3")),
      ...others,
    ]);
    assert.equal(expectOk(trigger).amountUsed, 3);
    for (const r of rest) assert.equal(r.status, 200, r.text);
    for (let i = 0; i < buyers.length; i++) {
      const o = await read(buyers[i], stops[i][0].id);
      assert.equal(o.triggered, true, `buyer ${i}'s stop-market buy`);
      assert.equal(o.amountUsed, 0.5);
      assert.equal((await read(buyers[i], stops[i][1].id)).isCancelled, true);
    }
    await auditExchange(server);
  });

  it("a trading session's order.create takes a stop as create-order does, and order.amend amends a waiting one", async () => {
    const [, maker, taker] = users;
    const u = await server.newUser({ usdt: "10000", btc: "1" });
    const s = await SessionSocket.logon(server, u);
    try {
      // Last trade on btc_usdt: 94.
      const bad = await s.call("order.create", {
        ...limit("btc_usdt", "buy", "100", "0.1"),
        stopPrice: "99",
      });
      assert.equal(bad.status, 400, JSON.stringify(bad));
      assert.deepEqual(Object.keys((bad as { errors: object }).errors), ["stopDirection"]);
      const created = await s.call(
        "order.create",
        stopLimit("btc_usdt", "buy", "99", "up", "100", "0.1") as unknown as Record<string, unknown>,
      );
      assert.equal(created.status, 200, JSON.stringify(created));
      const o = created.result as Order;
      assert.equal(o.triggered, false);
      assert.equal(o.stopPrice, 99);
      const amend = await s.call("order.amend", { orderId: o.id, amount: "0.05" });
      assert.equal(amend.status, 200, JSON.stringify(amend));
      assert.equal((amend.result as Order).amount, 0.05);
      assert.equal((amend.result as Order).triggered, false);
      const repriced = expectOk(await u.client.amendOrder({ orderId: o.id, price: "101" }));
      assert.equal(repriced.price, 101);
      assert.equal(await reserved(server, u, "usdt"), dec("5.05"));
      await placeLimit(maker, "btc_usdt", "sell", "100", "0.1");
      await tradeAt(maker, taker, "btc_usdt", "99", "0.1");
      const got = await s.call("order.get", { orderId: o.id });
      const now = got.result as Order;
      assert.equal(now.triggered, true);
      assert.equal(now.amountUsed, 0.05);
      assert.equal(now.executedQuote, 5);
      assert.deepEqual(now, await read(u, o.id));
      expectOk(await maker.client.cancelAllOrders("btc_usdt"));
    } finally {
      s.close();
    }
  });

  it("amends a waiting stop's amount, price and stopPrice, re-checked as at arrival, and it triggers at its new stop", async () => {
    const [, maker, taker] = users;
    const u = await server.newUser({ usdt: "10000", eth: "10" });
    expectOk(await maker.client.cancelAllOrders("eth_usdt"));
    expectOk(await taker.client.cancelAllOrders("eth_usdt"));
    await tradeAt(maker, taker, "eth_usdt", "100", "0.1");
    const stream = await server.stream([`user_orders:${u.uid}`], u);
    let closed = false;
    try {
      const buy = expectOk(await u.client.createOrder(stopLimit("eth_usdt", "buy", "110", "up", "112", "1")));
      const sell = expectOk(await u.client.createOrder(stopMarket("eth_usdt", "sell", "90", "down", "2")));
      assert.equal(await reserved(server, u, "usdt"), dec("112"));
      assert.equal(await reserved(server, u, "eth"), dec("2"));

      // Amount, price and stop price at once: the hold follows as for a resting order's amend.
      const amended = expectOk(
        await u.client.amendOrder({ orderId: buy.id, amount: "2", price: "115", stopPrice: "108" }),
      );
      assert.equal(amended.id, buy.id);
      assert.equal(amended.amount, 2);
      assert.equal(amended.price, 115);
      assert.equal(amended.stopPrice, 108);
      assert.equal(amended.stopDirection, "up");
      assert.equal(amended.triggered, false);
      assert.equal(await reserved(server, u, "usdt"), dec("230"));
      const change = await stream.next(
        (m) => (m.data as Order).id === buy.id && (m.data as Order).stopPrice === 108,
      );
      assert.equal((change.data as Order).triggered, false);
      assert.equal((change.data as Order).amount, 2);
      stream.close();
      closed = true;

      // A stop price the last trade price (100) already meets: refused, nothing changed.
      const would = await u.client.amendOrder({ orderId: buy.id, stopPrice: "100" });
      const [message] = expectError(would, 400, "stopPrice");
      assert.match(message, /last trade price/);
      assert.match(would.text, /STOP_WOULD_TRIGGER/);
      const wouldDown = await u.client.amendOrder({ orderId: sell.id, stopPrice: "100.5", amount: "1" });
      expectError(wouldDown, 400, "stopPrice");
      const same = await read(u, buy.id);
      assert.equal(same.stopPrice, 108);
      assert.equal(same.amount, 2);
      assert.equal(await reserved(server, u, "usdt"), dec("230"));
      assert.equal((await read(u, sell.id)).amount, 2);
      assert.equal(await reserved(server, u, "eth"), dec("2"));

      // A stop-market has no price; a lower amount releases base.
      expectError(await u.client.amendOrder({ orderId: sell.id, price: "95" }), 400, "price");
      const lower = expectOk(await u.client.amendOrder({ orderId: sell.id, amount: "0.5", stopPrice: "95" }));
      assert.equal(lower.stopPrice, 95);
      assert.equal(lower.tradeType, "market");
      assert.equal(await reserved(server, u, "eth"), dec("0.5"));
      // A stop price is not amended on an order that does not wait.
      const plain = await placeLimit(u, "eth_usdt", "buy", "50", "0.1");
      expectError(await u.client.amendOrder({ orderId: plain.id, stopPrice: "60" }), 400, "stopPrice");
      expectOk(await u.client.cancelOrder(plain.id));

      // Survives a restart with what the amends made of it.
      await server.kill();
      await server.restart();
      const back = await read(u, buy.id);
      assert.equal(back.stopPrice, 108);
      assert.equal(back.price, 115);
      assert.equal(back.amount, 2);
      assert.equal(back.triggered, false);
      assert.equal((await read(u, sell.id)).stopPrice, 95);
      assert.equal(await reserved(server, u, "usdt"), dec("230"));
      assert.equal(await reserved(server, u, "eth"), dec("0.5"));

      // 107.99 does not reach the new stop; 108 does (the old one, 110, would not have been met).
      await placeLimit(maker, "eth_usdt", "sell", "115", "2");
      await tradeAt(maker, taker, "eth_usdt", "107.99", "0.1");
      assert.equal((await read(u, buy.id)).triggered, false);
      await tradeAt(maker, taker, "eth_usdt", "108", "0.1");
      const fired = await read(u, buy.id);
      assert.equal(fired.triggered, true);
      assert.equal(fired.amountUsed, 2);
      assert.equal(fired.executedQuote, 230);
      // The down stop-market sell at its new stop 95: sells 0.5 into the bid there.
      await placeLimit(taker, "eth_usdt", "buy", "94", "1");
      await tradeAt(maker, taker, "eth_usdt", "95", "0.1");
      const sold = await read(u, sell.id);
      assert.equal(sold.triggered, true);
      assert.equal(sold.amountUsed, 0.5);
      assert.equal(await reserved(server, u, "eth"), 0n);
      assert.equal(await reserved(server, u, "usdt"), 0n);
      expectOk(await taker.client.cancelAllOrders("eth_usdt"));
      expectOk(await maker.client.cancelAllOrders("eth_usdt"));
    } finally {
      if (!closed) stream.close();
    }
    await auditExchange(server);
  });

  it("cancel on disconnect and the dead-man's switch cancel waiting orders and release their holds", async () => {
    const u = await server.newUser({ btc: "1" });
    const stream = await server.stream([`user_orders:${u.uid}`], u);
    const s = await SessionSocket.logon(server, u, { cancelOnDisconnect: true });
    let id = 0;
    try {
      const created = await s.call(
        "order.create",
        stopLimit("btc_usdt", "sell", "50", "down", "49", "0.5") as unknown as Record<string, unknown>,
      );
      assert.equal(created.status, 200, JSON.stringify(created));
      id = (created.result as Order).id;
      const waiting = await stream.next((m) => (m.data as Order).id === id);
      assert.equal((waiting.data as Order).triggered, false);
      assert.equal((waiting.data as Order).cancelOnDisconnect, true);
      assert.equal(await reserved(server, u, "btc"), dec("0.5"));
    } finally {
      s.close();
      stream.close();
    }
    await waitFor(async () => (await read(u, id)).isCancelled, { what: "the cancel on disconnect" });
    assert.equal(await reserved(server, u, "btc"), 0n);

    const other = expectOk(await u.client.createOrder(stopMarket("btc_usdt", "sell", "50", "down", "0.5")));
    assert.equal(await reserved(server, u, "btc"), dec("0.5"));
    expectOk(await u.client.cancelAllAfter(1));
    await waitFor(async () => (await read(u, other.id)).isCancelled, { what: "the dead-man's switch" });
    assert.equal(await reserved(server, u, "btc"), 0n);
  });

  it("a waiting order survives a restart with its stop and its hold, and triggers after it", async () => {
    const [, maker, taker, s] = users;
    // Last trade on btc_usdt: 100.
    const stop = expectOk(
      await s.client.createOrder(stopLimit("btc_usdt", "sell", "90", "down", "89", "0.4")),
    );
    const marketBuy = expectOk(await s.client.createOrder(stopMarket("btc_usdt", "buy", "150", "up", "0.1")));
    const marketSell = expectOk(
      await s.client.createOrder(stopMarket("btc_usdt", "sell", "85", "down", "0.2")),
    );
    const held = await reserved(server, s, "btc");
    const heldQuote = await reserved(server, s, "usdt");
    await server.kill();
    await server.restart();
    const back = await read(s, stop.id);
    assert.equal(back.triggered, false);
    assert.equal(back.stopPrice, 90);
    assert.equal(back.stopDirection, "down");
    assert.equal(await reserved(server, s, "btc"), held);
    assert.equal(await reserved(server, s, "usdt"), heldQuote);
    for (const o of [marketBuy, marketSell]) {
      const r = await read(s, o.id);
      assert.equal(r.triggered, false);
      assert.equal(r.stopPrice, o.stopPrice);
      assert.equal(r.tradeType, "market");
    }
    // Still refused against the last price, and still out of the book.
    expectError(
      await s.client.createOrder(stopLimit("btc_usdt", "sell", "101", "down", "101", "0.1")),
      400,
      "stopPrice",
    );
    assert.deepEqual(expectOk(await server.public.orderBook("btc_usdt")).sell, []);
    await placeLimit(taker, "btc_usdt", "buy", "89", "1");
    await tradeAt(maker, taker, "btc_usdt", "90", "0.1");
    const now = await read(s, stop.id);
    assert.equal(now.triggered, true);
    assert.equal(now.amountUsed, 0.4);
    assert.equal(await reserved(server, s, "btc"), held - dec("0.4"));
    // The trigger and its fills were committed with the trade that caused them.
    await server.kill();
    await server.restart();
    assert.deepEqual(await read(s, stop.id), now);
    assert.equal(await reserved(server, s, "btc"), held - dec("0.4"));
    // The stop-market orders the trade at 90 did not meet still wait, the sell with its hold.
    assert.equal((await read(s, marketBuy.id)).triggered, false);
    assert.equal((await read(s, marketSell.id)).triggered, false);
    assert.deepEqual(expectOk(await s.client.cancelAllOrders("btc_usdt")).cancelled, [
      marketBuy.id,
      marketSell.id,
    ]);
    assert.equal(await reserved(server, s, "btc"), held - dec("0.6"));
  });
});

describe("stop orders on a pair with a minimum order value", () => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start({ pairMinNotional: { eth_usdt: "20" } });
  });
  after(async () => {
    await server?.close();
  });

  it("cancels a triggered market order whole when its value is below the minimum", async () => {
    const [maker, taker, s] = await server.newUsers(3, { eth: "10", usdt: "10000" });
    // The pair never traded: any stop is taken.
    const stop = expectOk(await s.client.createOrder(stopMarket("eth_usdt", "sell", "100", "down", "0.1")));
    assert.equal(await reserved(server, s, "eth"), dec("0.1"));
    await placeLimit(maker, "eth_usdt", "buy", "100", "1");
    const sell = await placeLimit(taker, "eth_usdt", "sell", "100", "0.3");
    assert.equal(sell.amountUsed, 0.3);
    const o = await read(s, stop.id);
    assert.equal(o.triggered, true);
    assert.equal(o.isCancelled, true);
    assert.equal(o.amountUsed, 0);
    assert.equal(o.cancelReason, "NOTIONAL_BELOW_MIN");
    assert.equal(await reserved(server, s, "eth"), 0n);
    assert.equal(await available(server, s, "eth"), dec("10"));
  });
});
