/**
 * The built package: `npm run build` once (the web page, then server, workers, client and CLI), then
 *   - the production server (`node dist/src/main.js`, no tsx) starts, answers /health and trades,
 *   - the client is usable from plain JavaScript through the package exports (`exchange-server/client`;
 *     the client's own package, `exchange-client`, is test/build/client-package.test.ts),
 *   - the `exchange` CLI (the package's bin) drives a real server: user create, deposit, order
 *     place / cancel / cancel-all, tail.
 * Every child process is a real node process on the built output.
 */
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { limit, REPO_ROOT, TestServer } from "../e2e/harness.ts";
import { builtIsFresh } from "../support/built.ts";
import { waitFor } from "../wait.ts";

const run = promisify(execFile);
const CLI = join(REPO_ROOT, "dist/src/cli.js");

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI with `args` against `server`, with credentials from the environment. */
async function cli(server: TestServer, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? "", EXCHANGE_URL: server.origin, ...env },
      timeout: 20_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== "number") throw error;
    return { code: e.code, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/** Stream upgrades the server has accepted so far (a counter: connections that closed stay counted). */
async function upgrades(server: TestServer): Promise<number> {
  const metrics = await server.public.metrics();
  const m = /^exchange_http_requests_total\{route="\/stream",status="101"\} (\d+)$/m.exec(metrics.text);
  return m === null ? 0 : Number(m[1]);
}

describe("the built package", () => {
  let server: TestServer;

  before(async () => {
    // `npm test` has built the page and dist/ from these sources: building again would cost time,
    // and would take dist/ from under another file's servers were test files run side by side
    // (DECISIONS.md, "The tests run the build"). Run alone after an edit, the file builds as a
    // user would.
    if (!builtIsFresh() || !existsSync(join(REPO_ROOT, "dist/web/index.html")))
      await run("npm", ["run", "build"], { cwd: REPO_ROOT, timeout: 180_000 }); // page, server, client
    server = await TestServer.start({ entry: "dist/src/main.js" });
  });
  after(async () => {
    await server?.close();
  });

  test("builds the server, the workers, the migrations and the client declarations", () => {
    for (const file of [
      "dist/src/main.js",
      "dist/src/cli.js",
      "dist/workers/pair/pair-worker.js",
      "dist/workers/db/writer-worker.js",
      "dist/workers/db/reader-worker.js",
      "dist/workers/db/checkpoint-worker.js",
      "dist/workers/ts-entry.mjs",
      "dist/src/db/migrations/001_init.sql",
      "dist/src/client/index.d.ts",
      "dist/src/client/stream.d.ts",
      "dist/src/client/book.d.ts",
      "dist/src/client/ccxt.d.ts",
    ]) {
      assert.ok(existsSync(join(REPO_ROOT, file)), `${file} missing`);
    }
    assert.ok(!readFileSync(join(REPO_ROOT, "dist/src/main.js"), "utf8").includes('.ts"'));
  });

  test("the production server (node on dist/, no tsx) answers /health and matches orders", async () => {
    const health = await server.public.health();
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { status: "ok" });
    const [a, b] = await server.newUsers(2, { usdt: "1000", btc: "1" });
    const sell = await a.client.createOrder(limit("btc_usdt", "sell", "100", "0.5"));
    assert.equal(sell.status, 200, sell.text);
    const buy = await b.client.createOrder(limit("btc_usdt", "buy", "100", "0.2"));
    assert.equal(buy.status, 200, buy.text);
    assert.equal((buy.body as { amountUsed: number }).amountUsed, 0.2);
    await server.cancelOpenOrders([a]);
  });

  test("the production server serves the web page built into dist/web", async () => {
    const page = await fetch(`${server.origin}/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type") ?? "", /text\/html/);
    assert.match(await page.text(), /<html/i);
  });

  test("the client is usable from plain JavaScript through the package exports", async () => {
    const script = `
      import { ExchangeClient, ok } from "exchange-server/client";
      import { StreamClient } from "exchange-server/client/stream";
      const client = new ExchangeClient({ baseUrl: process.argv[1] });
      const pairs = ok(await client.pairs());
      const stream = await StreamClient.connect({ baseUrl: process.argv[1], streams: ["exchanges"] });
      const first = await stream.next();
      await stream.close();
      console.log(JSON.stringify({ pairs: pairs.map((p) => p.pairName), stream: first.stream }));
    `;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script, server.origin], {
      cwd: REPO_ROOT,
      timeout: 20_000,
    });
    assert.deepEqual(JSON.parse(stdout), { pairs: ["btc_usdt", "eth_usdt", "eth_btc"], stream: "exchanges" });
  });

  test("the CLI creates a user, deposits, places, cancels and cancels all", async () => {
    const admin = { ADMIN_TOKEN: server.adminToken! };
    const created = await cli(server, ["user", "create"], admin);
    assert.equal(created.code, 0, created.stderr);
    const user = JSON.parse(created.stdout) as { uid: string; apiToken: string; secretKey: string };
    const deposit = await cli(server, ["deposit", user.uid, "usdt", "1000"], admin);
    assert.equal(deposit.code, 0, deposit.stderr);
    assert.deepEqual(JSON.parse(deposit.stdout), { currency: "usdt", balance: "1000" });

    const key = { EXCHANGE_API_TOKEN: user.apiToken, EXCHANGE_SECRET_KEY: user.secretKey };
    const ids: number[] = [];
    for (const price of ["10", "11", "12"]) {
      const placed = await cli(server, ["order", "place", "eth_usdt", "buy", "1", price], key);
      assert.equal(placed.code, 0, placed.stderr);
      const order = JSON.parse(placed.stdout) as { id: number; price: number; tradeType: string };
      assert.equal(order.price, Number(price));
      assert.equal(order.tradeType, "limit");
      ids.push(order.id);
    }
    const cancelled = await cli(server, ["order", "cancel", String(ids[0])], key);
    assert.equal(cancelled.code, 0, cancelled.stderr);
    assert.equal(cancelled.stdout.trim(), "[]");

    const again = await cli(server, ["order", "cancel", String(ids[0])], key);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /HTTP 400: .*orderId/);

    const all = await cli(server, ["order", "cancel-all", "--pair", "eth_usdt"], key);
    assert.equal(all.code, 0, all.stderr);
    assert.deepEqual(JSON.parse(all.stdout), { cancelled: [ids[1], ids[2]] });

    const balances = await cli(server, ["balances", "eth_usdt"], key);
    assert.deepEqual(JSON.parse(balances.stdout), [
      { currency: "eth", balance: "0", reserved: "0" },
      { currency: "usdt", balance: "1000", reserved: "0" },
    ]);
  });

  test("the CLI refuses a call without credentials (exit 2) and reports a 401 (exit 1)", async () => {
    const noKey = await cli(server, ["order", "cancel", "1"]);
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /--token and --secret/);
    const wrong = await cli(server, [
      "order",
      "cancel",
      "1",
      "--token",
      "0123456789abcdef0123456789abcdef",
      "--secret",
      "x",
    ]);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /HTTP 401/);
  });

  test("the CLI tails a channel, one JSON line per message", async () => {
    const [maker, taker] = await server.newUsers(2, { usdt: "1000", btc: "1" });
    const before = await upgrades(server);
    const child = spawn(process.execPath, [CLI, "tail", "history:btc_usdt", "--count", "1"], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? "", EXCHANGE_URL: server.origin },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (c: string) => {
        stdout += c;
      });
      child.stderr.setEncoding("utf8").on("data", (c: string) => {
        stderr += c;
      });
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      // The history channel sends nothing on connect: once the tail's upgrade is counted (the
      // server subscribes it in the same step), one trade gives it its line.
      await waitFor(async () => (await upgrades(server)) > before, {
        what: "the CLI's stream upgrade",
        detail: () => `CLI stderr: ${stderr}`,
      });
      await maker.client.createOrder(limit("btc_usdt", "sell", "200", "0.01"));
      await taker.client.createOrder(limit("btc_usdt", "buy", "200", "0.01"));
      assert.equal(await exited, 0);
      const lines = stdout.trim().split("\n");
      assert.equal(lines.length, 1);
      const message = JSON.parse(lines[0]) as { stream: string; data: Array<{ price: number }> };
      assert.equal(message.stream, "history:btc_usdt");
      assert.equal(message.data[0].price, 200);
    } finally {
      child.kill();
      await server.cancelOpenOrders();
    }
  });
});
