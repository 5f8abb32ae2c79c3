/**
 * OCO orders end to end (docs/API.md 18): a sell and a buy OCO with their legs and one shared hold,
 * the sides checked per field, a limit leg that trades cancelling the stop leg (cancelReason OCO,
 * the hold released exactly), a stop leg that triggers cancelling the limit leg, a cancel of either
 * leg, cancel-all, the dead-man's switch, OCO_AMEND, the session call `oco.create` with
 * cancel-on-disconnect (at a close, and at the restart after a kill -9), and an OCO that survives
 * kill -9 and still cancels its sibling. A real server on its own SQLite file.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { CreatedOco, CreateOcoRequest, Order } from "../../src/client/index.ts";
import { SessionSocket } from "../session/helpers.ts";
import { waitFor } from "../wait.ts";
import { auditExchange } from "./audit.ts";
import { dec } from "./decimal.ts";
import { expectError, expectOk, placeLimit, TestServer, type TestUser } from "./harness.ts";
import { read, tradeAt } from "./stop-helpers.ts";

function oco(
  pairName: string,
  directionType: "buy" | "sell",
  amount: string,
  price: string,
  stopPrice: string,
  stopLimitPrice?: string,
): CreateOcoRequest {
  const body: CreateOcoRequest = { pairName, directionType, amount, price, stopPrice };
  if (stopLimitPrice !== undefined) body.stopLimitPrice = stopLimitPrice;
  return body;
}

describe("OCO orders", () => {
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

  /** A clean btc_usdt book whose last trade is at `price`. */
  async function lastTradeAt(price: string): Promise<void> {
    expectOk(await maker.client.cancelAllOrders("btc_usdt"));
    expectOk(await taker.client.cancelAllOrders("btc_usdt"));
    await tradeAt(maker, taker, "btc_usdt", price, "0.1");
  }

  const reserved = async (u: TestUser, currency: string) => (await server.balances(u)).get(currency)!;

  it("creates a sell OCO: a post-only limit leg resting, a stop leg waiting down, both with ocoId, one hold", async () => {
    await lastTradeAt("100");
    const u = await server.newUser({ btc: "1" });
    const res = expectOk(
      await u.client.createOco({
        ...oco("btc_usdt", "sell", "0.5", "110", "90", "89"),
        clientOrderId: "oco-1",
      }),
    );
    const [limitLeg, stopLeg] = res.orders;
    assert.equal(res.ocoId, limitLeg.id);
    assert.equal(stopLeg.id, limitLeg.id + 1);
    assert.equal(limitLeg.ocoId, res.ocoId);
    assert.equal(stopLeg.ocoId, res.ocoId);
    assert.equal(limitLeg.tradeType, "limit");
    assert.equal(limitLeg.price, 110);
    assert.equal(limitLeg.postOnly, true);
    assert.equal(limitLeg.clientOrderId, "oco-1");
    assert.equal(limitLeg.stopPrice, undefined);
    assert.equal(stopLeg.tradeType, "limit");
    assert.equal(stopLeg.price, 89);
    assert.equal(stopLeg.stopPrice, 90);
    assert.equal(stopLeg.stopDirection, "down");
    assert.equal(stopLeg.triggered, false);
    assert.equal(stopLeg.clientOrderId, undefined);
    assert.equal(stopLeg.postOnly, undefined);
    // One hold of the amount, not two.
    assert.deepEqual(await reserved(u, "btc"), { available: dec("0.5"), reserved: dec("0.5") });
    const book = expectOk(await server.public.orderBook("btc_usdt"));
    assert.deepEqual(
      book.sell.filter((l) => l.price === 110),
      [{ price: 110, amount: 0.5 }],
    );
    const open = expectOk(await u.client.openOrders("btc_usdt")).map((o) => [o.id, o.ocoId]);
    assert.deepEqual(
      open.sort((a, b) => a[0]! - b[0]!),
      [
        [limitLeg.id, res.ocoId],
        [stopLeg.id, res.ocoId],
      ],
    );
    assert.equal((await read(u, stopLeg.id)).ocoId, res.ocoId);
    expectOk(await u.client.cancelOrder(limitLeg.id));
  });

  it("creates a buy OCO holding the larger of its legs' quote holds (a stop-market leg holds nothing)", async () => {
    await lastTradeAt("100");
    const u = await server.newUser({ usdt: "1000" });
    const a = expectOk(await u.client.createOco(oco("btc_usdt", "buy", "1", "90", "110", "112")));
    assert.equal(a.orders[1].stopDirection, "up");
    assert.deepEqual(await reserved(u, "usdt"), { available: dec("888"), reserved: dec("112") });
    const b = expectOk(await u.client.createOco(oco("btc_usdt", "buy", "1", "90", "110")));
    assert.equal(b.orders[1].tradeType, "market");
    assert.equal(b.orders[1].stopPrice, 110);
    assert.deepEqual(await reserved(u, "usdt"), { available: dec("798"), reserved: dec("202") });
    // Not enough for a third: nothing is created.
    const before = expectOk(await u.client.openOrders("btc_usdt")).length;
    expectError(await u.client.createOco(oco("btc_usdt", "buy", "10", "90", "110")), 400, "amount");
    assert.equal(expectOk(await u.client.openOrders("btc_usdt")).length, before);
    expectOk(await u.client.cancelAllOrders("btc_usdt"));
    assert.deepEqual(await reserved(u, "usdt"), { available: dec("1000"), reserved: 0n });
  });

  it("refuses a price or stop price on the wrong side with a 400 on that field, and nothing is created", async () => {
    await lastTradeAt("100");
    const u = await server.newUser({ btc: "1", usdt: "1000", eth: "1" });
    const cases: [CreateOcoRequest, string][] = [
      [oco("btc_usdt", "sell", "0.1", "100", "90"), "price"],
      [oco("btc_usdt", "sell", "0.1", "99", "90"), "price"],
      [oco("btc_usdt", "sell", "0.1", "110", "100"), "stopPrice"],
      [oco("btc_usdt", "sell", "0.1", "110", "111"), "stopPrice"],
      [oco("btc_usdt", "buy", "0.1", "101", "110"), "price"],
      [oco("btc_usdt", "buy", "0.1", "90", "100"), "stopPrice"],
      [oco("btc_usdt", "buy", "0.1", "90", "80"), "stopPrice"],
      // eth_btc never traded: price and stopPrice on the right sides of each other.
      [oco("eth_btc", "sell", "0.5", "0.05", "0.06"), "stopPrice"],
      [oco("eth_btc", "buy", "0.5", "0.05", "0.04"), "stopPrice"],
      [oco("eth_btc", "buy", "0.5", "0.05", "0.05"), "stopPrice"],
      [oco("eth_btc", "sell", "0.5", "0.05", "0.05"), "stopPrice"],
    ];
    for (const [body, field] of cases)
      expectError(await u.client.createOco(body), 400, field, JSON.stringify(body));
    // Fields: each failing one reported.
    const bad = await u.client.createOco({
      pairName: "btc_usdt",
      directionType: "sell",
      amount: "0.1",
      price: "110",
      stopLimitPrice: "0",
    } as CreateOcoRequest);
    expectError(bad, 400, "stopPrice", "no stopPrice", false);
    expectError(bad, 400, "stopLimitPrice", "stopLimitPrice 0", false);
    expectError(
      await u.client.createOco({
        ...oco("btc_usdt", "sell", "0.1", "110", "90"),
        tradeType: "limit",
      } as never),
      400,
      "tradeType",
    );
    // A limit leg that would take (post-only) refuses the whole OCO.
    await placeLimit(maker, "btc_usdt", "buy", "102", "1");
    expectError(await u.client.createOco(oco("btc_usdt", "sell", "0.1", "101", "90")), 400, "price");
    expectOk(await maker.client.cancelAllOrders("btc_usdt"));
    await placeLimit(maker, "btc_usdt", "sell", "98", "1");
    expectError(await u.client.createOco(oco("btc_usdt", "buy", "0.1", "99", "110")), 400, "price");
    assert.deepEqual(expectOk(await u.client.openOrders("btc_usdt")), []);
    assert.equal((await reserved(u, "btc")).reserved, 0n);
    assert.equal((await reserved(u, "usdt")).reserved, 0n);
    // The never-traded pair takes them the right way round.
    const ok = expectOk(await u.client.createOco(oco("eth_btc", "sell", "0.5", "0.05", "0.04")));
    assert.equal(ok.orders.length, 2);
    expectOk(await u.client.cancelAllOrders("eth_btc"));
    expectOk(await maker.client.cancelAllOrders("btc_usdt"));
  });

  it("a partial fill of the limit leg cancels the stop leg (cancelReason OCO) and releases the hold exactly", async () => {
    await lastTradeAt("100");
    const u = await server.newUser({ btc: "1", usdt: "1000" });
    const stream = await server.stream([`user_orders:${u.uid}`], u);
    const sell = expectOk(await u.client.createOco(oco("btc_usdt", "sell", "0.5", "110", "90")));
    const buy = expectOk(await u.client.createOco(oco("btc_usdt", "buy", "1", "90", "115", "117")));
    assert.equal((await reserved(u, "usdt")).reserved, dec("117"));
    // The sell's limit leg trades 0.2 as a maker.
    await placeLimit(taker, "btc_usdt", "buy", "110", "0.2");
    const [limitLeg, stopLeg] = [await read(u, sell.orders[0].id), await read(u, sell.orders[1].id)];
    assert.equal(limitLeg.amountUsed, 0.2);
    assert.equal(limitLeg.isCancelled, false);
    assert.equal(stopLeg.isCancelled, true);
    assert.equal(stopLeg.cancelReason, "OCO");
    assert.equal(stopLeg.triggered, false);
    assert.equal(stopLeg.amountUsed, 0);
    assert.deepEqual(await reserved(u, "btc"), { available: dec("0.5"), reserved: dec("0.3") });
    // The buy's limit leg trades 0.4 at 90: the stop leg's part of the hold above it goes too.
    await placeLimit(taker, "btc_usdt", "sell", "90", "0.4");
    const buyStop = await read(u, buy.orders[1].id);
    assert.equal(buyStop.cancelReason, "OCO");
    assert.equal((await read(u, buy.orders[0].id)).amountUsed, 0.4);
    assert.deepEqual(await reserved(u, "usdt"), {
      available: dec("1000") + dec("22") - dec("36") - dec("54"),
      reserved: dec("54"),
    });
    // The stream reports the sibling's cancel like any cancel.
    const report = await waitFor(
      () => stream.messages.find((m) => (m.data as Order).id === stopLeg.id && (m.data as Order).isCancelled),
      { what: "the stop leg's cancel on user_orders" },
    );
    assert.equal((report.data as Order).cancelReason, "OCO");
    assert.equal((report.data as Order).ocoId, sell.ocoId);
    stream.close();
    expectOk(await u.client.cancelAllOrders("btc_usdt"));
    assert.deepEqual(await reserved(u, "btc"), { available: dec("1.2"), reserved: 0n });
    assert.deepEqual(await reserved(u, "usdt"), {
      available: dec("1000") + dec("22") - dec("36"),
      reserved: 0n,
    });
  });

  it("a trigger of the stop leg cancels the limit leg, and the stop leg trades on its own hold", async () => {
    await lastTradeAt("100");
    const u = await server.newUser({ btc: "1" });
    const sell = expectOk(await u.client.createOco(oco("btc_usdt", "sell", "0.5", "110", "90", "85")));
    await placeLimit(taker, "btc_usdt", "buy", "86", "1");
    await tradeAt(maker, taker, "btc_usdt", "90", "0.1");
    const limitLeg = await read(u, sell.orders[0].id);
    const stopLeg = await read(u, sell.orders[1].id);
    assert.equal(limitLeg.isCancelled, true);
    assert.equal(limitLeg.cancelReason, "OCO");
    assert.equal(limitLeg.amountUsed, 0);
    assert.equal(stopLeg.triggered, true);
    assert.equal(stopLeg.amountUsed, 0.5);
    assert.equal(stopLeg.cancelReason, undefined);
    assert.deepEqual(await reserved(u, "btc"), { available: dec("0.5"), reserved: 0n });
    assert.deepEqual(await reserved(u, "usdt"), { available: dec("43"), reserved: 0n });

    // A buy whose stop-market leg triggers: it buys with the funds its cancelled limit leg held.
    await lastTradeAt("100");
    const v = await server.newUser({ usdt: "200" });
    const buy = expectOk(await v.client.createOco(oco("btc_usdt", "buy", "1", "99", "110")));
    assert.equal((await reserved(v, "usdt")).reserved, dec("99"));
    await placeLimit(maker, "btc_usdt", "sell", "111", "1");
    await tradeAt(maker, taker, "btc_usdt", "110", "0.1");
    assert.equal((await read(v, buy.orders[0].id)).cancelReason, "OCO");
    const bought = await read(v, buy.orders[1].id);
    assert.equal(bought.triggered, true);
    assert.equal(bought.amountUsed, 1);
    assert.deepEqual(await reserved(v, "usdt"), { available: dec("89"), reserved: 0n });
    assert.deepEqual(await reserved(v, "btc"), { available: dec("1"), reserved: 0n });
  });

  it("cancelling either leg cancels both, and cancel-all cancels both", async () => {
    await lastTradeAt("100");
    const u = await server.newUser({ btc: "1" });
    const a = expectOk(await u.client.createOco(oco("btc_usdt", "sell", "0.2", "110", "90")));
    expectOk(await u.client.cancelOrder(a.orders[1].id));
    assert.equal((await read(u, a.orders[1].id)).cancelReason, undefined, "the leg cancelled by its owner");
    assert.equal((await read(u, a.orders[0].id)).isCancelled, true);
    assert.equal((await read(u, a.orders[0].id)).cancelReason, "OCO");
    const b = expectOk(await u.client.createOco(oco("btc_usdt", "sell", "0.2", "110", "90")));
    expectOk(await u.client.cancelOrder(b.orders[0].id));
    assert.equal((await read(u, b.orders[1].id)).isCancelled, true);
    assert.equal((await read(u, b.orders[1].id)).cancelReason, "OCO");
    // A leg already cancelled by its sibling answers as any cancelled order.
    expectError(await u.client.cancelOrder(b.orders[1].id), 400, "orderId");
    assert.deepEqual(await reserved(u, "btc"), { available: dec("1"), reserved: 0n });
    const c = expectOk(await u.client.createOco(oco("btc_usdt", "sell", "0.2", "110", "90", "88")));
    const d = expectOk(await u.client.createOco(oco("btc_usdt", "sell", "0.3", "111", "91")));
    const all = expectOk(await u.client.cancelAllOrders("btc_usdt"));
    assert.deepEqual(all.cancelled, [c.orders[0].id, c.orders[1].id, d.orders[0].id, d.orders[1].id]);
    assert.deepEqual(await reserved(u, "btc"), { available: dec("1"), reserved: 0n });
  });

  it("the dead-man's switch cancels both legs", async () => {
    await lastTradeAt("100");
    const u = await server.newUser({ btc: "1" });
    const a = expectOk(await u.client.createOco(oco("btc_usdt", "sell", "0.2", "110", "90", "88")));
    expectOk(await u.client.cancelAllAfter(1));
    await waitFor(
      async () => (await Promise.all(a.orders.map((o) => read(u, o.id)))).every((o) => o.isCancelled),
      { what: "both legs cancelled by the dead-man's switch", intervalMs: 50, timeoutMs: 10_000 },
    );
    assert.deepEqual(await reserved(u, "btc"), { available: dec("1"), reserved: 0n });
  });

  it("refuses an amend of either leg with OCO_AMEND on orderId", async () => {
    await lastTradeAt("100");
    const u = await server.newUser({ btc: "1" });
    const a = expectOk(await u.client.createOco(oco("btc_usdt", "sell", "0.2", "110", "90")));
    const res = await u.client.amendOrder({ orderId: a.orders[0].id, price: "111" });
    expectError(res, 400, "orderId");
    assert.deepEqual((res.body as { codes: Record<string, string[]> }).codes.orderId, ["OCO_AMEND"]);
    const ru = await server
      .client(u, { lang: "ru" })
      .amendOrder({ orderId: a.orders[1].id, stopPrice: "89" });
    const [message] = expectError(ru, 400, "orderId");
    assert.match(message, /OCO/);
    assert.notEqual(message, expectError(res, 400, "orderId")[0], "the Russian message");
    assert.equal((await read(u, a.orders[0].id)).price, 110);
    expectOk(await u.client.cancelOrder(a.orders[0].id));
  });

  it("creates an OCO through the session call oco.create, whose legs cancel-on-disconnect cancels", async () => {
    await lastTradeAt("100");
    const u = await server.newUser({ btc: "1" });
    const s = await SessionSocket.logon(server, u, { cancelOnDisconnect: true });
    const answer = await s.call("oco.create", { ...oco("btc_usdt", "sell", "0.4", "110", "90") });
    assert.equal(answer.status, 200, JSON.stringify(answer));
    const created = answer.result as CreatedOco;
    assert.equal(created.ocoId, created.orders[0].id);
    for (const leg of created.orders) {
      assert.equal(leg.cancelOnDisconnect, true);
      assert.equal(leg.ocoId, created.ocoId);
    }
    assert.equal((await reserved(u, "btc")).reserved, dec("0.4"));
    const wrong = await s.call("oco.create", { ...oco("btc_usdt", "sell", "0.4", "90", "80") });
    assert.equal(wrong.status, 400);
    s.close();
    await waitFor(
      async () => (await Promise.all(created.orders.map((o) => read(u, o.id)))).every((o) => o.isCancelled),
      { what: "both legs cancelled after the session closed", intervalMs: 20 },
    );
    assert.deepEqual(await reserved(u, "btc"), { available: dec("1"), reserved: 0n });
  });

  it("a cancel-on-disconnect session's OCO does not outlive a kill -9: the restart cancels both legs", async () => {
    await lastTradeAt("100");
    const u = await server.newUser({ usdt: "1000" });
    const s = await SessionSocket.logon(server, u, { cancelOnDisconnect: true });
    const answer = await s.call("oco.create", { ...oco("btc_usdt", "buy", "1", "90", "110", "115") });
    assert.equal(answer.status, 200, JSON.stringify(answer));
    const created = answer.result as CreatedOco;
    await server.kill();
    await server.restart();
    for (const leg of created.orders) assert.equal((await read(u, leg.id)).isCancelled, true);
    assert.deepEqual(await reserved(u, "usdt"), { available: dec("1000"), reserved: 0n });
  });

  it("survives kill -9: both legs open with their one hold, and a fill still cancels the sibling", async () => {
    await lastTradeAt("100");
    const u = await server.newUser({ btc: "1", usdt: "1000" });
    const sell = expectOk(await u.client.createOco(oco("btc_usdt", "sell", "0.5", "110", "90")));
    const buy = expectOk(await u.client.createOco(oco("btc_usdt", "buy", "1", "90", "115", "112")));
    await server.kill();
    await server.restart();
    for (const leg of [...sell.orders, ...buy.orders]) {
      const back = await read(u, leg.id);
      assert.equal(back.isCancelled, false);
      assert.equal(back.ocoId, leg.ocoId);
    }
    assert.deepEqual(await reserved(u, "btc"), { available: dec("0.5"), reserved: dec("0.5") });
    assert.deepEqual(await reserved(u, "usdt"), { available: dec("888"), reserved: dec("112") });
    // The sell's limit leg trades: its stop leg is cancelled.
    await placeLimit(taker, "btc_usdt", "buy", "110", "0.1");
    assert.equal((await read(u, sell.orders[1].id)).cancelReason, "OCO");
    assert.deepEqual(await reserved(u, "btc"), { available: dec("0.5"), reserved: dec("0.4") });
    expectOk(await u.client.cancelOrder(sell.orders[0].id));
    assert.deepEqual(await reserved(u, "btc"), { available: dec("0.9"), reserved: 0n });
    // The buy's stop leg triggers (a trade at 115): its limit leg is cancelled, it rests at 112.
    await tradeAt(maker, taker, "btc_usdt", "115", "0.1");
    assert.equal((await read(u, buy.orders[0].id)).cancelReason, "OCO");
    const stopLeg = await read(u, buy.orders[1].id);
    assert.equal(stopLeg.triggered, true);
    assert.equal(stopLeg.isCancelled, false);
    assert.deepEqual(await reserved(u, "usdt"), { available: dec("888") + dec("11"), reserved: dec("112") });
    expectOk(await u.client.cancelAllOrders("btc_usdt"));
    expectOk(await maker.client.cancelAllOrders("btc_usdt"));
    expectOk(await taker.client.cancelAllOrders("btc_usdt"));
    await auditExchange(server);
  });
});
