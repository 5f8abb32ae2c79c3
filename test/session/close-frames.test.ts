/**
 * How the server ends `/session` and `/stream` connections (docs/API.md 11.2, 11.4, 7): every close
 * it makes sends a close frame with its code, which `ws` reports as the close code (a connection
 * dropped without one reports 1006). Covered here: 4001 (logon refused, no logon in time, the key
 * revoked, a listen key closed), 4002 (a session's heartbeat, a stream's idle timeout), 1009 and
 * the shutdown's 1001; 1008 is covered by the two
 * slow-consumer tests (test/session/slow-consumer.test.ts, test/stream/slow-consumer.test.ts), which
 * read the same close code. Also the message limits of a session: up to 64 KiB a call, up to 1 MiB
 * a 413 with the connection kept, above that 1009.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { signText } from "../../src/client/index.ts";
import { expectOk, limit, TestServer, type TestUser } from "../e2e/harness.ts";
import { waitFor } from "../wait.ts";
import { errorOf, SessionSocket } from "./helpers.ts";

const KIB = 1024;

/** A `/stream` connection that records its close code. */
async function stream(server: TestServer, query: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(`${server.origin.replace(/^http/, "ws")}/stream?${query}`, { headers });
  let code: number | null = null;
  ws.on("close", (c) => {
    code = c;
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  return {
    ws,
    closed: (timeoutMs?: number) =>
      waitFor(() => code, { what: `the close of /stream?${query.slice(0, 40)}`, timeoutMs }),
  };
}

/** A `ping` call padded with spaces to exactly `bytes` bytes. */
function paddedPing(id: string, bytes: number): string {
  const call = JSON.stringify({ id, method: "ping" });
  return `${call.slice(0, -1)}${" ".repeat(bytes - call.length)}}`;
}

describe("how the server closes sessions and streams", () => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start({
      env: { SESSION_LOGON_DEADLINE_MS: "1500" },
      // The shortest stream idle timeout (docs/API.md 7), for the keep-alive close below.
      args: ["--idle-timeout", "8"],
    });
  });
  after(async () => {
    await server.close();
  });

  /** An order of `user` made through a cancelOnDisconnect session, and that session. */
  async function sessionWithOrder(user: TestUser) {
    const s = await SessionSocket.logon(server, user, { cancelOnDisconnect: true });
    const a = await s.call("order.create", { ...limit("btc_usdt", "buy", "100", "0.01") });
    assert.equal(a.status, 200, JSON.stringify(a));
    return { s, orderId: (a.result as { id: number }).id };
  }

  const cancelled = (user: TestUser, orderId: number) =>
    waitFor(async () => expectOk(await user.client.order(orderId)).isCancelled === true, {
      what: `the cancel of order ${orderId} when its session ended`,
    });

  it("sends a close frame with 4001, 4002 and 1009 on sessions and 4001 and 1009 on streams", async () => {
    const user = await server.newUser({ usdt: "1000" });

    const refused = await SessionSocket.open(server);
    const r = await refused.call("session.logon", { apiToken: user.apiToken, signature: "00".repeat(32) });
    assert.equal(r.status, 401);
    assert.equal(await refused.closed(), 4001, "logon refused");
    assert.equal(await (await SessionSocket.open(server)).closed(), 4001, "no logon in time");

    const silent = await SessionSocket.open(server);
    // ws answers pings by itself: turn that off to be silent.
    (silent.ws as unknown as { pong: () => void }).pong = () => {};
    const on = await silent.call("session.logon", { ...silent.credentials(user), heartbeatSeconds: 1 });
    assert.equal(on.status, 200);
    assert.equal(await silent.closed(), 4002, "heartbeat missed");

    // A message over 1 MiB: the answers before it, then 1009; the session ends as any close does.
    const big = await sessionWithOrder(user);
    big.s.send(JSON.stringify({ id: "before", method: "ping" }));
    big.s.send(paddedPing("big", 1024 * KIB + 1));
    assert.equal(await big.s.closed(), 1009, "message over 1 MiB");
    assert.equal(big.s.frames.find((f) => f.id === "before")?.status, 200, "the answer before the close");
    await cancelled(user, big.orderId);

    const query = `streams=user_orders:${user.uid}`;
    const chatty = await stream(server, "streams=exchanges");
    chatty.ws.send("x".repeat(16 * KIB));
    chatty.ws.send("x".repeat(16 * KIB + 1));
    assert.equal(await chatty.closed(), 1009, "a stream client's message over 16 KiB");

    const key = expectOk(await user.client.listenKey()).listenKey;
    const byKey = await stream(server, `${query}&listenKey=${key}`);
    expectOk(await user.client.closeListenKey(key));
    assert.equal(await byKey.closed(), 4001, "listen key closed");

    const second = expectOk(await server.admin.createApiKey(user.uid));
    const signed = await stream(server, query, {
      authorization: second.apiToken,
      "x-signature": signText(second.secretKey, query),
    });
    const revoked = await SessionSocket.logon(server, { ...user, ...second });
    expectOk(await server.admin.revokeApiKey(second.apiToken));
    assert.equal(await signed.closed(), 4001, "stream of a revoked key");
    assert.equal(await revoked.closed(), 4001, "session of a revoked key");
  });

  it("closes a stream whose client stops answering pings with 4002 after the idle timeout", async () => {
    const silent = await stream(server, "streams=exchanges");
    let pings = 0;
    silent.ws.on("ping", () => pings++);
    // ws answers pings by itself: turn that off to be silent.
    (silent.ws as unknown as { pong: () => void }).pong = () => {};
    const answering = await stream(server, "streams=exchanges");
    // The idle timeout is 8 s; the wait for the close is a guard, not a measure.
    assert.equal(await silent.closed(30_000), 4002);
    assert.ok(pings >= 1, "a ping came first");
    assert.equal(answering.ws.readyState, WebSocket.OPEN, "a client that answers stays");
    answering.ws.close();
  });

  it("answers a call up to 64 KiB, 413 errors.body with a null id up to 1 MiB, and keeps the connection", async () => {
    const user = await server.newUser({ usdt: "1000" });
    const s = await SessionSocket.logon(server, user);
    s.send(paddedPing("fits", 64 * KIB));
    assert.equal((await s.answer("fits")).status, 200);
    for (const bytes of [64 * KIB + 1, 1024 * KIB]) {
      s.send(paddedPing(`over-${bytes}`, bytes));
      const a = await waitFor(() => s.frames.find((f) => f.id === null && "status" in f && !f.seen), {
        what: `the answer to a ${bytes}-byte call`,
      });
      a.seen = true;
      assert.deepEqual(errorOf(a), { status: 413, keys: ["body"], codes: { body: ["BODY_TOO_LARGE"] } });
    }
    assert.equal((await s.call("ping")).status, 200, "the connection stays");
    assert.equal(s.closeCode, null);
    s.close();
  });

  it("ends a session that sends text that is not UTF-8 as any close does", async () => {
    // uWS drops such a connection itself, with no close frame (DECISIONS.md, "Session frame
    // limits"); what the server controls is that the session ends: its orders are cancelled.
    const user = await server.newUser({ usdt: "1000" });
    const { s, orderId } = await sessionWithOrder(user);
    s.ws.send(Buffer.from('{"id":1,"method":"ping","x":"\xff"}', "latin1"), { binary: false });
    await s.closed();
    await cancelled(user, orderId);
    const other = await SessionSocket.logon(server, user);
    assert.equal((await other.call("ping")).status, 200, "the server keeps serving");
    other.close();
  });

  it("closes sessions and streams with 1001 on shutdown", async () => {
    const user = await server.newUser({ usdt: "1000" });
    const s = await SessionSocket.logon(server, user);
    const st = await stream(server, "streams=exchanges");
    assert.equal(await server.stop(), 0);
    assert.equal(await s.closed(), 1001, "session");
    assert.equal(await st.closed(), 1001, "stream");
  });
});
