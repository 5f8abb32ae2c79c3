/**
 * The FIX gateway's session layer (docs/API.md 17.1) through jspurefix against the real server: the
 * signed Logon and its refusals, CompIDs, sequence numbers, ResendRequest, TestRequest, Logout,
 * heartbeats, garbled and oversized messages, Reject(3) and the revocation of the key.
 */
import assert from "node:assert/strict";
import type { Socket } from "node:net";
import { describe, it } from "node:test";
import { sharedServer, sleep, type TestServer } from "../e2e/harness.ts";
import { fixLogon, fixPortOf } from "./helpers.ts";
import { type FixClient, FixLogonRefused, fixFrame, fixTime, logonSignature } from "./jspurefix-client.ts";
import { type Field, get, RawFix, show } from "./raw-fix.ts";

/** The refusal of a Logon: the Text of its Logout. */
async function refusal(promise: Promise<FixClient>): Promise<string | undefined> {
  try {
    const c = await promise;
    c.destroy();
  } catch (err) {
    if (err instanceof FixLogonRefused) return err.logoutText;
    throw err;
  }
  assert.fail("the Logon was accepted");
}

describe("FIX session layer", () => {
  let server: TestServer;
  sharedServer(
    (s) => {
      server = s;
    },
    { args: ["--fix-port", "0"] },
  );

  it("logs on with the signed Logon, answered with the same HeartBtInt and 141=Y", async () => {
    const u = await server.newUser();
    const c = await fixLogon(server, u, { heartBtInt: 17, senderCompId: "MAKER" });
    const a = c.received[0];
    assert.equal(a.msgType, "A");
    assert.deepEqual([a.get(49), a.get(56), a.get(34)], ["EXCHANGE", "MAKER", "1"]);
    assert.deepEqual([a.get(98), a.get(108), a.get(141)], ["0", "17", "Y"]);
    assert.ok(a.checkSumOk && a.bodyLengthOk);
    c.send("1", [[112, "ping-1"]]);
    const hb = await c.next((m) => m.msgType === "0" && m.get(112) === "ping-1");
    assert.equal(hb.get(34), "2");
    const closed = await c.logout("bye");
    assert.equal(closed.logoutText, "logout acknowledged");
  });

  it("accepts the signature in upper-case hex", async () => {
    const u = await server.newUser();
    const time = fixTime(new Date());
    const { createHmac } = await import("node:crypto");
    const sig = createHmac("sha256", u.secretKey)
      .update(`${time}\x01A\x011\x01UPPER\x01EXCHANGE`)
      .digest("hex")
      .toUpperCase();
    const c = await fixLogon(server, u, { senderCompId: "UPPER", logonFields: { 52: time, 96: sig } });
    await c.logout();
  });

  it("refuses unknown credentials, a wrong signature and a stale SendingTime with Logout AUTH:", async () => {
    const u = await server.newUser();
    assert.equal(
      await refusal(fixLogon(server, { apiToken: "f".repeat(32), secretKey: u.secretKey })),
      "AUTH: Unknown or revoked API token",
    );
    assert.match(
      (await refusal(fixLogon(server, { apiToken: u.apiToken, secretKey: "0".repeat(64) })))!,
      /^AUTH: /,
    );
    const stale = fixTime(new Date(Date.now() - 60_000));
    assert.equal(
      await refusal(fixLogon(server, u, { logonFields: { 52: stale } })),
      "AUTH: SendingTime(52) must be within 5 seconds of the server time",
    );
  });

  it("refuses a Logon whose other fields are invalid, naming the tag", async () => {
    const u = await server.newUser();
    assert.match((await refusal(fixLogon(server, u, { heartBtInt: 121 })))!, /^HeartBtInt\(108\)/);
    assert.match(
      (await refusal(fixLogon(server, u, { logonFields: { 8013: "X" } })))!,
      /^CancelOnDisconnect\(8013\)/,
    );
    assert.match((await refusal(fixLogon(server, u, { logonFields: { 98: "1" } })))!, /^EncryptMethod\(98\)/);
    assert.match((await refusal(fixLogon(server, u, { resumeFromExecSeq: 999 })))!, /^RESUME_AHEAD: /);
    assert.match(
      (await refusal(fixLogon(server, u, { resumeFromExecSeq: 0, resumeEpoch: 99 })))!,
      /^RESUME_EPOCH: /,
    );
  });

  it("ends a session whose MsgSeqNum is too high, or too low without PossDupFlag", async () => {
    const u = await server.newUser();
    const c = await fixLogon(server, u);
    c.nextSeqNum = 7;
    c.send("0", []);
    assert.equal((await c.closed).logoutText, "MsgSeqNum too high, expected 2; resend is not supported");
    const d = await fixLogon(server, u);
    d.send("0", []);
    d.nextSeqNum = 2;
    d.send("1", [[112, "dup"]]);
    // With PossDupFlag a repeated number is skipped, without it the session ends.
    d.nextSeqNum = 2;
    d.send("0", [
      [43, "Y"],
      [122, fixTime(new Date())],
    ]);
    assert.equal((await d.closed).logoutText, "MsgSeqNum too low, expected 3");
  });

  it("answers a ResendRequest with one SequenceReset-GapFill to the next number", async () => {
    const u = await server.newUser();
    const c = await fixLogon(server, u);
    c.send("2", [
      [7, "1"],
      [16, "0"],
    ]);
    const r = await c.next("4");
    assert.deepEqual([r.get(34), r.get(43), r.get(123), r.get(36)], ["1", "Y", "Y", "2"]);
    await c.logout();
  });

  it("rejects another CompID with Reject 373=9, then Logout", async () => {
    const u = await server.newUser();
    const c = await fixLogon(server, u);
    c.send("0", [[49, "SOMEONE"]]);
    const r = await c.next("3");
    assert.equal(r.get(373), "9");
    assert.equal((await c.closed).logoutText, "CompID problem");
  });

  it("refuses a Logon to another TargetCompID with a Logout naming the tag, then closes", async () => {
    const u = await server.newUser();
    const c = await RawFix.open(fixPortOf(server), "MAKER", "NOT-US");
    const time = fixTime(new Date());
    const sig = logonSignature(u.secretKey, time, "1", "MAKER", "NOT-US");
    c.write([
      ...c.header("A").map(([t, v]): Field => [t, t === 52 ? time : v]),
      [98, "0"],
      [108, "30"],
      [141, "Y"],
      [553, u.apiToken],
      [95, "64"],
      [96, sig],
    ]);
    const m = await c.next("the Logout");
    assert.equal(get(m, 35), "5", show(m));
    assert.equal(get(m, 58), "TargetCompID(56) must be EXCHANGE");
    assert.ok(await c.waitClosed());
  });

  it("ignores a message with a wrong CheckSum or BodyLength, uncounted, and goes on", async () => {
    const u = await server.newUser();
    const c = await fixLogon(server, u);
    c.sendRaw(fixFrame([...c.header("1"), [112, "lost"]], { checkSum: "000" }));
    c.sendRaw(fixFrame([...c.header("1"), [112, "lost"]], { bodyLength: "5" }));
    c.send("1", [[112, "kept"]]);
    const hb = await c.next((m) => m.msgType === "0" && m.get(112) !== undefined);
    assert.equal(hb.get(112), "kept");
    await c.logout();
  });

  it("answers FIX faults with Reject(3): 373=1 a required tag, 4 an empty value, 6 a bad format", async () => {
    const u = await server.newUser({ usdt: "100" });
    const c = await fixLogon(server, u);
    c.send("D", [
      [11, "no-qty"],
      [55, "btc_usdt"],
      [54, "1"],
      [40, "2"],
      [44, "1"],
      [60, fixTime(new Date())],
    ]);
    const r1 = await c.next("3");
    assert.deepEqual([r1.get(371), r1.get(373)], ["38", "1"]);
    c.sendRaw(fixFrame([...c.header("D"), [11, ""], [55, "btc_usdt"]]));
    c.nextSeqNum = c.nextSeqNum + 1;
    const r2 = await c.next("3");
    assert.deepEqual([r2.get(371), r2.get(373)], ["11", "4"]);
    c.sendRaw(
      fixFrame([
        ...c.header("D"),
        [11, "bad-qty"],
        [55, "btc_usdt"],
        [54, "1"],
        [40, "2"],
        [38, "one"],
        [44, "1"],
        [60, fixTime(new Date())],
      ]),
    );
    c.nextSeqNum = c.nextSeqNum + 1;
    const r3 = await c.next("3");
    assert.deepEqual([r3.get(371), r3.get(373)], ["38", "6"]);
    await c.logout();
  });

  it("ends the session with a Logout when MsgSeqNum is missing or empty, not with a Reject", async () => {
    const u = await server.newUser();
    for (const seq of [null, ""]) {
      const c = await RawFix.logon(fixPortOf(server), u, "NOSEQ");
      const fields: Field[] = [
        [35, "1"],
        [49, c.senderCompId],
        [56, c.targetCompId],
      ];
      if (seq !== null) fields.push([34, seq]);
      fields.push([52, fixTime(new Date())], [112, "no-seq"]);
      c.write(fields);
      const m = await c.next("the Logout");
      assert.deepEqual([get(m, 35), get(m, 58)], ["5", "MsgSeqNum missing or not a number"], show(m));
      assert.ok(await c.waitClosed());
      c.destroy();
    }
  });

  it("rejects a tag that appears twice with 373=13 naming the tag, and the session stays", async () => {
    const u = await server.newUser({ usdt: "100" });
    const c = await RawFix.logon(fixPortOf(server), u, "REPEAT1");
    const header = c.header("D");
    c.write([
      ...header,
      [11, "twice"],
      [55, "btc_usdt"],
      [54, "1"],
      [54, "1"],
      [40, "2"],
      [38, "1"],
      [44, "1"],
      [60, fixTime(new Date())],
    ]);
    const r = await c.next("the Reject");
    assert.equal(get(r, 35), "3", show(r));
    assert.deepEqual(
      [get(r, 45), get(r, 371), get(r, 372), get(r, 373), get(r, 58)],
      [get(header, 34), "54", "D", "13", "tag appears more than once"],
    );
    c.write([...c.header("1"), [112, "after-repeat"]]);
    const hb = await c.next("the Heartbeat");
    assert.deepEqual([get(hb, 35), get(hb, 112)], ["0", "after-repeat"]);
    c.destroy();
  });

  it("ends a connection on a message over 16 KiB with Logout and Text", async () => {
    const u = await server.newUser();
    const c = await fixLogon(server, u);
    c.sendRaw(fixFrame([...c.header("1"), [112, "x".repeat(17_000)]]));
    assert.match((await c.closed).logoutText ?? "", /^message over 16384 bytes/);
  });

  it("sends a TestRequest after 1.2 x HeartBtInt of silence, then ends with heartbeat timeout", async () => {
    const u = await server.newUser();
    // The client's silence counts from when the server read its Logon: no earlier than this.
    const logonSent = Date.now();
    const c = await fixLogon(server, u, { heartBtInt: 1, heartbeats: false });
    // Silent: no Heartbeat of its own and, reading nothing, no ResendRequest either until the end.
    const socket = (c as unknown as { session: { socket: Socket } }).session.socket;
    socket.pause();
    const started = Date.now();
    await sleep(3500);
    socket.resume();
    const closed = await c.closed;
    assert.equal(closed.logoutText, "heartbeat timeout");
    const sent = (type: string) => {
      const t = c.received.find((m) => m.msgType === type)!.get(52)!;
      return Date.parse(`${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}T${t.slice(9)}Z`);
    };
    // Heartbeat after 1 s of its own silence, TestRequest after 1.2 s of the client's, Logout 1.2 s
    // later. The client's silence begins with its Logon, not with the server's answer to it: on a
    // loaded machine the answer went out some milliseconds after the Logon was read, so less than
    // 1.2 s before the TestRequest, and a test measuring from it failed.
    assert.ok(sent("0") - sent("A") >= 1000);
    assert.ok(sent("1") - logonSent >= 1200);
    assert.ok(sent("5") - sent("1") >= 1200);
    assert.ok(c.received.find((m) => m.msgType === "1")?.get(112));
    assert.ok(Date.now() - started >= 2400);
  });

  it("closes a connection without a Logon within 10 s", { timeout: 20_000 }, async () => {
    const net = await import("node:net");
    const socket = net.connect(fixPortOf(server), "127.0.0.1");
    const started = Date.now();
    await new Promise<void>((resolve) => socket.on("close", () => resolve()));
    const took = Date.now() - started;
    assert.ok(took >= 9_500 && took < 12_000, `closed after ${took} ms`);
  });

  it("ends the session when its key is revoked", async () => {
    const u = await server.newUser();
    const c = await fixLogon(server, u);
    await server.admin.revokeApiKey(u.apiToken);
    assert.equal((await c.closed).logoutText, "API key revoked");
    // Its key is gone: the harness cannot read its orders to clean up (it has none).
    server.users.splice(server.users.indexOf(u), 1);
  });
});
