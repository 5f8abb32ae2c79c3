/**
 * TLS (docs/API.md 1) on the real server: started with a self-signed certificate made here with
 * openssl, it speaks https (REST, admin) and wss (`/stream`, and the trading session `/session` of
 * docs/API.md 13) only, with that certificate; a
 * missing, unreadable, malformed or mismatched file refuses to start in one `config error:` line.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHmac, X509Certificate } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { TLSSocket } from "node:tls";
import WebSocket from "ws";
import { selfSignedCertificate } from "../support/certificate.ts";
import { waitFor } from "../wait.ts";
import { httpsGet, runToExit, TestServer } from "./harness.ts";

const dir = mkdtempSync(path.join(tmpdir(), "exchange-tls-"));
const certFile = path.join(dir, "cert.pem");
const keyFile = path.join(dir, "key.pem");
const otherKeyFile = path.join(dir, "other-key.pem");

/** A self-signed certificate for 127.0.0.1 (and localhost), valid for a day. */
function makeCertificate(): void {
  selfSignedCertificate(certFile, keyFile);
  execFileSync("openssl", ["genpkey", "-algorithm", "RSA", "-out", otherKeyFile], { stdio: "ignore" });
}
makeCertificate();
const ca = readFileSync(certFile, "utf8");
after(() => rmSync(dir, { recursive: true, force: true }));

interface Answer {
  status: number;
  text: string;
  /** The certificate the server presented. */
  peer: X509Certificate | null;
}

/** One https request trusting only the test's certificate. */
function https(
  server: TestServer,
  method: string,
  pathAndQuery: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${server.origin}${pathAndQuery}`,
      {
        method,
        ca,
        headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
      },
      (res) => {
        const raw = (res.socket as TLSSocket).getPeerX509Certificate?.() ?? null;
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text, peer: raw ?? null }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function admin(server: TestServer, route: string, body: unknown): Promise<Answer> {
  return https(server, "POST", route, { Authorization: `Bearer ${server.adminToken}` }, JSON.stringify(body));
}

/** A new user (POST /admin/users over https) with 1000 usdt deposited. */
async function fundedUser(server: TestServer): Promise<{ uid: string; apiToken: string; secretKey: string }> {
  const created = await admin(server, "/admin/users", {});
  assert.equal(created.status, 200, created.text);
  const user = JSON.parse(created.text) as { uid: string; apiToken: string; secretKey: string };
  const deposit = await admin(server, "/admin/deposit", {
    uid: user.uid,
    currency: "usdt",
    amount: "1000",
  });
  assert.equal(deposit.status, 200, deposit.text);
  return user;
}

describe("a server started with --tls-cert and --tls-key", () => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start({ args: ["--tls-cert", certFile, "--tls-key", keyFile], tlsCa: ca });
  });
  after(async () => {
    await server?.close();
  });

  it("says it listens on https and presents the configured certificate", async () => {
    assert.equal(server.scheme, "https");
    assert.match(server.output().stdout, /listening on https:\/\/127\.0\.0\.1:\d+ /);
    const res = await https(server, "GET", "/health");
    assert.equal(res.status, 200, res.text);
    assert.equal(res.peer?.fingerprint256, new X509Certificate(ca).fingerprint256);
  });

  it("refuses plain http on the same port: it speaks https only", async () => {
    await assert.rejects(fetch(`http://127.0.0.1:${server.port}/health`));
  });

  it("serves admin calls and signed orders over https, and the book over wss /stream", async () => {
    const user = await fundedUser(server);

    const messages: unknown[] = [];
    const ws = new WebSocket(`wss://127.0.0.1:${server.port}/stream?streams=orders:btc_usdt`, { ca });
    ws.on("message", (data) => messages.push(JSON.parse(String(data))));
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    try {
      // The snapshot comes first, on connect.
      await waitFor(() => messages.length >= 1, { what: "the orders:btc_usdt snapshot over wss" });

      const body = JSON.stringify({
        pairName: "btc_usdt",
        tradeType: "limit",
        directionType: "buy",
        price: "25000.12",
        amount: "0.01",
      });
      const signature = createHmac("sha256", user.secretKey).update(body).digest("hex");
      const order = await https(
        server,
        "POST",
        "/1.0/trade/create-order",
        { Authorization: user.apiToken, "X-Signature": signature },
        body,
      );
      assert.equal(order.status, 200, order.text);

      const update = await waitFor(() => messages.find((m) => JSON.stringify(m).includes("25000.12")), {
        what: "the new level over wss",
      });
      assert.equal((update as { stream: string }).stream, "orders:btc_usdt");
    } finally {
      ws.close();
    }
  });

  it("serves a trading session over wss /session: hello, logon, an order answered, its report", async () => {
    const user = await fundedUser(server);

    const frames: Record<string, unknown>[] = [];
    let peer: X509Certificate | null = null;
    const ws = new WebSocket(`wss://127.0.0.1:${server.port}/session`, { ca });
    ws.on("message", (data) => frames.push(JSON.parse(String(data)) as Record<string, unknown>));
    ws.on("upgrade", (res) => {
      peer = (res.socket as TLSSocket).getPeerX509Certificate?.() ?? null;
    });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    const answer = (id: number) =>
      waitFor(() => frames.find((f) => f.id === id && "status" in f), {
        what: `the answer to call ${id} over wss`,
        detail: () => JSON.stringify(frames.slice(-3)),
      });
    try {
      assert.equal((peer as X509Certificate | null)?.fingerprint256, new X509Certificate(ca).fingerprint256);
      const hello = await waitFor(() => frames.find((f) => f.event === "hello"), { what: "the hello" });
      assert.match(String(hello.challenge), /^[0-9a-f]{64}$/);

      const signature = createHmac("sha256", user.secretKey).update(String(hello.challenge)).digest("hex");
      ws.send(
        JSON.stringify({ id: 1, method: "session.logon", params: { apiToken: user.apiToken, signature } }),
      );
      const logon = await answer(1);
      assert.equal(logon.status, 200, JSON.stringify(logon));
      assert.equal((logon.result as { uid: string }).uid, user.uid);

      ws.send(
        JSON.stringify({
          id: 2,
          method: "order.create",
          params: {
            pairName: "btc_usdt",
            tradeType: "limit",
            directionType: "buy",
            price: "25000.34",
            amount: "0.01",
          },
        }),
      );
      const order = await answer(2);
      assert.equal(order.status, 200, JSON.stringify(order));
      const id = (order.result as { id: number }).id;
      assert.ok(id > 0);

      // The execution report of that order, after its answer.
      const report = await waitFor(
        () => frames.find((f) => f.event === "order" && (f.data as { id?: number }).id === id),
        { what: "the order's report over wss" },
      );
      assert.ok(frames.indexOf(report) > frames.indexOf(order), "the answer precedes its report");
      assert.equal((report.data as { price: unknown }).price, (order.result as { price: unknown }).price);
    } finally {
      ws.close();
    }
  });

  it("does not let a client that does not trust the certificate in", async () => {
    await assert.rejects(
      new Promise((resolve, reject) => {
        const req = httpsRequest(`${server.origin}/health`, (res) => resolve(res.statusCode));
        req.on("error", reject);
        req.end();
      }),
      /self[- ]signed certificate/,
    );
    // The harness's own helper, with the certificate, gets in.
    assert.equal((await httpsGet(`${server.origin}/health`, ca)).status, 200);
  });
});

