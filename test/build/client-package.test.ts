/**
 * The client library as a package of its own (docs/API.md 13): built from src/client/ by
 * scripts/build-client.mjs, packed with `npm pack`, installed into an empty project. What comes
 * along is the client and `ws` only: no native module, no file of the server; from there a bot
 * trades over REST and over a trading session, and `npx exchange` runs.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { REPO_ROOT, TestServer } from "../e2e/harness.ts";

const run = promisify(execFile);

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out;
}

describe("the client package", () => {
  let dir: string;
  let tarball: string;
  let server: TestServer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "exchange-client-"));
    const built = join(dir, "package");
    await run(process.execPath, [join(REPO_ROOT, "scripts/build-client.mjs"), built], {
      cwd: REPO_ROOT,
      timeout: 120_000,
    });
    const packed = await run("npm", ["pack", "--pack-destination", dir], { cwd: built, timeout: 60_000 });
    tarball = join(dir, packed.stdout.trim().split("\n").pop()!);
    server = await TestServer.start();
  });
  after(async () => {
    await server?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  test("names the server's version and its ws, and holds only the client's modules", async () => {
    const own = JSON.parse(readFileSync(join(REPO_ROOT, "src/client/package.json"), "utf8"));
    const server = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8"));
    assert.equal(own.version, server.version);
    assert.deepEqual(own.dependencies, { ws: server.dependencies.ws });
    // docs/API.md 20.7: the ccxt class's ccxt, the version the server's tests use, optional.
    assert.deepEqual(own.peerDependencies, { ccxt: server.devDependencies.ccxt });
    assert.deepEqual(own.peerDependenciesMeta, { ccxt: { optional: true } });
    assert.deepEqual(own.exports["./ccxt"], { types: "./client/ccxt.d.ts", default: "./client/ccxt.js" });
    const listed = await run("tar", ["-tzf", tarball]);
    const files = listed.stdout
      .trim()
      .split("\n")
      .map((f) => f.replace(/^package\//, ""));
    const modules = files.filter((f) => f.endsWith(".js")).map((f) => `src/${f.replace(/\.js$/, ".ts")}`);
    const client = readdirSync(join(REPO_ROOT, "src/client"))
      .filter((f) => f.endsWith(".ts"))
      .map((f) => `src/client/${f}`);
    assert.deepEqual(
      client.filter((f) => !modules.includes(f)),
      [],
      "every module of src/client/ is in the package",
    );
    // Beside the client: the exchange command and what it imports, never a part of the server.
    const SERVER =
      /^src\/(accounts|core|db|errors|http|pair|protocol|session|stream)\/|^src\/(boot|main|config)\.ts$/;
    for (const m of modules) {
      assert.ok(existsSync(join(REPO_ROOT, m)), `${m}: built from a source file`);
      assert.doesNotMatch(m, SERVER, "a server file came along");
    }
    assert.ok(modules.includes("src/cli.ts"), "the exchange command");
    assert.ok(files.includes("package.json") && files.includes("README.md"));
    assert.ok(
      files.every((f) => /^(README\.md|package\.json|([a-z]+\/)?[a-z0-9-]+(\.d\.ts|\.js))$/.test(f)),
      files.join(" "),
    );
  });

  test("installs into an empty project without a native module or a server file, and trades from there", async () => {
    const app = join(dir, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), '{"name":"bot","private":true,"type":"module"}\n');
    const install = await run(
      "npm",
      ["install", "--no-audit", "--no-fund", "--prefer-offline", "--foreground-scripts", tarball],
      { cwd: app, timeout: 120_000 },
    );
    assert.doesNotMatch(install.stderr, /install script|allowScripts|gyp/i, "no install script to approve");
    const installed = readdirSync(join(app, "node_modules")).filter((n) => !n.startsWith("."));
    assert.deepEqual(installed.sort(), ["exchange-client", "ws"]);
    const files = filesUnder(join(app, "node_modules"));
    assert.deepEqual(
      files.filter((f) => f.endsWith(".node") || f.endsWith("binding.gyp")),
      [],
      "no native module",
    );
    for (const server of ["boot.js", "main.js", "better-sqlite3", "uws", "pair-worker"])
      assert.ok(!files.some((f) => f.includes(server)), `${server} came along`);
    assert.ok(existsSync(join(app, "node_modules/.bin/exchange")), "the exchange command");

    const [user] = await server.newUsers(1, { usdt: "1000" });
    writeFileSync(
      join(app, "bot.mjs"),
      `import { ExchangeClient, ok, TradingSession } from "exchange-client";
      import { OrderBookFeed } from "exchange-client/book";
      const [baseUrl, apiToken, secretKey] = process.argv.slice(2);
      const client = new ExchangeClient({ baseUrl, apiToken, secretKey });
      const viaRest = ok(await client.createOrder({ pairName: "btc_usdt", tradeType: "limit",
        directionType: "buy", price: "100", amount: "0.01" }));
      const session = await TradingSession.connect({ baseUrl, apiToken, secretKey });
      const viaSession = await session.createOrder({ pairName: "btc_usdt", tradeType: "limit",
        directionType: "buy", price: "101", amount: "0.01" });
      const open = await session.openOrders("btc_usdt");
      await session.cancelAllOrders("btc_usdt");
      await session.close();
      console.log(JSON.stringify({ rest: viaRest.price, session: viaSession.price,
        open: open.length, feed: typeof OrderBookFeed.open }));
      `,
    );
    const bot = await run(process.execPath, ["bot.mjs", server.origin, user.apiToken, user.secretKey], {
      cwd: app,
      timeout: 20_000,
    });
    assert.deepEqual(JSON.parse(bot.stdout), { rest: 100, session: 101, open: 2, feed: "function" });
    const pairs = await run("npx", ["exchange", "pairs"], {
      cwd: app,
      env: { ...process.env, EXCHANGE_URL: server.origin },
      timeout: 20_000,
    });
    assert.deepEqual(
      (JSON.parse(pairs.stdout) as { pairName: string }[]).map((p) => p.pairName),
      ["btc_usdt", "eth_usdt", "eth_btc"],
    );
  });
});
