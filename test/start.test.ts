/**
 * `npm start` / `npm run start:prod` go through scripts/start.mjs: the server runs in a child
 * `node` with the flags chosen for the machine (scripts/node-flags.mjs), and the launcher forwards
 * signals and exits as the server exits.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import {
  INLINING_BUDGET,
  inliningBudgetFor,
  OLD_SPACE_MB,
  oldSpaceMbFor,
  serverNodeFlags,
  v8PoolSizeFor,
} from "../scripts/node-flags.mjs";
import { serverEntry } from "./support/built.ts";
import { nodeArgs } from "./support/server-process.ts";
import { waitFor } from "./wait.ts";

const ROOT = path.resolve(import.meta.dirname, "..");

describe("the server's node flags", () => {
  const GIB = 1024 ** 3;
  /** The flags when `name` is set to `value` and every other setting is "default" (V8's own). */
  const only = (name: string, value: string | undefined, cores: number, memory?: number) =>
    serverNodeFlags(
      {
        EXCHANGE_V8_POOL_SIZE: "default",
        EXCHANGE_OLD_SPACE_MB: "default",
        EXCHANGE_PRETENURING: "default",
        EXCHANGE_INLINING_BUDGET: "default",
        [name]: value,
      },
      cores,
      memory,
    );

  it("gives V8 one background thread on one or two cores and Node's default on more", () => {
    assert.equal(v8PoolSizeFor(1), 1);
    assert.equal(v8PoolSizeFor(2), 1);
    assert.equal(v8PoolSizeFor(3), null);
    assert.deepEqual(only("EXCHANGE_V8_POOL_SIZE", undefined, 2), ["--v8-pool-size=1"]);
    assert.deepEqual(only("EXCHANGE_V8_POOL_SIZE", undefined, 16), []);
  });

  it("starts the main thread's old generation at 512 MB, a sixteenth of a smaller machine's memory", () => {
    assert.equal(oldSpaceMbFor(24 * GIB), OLD_SPACE_MB);
    assert.equal(oldSpaceMbFor(8 * GIB), 512);
    assert.equal(oldSpaceMbFor(4 * GIB), 256);
    assert.equal(oldSpaceMbFor(1 * GIB), 64);
    assert.equal(oldSpaceMbFor(GIB / 2), null);
    assert.deepEqual(serverNodeFlags({}, 2, 24 * GIB), [
      "--v8-pool-size=1",
      "--initial-old-space-size=512",
      "--max-inlined-bytecode-size-cumulative=460",
      "--no-allocation-site-pretenuring",
    ]);
    assert.deepEqual(serverNodeFlags({}, 16, 4 * GIB), [
      "--initial-old-space-size=256",
      "--no-allocation-site-pretenuring",
    ]);
  });

  it("halves TurboFan's inlining budget on one or two cores, unless EXCHANGE_INLINING_BUDGET says otherwise", () => {
    assert.equal(inliningBudgetFor(1), INLINING_BUDGET);
    assert.equal(inliningBudgetFor(2), 460);
    assert.equal(inliningBudgetFor(3), null);
    const flags = (v: string | undefined, cores: number) => only("EXCHANGE_INLINING_BUDGET", v, cores);
    assert.deepEqual(flags(undefined, 2), ["--max-inlined-bytecode-size-cumulative=460"]);
    assert.deepEqual(flags(undefined, 8), []);
    assert.deepEqual(flags("920", 8), ["--max-inlined-bytecode-size-cumulative=920"]);
    assert.deepEqual(flags("default", 2), []);
    for (const bad of ["0", "-1", "1.5", "half"])
      assert.throws(() => flags(bad, 2), /EXCHANGE_INLINING_BUDGET/);
  });

  it("turns allocation-site pretenuring off unless EXCHANGE_PRETENURING=default, and refuses other values", () => {
    const flags = (v: string | undefined) => only("EXCHANGE_PRETENURING", v, 16);
    assert.deepEqual(flags(undefined), ["--no-allocation-site-pretenuring"]);
    assert.deepEqual(flags("off"), ["--no-allocation-site-pretenuring"]);
    assert.deepEqual(flags(""), ["--no-allocation-site-pretenuring"]);
    assert.deepEqual(flags("default"), []);
    for (const bad of ["on", "no", "1"]) assert.throws(() => flags(bad), /EXCHANGE_PRETENURING/);
  });

  it("takes EXCHANGE_V8_POOL_SIZE and EXCHANGE_OLD_SPACE_MB over the machine's choice, and refuses bad ones", () => {
    const pool = (v: string, cores: number) => only("EXCHANGE_V8_POOL_SIZE", v, cores);
    assert.deepEqual(pool("3", 2), ["--v8-pool-size=3"]);
    assert.deepEqual(pool("default", 2), []);
    assert.deepEqual(pool("", 16), []);
    for (const bad of ["0", "-1", "1.5", "four"]) assert.throws(() => pool(bad, 2), /EXCHANGE_V8_POOL_SIZE/);
    const old = (v: string) => only("EXCHANGE_OLD_SPACE_MB", v, 16, 24 * GIB);
    assert.deepEqual(old("2048"), ["--initial-old-space-size=2048"]);
    assert.deepEqual(old("default"), []);
    assert.deepEqual(old(""), ["--initial-old-space-size=512"]);
    for (const bad of ["0", "-5", "1.5", "lots"]) assert.throws(() => old(bad), /EXCHANGE_OLD_SPACE_MB/);
  });
});

