/** The `npm start` entry point as a process. */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { validateConfig } from "../src/config/config-file.ts";
import { checkPairs } from "../src/db/recovery.ts";
import { openDatabase } from "../src/protocol/db/db-open.ts";
import { runToExit } from "./e2e/harness.ts";
import { runToExit as runScriptToExit } from "./support/server-process.ts";

/** The server run to its exit; `output` is stdout then stderr. */
async function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const { code, stdout, stderr } = await runScriptToExit(
    "src/main.ts",
    args,
    { ...process.env, ...env },
    20_000,
  );
  return { code, output: stdout + stderr };
}

describe("npm start entry point", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "exchange-main-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("refuses to start on the slow pure-JS uWebSockets fallback", async () => {
    const { code, output } = await run(["--port", "0", "--db", path.join(dir, "a.db")], {
      UWS_USE_FALLBACK: "1",
    });
    assert.equal(code, 1);
    assert.match(output, /refusing to run on the slow pure-JS fallback/);
    assert.doesNotMatch(output, /listening on/);
  });

  it("refuses a config file with an invalid pair and says which", async () => {
    const config = path.join(dir, "bad.json");
    writeFileSync(
      config,
      JSON.stringify({ pairs: [{ name: "BTC-USDT", priceDecimals: 2, amountDecimals: 6 }] }),
    );
    const { code, output } = await run(
      ["--port", "0", "--db", path.join(dir, "b.db"), "--config", config],
      {},
    );
    assert.equal(code, 1);
    assert.match(output, /config error: .*pairs\[0\]: name must match/);
  });

  /** Exit 1 with exactly one line on stderr, `config error: ...`, and no stack trace. */
  async function assertConfigError(args: string[], why: RegExp, env: Record<string, string> = {}) {
    const result = await runToExit(args, env);
    const output = `--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`;
    assert.equal(result.code, 1, output);
    const lines = result.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 1, output);
    assert.match(lines[0], /^config error: /, output);
    assert.match(lines[0], why, output);
    assert.doesNotMatch(result.stdout, /listening on/, output);
  }

  it("refuses a --db whose folder cannot be made, in one line and at once (/proc used to spin)", async () => {
    await assertConfigError(
      ["--port", "0", "--db", "/proc/x/y.db"],
      /database \/proc\/x\/y\.db: cannot create its folder: .*\/proc\/x/,
    );
    const file = path.join(dir, "a-file");
    writeFileSync(file, "");
    await assertConfigError(
      ["--port", "0", "--db", path.join(file, "x.db")],
      /cannot create its folder: .*is not a folder/,
    );
  });

  it("refuses a --db that is not a database file, in one line", async () => {
    const notDb = path.join(dir, "not-a.db");
    writeFileSync(
      notDb,
      "this is not an SQLite database, just some text long enough to have a header\n".repeat(20),
    );
    await assertConfigError(["--port", "0", "--db", notDb], /database .*not-a\.db: cannot open: /);
  });

  it("refuses a --host it cannot listen on, in one line naming the reason", async () => {
    await assertConfigError(
      ["--port", "0", "--host", "10.254.254.254", "--db", path.join(dir, "h.db")],
      /cannot listen on 10\.254\.254\.254:0: 10\.254\.254\.254 is not an address of this machine/,
    );
    await assertConfigError(
      ["--port", "0", "--host", "no-such-host.invalid", "--db", path.join(dir, "h2.db")],
      /cannot listen on no-such-host\.invalid:0: host no-such-host\.invalid is not known/,
    );
  });

  it("refuses a config file with a JSON syntax error in one line naming its line and column", async () => {
    const config = path.join(dir, "syntax.json");
    // The comma after the last property of line 3 is the fault: the `}` after it is column 66.
    const pair = '{"name": "btc_usdt", "priceDecimals": 2, "amountDecimals": 6,}';
    writeFileSync(config, `{\n  "pairs": [\n    ${pair}\n  ]\n}\n`);
    await assertConfigError(
      ["--port", "0", "--db", path.join(dir, "s.db"), "--config", config],
      /^config error: config .*syntax\.json: not valid JSON at line 3, column 66: Quoted object key expected but got '\}'$/,
    );
    writeFileSync(config, '{\n  "pairs": [\n');
    await assertConfigError(
      ["--port", "0", "--db", path.join(dir, "s.db"), "--config", config],
      /not valid JSON at line 3, column 1: .*end of input/,
    );
  });

  it("refuses an unknown flag in one line naming the flag it most likely meant", async () => {
    await assertConfigError(
      ["--prot", "0", "--db", path.join(dir, "f.db")],
      /^config error: command line: unknown flag --prot: did you mean --port\? \(README\.md lists the flags\)$/,
    );
    await assertConfigError(
      ["--port", "0", "--rate", "5", "--db", path.join(dir, "f.db")],
      /unknown flag --rate: did you mean --rate-limit\?/,
    );
    await assertConfigError(
      ["--port", "0", "--verbose", "--db", path.join(dir, "f.db")],
      /^config error: command line: unknown flag --verbose \(README\.md lists the flags\)$/,
    );
  });

  it("refuses a port in use before it opens or recovers the database", async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const port = (holder.address() as net.AddressInfo).port;
    const db = path.join(dir, "port-in-use", "x.db");
    try {
      const result = await runToExit(["--port", String(port), "--db", db], {});
      assert.equal(result.code, 1, result.stderr);
      assert.equal(
        result.stderr.trimEnd(),
        `config error: cannot listen on 127.0.0.1:${port}: the port is in use by another process`,
      );
      assert.doesNotMatch(result.stdout, /recovered|pair workers/, result.stdout);
      assert.ok(!existsSync(db), "the database was created");
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it("refuses a FIX or replication port in use, closing what it started, in one line naming the flag", async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const taken = (holder.address() as net.AddressInfo).port;
    try {
      const fix = await runToExit(
        ["--port", "0", "--fix-port", String(taken), "--db", path.join(dir, "fix-taken.db")],
        {},
      );
      assert.equal(fix.code, 1, fix.stderr);
      assert.match(
        fix.stderr,
        new RegExp(`^config error: --fix-port: cannot listen on 127\\.0\\.0\\.1:${taken}: `),
      );
      // The FIX gateway listens first, then the replication port fails: both close.
      const rep = await runToExit(
        [
          ...["--port", "0", "--fix-port", "0", "--replication-port", String(taken)],
          ...["--db", path.join(dir, "rep-taken.db")],
        ],
        { REPLICATION_TOKEN: "t".repeat(32) },
      );
      assert.equal(rep.code, 1, rep.stderr);
      assert.match(
        rep.stderr,
        new RegExp(`^config error: --replication-port: cannot listen on 127\\.0\\.0\\.1:${taken}: `),
      );
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it("refuses pair decimals that differ from the database's, in one line naming the pair", async () => {
    const dbPath = path.join(dir, "decimals.db");
    const pair = {
      name: "btc_usdt",
      priceDecimals: 2,
      amountDecimals: 6,
      minAmount: "0.001",
      maxAmount: "100",
      maxPrice: "1000000",
    };
    const db = openDatabase(dbPath);
    checkPairs(db, validateConfig({ pairs: [pair] }).pairs);
    db.close();
    const config = path.join(dir, "decimals.json");
    writeFileSync(config, JSON.stringify({ pairs: [{ ...pair, priceDecimals: 3 }] }));
    await assertConfigError(
      ["--port", "0", "--db", dbPath, "--config", config],
      /pair decimals differ from the database .*pair btc_usdt: configured priceDecimals 3, amountDecimals 6; the database holds priceDecimals 2, amountDecimals 6/,
    );
  });
});
