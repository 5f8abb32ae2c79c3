/**
 * docs/API.md 8.9 cancel on disconnect through a real session: orders created by a session logged on
 * with `cancelOnDisconnect: true` carry the flag and are cancelled when the client closes the
 * connection, holds released; orders of a session without it, and REST orders, stay.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { expectOk, limit, sharedServer, type TestServer } from "../e2e/harness.ts";
import { waitFor } from "../wait.ts";
import { clientIdJudgedByDatabase, SessionSocket } from "./helpers.ts";

describe("session cancel on disconnect", () => {
  let server: TestServer;
  sharedServer((s) => {
    server = s;
  });

  it("cancels the orders of a cancelOnDisconnect session when it closes, and only those", async () => {
    const u = await server.newUser({ usdt: "10000" });
    const rest = expectOk(await u.client.createOrder({ ...limit("btc_usdt", "buy", "100", "1") }));

    const plain = await SessionSocket.open(server);
    assert.equal((await plain.call("session.logon", plain.credentials(u))).status, 200);
    const kept = await plain.call("order.create", { ...limit("btc_usdt", "buy", "101", "1") });
    assert.equal(kept.status, 200, JSON.stringify(kept));

    const reservedBefore = (await server.balances(u)).get("usdt")!.reserved;

    const s = await SessionSocket.open(server);
    const logon = await s.call("session.logon", { ...s.credentials(u), cancelOnDisconnect: true });
    assert.equal((logon.result as { cancelOnDisconnect: boolean }).cancelOnDisconnect, true);
    const a = await s.call("order.create", { ...limit("btc_usdt", "buy", "102", "1") });
    const b = await s.call("order.create", { ...limit("eth_usdt", "buy", "10", "1") });
    const flagged = [a, b].map((x) => x.result as { id: number; cancelOnDisconnect?: boolean });
    for (const o of flagged) assert.equal(o.cancelOnDisconnect, true);
    s.close();

    await waitFor(
      async () =>
        (await Promise.all(flagged.map(async (o) => expectOk(await u.client.order(o.id)).isCancelled))).every(
          Boolean,
        ),
      { what: "the session's orders to be cancelled after its close", intervalMs: 20 },
    );
    const open = expectOk(await u.client.openOrders("btc_usdt")).map((o) => o.id);
    assert.deepEqual(open.sort(), [rest.id, (kept.result as { id: number }).id].sort());
    assert.equal((await server.balances(u)).get("usdt")!.reserved, reservedBefore, "their holds released");
    plain.close();
  });

  it("never rests a create that still waited on the server when its session closed", async () => {
    const u = await server.newUser({ usdt: "1000", btc: "1" });
    const cid = await clientIdJudgedByDatabase(u);
    const s = await SessionSocket.logon(server, u, { cancelOnDisconnect: true });
    // The create and the close in one burst: the close is handled while the create waits.
    s.send(
      JSON.stringify({
        id: 1,
        method: "order.create",
        params: { ...limit("btc_usdt", "buy", "10", "1"), clientOrderId: cid },
      }),
    );
    s.close();
    await s.closed();
    // A REST create of the user on the pair waits behind the session's create (arrival order), so
    // once it is answered the session's create has been judged.
    const after = expectOk(await u.client.createOrder(limit("btc_usdt", "buy", "11", "1")));
    const open = expectOk(await u.client.openOrders("btc_usdt")).map((o) => o.id);
    assert.deepEqual(open, [after.id], "only the REST order rests");
    assert.deepEqual((await server.balanceTable(u)).usdt, ["989", "11"], "only its hold");
    expectOk(await u.client.cancelOrder(after.id));
  });

  it("never places a quote that still waited for the one in flight when its session closed", async () => {
    const u = await server.newUser({ usdt: "1000" });
    const s = await SessionSocket.logon(server, u, { cancelOnDisconnect: true });
    const quote = (id: number, price: string) =>
      JSON.stringify({
        id,
        method: "quote.replace",
        params: { pairName: "btc_usdt", bids: [[price, "1"]], asks: [] },
      });
    // The second quote waits for the first; the close comes while it does.
    s.send(quote(1, "20"));
    s.send(quote(2, "21"));
    s.close();
    await s.closed();
    // Behind the waiting quote (arrival order): answered once it was judged.
    const after = expectOk(await u.client.createOrder(limit("btc_usdt", "buy", "11", "1")));
    await waitFor(
      async () => expectOk(await u.client.openOrders("btc_usdt")).every((o) => o.id === after.id),
      { what: "the first quote's orders cancelled with the session" },
    );
    const open = expectOk(await u.client.openOrders("btc_usdt")).map((o) => o.id);
    assert.deepEqual(open, [after.id], "no quote order rests");
    assert.deepEqual((await server.balanceTable(u)).usdt, ["989", "11"]);
    expectOk(await u.client.cancelOrder(after.id));
  });
});