describe("scripts/start.mjs", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "exchange-start-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("runs the server with the chosen flags, and SIGTERM stops both cleanly", async () => {
    const launcher = spawn(
      process.execPath,
      ["scripts/start.mjs", "--host", "127.0.0.1", "--port", "0", "--db", path.join(dir, "s.db")],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          EXCHANGE_V8_POOL_SIZE: "2",
          EXCHANGE_OLD_SPACE_MB: "96",
          EXCHANGE_INLINING_BUDGET: "300",
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    launcher.stderr.on("data", (d) => {
      output += d;
    });
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      launcher.on("exit", (code, signal) => resolve({ code, signal })),
    );
    const timer = setTimeout(() => launcher.kill("SIGKILL"), 30_000);
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let seen = "";
        launcher.stdout.on("data", (d) => {
          seen += d;
          output += d;
          const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(seen);
          if (m !== null) resolve(Number(m[1]));
        });
        void exited.then(() => reject(new Error(`exited before listening:\n${output}`)));
      });
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      assert.equal(res.status, 200);
      // The server is the launcher's child, started with the pool size asked for.
      const children = readFileSync(`/proc/${launcher.pid}/task/${launcher.pid}/children`, "utf8")
        .trim()
        .split(/\s+/);
      assert.equal(children.length, 1);
      const argv = readFileSync(`/proc/${children[0]}/cmdline`, "utf8").split("\0");
      assert.ok(argv.includes("--v8-pool-size=2"), argv.join(" "));
      assert.ok(argv.includes("--initial-old-space-size=96"), argv.join(" "));
      assert.ok(argv.includes("--no-allocation-site-pretenuring"), argv.join(" "));
      assert.ok(argv.includes("--max-inlined-bytecode-size-cumulative=300"), argv.join(" "));
      assert.ok(
        argv.some((a) => a.endsWith(path.join("src", "main.ts"))),
        argv.join(" "),
      );
      launcher.kill("SIGTERM");
      const end = await exited;
      assert.deepEqual(end, { code: 0, signal: null }, output);
      assert.match(output, /SIGTERM: shutting down/);
      // Only the launcher was signalled: the server heard it through the launcher.
      assert.throws(() => process.kill(Number(children[0]), 0));
    } finally {
      clearTimeout(timer);
      if (launcher.exitCode === null) launcher.kill("SIGKILL");
    }
  });
});

/** The process `pid` and all its descendants, from /proc (children of every thread). */
function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${out[i]}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      let children = "";
      try {
        children = readFileSync(`/proc/${out[i]}/task/${task}/children`, "utf8");
      } catch {}
      for (const child of children.trim().split(/\s+/)) if (child !== "") out.push(Number(child));
    }
  }
  return out;
}

/** A clean close checkpoints and removes the WAL files of the database and of its journal. */
function closedCleanly(db: string, output: string): void {
  for (const leftover of [`${db}-wal`, `${db}-shm`, `${db}.journal-wal`, `${db}.journal-shm`])
    assert.ok(!existsSync(leftover), `${leftover} is left: the server did not close the database\n${output}`);
}

