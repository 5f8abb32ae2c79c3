/**
 * Cancel on disconnect over FIX (docs/API.md 17.1, 8.9) through jspurefix against the real server:
 * the orders of a session logged on with CancelOnDisconnect(8013)=Y are cancelled however it ends
 * (a dropped link, a Logout, the server's shutdown, a kill -9 and the restart), and only those.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { expectOk, sharedServer, type TestServer, type TestUser } from "../e2e/harness.ts";
import { waitFor } from "../wait.ts";
import { fixLogon, newOrder, nextReport } from "./helpers.ts";
import type { FixClient } from "./jspurefix-client.ts";

/** Places a resting buy over `c` and returns its id. */
async function rest(c: FixClient, clOrdId: string): Promise<number> {
  c.send("D", newOrder(clOrdId, "buy", "0.1", "10"));
  return Number((await nextReport(c, "0", clOrdId)).get(37));
}

async function cancelledSoon(user: TestUser, id: number): Promise<void> {
  await waitFor(async () => expectOk(await user.client.order(id)).isCancelled || undefined, {
    what: `order ${id} cancelled`,
    timeoutMs: 3000,
  });
}

describe("FIX cancel on disconnect", () => {
  let server: TestServer;
  sharedServer(
    (s) => {
      server = s;
    },
    { args: ["--fix-port", "0"] },
  );

  it("cancels the session's open orders when its link drops, and flags them", async () => {
    const u = await server.newUser({ usdt: "1000" });
    const c = await fixLogon(server, u, { cancelOnDisconnect: true });
    const id = await rest(c, "cod-1");
    const o = expectOk(await u.client.order(id));
    assert.equal(o.cancelOnDisconnect, true);
    const started = Date.now();
    c.destroy();
    await cancelledSoon(u, id);
    assert.ok(Date.now() - started < 1500);
  });

  it("cancels them on a Logout, and leaves the orders of a session with 8013=N", async () => {
    const u = await server.newUser({ usdt: "1000" });
    const yes = await fixLogon(server, u, { cancelOnDisconnect: true });
    const no = await fixLogon(server, u, { cancelOnDisconnect: false });
    const a = await rest(yes, "cod-y");
    const b = await rest(no, "cod-n");
    await yes.logout();
    await cancelledSoon(u, a);
    // The other session saw the cancel as a report of a change made elsewhere.
    const x = await nextReport(no, "4", "cod-y");
    assert.equal(Number(x.get(37)), a);
    await no.logout();
    const kept = expectOk(await u.client.order(b));
    assert.equal(kept.isCancelled, false);
    assert.equal(kept.cancelOnDisconnect, undefined);
  });

  it("cancels them when the server stops, and after a kill -9 at the restart", async () => {
    const u = await server.newUser({ usdt: "1000" });
    let c = await fixLogon(server, u, { cancelOnDisconnect: true });
    const a = await rest(c, "cod-stop");
    await server.restart();
    assert.equal((await c.closed).logoutText, "server shutting down");
    assert.equal(expectOk(await u.client.order(a)).isCancelled, true);
    c = await fixLogon(server, u, { cancelOnDisconnect: true });
    const b = await rest(c, "cod-kill");
    await server.kill();
    await server.restart();
    assert.equal(expectOk(await u.client.order(b)).isCancelled, true);
  });
});
