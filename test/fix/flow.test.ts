/**
 * The FIX gateway's flow and transport limits (docs/API.md 17) through jspurefix against the real
 * server: the token's rate limit on order messages, the bound on unanswered order messages, 100
 * ignored messages, and TLS when the server has a certificate.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { errorMessage } from "../../src/errors/bodies.ts";
import { Code } from "../../src/errors/catalogue.ts";
import { sharedServer, sleep, type TestServer } from "../e2e/harness.ts";
import { selfSignedCertificate } from "../support/certificate.ts";
import { waitFor } from "../wait.ts";
import { fixLogon, fixPortOf, newOrder, now } from "./helpers.ts";
import { fixFrame } from "./jspurefix-client.ts";
import { type Field, get, RawFix, show } from "./raw-fix.ts";

describe("FIX flow limits", () => {
  let server: TestServer;
  sharedServer(
    (s) => {
      server = s;
    },
    { args: ["--fix-port", "0"], rateLimit: 3 },
  );

  it("refuses order messages over the token's rate limit: D with ExecType=8, F with OrderCancelReject", async () => {
    const u = await server.newUser({ usdt: "1000" });
    await sleep(2100);
    const c = await fixLogon(server, u);
    for (let i = 0; i < 5; i++) c.send("D", newOrder(`rl-${i}`, "buy", "0.01", "1"));
    c.send("F", [
      [41, "rl-0"],
      [11, "rl-cancel"],
      [55, "btc_usdt"],
      [54, "1"],
      [60, now()],
    ]);
    // Every D is answered, one way or the other: past the limit with ExecType=8 RATE_LIMITED.
    const answers = [];
    for (let i = 0; i < 5; i++)
      answers.push(
        await c.next((m) => m.msgType === "8" && m.get(11) === `rl-${i}` && ["0", "8"].includes(m.get(150)!)),
      );
    const news = answers.filter((m) => m.get(150) === "0");
    const limited = answers.filter((m) => m.get(150) === "8");
    assert.ok(news.length <= 3 && limited.length >= 2);
    for (const m of limited) {
      assert.equal(m.get(58), "RATE_LIMITED: Too many requests, slow down");
      assert.equal(m.get(39), "8");
    }
    const rej = await c.next("9");
    assert.equal(rej.get(11), "rl-cancel");
    assert.equal(rej.get(58), "RATE_LIMITED: Too many requests, slow down");
    // Its orders go before the harness's clean-up, which reads them with the same token (the
    // sliding window weighs the last second too: two seconds leave it empty).
    await sleep(2100);
    c.send("q", [
      [11, "rl-mass"],
      [530, "7"],
      [60, now()],
    ]);
    assert.equal((await c.next("r")).get(533), String(news.length));
    await c.logout();
    await sleep(2100);
  });

  it("ends a connection after 100 ignored messages with Logout and Text", async () => {
    const u = await server.newUser();
    const c = await fixLogon(server, u);
    const bad: Buffer[] = [];
    for (let i = 0; i < 100; i++) bad.push(fixFrame([...c.header("0")], { checkSum: "999" }));
    c.sendRaw(Buffer.concat(bad));
    assert.equal((await c.closed).logoutText, "100 messages ignored");
  });
});

describe("FIX over TLS", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "exchange-fix-tls-"));
  const certFile = path.join(dir, "cert.pem");
  const keyFile = path.join(dir, "key.pem");
  selfSignedCertificate(certFile, keyFile);
  const ca = readFileSync(certFile, "utf8");
  after(() => rmSync(dir, { recursive: true, force: true }));
  let server: TestServer;
  sharedServer(
    (s) => {
      server = s;
    },
    {
      args: ["--fix-port", "0", "--tls-cert", certFile, "--tls-key", keyFile],
      tlsCa: ca,
      adminToken: null,
      configUsers: [{ usdt: "100" }],
    },
  );

  it("speaks TLS only on the FIX port when the server has a certificate", async () => {
    const u = server.users[0];
    const c = await fixLogon(server, u, { tls: { ca } });
    c.send("1", [[112, "over-tls"]]);
    const hb = await c.next((m) => m.msgType === "0" && m.get(112) === "over-tls");
    assert.ok(hb);
    await c.logout();
    // A plain TCP Logon gets no FIX answer.
    const plain = net.connect(fixPortOf(server), "127.0.0.1");
    let got = "";
    plain.on("data", (d) => {
      got += d.toString("latin1");
    });
    plain.write("8=FIX.4.4\x019=5\x0135=0\x0110=000\x01");
    await new Promise<void>((resolve) => plain.on("close", () => resolve()));
    assert.ok(!got.includes("8=FIX.4.4"));
  });
});

describe("FIX order messages in flight", () => {
  let server: TestServer;
  sharedServer(
    (s) => {
      server = s;
    },
    // No rate limit (the harness's default): only the bound on unanswered messages refuses.
    { args: ["--fix-port", "0"] },
  );

  it(
    "refuses D beyond 1,000 unanswered with ExecType=8 TOO_MANY_IN_FLIGHT, answers the rest, reads on",
    {
      timeout: 60_000,
    },
    async () => {
      const u = await server.newUser({ usdt: "1000" });
      const c = await RawFix.logon(fixPortOf(server), u, "INFLIGHT");
      const total = 1500;
      // One write, read nothing first: the server frames them all before any commit answers one.
      const frames: Buffer[] = [];
      for (let i = 0; i < total; i++)
        frames.push(fixFrame([...c.header("D"), ...newOrder(`if-${i}`, "buy", "0.01", "1")]));
      c.writeBytes(Buffer.concat(frames));
      const answers = new Map<string, Field[]>();
      await waitFor(
        () => {
          for (const m of c.take())
            if (get(m, 35) === "8" && ["0", "8"].includes(get(m, 150)!)) answers.set(get(m, 11)!, m);
          return answers.size === total || undefined;
        },
        { what: `answers to ${total} NewOrderSingle`, timeoutMs: 45_000 },
      );
      const refused: number[] = [];
      for (let i = 0; i < total; i++) {
        const m = answers.get(`if-${i}`)!;
        if (get(m, 150) === "0") continue;
        refused.push(i);
        assert.deepEqual(
          [get(m, 39), get(m, 37), get(m, 103), get(m, 58)],
          ["8", "NONE", "99", `TOO_MANY_IN_FLIGHT: ${errorMessage(Code.TOO_MANY_IN_FLIGHT, "en")}`],
          show(m),
        );
      }
      assert.ok(refused.length > 0, "some D went beyond the bound");
      // At most 1,000 wait at once: the first 1,000 are all taken.
      assert.ok(refused[0] >= 1000, `the first refused is D number ${refused[0]}`);
      const accepted = total - refused.length;
      // The session reads on: a TestRequest is answered, and a D after the burst is taken.
      c.write([...c.header("1"), [112, "after-burst"]]);
      c.write([...c.header("D"), ...newOrder("if-after", "buy", "0.01", "1")]);
      const later: Field[][] = [];
      await waitFor(
        () => {
          later.push(...c.take());
          return later.some((m) => get(m, 11) === "if-after") || undefined;
        },
        { what: "the answers after the burst" },
      );
      assert.ok(later.some((m) => get(m, 35) === "0" && get(m, 112) === "after-burst"));
      assert.equal(get(later.find((m) => get(m, 11) === "if-after")!, 150), "0");
      c.write([...c.header("q"), [11, "if-mass"], [530, "7"], [60, now()]]);
      const mass = await waitFor(
        () => {
          later.push(...c.take());
          return later.find((m) => get(m, 35) === "r") ?? undefined;
        },
        { what: "the mass cancel's report" },
      );
      assert.equal(get(mass, 533), String(accepted + 1));
      c.destroy();
    },
  );
});
