/**
 * A slow consumer of a trading session (docs/API.md 13, the bound of section 12.2) through the real
 * server: a session whose client stops reading is closed with 1008 once its unsent answers pass
 * the bound, after every answer up to that point and none skipped; the server keeps serving the
 * other sessions.
 *
 * The bound is 64 KiB here, but the kernel buffers a few MB of a loopback connection before uWS
 * holds any, so the test keeps calling until the server has ended the session. The paused client
 * cannot see the close: the session logs on with cancelOnDisconnect, so its end shows as the cancel
 * of its order (read over REST).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { expectOk, limit, sharedServer, type TestServer } from "../e2e/harness.ts";
import { SessionSocket } from "./helpers.ts";

/** Resting orders of the slow user: every `orders.open` answer carries them all (tens of kB). */
const RESTING = 120;
const CALLS_PER_ROUND = 40;
const MAX_ROUNDS = 100;

describe("session slow consumer", () => {
  let server: TestServer;
  sharedServer(
    (s) => {
      server = s;
    },
    { args: ["--max-backpressure", "65536"] },
  );

  it("closes a session that stops reading with 1008 and keeps serving the others", async () => {
    const [slowUser, other] = await server.newUsers(2, { usdt: "100000" });
    for (let i = 0; i < RESTING; i += 30)
      await Promise.all(
        Array.from({ length: Math.min(30, RESTING - i) }, (_, j) =>
          slowUser.client.createOrder(limit("btc_usdt", "buy", (1000 + i + j).toFixed(2), "0.001")),
        ),
      ).then((all) => {
        for (const r of all) expectOk(r, "a resting order");
      });

    const healthy = await SessionSocket.logon(server, other);
    const slow = await SessionSocket.logon(server, slowUser, { cancelOnDisconnect: true });
    const marker = await slow.call("order.create", { ...limit("btc_usdt", "buy", "500", "0.001") });
    assert.equal(marker.status, 200, JSON.stringify(marker));
    const markerId = (marker.result as { id: number }).id;
    const framesBefore = slow.frames.length;

    // The client stops reading; it keeps sending calls whose answers pile up on the server.
    slow.ws.pause();
    let next = 1000;
    let rounds = 0;
    for (;;) {
      const order = expectOk(await slowUser.client.order(markerId), "the marker order");
      if ((order as { isCancelled?: boolean }).isCancelled === true) break;
      assert.ok(rounds++ < MAX_ROUNDS, "the slow session was never closed");
      for (let i = 0; i < CALLS_PER_ROUND; i++)
        slow.send(JSON.stringify({ id: next++, method: "orders.open", params: { pairName: "btc_usdt" } }));
    }
    assert.ok(rounds > 0, "the session ended only after its client stopped reading");
    // It reads again at once, while the rest is checked: a connection that has drained nothing a
    // few seconds after its close ends without the close frame (docs/API.md 12.4).
    slow.ws.resume();

    // The server and the other session carry on.
    const health = await fetch(`${server.origin}/health`, { headers: { connection: "close" } });
    assert.equal(health.status, 200);
    const placed = await healthy.call("order.create", { ...limit("btc_usdt", "buy", "900", "0.001") });
    assert.equal(placed.status, 200, JSON.stringify(placed));
    assert.equal((await healthy.call("ping")).status, 200);
    assert.equal(healthy.closeCode, null);

    // Reading again, the slow client gets what was queued for it, then 1008: answers in the order
    // of its calls, none skipped, fewer than it sent.
    assert.equal(await slow.closed(20_000), 1008);
    const ids = slow.frames
      .slice(framesBefore)
      .filter((f) => "status" in f)
      .map((f) => f.id as number);
    assert.ok(ids.length > 0 && ids.length < next - 1000, `${ids.length} answers of ${next - 1000} calls`);
    assert.deepEqual(
      ids,
      Array.from({ length: ids.length }, (_, i) => 1000 + i),
      "a prefix of the answers, nothing skipped",
    );
    healthy.close();
  });
});
