/**
 * What the `exchange` command (src/cli.ts, src/cli-faults.ts) says when it cannot do what was
 * asked: each message names the cause and the fix. Each case is the real situation: a mistyped flag
 * or command, a port where nothing listens, a TLS server with a self-signed certificate (made here
 * with openssl) reached over https and over http, a plain server reached over https, a URL without
 * its scheme, a signed command without credentials (against a listener that records whether
 * anything was sent), an unknown pair, channel or currency on a real server.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { PAIR_NAMES, REPO_ROOT, TestServer, type TestUser } from "./e2e/harness.ts";
import { selfSignedCertificate } from "./support/certificate.ts";
import { cli } from "./support/cli-run.ts";

/** A port nothing listens on: one the system gave out, closed again. */
async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const PAIRS_LINE = `pairs: ${PAIR_NAMES.join(", ")}`;

describe("exchange command mistakes", () => {
  it("names the flag it most likely meant after an unknown one", async () => {
    const r = await cli(["pairs", "--urll", "http://127.0.0.1:1"]);
    assert.equal(r.code, 2);
    assert.match(r.err, /^unknown flag --urll: did you mean --url\?\n/);
    const far = await cli(["pairs", "--verbose"]);
    assert.equal(far.code, 2);
    assert.match(far.err, /^unknown flag --verbose\n/);
  });

  it("names the command it most likely meant after an unknown one", async () => {
    const r = await cli(["ordres"]);
    assert.equal(r.code, 2);
    assert.match(r.err, /^unknown command ordres: did you mean orders\?\n/);
  });

  it("names every setting's flag, environment variable and default in its usage text", async () => {
    const r = await cli(["--help"]);
    assert.equal(r.code, 0);
    for (const line of [
      /--url URL +EXCHANGE_URL +the server, default http:\/\/127\.0\.0\.1:8080/,
      /--token T +EXCHANGE_API_TOKEN /,
      /--secret S +EXCHANGE_SECRET_KEY /,
      /--admin-token A +ADMIN_TOKEN /,
      /--lang en\|ru +EXCHANGE_LANG .*default en/,
      /--signature bound\|legacy +EXCHANGE_SIGNATURE .*default bound/,
      /--recv-window MS +EXCHANGE_RECV_WINDOW .*the server's 5000/,
      /NODE_EXTRA_CA_CERTS /,
    ])
      assert.match(r.out, line);
  });

  it("refuses a URL without its scheme before sending anything, writing it as meant", async () => {
    for (const [given, meant] of [
      ["127.0.0.1:29001", "http://127.0.0.1:29001"],
      ["localhost:8080", "http://localhost:8080"],
      ["ws://127.0.0.1:8080", "http://127.0.0.1:8080"],
    ]) {
      const r = await cli(["pairs", "--url", given]);
      assert.equal(r.code, 2, given);
      assert.equal(
        r.err.split("\n")[0],
        `--url "${given}" is not an http:// or https:// URL; write it in full: --url ${meant}`,
      );
    }
    const fromEnv = await cli(["pairs"], { EXCHANGE_URL: "127.0.0.1:8080" });
    assert.match(fromEnv.err, /^EXCHANGE_URL "127\.0\.0\.1:8080" is not an http/);
  });
});

