/**
 * Trailing stops end to end (docs/API.md 18): validation, a down trailing stop following the trade
 * price up then triggering on a drop of its delta, an up one, a pair that never traded, reads that
 * show the moving stopPrice with no `user_orders` message for a move, and a trailing stop that
 * survives kill -9 with its stop price. A real server on its own SQLite file and its pair workers.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { CreateOrderRequest, Order } from "../../src/client/index.ts";
import { auditExchange } from "./audit.ts";
import { dec } from "./decimal.ts";
import { expectError, expectOk, limit, placeLimit, TestServer, type TestUser } from "./harness.ts";
import { read, tradeAt } from "./stop-helpers.ts";

function trailing(
  pairName: string,
  side: "buy" | "sell",
  trailingDelta: string,
  stopDirection: "up" | "down",
  amount: string,
  price?: string,
): CreateOrderRequest {
  return price === undefined
    ? { pairName, tradeType: "market", directionType: side, amount, trailingDelta, stopDirection }
    : { ...limit(pairName, side, price, amount), trailingDelta, stopDirection };
}

describe("trailing stops", () => {
  let server: TestServer;
  let maker: TestUser;
  let taker: TestUser;
  before(async () => {
    server = await TestServer.start();
    [maker, taker] = await server.newUsers(2, { btc: "100", eth: "1000", usdt: "1000000" });
  });
  after(async () => {
    await server?.close();
  });

  it("takes trailingDelta in place of stopPrice, with stopDirection, a positive price of the pair", async () => {
    const u = await server.newUser({ usdt: "10000" });
    const base = limit("btc_usdt", "buy", "100", "0.1");
    expectError(
      await u.client.createOrder({ ...base, trailingDelta: "5", stopPrice: "90", stopDirection: "up" }),
      400,
      "trailingDelta",
    );
    expectError(await u.client.createOrder({ ...base, trailingDelta: "5" }), 400, "stopDirection");
    for (const bad of ["0", "-1", "0.001"])
      expectError(
        await u.client.createOrder({ ...base, trailingDelta: bad, stopDirection: "up" }),
        400,
        "trailingDelta",
        `trailingDelta ${bad}`,
      );
    expectError(
      await u.client.createOrder({ ...base, trailingDelta: "5", stopDirection: "up", postOnly: true }),
      400,
      "postOnly",
    );
  });

  it("on a pair that never traded it starts at the first trade", async () => {
    const u = await server.newUser({ eth: "10" });
    const o = expectOk(await u.client.createOrder(trailing("eth_btc", "sell", "0.002", "down", "1", "0.01")));
    assert.equal(o.triggered, false);
    assert.equal(o.trailingDelta, 0.002);
    assert.equal(o.stopPrice, undefined);
    assert.equal(o.stopDirection, "down");
    await tradeAt(maker, taker, "eth_btc", "0.05", "0.1");
    const now = await read(u, o.id);
    assert.equal(now.stopPrice, 0.048);
    assert.equal(now.triggered, false);
    expectOk(await u.client.cancelOrder(o.id));
  });

  it("a down trailing stop follows the highest trade price up, moves without a message, and triggers on a drop of its delta", async () => {
    const u = await server.newUser({ btc: "1", usdt: "1000" });
    await tradeAt(maker, taker, "btc_usdt", "100", "0.1");
    const stream = await server.stream([`user_orders:${u.uid}`], u);
    try {
      const o = expectOk(await u.client.createOrder(trailing("btc_usdt", "sell", "5", "down", "0.2")));
      assert.equal(o.stopPrice, 95);
      assert.equal(o.trailingDelta, 5);
      assert.equal(o.tradeType, "market");
      await stream.next((m) => (m.data as Order).id === o.id);
      const execSeq = (await read(u, o.id)).execSeq;
      await tradeAt(maker, taker, "btc_usdt", "103", "0.1");
      assert.equal((await read(u, o.id)).stopPrice, 98);
      // A lower trade moves nothing and triggers nothing above 98.
      await tradeAt(maker, taker, "btc_usdt", "101.5", "0.1");
      assert.equal((await read(u, o.id)).stopPrice, 98);
      await tradeAt(maker, taker, "btc_usdt", "104.25", "0.1");
      const moved = await read(u, o.id);
      assert.equal(moved.stopPrice, 99.25);
      assert.equal(moved.execSeq, execSeq, "a move is not an order change");
      assert.equal(moved.triggered, false);
      const open = expectOk(await u.client.openOrders("btc_usdt"));
      assert.equal(open.find((x) => x.id === o.id)?.stopPrice, 99.25);
      // The user's next change is its next message: none came for the moves.
      const marker = await placeLimit(u, "btc_usdt", "buy", "1", "1");
      await stream.next((m) => (m.data as Order).id === marker.id);
      assert.equal(
        stream.messages.filter((m) => (m as { data?: Order }).data?.id === o.id).length,
        1,
        "only the creation of the trailing stop was streamed",
      );
      expectOk(await u.client.cancelOrder(marker.id));
      // A drop to 99.25 triggers it: it sells 0.2 into the bid at 99.
      await placeLimit(taker, "btc_usdt", "buy", "99", "1");
      await tradeAt(maker, taker, "btc_usdt", "99.25", "0.1");
      const fired = await read(u, o.id);
      assert.equal(fired.triggered, true);
      assert.equal(fired.stopPrice, 99.25);
      assert.equal(fired.amountUsed, 0.2);
      assert.equal(fired.price, 99);
      expectOk(await taker.client.cancelAllOrders("btc_usdt"));
    } finally {
      stream.close();
    }
  });

  it("an up trailing stop follows the lowest trade price down and triggers on a rise of its delta", async () => {
    const u = await server.newUser({ usdt: "10000" });
    await tradeAt(maker, taker, "eth_usdt", "100", "1");
    const o = expectOk(await u.client.createOrder(trailing("eth_usdt", "buy", "3", "up", "1", "120")));
    assert.equal(o.stopPrice, 103);
    assert.equal((await server.balances(u)).get("usdt")!.reserved, dec("120"));
    // Down to 97 (a bid taken by a sell): the stop falls to 100; back up to 99 it stays.
    await placeLimit(taker, "eth_usdt", "buy", "97", "1");
    await placeLimit(maker, "eth_usdt", "sell", "97", "1");
    assert.equal((await read(u, o.id)).stopPrice, 100);
    await tradeAt(maker, taker, "eth_usdt", "99", "1");
    assert.equal((await read(u, o.id)).stopPrice, 100);
    // A trade at 100 triggers it: it buys 1 at the ask of 110.
    await placeLimit(maker, "eth_usdt", "sell", "110", "1");
    await tradeAt(maker, taker, "eth_usdt", "100", "0.5");
    const fired = await read(u, o.id);
    assert.equal(fired.triggered, true);
    assert.equal(fired.amountUsed, 1);
    assert.equal(fired.executedQuote, 110);
    assert.equal((await server.balances(u)).get("usdt")!.reserved, 0n);
  });

  it("amend-order takes a new trailingDelta from the same extreme price, re-checked as at arrival", async () => {
    const u = await server.newUser({ eth: "10" });
    expectOk(await maker.client.cancelAllOrders("eth_usdt"));
    expectOk(await taker.client.cancelAllOrders("eth_usdt"));
    await tradeAt(maker, taker, "eth_usdt", "110", "0.1");
    const o = expectOk(await u.client.createOrder(trailing("eth_usdt", "sell", "10", "down", "2", "90")));
    assert.equal(o.stopPrice, 100);
    await placeLimit(taker, "eth_usdt", "buy", "105", "0.1");
    await placeLimit(maker, "eth_usdt", "sell", "105", "0.1");
    // Highest 110, last 105: a delta of 4 would put the stop at 106, which 105 already meets.
    expectError(await u.client.amendOrder({ orderId: o.id, trailingDelta: "4" }), 400, "stopPrice");
    assert.equal((await read(u, o.id)).trailingDelta, 10);
    const amended = expectOk(await u.client.amendOrder({ orderId: o.id, trailingDelta: "6", amount: "1" }));
    assert.equal(amended.trailingDelta, 6);
    assert.equal(amended.stopPrice, 104);
    assert.equal(amended.amount, 1);
    assert.equal((await server.balances(u)).get("eth")!.reserved, dec("1"));
    // A trailing stop has no stopPrice of its own to amend; a fixed stop no trailingDelta.
    expectError(await u.client.amendOrder({ orderId: o.id, stopPrice: "101" }), 400, "stopPrice");
    const fixed = expectOk(
      await u.client.createOrder({
        ...limit("eth_usdt", "sell", "90", "1"),
        stopPrice: "95",
        stopDirection: "down",
      }),
    );
    expectError(await u.client.amendOrder({ orderId: fixed.id, trailingDelta: "3" }), 400, "trailingDelta");
    expectOk(await u.client.cancelAllOrders("eth_usdt"));
    assert.equal((await server.balances(u)).get("eth")!.reserved, 0n);
  });

  it("survives kill -9 with the stop price it had, and follows on from it", async () => {
    const u = await server.newUser({ btc: "1" });
    expectOk(await maker.client.cancelAllOrders("btc_usdt"));
    await tradeAt(maker, taker, "btc_usdt", "100", "0.1");
    const o = expectOk(await u.client.createOrder(trailing("btc_usdt", "sell", "10", "down", "0.3", "80")));
    assert.equal(o.stopPrice, 90);
    await tradeAt(maker, taker, "btc_usdt", "112", "0.1");
    assert.equal((await read(u, o.id)).stopPrice, 102);
    await server.kill();
    await server.restart();
    const back = await read(u, o.id);
    assert.equal(back.stopPrice, 102);
    assert.equal(back.trailingDelta, 10);
    assert.equal(back.triggered, false);
    assert.equal((await server.balances(u)).get("btc")!.reserved, dec("0.3"));
    // It follows on from 112: 108 moves nothing, 115 raises it to 105, 105 triggers it.
    await tradeAt(maker, taker, "btc_usdt", "108", "0.1");
    assert.equal((await read(u, o.id)).stopPrice, 102);
    await tradeAt(maker, taker, "btc_usdt", "115", "0.1");
    assert.equal((await read(u, o.id)).stopPrice, 105);
    await placeLimit(taker, "btc_usdt", "buy", "104", "1");
    await tradeAt(maker, taker, "btc_usdt", "105", "0.1");
    const fired = await read(u, o.id);
    assert.equal(fired.triggered, true);
    assert.equal(fired.amountUsed, 0.3);
    expectOk(await taker.client.cancelAllOrders("btc_usdt"));
    await auditExchange(server);
  });
});
