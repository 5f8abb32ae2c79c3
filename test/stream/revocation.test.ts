/**
 * Revoking an API key (docs/API.md 1.2) ends what it opened on the stream: every `/stream`
 * connection whose upgrade it signed, and every listen key made with it together with the
 * connections those keys admitted, each closed with 4001. The user's other keys keep theirs.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import WebSocket from "ws";
import { signText } from "../../src/client/index.ts";
import { expectOk, limit, sharedServer, type TestServer } from "../e2e/harness.ts";
import { waitFor } from "../wait.ts";

/** A raw `ws` connection to `/stream?<query>` that records its messages and its close code. */
async function open(
  server: TestServer,
  query: string,
  headers: Record<string, string> = {},
): Promise<{ messages: string[]; closed: () => Promise<number>; ws: WebSocket }> {
  const ws = new WebSocket(`${server.origin.replace(/^http/, "ws")}/stream?${query}`, { headers });
  const messages: string[] = [];
  ws.on("message", (data: Buffer) => messages.push(data.toString("utf8")));
  let code: number | null = null;
  ws.on("close", (c) => {
    code = c;
  });
  const closed = () => waitFor(() => code, { what: `the close of /stream?${query.slice(0, 60)}` });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once("error", reject);
  });
  return { messages, closed, ws };
}

/** The status of an upgrade that is refused (or 101 when it is not). */
function upgradeStatus(server: TestServer, query: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${server.origin.replace(/^http/, "ws")}/stream?${query}`);
    ws.once("open", () => {
      ws.terminate();
      resolve(101);
    });
    ws.once("unexpected-response", (req, res) => {
      req.socket?.destroy();
      resolve(res.statusCode ?? 0);
    });
    ws.once("error", reject);
  });
}

describe("revoking an API key", () => {
  let server!: TestServer;
  sharedServer((s) => {
    server = s;
  });

  it("closes with 4001 the streams its signature opened and those of its listen keys, and ends the keys", async () => {
    const user = await server.newUser({ usdt: "1000" });
    const second = expectOk(await server.admin.createApiKey(user.uid), "a second key");
    const query = `streams=user_orders:${user.uid}`;
    const bySecond = await open(server, query, {
      authorization: second.apiToken,
      "x-signature": signText(second.secretKey, query),
    });
    const byFirst = await open(server, query, {
      authorization: user.apiToken,
      "x-signature": signText(user.secretKey, query),
    });
    const secondClient = server.client(second);
    const key = expectOk(await secondClient.listenKey(), "a listen key made with the second key").listenKey;
    const firstKey = expectOk(
      await user.client.listenKey(),
      "a listen key made with the first key",
    ).listenKey;
    const byKey = await open(server, `${query}&listenKey=${key}`);
    const byFirstKey = await open(server, `${query}&listenKey=${firstKey}`);

    expectOk(await server.admin.revokeApiKey(second.apiToken), "revoke");
    assert.equal(await bySecond.closed(), 4001, "the stream the revoked key signed");
    assert.equal(await byKey.closed(), 4001, "the stream of a listen key the revoked key made");
    assert.equal(
      await upgradeStatus(server, `streams=exchanges&listenKey=${key}`),
      401,
      "the listen key ended",
    );
    const extended = await secondClient.listenKey(key);
    assert.equal(extended.status, 401, "the revoked key signs nothing");

    // The user's other key keeps its streams, and they still carry the user's orders.
    const order = expectOk(await user.client.createOrder(limit("btc_usdt", "buy", "100", "0.001")), "create");
    for (const [what, conn] of [
      ["signed with the other key", byFirst],
      ["of the other key's listen key", byFirstKey],
    ] as const) {
      const deadline = Date.now() + 10_000;
      while (!conn.messages.some((m) => m.includes(`"id":${order.id}`))) {
        assert.ok(Date.now() < deadline, `the order reaches the stream ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(conn.ws.readyState, WebSocket.OPEN, what);
      conn.ws.close();
    }
    assert.ok(
      !bySecond.messages.some((m) => m.includes(`"id":${order.id}`)),
      "nothing reached the closed stream",
    );
    server.users.splice(server.users.indexOf(user), 1);
    expectOk(await user.client.cancelOrder(order.id), "clean-up");
  });
});