describe("exchange command against a port where nothing listens", () => {
  it("says the URL, where it came from, that the connection was refused, and how to point it elsewhere", async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}`;
    const key = ["--token", "t".repeat(16), "--secret", "s".repeat(16)];
    for (const argv of [
      ["pairs"],
      ["tail", "exchanges"],
      ["tail", "orders:btc_usdt", "--book"],
      ["session", "tail", ...key],
    ]) {
      const r = await cli([...argv, "--url", url]);
      assert.equal(r.code, 1, argv.join(" "));
      assert.equal(
        r.err,
        `cannot reach ${url} (--url): connection refused: no server listens there\n` +
          "  start the server, or give the server's address with --url or EXCHANGE_URL",
        argv.join(" "),
      );
    }
    const fromEnv = await cli(["pairs"], { EXCHANGE_URL: url });
    assert.match(fromEnv.err, new RegExp(`^cannot reach ${url} \\(EXCHANGE_URL\\): connection refused`));
  });
});

describe("exchange command against a TLS server with a self-signed certificate", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "exchange-cli-tls-"));
  const certFile = path.join(dir, "cert.pem");
  const keyFile = path.join(dir, "key.pem");
  let server: TestServer;
  let https = "";

  before(async () => {
    selfSignedCertificate(certFile, keyFile);
    server = await TestServer.start({
      args: ["--tls-cert", certFile, "--tls-key", keyFile],
      tlsCa: readFileSync(certFile, "utf8"),
    });
    https = server.origin;
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("over https says the certificate is not trusted and names NODE_EXTRA_CA_CERTS", async () => {
    const key = ["--token", "t".repeat(16), "--secret", "s".repeat(16)];
    for (const argv of [["pairs"], ["tail", "exchanges"], ["session", "tail", ...key]]) {
      const r = await cli([...argv, "--url", https]);
      assert.equal(r.code, 1, argv.join(" "));
      assert.equal(
        r.err,
        `cannot reach ${https} (--url): the server's certificate is not trusted (self-signed certificate)\n` +
          "  trust it with NODE_EXTRA_CA_CERTS=/path/to/cert.pem (the server's certificate, or the CA that issued it)",
        argv.join(" "),
      );
    }
  });

  it("over https with NODE_EXTRA_CA_CERTS naming the certificate, as the message says, answers", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", "pairs", "--url", https],
      { cwd: REPO_ROOT, env: { ...process.env, NODE_EXTRA_CA_CERTS: certFile } },
    );
    assert.deepEqual(
      (JSON.parse(stdout) as { pairName: string }[]).map((p) => p.pairName),
      PAIR_NAMES,
    );
  });

  it("over plain http says the server speaks https only and gives the https URL", async () => {
    const http = https.replace(/^https:/, "http:");
    for (const argv of [["pairs"], ["tail", "exchanges"]]) {
      const r = await cli([...argv, "--url", http]);
      assert.equal(r.code, 1, argv.join(" "));
      assert.equal(
        r.err,
        `cannot reach ${http} (--url): the server closed the connection without an answer\n` +
          `  a server started with --tls-cert speaks https only: --url ${https}`,
        argv.join(" "),
      );
    }
  });
});

