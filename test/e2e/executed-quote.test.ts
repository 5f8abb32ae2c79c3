/**
 * An order's executed value (docs/API.md 5.1 `executedQuote`) end to end: the exact sum of price ×
 * amount over its trades, 0 before any fill, on the taker and on the maker side, on every read
 * path (the create-order answer, the order reads, open orders, user-orders, the pair page, the
 * executions, `user_orders`, a trading session's reports and calls, amend and batch answers), equal
 * to what the ledger moved, across kill -9, past 2^53 with every digit. A real server on its own
 * SQLite file; every answer and message is checked against the OpenAPI and AsyncAPI documents.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Order } from "../../src/client/index.ts";
import { SessionSocket } from "../session/helpers.ts";
import { waitFor } from "../wait.ts";
import { dec, fmt, mul } from "./decimal.ts";
import { expectOk, limit, market, placeLimit, TestServer, type TestUser } from "./harness.ts";

/** The quote currency `user` has available (exact, at the ledger's scale). */
async function usdt(server: TestServer, user: TestUser): Promise<bigint> {
  return (await server.balances(user)).get("usdt")!.available;
}

/** The exact text of `executedQuote` in a JSON body, for each occurrence. */
function executedTexts(text: string): string[] {
  return [...text.matchAll(/"executedQuote":([0-9.e+-]+)/g)].map((m) => m[1]);
}

/** The order `id` of `user` as each REST read shows it, with the body's exact texts. */
async function restReads(server: TestServer, user: TestUser, id: number) {
  const byId = await user.client.order(id);
  const page = await user.client.userOrders("btc_usdt", { page: 1, pageSize: 100 });
  const pairPage = await user.client.pairPage("btc_usdt");
  const executions = expectOk(await user.client.executions({ limit: 1000 }));
  const lastOfOrder = executions.items.filter((e) => e.event === "order" && e.data.id === id).at(-1);
  return {
    byId: expectOk(byId),
    byIdText: executedTexts(byId.text),
    page: expectOk(page).items.find((o) => o.id === id),
    pairPage: expectOk(pairPage).userOrders?.find((o) => o.id === id),
    execution: lastOfOrder?.event === "order" ? (lastOfOrder.data as Order) : undefined,
    server,
  };
}