describe("refusing to start on bad TLS files", () => {
  /** Exit 1 with exactly one line on stderr, `config error: ...`, and never `listening on`. */
  async function assertConfigError(args: string[], why: RegExp) {
    const result = await runToExit(["--port", "0", "--db", path.join(dir, "refused.db"), ...args]);
    const output = `--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`;
    assert.equal(result.code, 1, output);
    const lines = result.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 1, output);
    assert.match(lines[0], /^config error: /, output);
    assert.match(lines[0], why, output);
    assert.doesNotMatch(result.stdout, /listening on/, output);
  }

  it("refuses a certificate file that does not exist, naming it", async () => {
    const missing = path.join(dir, "missing.pem");
    await assertConfigError(
      ["--tls-cert", missing, "--tls-key", keyFile],
      new RegExp(`--tls-cert ${missing.replace(/[.]/g, "\\.")}: cannot read: no such file`),
    );
  });

  it("refuses a key it cannot read (a folder), naming it", async () => {
    const folder = path.join(dir, "a-folder");
    mkdirSync(folder, { recursive: true });
    await assertConfigError(
      ["--tls-cert", certFile, "--tls-key", folder],
      /--tls-key .*a-folder: cannot read: is a folder/,
    );
  });

  it("refuses a file that is not a PEM certificate", async () => {
    const junk = path.join(dir, "junk.pem");
    writeFileSync(junk, "not a certificate\n");
    await assertConfigError(
      ["--tls-cert", junk, "--tls-key", keyFile],
      /--tls-cert .*junk\.pem: not a PEM certificate/,
    );
  });

  it("refuses a key that is not the certificate's", async () => {
    await assertConfigError(
      ["--tls-cert", certFile, "--tls-key", otherKeyFile],
      /--tls-key .*other-key\.pem: not the private key of the certificate/,
    );
  });

  it("refuses a certificate without its key", async () => {
    await assertConfigError(["--tls-cert", certFile], /--tls-cert: .*go together/);
  });
});