describe("exchange command against a plain server", () => {
  let server: TestServer;
  let user: TestUser;
  let recorder: Server;
  let recorderUrl = "";
  let recorded: string[] = [];

  before(async () => {
    server = await TestServer.start();
    user = await server.newUser({ usdt: "10" });
    recorder = createServer((req, res) => {
      recorded.push(`${req.method} ${req.url}`);
      res.end("[]");
    });
    // A stream upgrade is a request too: recorded, then refused.
    recorder.on("upgrade", (req, socket) => {
      recorded.push(`upgrade ${req.url}`);
      socket.destroy();
    });
    await new Promise<void>((resolve) => recorder.listen(0, "127.0.0.1", resolve));
    recorderUrl = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((resolve) => recorder.close(resolve));
    await server?.close();
  });

  it("over https says the server may speak plain http and gives the http URL", async () => {
    const url = server.origin.replace(/^http:/, "https:");
    const r = await cli(["pairs", "--url", url]);
    assert.equal(r.code, 1);
    assert.match(
      r.err,
      new RegExp(
        `^cannot reach ${url} \\(--url\\): (the connection ended without an answer|no answer in time)\n`,
      ),
    );
    assert.match(
      r.err,
      new RegExp(`a server started without --tls-cert speaks plain http: --url ${server.origin};`),
    );
  });

  it("refuses a signed command without its credentials before sending anything", async () => {
    recorded = [];
    const cases: [string[], RegExp][] = [
      [
        ["balances", "btc_usdt"],
        /needs --token and --secret \(or EXCHANGE_API_TOKEN and EXCHANGE_SECRET_KEY\)\n/,
      ],
      [["balances", "btc_usdt", "--token", "t".repeat(16)], /; --secret is missing\n/],
      [["order", "cancel", "1", "--secret", "s".repeat(16)], /; --token is missing\n/],
      [["tail", `user_orders:${user.uid}`], /this command is signed/],
      [["session", "tail"], /this command is signed/],
      [
        ["deposit", user.uid, "usdt", "1"],
        /^this is an admin command: it needs --admin-token \(or ADMIN_TOKEN\)\n/,
      ],
    ];
    for (const [argv, message] of cases) {
      const r = await cli([...argv, "--url", recorderUrl], { EXCHANGE_API_TOKEN: "" });
      assert.equal(r.code, 2, argv.join(" "));
      assert.match(r.err, message, argv.join(" "));
    }
    assert.deepEqual(recorded, []);
  });

  it("lists the server's pairs after an unknown pair, over REST, the stream and a session", async () => {
    const key = ["--token", user.apiToken, "--secret", user.secretKey];
    const cases: [string[], RegExp][] = [
      [["book", "btc_usd"], /^HTTP 404: .*PAIR_UNKNOWN_IN_PATH/],
      [["order", "place", "btc_usd", "buy", "1", "1", ...key], /^HTTP 400: .*PAIR_UNKNOWN/],
      [["tail", "orders:btc_usd"], /^stream upgrade refused: HTTP 400: .*STREAMS_UNKNOWN_PAIR/],
      [["session", "place", "btc_usd", "buy", "1", "1", ...key], /^status 400: .*PAIR_UNKNOWN/],
    ];
    for (const [argv, first] of cases) {
      const r = await cli([...argv, "--url", server.origin]);
      assert.equal(r.code, 1, argv.join(" "));
      const lines = r.err.split("\n");
      assert.match(lines[0], first, r.err);
      assert.equal(lines[1], PAIRS_LINE, r.err);
    }
  });

  it("lists the channels after an unknown channel, and the currencies after an unknown currency", async () => {
    const channel = await cli(["tail", "trades:btc_usdt", "--url", server.origin]);
    assert.equal(channel.code, 1);
    assert.deepEqual(channel.err.split("\n").slice(1), [
      PAIRS_LINE,
      "channels: exchanges, status, orders:{pair}, bbo:{pair}, orders_l3:{pair}, history:{pair}, user_orders:{uid}, " +
        "user_history:{uid} (user_ channels signed)",
    ]);
    const currency = await cli([
      "deposit",
      user.uid,
      "usd",
      "1",
      "--url",
      server.origin,
      "--admin-token",
      server.adminToken!,
    ]);
    assert.equal(currency.code, 1);
    assert.match(currency.err, /^HTTP 400: .*CURRENCY_UNKNOWN.*\ncurrencies: btc, usdt, eth$/);
  });

  it("prints the server's reason for a refused stream first, not the close that follows it", async () => {
    // As a process: what it writes to stderr, in order.
    const result = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", "tail", "orders:btc_usd", "--url", server.origin],
      { cwd: REPO_ROOT },
    ).then(
      () => assert.fail("exit 0"),
      (error: { code: number; stderr: string }) => error,
    );
    assert.equal(result.code, 1);
    assert.deepEqual(result.stderr.trimEnd().split("\n"), [
      'stream upgrade refused: HTTP 400: {"errors":{"streams":["Unknown pair in the stream list (orders:btc_usd)"]},' +
        '"codes":{"streams":["STREAMS_UNKNOWN_PAIR"]}}',
      PAIRS_LINE,
    ]);
  });
});