describe("executedQuote", () => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start();
  });
  after(async () => {
    await server?.close();
  });

  it("is 0 before a fill and the exact sum over the taker's and each maker's fills on every read path", async () => {
    const [makerA, makerB, taker, later] = await server.newUsers(4, { btc: "10", usdt: "1000000" });
    const session = await SessionSocket.logon(server, taker);
    const stream = await server.stream([`user_orders:${taker.uid}`], taker);
    try {
      const a = await placeLimit(makerA, "btc_usdt", "sell", "25000", "0.1");
      const b = await placeLimit(makerB, "btc_usdt", "sell", "25000.01", "0.2");
      assert.equal(a.executedQuote, 0, "0 before any fill");
      const sellersBefore = [await usdt(server, makerA), await usdt(server, makerB)];
      // The taker buys 0.5 up to 25,000.02: 0.1 at 25,000 and 0.2 at 25,000.01; 0.2 rests.
      const created = await taker.client.createOrder(limit("btc_usdt", "buy", "25000.02", "0.5"));
      const buy = expectOk(created);
      const takerValue = mul(dec("25000"), dec("0.1")) + mul(dec("25000.01"), dec("0.2"));
      assert.equal(fmt(takerValue), "7500.002");
      assert.deepEqual(executedTexts(created.text), ["7500.002"], "the create-order answer");
      assert.equal(buy.amountUsed, 0.3);

      // The same exact value the ledger moved: what each seller received (no fees).
      assert.equal((await usdt(server, makerA)) - sellersBefore[0], dec("2500"));
      assert.equal((await usdt(server, makerB)) - sellersBefore[1], dec("5000.002"));
      for (const [user, order, value] of [
        [makerA, a, "2500"],
        [makerB, b, "5000.002"],
      ] as const) {
        const r = await restReads(server, user, order.id);
        assert.deepEqual(r.byIdText, [value], "the maker's order by id");
        assert.equal(String(r.page?.executedQuote), value, "the maker's user-orders page");
        assert.equal(String(r.execution?.executedQuote), value, "the maker's executions");
      }

      const reads = await restReads(server, taker, buy.id);
      assert.deepEqual(reads.byIdText, ["7500.002"], "order by id");
      assert.equal(reads.page?.executedQuote, 7500.002, "user-orders page");
      assert.equal(reads.pairPage?.executedQuote, 7500.002, "pair page userOrders");
      assert.equal(reads.execution?.executedQuote, 7500.002, "executions");
      const open = expectOk(await taker.client.openOrders("btc_usdt"));
      assert.deepEqual(
        open.map((o) => [o.id, o.amountUsed, o.executedQuote]),
        [[buy.id, 0.3, 7500.002]],
        "open orders while partly filled",
      );
      const streamed = await stream.next<Order>((m) => m.data.id === buy.id);
      assert.equal(streamed.data.executedQuote, 7500.002, "user_orders");
      const report = await waitFor(
        () => session.frames.find((f) => f.event === "order" && (f.data as Order).id === buy.id),
        { what: "the session's order report" },
      );
      assert.equal((report.data as Order).executedQuote, 7500.002, "session report");
      const got = await session.call("order.get", { orderId: buy.id });
      assert.equal((got.result as Order).executedQuote, 7500.002, "session order.get");
      const openCall = await session.call("orders.open", { pairName: "btc_usdt" });
      assert.equal((openCall.result as Order[])[0].executedQuote, 7500.002, "session orders.open");

      // The resting buy is a maker now: 0.05 sold into it at its 25,000.02.
      const hit = await placeLimit(later, "btc_usdt", "sell", "24000", "0.05");
      assert.equal(hit.executedQuote, 1250.001, "the new taker's own fills");
      const makerValue = takerValue + mul(dec("25000.02"), dec("0.05"));
      assert.equal(fmt(makerValue), "8750.003");
      const afterHit = await restReads(server, taker, buy.id);
      assert.deepEqual(afterHit.byIdText, ["8750.003"], "the maker side adds up");
      assert.equal(
        (await stream.next<Order>((m) => m.data.id === buy.id && m.data.amountUsed === 0.35)).data
          .executedQuote,
        8750.003,
      );
      await waitFor(
        () =>
          session.frames.some(
            (f) =>
              f.event === "order" &&
              (f.data as Order).id === buy.id &&
              (f.data as Order).executedQuote === 8750.003,
          ),
        { what: "the session's report of the maker fill" },
      );

      // An amend keeps what executed; so does the cancel.
      const amended = await taker.client.amendOrder({ orderId: buy.id, price: "25000.03" });
      assert.deepEqual(executedTexts(amended.text), ["8750.003"], "amend answer");
      expectOk(await taker.client.cancelOrder(buy.id));
      assert.deepEqual((await restReads(server, taker, buy.id)).byIdText, ["8750.003"], "cancelled");
      // The session's executions call and a resume's replay show the order at its latest change.
      const pulled = await session.call("executions", { limit: 1000 });
      const items = (pulled.result as { items: { event: string; data: Order }[] }).items;
      const lastOrder = items.filter((e) => e.event === "order" && e.data.id === buy.id).at(-1);
      assert.equal(lastOrder?.data.executedQuote, 8750.003, "session executions");
      const resumed = await SessionSocket.logon(server, taker, { resumeFrom: 0 });
      try {
        await waitFor(() => resumed.frames.some((f) => f.event === "resumed"), { what: "the replay's end" });
        const replayed = resumed.frames.filter((f) => f.event === "order" && (f.data as Order).id === buy.id);
        assert.deepEqual(
          replayed.map((f) => (f.data as Order).executedQuote),
          [8750.003],
          "the resume's replay",
        );
      } finally {
        resumed.close();
      }
    } finally {
      session.close();
      await stream.close();
    }
  });

  it("gives a market buy that walks several levels the exact cost it paid, and keeps every value across kill -9", async () => {
    const [seller, buyer] = await server.newUsers(2, { btc: "10", usdt: "1000000" });
    const levels: [string, string][] = [
      ["30000", "0.01"],
      ["30000.5", "0.02"],
      ["30001.25", "0.03"],
    ];
    for (const [price, amount] of levels) await placeLimit(seller, "btc_usdt", "sell", price, amount);
    const before = await usdt(server, buyer);
    const res = await buyer.client.createOrder({
      ...market("btc_usdt", "buy", "0.05"),
      clientOrderId: "walk-1",
    });
    const walk = expectOk(res);
    // 0.01 × 30,000 + 0.02 × 30,000.5 + 0.02 × 30,001.25.
    const cost =
      mul(dec("30000"), dec("0.01")) + mul(dec("30000.5"), dec("0.02")) + mul(dec("30001.25"), dec("0.02"));
    assert.equal(fmt(cost), "1500.035");
    assert.deepEqual(executedTexts(res.text), ["1500.035"]);
    assert.equal(before - (await usdt(server, buyer)), cost, "what the ledger took from the buyer");
    assert.equal(walk.price, 30000.7, "the average price, 1500.035 / 0.05");
    const byClient = await buyer.client.orderByClientId("walk-1");
    assert.deepEqual(executedTexts(byClient.text), ["1500.035"], "order by client id");
    // The seller's last level is still open with 0.02 of 0.03 filled.
    const rest = expectOk(await seller.client.openOrders("btc_usdt"));
    assert.deepEqual(
      rest.map((o) => [o.price, o.amountUsed, o.executedQuote]),
      [[30001.25, 0.02, 600.025]],
    );

    await server.kill();
    await server.restart();
    const again = await buyer.client.order(walk.id);
    assert.deepEqual(executedTexts(again.text), ["1500.035"], "after kill -9");
    const restAgain = expectOk(await seller.client.openOrders("btc_usdt"));
    assert.equal(restAgain[0].executedQuote, 600.025, "a recovered open order");
    // A fill after the restart adds to the recovered value.
    await placeLimit(buyer, "btc_usdt", "buy", "30001.25", "0.01");
    const filled = await seller.client.order(restAgain[0].id);
    assert.deepEqual(executedTexts(filled.text), ["900.0375"]);
    const page = expectOk(await seller.client.executions({ limit: 1000 }));
    const last = page.items.filter((e) => e.event === "order" && e.data.id === restAgain[0].id).at(-1);
    assert.equal(last?.event === "order" ? last.data.executedQuote : undefined, 900.0375);
  });

  it("shows every digit of a value past 2^53, in a batch answer too", async () => {
    // 9,999.999999 btc at 9,999,999.99: 99,999,999,890.00000001 usdt, 19 significant digits.
    const [seller, buyer] = await server.newUsers(2, { btc: "10000", usdt: "100000000000" });
    await placeLimit(seller, "btc_usdt", "sell", "9999999.99", "9999.999999");
    const res = await buyer.client.createOrders([
      limit("btc_usdt", "buy", "9999999.99", "9999.999999"),
      limit("btc_usdt", "buy", "1", "0.001"),
    ]);
    expectOk(res);
    const value = mul(dec("9999999.99"), dec("9999.999999"));
    assert.equal(fmt(value), "99999999890.00000001");
    assert.deepEqual(executedTexts(res.text), ["99999999890.00000001", "0"]);
    assert.ok(value * 10n ** 8n > 2n ** 53n);
    const sold = expectOk(await seller.client.userOrders("btc_usdt")).items[0];
    const byId = await seller.client.order(sold.id);
    assert.deepEqual(executedTexts(byId.text), ["99999999890.00000001"]);
  });
});
