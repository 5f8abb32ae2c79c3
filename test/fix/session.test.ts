/**
 * The FIX gateway's session layer (docs/API.md 17.1) on the real server: the signed Logon and its
 * refusals, CompIDs, sequence numbers, ResendRequest, TestRequest, Logout, heartbeats, garbled
 * messages and the revocation of the key.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { sharedServer, type TestServer } from "../e2e/harness.ts";
import { frame, RawFix, utc } from "./raw-fix.ts";

describe("FIX session layer", () => {
  let server: TestServer;
  sharedServer(
    (s) => {
      server = s;
    },
    { args: ["--fix-port", "0"], env: { SESSION_LOGON_DEADLINE_MS: "1500" } },
  );

  it("logs on with the signed Logon and answers it with the same HeartBtInt and 141=Y", async () => {
    const u = await server.newUser();
    const c = await RawFix.logon(server, u);
    const a = c.received[0];
    assert.equal(a.get(49), "EXCHANGE");
    assert.equal(a.get(56), "CLIENT");
    assert.equal(a.get(34), "1");
    assert.equal(a.get(108), "30");
    c.send("1", [[112, "hello"]]);
    const hb = await c.next("0");
    assert.equal(hb.get(112), "hello");
    assert.equal(hb.get(34), "2");
    c.send("5", []);
    const out = await c.next("5");
    assert.ok(out);
    await c.waitClosed();
  });

  it("refuses a wrong signature with Logout AUTH: and closes", async () => {
    const u = await server.newUser();
    const c = await RawFix.connect(server);
    const fields = c.logonFields({ apiToken: u.apiToken, secretKey: "0".repeat(64) });
    c.writeRaw(frame(fields));
    const out = await c.next("5");
    assert.match(out.get(58)!, /^AUTH: /);
    await c.waitClosed();
  });

  it("refuses a stale SendingTime", async () => {
    const u = await server.newUser();
    const c = await RawFix.connect(server);
    c.writeRaw(frame(c.logonFields(u, [], utc(Date.now() - 60_000))));
    const out = await c.next("5");
    assert.match(out.get(58)!, /^AUTH: SendingTime/);
    await c.waitClosed();
  });

  it("ends a session whose MsgSeqNum is too high or too low", async () => {
    const u = await server.newUser();
    const c = await RawFix.logon(server, u);
    c.seq = 5;
    c.send("0", []);
    const out = await c.next("5");
    assert.equal(out.get(58), "MsgSeqNum too high, expected 2; resend is not supported");
    await c.waitClosed();
    const d = await RawFix.logon(server, u);
    d.send("0", []);
    d.seq = 2;
    d.send("0", []);
    const low = await d.next("5");
    assert.equal(low.get(58), "MsgSeqNum too low, expected 3");
    await d.waitClosed();
  });

  it("answers a ResendRequest with one SequenceReset-GapFill", async () => {
    const u = await server.newUser();
    const c = await RawFix.logon(server, u);
    c.send("2", [
      [7, 1],
      [16, 0],
    ]);
    const r = await c.next("4");
    assert.equal(r.get(34), "1");
    assert.equal(r.get(43), "Y");
    assert.equal(r.get(123), "Y");
    assert.equal(r.get(36), "2");
    c.close();
  });

  it("rejects a wrong CompID with Reject 373=9 then Logout", async () => {
    const u = await server.newUser();
    const c = await RawFix.logon(server, u);
    c.writeRaw(
      frame([
        [35, "0"],
        [49, "OTHER"],
        [56, "EXCHANGE"],
        [34, 2],
        [52, utc()],
      ]),
    );
    const r = await c.next("3");
    assert.equal(r.get(373), "9");
    await c.next("5");
    await c.waitClosed();
  });

  it("ignores a message with a wrong checksum and goes on", async () => {
    const u = await server.newUser();
    const c = await RawFix.logon(server, u);
    const bad = frame([
      [35, "1"],
      [49, "CLIENT"],
      [56, "EXCHANGE"],
      [34, 2],
      [52, utc()],
      [112, "x"],
    ]);
    bad[bad.length - 2] = bad[bad.length - 2] === 48 ? 49 : 48;
    c.writeRaw(bad);
    c.send("1", [[112, "after"]]);
    const hb = await c.next("0");
    assert.equal(hb.get(112), "after");
    c.close();
  });

  it("sends a TestRequest after 1.2 x HeartBtInt of silence and ends with heartbeat timeout", async () => {
    const u = await server.newUser();
    const c = await RawFix.connect(server);
    const fields = c.logonFields(u).map(([t, v]) => [t, t === 108 ? 1 : v] as [number, string | number]);
    c.writeRaw(frame(fields));
    await c.next("A");
    await c.next("0", 3000);
    const t = await c.next("1", 3000);
    assert.ok(t.get(112));
    const out = await c.next("5", 4000);
    assert.equal(out.get(58), "heartbeat timeout");
    await c.waitClosed();
  });

  it("ends the session when its key is revoked", async () => {
    const u = await server.newUser();
    const c = await RawFix.logon(server, u);
    await server.admin.revokeApiKey(u.apiToken);
    const out = await c.next("5");
    assert.equal(out.get(58), "API key revoked");
    await c.waitClosed();
    // Its key is gone: the harness cannot read its orders to clean up (it has none).
    server.users.splice(server.users.indexOf(u), 1);
  });
});
