/**
 * Arrival order through a real session (docs/API.md 6 and 13: "two calls on one pair are answered in
 * their order"): a call that waits on the main thread before its pair's sequencer (a client order id
 * the database judges, funds a market buy in flight holds, an amend behind an amend of the same
 * order) keeps the user's later calls on the pair behind it (src/core/arrival-order.ts).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { QuoteResult } from "../../src/client/index.ts";
import { expectOk, limit, sharedServer, type TestServer } from "../e2e/harness.ts";
import { clientIdJudgedByDatabase, type Frame, SessionSocket } from "./helpers.ts";

/** `exchange_client_id_db_checks_total` from /metrics. */
async function dbChecks(server: TestServer): Promise<number> {
  const text = await (await fetch(`${server.origin}/metrics`)).text();
  const m = /^exchange_client_id_db_checks_total (\d+)$/m.exec(text);
  assert.ok(m !== null, "exchange_client_id_db_checks_total missing from /metrics");
  return Number(m[1]);
}

/** Sends `calls` in one burst; their answers, and the ids in the order they were answered. */
async function burst(
  s: SessionSocket,
  first: number,
  calls: [string, Frame][],
): Promise<{ results: Frame[]; answered: unknown[] }> {
  const results = await Promise.all(calls.map(([method, params], i) => s.call(method, params, first + i)));
  const answered = s.frames.filter((f) => typeof f.id === "number" && f.id >= first).map((f) => f.id);
  return { results, answered };
}

const order = (side: string, price: string, amount = "1", more: Frame = {}): Frame => ({
  pairName: "btc_usdt",
  tradeType: "limit",
  directionType: side,
  price,
  amount,
  ...more,
});
const marketBuy = (amount: string): Frame => ({
  pairName: "btc_usdt",
  tradeType: "market",
  directionType: "buy",
  amount,
});
const idOf = (a: Frame): number => (a.result as { id: number }).id;

describe("session calls on one pair run in arrival order", () => {
  let server: TestServer;
  sharedServer((s) => {
    server = s;
  });

  it("runs a cancel-all after the create whose client order id the database judges", async () => {
    const u = await server.newUser({ usdt: "1000", btc: "1" });
    const cid = await clientIdJudgedByDatabase(u);
    const checks = await dbChecks(server);
    const s = await SessionSocket.logon(server, u);
    const { results, answered } = await burst(s, 100, [
      ["order.create", order("buy", "10", "1", { clientOrderId: cid })],
      ["orders.cancelAll", { pairName: "btc_usdt" }],
    ]);
    for (const a of results) assert.equal(a.status, 200, JSON.stringify(a));
    assert.deepEqual(answered, [100, 101]);
    assert.equal(await dbChecks(server), checks + 1, "the id was judged by the database");
    assert.deepEqual(results[1].result, { cancelled: [idOf(results[0])] });
    assert.deepEqual((await server.balanceTable(u)).usdt, ["1000", "0"]);
    s.close();
  });

  it("runs a cancel-all after a limit buy that waited for the market buy before it", async () => {
    const seller = await server.newUser({ btc: "1" });
    expectOk(await seller.client.createOrder(limit("btc_usdt", "sell", "100", "1")));
    const u = await server.newUser({ usdt: "1000" });
    const s = await SessionSocket.logon(server, u);
    // The market buy holds the whole usdt balance while it is in the worker: the limit buy is
    // refused for funds at first and waits for it.
    const { results, answered } = await burst(s, 200, [
      ["order.create", marketBuy("1")],
      ["order.create", order("buy", "50")],
      ["orders.cancelAll", { pairName: "btc_usdt" }],
    ]);
    for (const a of results) assert.equal(a.status, 200, JSON.stringify(a));
    assert.deepEqual(answered, [200, 201, 202]);
    assert.ok(idOf(results[0]) < idOf(results[1]));
    assert.deepEqual(results[2].result, { cancelled: [idOf(results[1])] });
    assert.equal(expectOk(await u.client.openOrders("btc_usdt")).length, 0);
    const b = await server.balanceTable(u);
    assert.equal(b.usdt[1], "0", "nothing stays reserved");
    assert.equal(b.btc[0], "1", "the market buy filled");
    s.close();
  });

  it("answers two amends of one order and its cancel in order, the second amend before the cancel", async () => {
    const u = await server.newUser({ btc: "1" });
    const s = await SessionSocket.logon(server, u);
    const created = await s.call("order.create", order("sell", "200"));
    assert.equal(created.status, 200, JSON.stringify(created));
    const id = idOf(created);
    // The second amend waits for the first in the worker; the cancel must wait behind it.
    const { results, answered } = await burst(s, 300, [
      ["order.amend", { orderId: id, price: "199" }],
      ["order.amend", { orderId: id, price: "198" }],
      ["order.cancel", { orderId: id }],
    ]);
    for (const a of results) assert.equal(a.status, 200, JSON.stringify(a));
    assert.deepEqual(answered, [300, 301, 302]);
    assert.equal(String((results[1].result as { price: string | number }).price), "198");
    const o = expectOk(await u.client.order(id));
    assert.equal(o.isCancelled, true);
    assert.equal(String(o.price), "198");
    assert.deepEqual((await server.balanceTable(u)).btc, ["1", "0"]);
    s.close();
  });

  it("lets a quote that needs funds a market buy in flight holds wait for it", async () => {
    const seller = await server.newUser({ btc: "1" });
    expectOk(await seller.client.createOrder(limit("btc_usdt", "sell", "100", "1")));
    const u = await server.newUser({ usdt: "1000" });
    const s = await SessionSocket.logon(server, u);
    const { results, answered } = await burst(s, 400, [
      ["order.create", marketBuy("1")],
      ["quote.replace", { pairName: "btc_usdt", bids: [["90", "1"]], asks: [] }],
      ["orders.cancelAll", { pairName: "btc_usdt" }],
    ]);
    for (const a of results) assert.equal(a.status, 200, JSON.stringify(a));
    assert.deepEqual(answered, [400, 401, 402]);
    const placed = (results[1].result as QuoteResult).placed[0] as { id: number };
    assert.ok(idOf(results[0]) < placed.id, "the quote after the market buy");
    // The cancel-all ran after the quote that waited.
    assert.deepEqual(results[2].result, { cancelled: [placed.id] });
    const b = await server.balanceTable(u);
    assert.equal(b.usdt[1], "0", "nothing stays reserved");
    assert.equal(b.btc[0], "1", "the market buy filled");
    s.close();
  });
});
