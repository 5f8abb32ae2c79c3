/**
 * CONTRACT 11.4 cancel on disconnect through a real session: orders created by a session logged on
 * with `cancelOnDisconnect: true` carry the flag and are cancelled when the client closes the
 * connection, holds released; orders of a session without it, and REST orders, stay.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { expectOk, limit, sharedServer, type TestServer } from "../e2e/harness.ts";
import { waitFor } from "../wait.ts";
import { SessionSocket } from "./helpers.ts";

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
});
