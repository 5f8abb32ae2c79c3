/**
 * Trading sessions, connect and log on (docs/API.md 13), on the real server: hello, a good logon,
 * bad signature and unknown token (401, close 4001), calls before logon (401, stays), invalid logon
 * params (400, stays, may log on again), re-logon (400 method), the logon deadline (4001), and the
 * revocation of the key (4001).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { sharedServer, type TestServer } from "../e2e/harness.ts";
import { errorOf, SessionSocket, serverTime } from "./helpers.ts";

/** The logon deadline of the test server (a short one, so the test of it is quick). */
const DEADLINE_MS = 1500;

describe("session logon", () => {
  let server: TestServer;
  sharedServer(
    (s) => {
      server = s;
    },
    { env: { SESSION_LOGON_DEADLINE_MS: String(DEADLINE_MS) } },
  );

  it("says hello with a fresh 64-hex challenge and the server time", async () => {
    const a = await SessionSocket.open(server);
    const b = await SessionSocket.open(server);
    const hello = a.frames[0];
    assert.equal(hello.event, "hello");
    assert.match(a.challenge, /^[0-9a-f]{64}$/);
    assert.notEqual(a.challenge, b.challenge);
    assert.ok(Math.abs((hello.serverTime as number) - Date.now()) < 5000);
    a.close();
    b.close();
  });

  it("logs on with the HMAC of the challenge and answers the session's settings", async () => {
    const u = await server.newUser();
    const s = await SessionSocket.open(server);
    const sig = s.credentials(u);
    const a = await s.call("session.logon", { ...sig, signature: sig.signature.toUpperCase() });
    assert.deepEqual(a, {
      id: 1,
      status: 200,
      result: { uid: u.uid, cancelOnDisconnect: false, heartbeatSeconds: 30, reports: true },
    });
    const again = await s.call("session.logon", s.credentials(u));
    assert.deepEqual(errorOf(again), {
      status: 400,
      keys: ["method"],
      codes: { method: ["SESSION_ALREADY_LOGGED_ON"] },
    });
    const ping = await s.call("ping");
    assert.equal(ping.status, 200);
    assert.equal(s.closeCode, null);
    s.close();
  });

  it("answers 401 and closes with 4001 on a wrong signature or an unknown token", async () => {
    const u = await server.newUser();
    const s = await SessionSocket.open(server);
    const a = await s.call("session.logon", { apiToken: u.apiToken, signature: "00".repeat(32) });
    assert.deepEqual(errorOf(a), {
      status: 401,
      keys: ["auth"],
      codes: { auth: ["AUTH_SIGNATURE_INVALID"] },
    });
    assert.equal(await s.closed(), 4001);
    const t = await SessionSocket.open(server);
    const b = await t.call("session.logon", { apiToken: "nope-nope-nope", signature: "00" });
    assert.equal(b.status, 401);
    assert.equal(await t.closed(), 4001);
  });

  it("answers 401 to a call before logon, 400 to bad logon params, and the connection stays", async () => {
    const u = await server.newUser();
    const s = await SessionSocket.open(server, { "Accept-Language": "ru" });
    const a = await s.call("balances");
    assert.deepEqual(errorOf(a), { status: 401, keys: ["auth"], codes: { auth: ["SESSION_NOT_LOGGED_ON"] } });
    assert.match((a.errors as { auth: string[] }).auth[0], /вход/);
    const bad = await s.call("session.logon", { ...s.credentials(u), heartbeatSeconds: 121, colour: "red" });
    assert.deepEqual(errorOf(bad).keys, ["heartbeatSeconds", "colour"]);
    assert.equal(bad.status, 400);
    const good = await s.call("session.logon", {
      ...s.credentials(u),
      heartbeatSeconds: 120,
      reports: false,
    });
    assert.equal(good.status, 200);
    assert.deepEqual(good.result, {
      uid: u.uid,
      cancelOnDisconnect: false,
      heartbeatSeconds: 120,
      reports: false,
    });
    assert.equal(s.closeCode, null);
    s.close();
  });

  it("closes with 4001 when no logon came within the deadline", async () => {
    const s = await SessionSocket.open(server);
    assert.equal(await s.closed(), 4001);
    // Not before the deadline, on the server's clock: the hello's serverTime is stamped at open, and
    // a GET /time sent once the close arrived answers a time after the close. The deadline counts
    // from the upgrade, a moment before the hello is stamped: 100 ms spare for that moment.
    const closedBy = await serverTime(server);
    const opened = s.frames[0].serverTime as number;
    assert.ok(closedBy - opened >= DEADLINE_MS - 100, `closed by ${closedBy - opened} ms after the hello`);
    assert.deepEqual(
      s.frames.map((f) => f.event),
      ["hello"],
      "nothing but the hello before the close",
    );
  });

  it("closes the sessions of a revoked key with 4001", async () => {
    const u = await server.newUser();
    const s = await SessionSocket.logon(server, u);
    const res = await server.admin.revokeApiKey(u.apiToken);
    assert.equal(res.status, 200);
    assert.equal(await s.closed(), 4001);
    // Its key is gone: the harness cannot read its orders to clean up (it has none).
    server.users.splice(server.users.indexOf(u), 1);
  });
});