function alive(pid: number): boolean {
  try {
    // A zombie (exited, not yet reaped) has state Z: it runs nothing and holds nothing.
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

describe("npm start", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "exchange-npm-start-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("kill <pid of npm start> stops npm, the launcher and the server, the database closes cleanly, and --silent leaves only the server's JSON lines on stdout", async () => {
    const db = path.join(dir, "npm.db");
    // What `npm start --silent -- ... &` then `kill $!` does (README.md): the pid is npm's own.
    const npm = spawn("npm", ["start", "--silent", "--", "--host", "127.0.0.1", "--port", "0", "--db", db], {
      cwd: ROOT,
      env: { ...process.env, NODE_TEST_CONTEXT: undefined },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    let stdout = "";
    npm.stderr.on("data", (d) => {
      output += d;
    });
    npm.stdout.on("data", (d) => {
      output += d;
      stdout += d;
    });
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      npm.on("exit", (code, signal) => resolve({ code, signal })),
    );
    let tree: number[] = [];
    try {
      const line = await waitFor(() => /listening on http:\/\/127\.0\.0\.1:\d+ \(.*\)/.exec(output)?.[0], {
        what: "npm start to print listening on",
        timeoutMs: 120_000,
      });
      // The start-up line names the settings in force.
      assert.match(
        line,
        /database .*npm\.db, synchronous FULL, rate limit 1000\/s per token and address, wait strategy (blocking|busy-spin)/,
      );
      tree = processTree(npm.pid!);
      assert.ok(tree.length >= 3, `npm, the launcher and the server: ${tree.join(" ")}`);
      npm.kill("SIGTERM");
      const end = await exited;
      assert.deepEqual(end, { code: 0, signal: null }, output);
      await waitFor(() => tree.every((pid) => !alive(pid)), {
        what: `every process of npm start to be gone (${tree.join(" ")})`,
        timeoutMs: 20_000,
      });
      assert.match(output, /SIGTERM: shutting down/);
      // `npm start --silent | jq` (README.md): npm's own `> exchange-server@0.1.0 start` lines are
      // left out, and every line is one of the server's JSON objects.
      for (const line of stdout.trimEnd().split("\n"))
        assert.doesNotThrow(() => JSON.parse(line), `not JSON on stdout: ${line}\n${output}`);
      closedCleanly(db, output);
    } finally {
      for (const pid of tree.length > 0 ? tree : [npm.pid!]) {
        if (!alive(pid)) continue;
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
      }
    }
  });
});

describe("src/main.ts and signals", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "exchange-signals-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** The server run directly, as the launcher runs it, with what it prints and how it ends. */
  function server(db: string) {
    const child = spawn(
      process.execPath,
      nodeArgs(serverEntry(), ["--host", "127.0.0.1", "--port", "0", "--db", db], []),
      { cwd: ROOT, env: { ...process.env, NODE_TEST_CONTEXT: undefined }, stdio: ["ignore", "pipe", "pipe"] },
    );
    const out = { text: "" };
    child.stdout.on("data", (d) => {
      out.text += d;
    });
    child.stderr.on("data", (d) => {
      out.text += d;
    });
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.on("exit", (code, signal) => resolve({ code, signal })),
    );
    return { child, out, exited };
  }

  it("a SIGTERM while it starts stops it as soon as it has started: exit 0, the database closed, never ready", async () => {
    const db = path.join(dir, "starting.db");
    const { child, out, exited } = server(db);
    try {
      // Written from inside the start (src/boot.ts), after "starting" and before readiness.
      await waitFor(() => out.text.includes("pair workers wait for commands"), {
        what: "the server to be starting",
        timeoutMs: 120_000,
      });
      child.kill("SIGTERM");
      const end = await exited;
      assert.deepEqual(end, { code: 0, signal: null }, out.text);
      assert.match(out.text, /SIGTERM: shutting down/);
      assert.match(out.text, /stopped: every acknowledged write is committed/);
      assert.doesNotMatch(out.text, /listening on/);
      closedCleanly(db, out.text);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  });

  it("catches SIGTERM before anyone can read its readiness line", async () => {
    const db = path.join(dir, "ready.db");
    const { child, out, exited } = server(db);
    try {
      await waitFor(() => out.text.includes("listening on"), { what: "listening on", timeoutMs: 120_000 });
      // SigCgt: the signals the process has handlers for, as a hex mask; SIGTERM is signal 15.
      const caught = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1];
      assert.ok(caught !== undefined);
      assert.equal((BigInt(`0x${caught}`) >> 14n) & 1n, 1n, `SigCgt ${caught} has no SIGTERM handler`);
      child.kill("SIGTERM");
      assert.deepEqual(await exited, { code: 0, signal: null }, out.text);
      closedCleanly(db, out.text);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  });
});
