/**
 * Recovery of cancel-on-disconnect orders (CONTRACT 11.4): no session survives the process, so
 * every open order stored with the flag is cancelled at start, before /health turns 200, through
 * the normal cancel path (rows committed, holds released). Orders without the flag stay open.
 */

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { dec } from "./decimal.ts";
import { expectOk, limit, type StartOptions, TestServer } from "./harness.ts";

describe("cancel-on-disconnect orders after a crash", () => {
  const options: StartOptions = { entry: "test/support/session-tag-server.ts" };
  let server: TestServer;
  after(() => server?.close());

  it("are cancelled at start, before /health answers 200, with their holds released", async () => {
    server = await TestServer.start(options);
    const maker = await server.newUser({ btc: "2", usdt: "1000" });
    const taker = await server.newUser({ usdt: "1000" });
    // Tagged (the fixture tags every create): a sell partly filled, a sell and a buy resting.
    const sell = expectOk(await maker.client.createOrder(limit("btc_usdt", "sell", "100", "1")));
    const sell2 = expectOk(await maker.client.createOrder(limit("btc_usdt", "sell", "110", "0.5")));
    const buy = expectOk(await maker.client.createOrder(limit("btc_usdt", "buy", "50", "2")));
    for (const o of [sell, sell2, buy]) assert.equal(o.cancelOnDisconnect, true);
    const fill = expectOk(await taker.client.createOrder(limit("btc_usdt", "buy", "100", "0.4")));
    assert.equal(fill.amountUsed, 0.4);
    const before = await server.balances(maker);
    assert.equal(before.get("btc")?.reserved, dec("1.1"));
    assert.equal(before.get("usdt")?.reserved, dec("100"));
    // The crash: no graceful stop, no session ends by itself.
    await server.kill();

    // The plain server on the same database; `restart` returns once /health answered 200.
    delete options.entry;
    await server.restart();
    // The very first reads after /health turned 200 already see every cancel committed.
    for (const [o, used] of [
      [sell, 0.4],
      [sell2, 0],
      [buy, 0],
    ] as const) {
      const now = expectOk(await maker.client.order(o.id), `order ${o.id}`);
      assert.equal(now.isCancelled, true, `order ${o.id} cancelled`);
      assert.equal(now.amountUsed, used);
      assert.equal(now.cancelOnDisconnect, true);
    }
    assert.deepEqual(expectOk(await maker.client.openOrders("btc_usdt")), []);
    const released = await server.balances(maker);
    assert.equal(released.get("btc")?.reserved, 0n);
    assert.equal(released.get("usdt")?.reserved, 0n);
    assert.equal(released.get("btc")?.available, dec("1.6"));
    assert.equal(released.get("usdt")?.available, dec("1040"));
    // The book is empty; an order of the plain server carries no flag and survives a restart.
    const book = expectOk(await server.public.orderBook("btc_usdt"));
    assert.deepEqual([book.buy?.length ?? 0, book.sell?.length ?? 0], [0, 0]);
    const plain = expectOk(await maker.client.createOrder(limit("btc_usdt", "sell", "120", "0.1")));
    assert.equal("cancelOnDisconnect" in plain, false);
    await server.restart();
    const still = expectOk(await maker.client.order(plain.id));
    assert.equal(still.isCancelled, false);
    // And the cancels of the first start stay: no order came back.
    assert.deepEqual(
      expectOk(await maker.client.openOrders("btc_usdt")).map((o) => o.id),
      [plain.id],
    );
  });
});
