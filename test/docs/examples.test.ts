/**
 * The shell examples of README.md and docs/API.md run as a reader would run them: every ```sh block
 * of a document, in the order it is read, in one bash session (`set -euo pipefail`), against a fresh
 * server started here with the ADMIN_TOKEN the document gives. Only the lines that start a server
 * (`... npm start &`, `SERVER=$!`) or wait for one (`until curl ... /health ...`, `for ... curl ...
 * /health ...`) are left out, and the port the documents use (8080) becomes the test server's.
 *
 * An example breaks the test when a command fails (non-zero exit, an unset variable, a CLI answer
 * that is not 200), when an answer is an error (`"errors"` anywhere in the output: every example is
 * meant to succeed), or when a block prints nothing. The examples use curl, openssl and jq, and the
 * `exchange` command of the build (`npx exchange`), which is built here first.
 */
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { promisify } from "node:util";
import { REPO_ROOT, TestServer } from "../e2e/harness.ts";
import { builtIsFresh } from "../support/built.ts";

const run = promisify(execFile);
const DOC_PORT = 8080;
const BLOCK_MARK = "::doc-example-block::";

/** The body of every ```sh block, in document order. */
export function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

/** A line that starts the documents' server, keeps its pid or waits for it: the test starts its own. */
function startsOrWaits(line: string): boolean {
  return (
    /\bnpm (run )?start\b/.test(line) ||
    /^SERVER=\$!/.test(line) ||
    /^\s*(until|for) .*curl .*\/health/.test(line)
  );
}

/** A block without the lines that start or wait for a server, on `port` instead of the docs' one. */
export function runnable(block: string, port: number): string {
  return block
    .split("\n")
    .filter((line) => !startsOrWaits(line))
    .join("\n")
    .replace(new RegExp(`(localhost|127\\.0\\.0\\.1):${DOC_PORT}\\b`, "g"), `$1:${port}`);
}

/** The admin token a document starts its server with. */
function adminTokenOf(markdown: string): string {
  const m = /ADMIN_TOKEN=(\S+) npm start &/.exec(markdown);
  assert.ok(m !== null, "the document starts a server with ADMIN_TOKEN");
  return m[1];
}

/** A guard against a hung example run (npm pack and install included), never a measure. */
const EXAMPLES_TIMEOUT_MS = 400_000;

/**
 * Runs `script` with bash in a process group of its own; after 120 s, or once it has exited, the
 * whole group is killed, so that a broken example (a server started in the foreground, a stream
 * that never ends) leaves nothing running.
 */
function bash(
  script: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn("bash", ["-c", script], {
    cwd: REPO_ROOT,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const killGroup = () => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {}
  };
  // A guard against a hung example, not a measure: docs/API.md packs the client and installs it in
  // another project (npm pack, npm install), minutes on a loaded 2-core machine.
  const timer = setTimeout(() => {
    stderr += `\n[test] timed out after ${EXAMPLES_TIMEOUT_MS / 1000} s\n`;
    killGroup();
  }, EXAMPLES_TIMEOUT_MS);
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      // Whatever the examples left running goes too; then the pipes close with all output read.
      killGroup();
      child.once("close", () => resolve({ code, stdout, stderr }));
    }),
  );
}

/** Runs a document's examples; returns each block's output. */
async function runDocument(file: string): Promise<string[]> {
  const markdown = readFileSync(join(REPO_ROOT, file), "utf8");
  const blocks = shellBlocks(markdown);
  assert.ok(blocks.length > 0, `${file} has sh blocks`);
  const server = await TestServer.start({ adminToken: adminTokenOf(markdown) });
  try {
    const script = [
      "set -euo pipefail",
      ...blocks.map((b) => `echo '${BLOCK_MARK}'\n${runnable(b, server.port)}`),
      `echo '${BLOCK_MARK}'`,
    ].join("\n");
    // mktemp (the other project of docs/API.md section 13) makes its folders in this test's own.
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LANG: "C.UTF-8",
      TMPDIR: server.dir,
    };
    const { code, stdout, stderr } = await bash(script, env);
    assert.equal(
      code,
      0,
      `${file}: the examples stopped (exit ${code})\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`,
    );
    const outputs = stdout.split(`${BLOCK_MARK}\n`).slice(1, -1);
    assert.equal(outputs.length, blocks.length, stdout);
    outputs.forEach((out, i) => {
      const where = `${file} sh block ${i + 1}:\n${blocks[i]}\n--- its output ---\n${out}\n--- stderr ---\n${stderr}`;
      assert.ok(out.trim() !== "", `prints nothing: ${where}`);
      assert.ok(!out.includes('"errors"'), `answers an error: ${where}`);
    });
    return outputs;
  } finally {
    await server.close();
    // What `npm run pack:client` (docs/API.md section 14) writes into the repository.
    rmSync(join(REPO_ROOT, "exchange-client-0.1.0.tgz"), { force: true });
  }
}

describe("the documents' shell examples", () => {
  before(async () => {
    // `npx exchange` runs the build's CLI (the package's bin): what `npm run build` makes of src/,
    // made again unless it is of the sources as they are (`npm test` builds before the tests).
    if (!builtIsFresh())
      await run(process.execPath, ["scripts/build.mjs"], { cwd: REPO_ROOT, timeout: 180_000 });
  });

  for (const file of ["README.md", "docs/API.md"]) {
    it(`${file} starts one server, waits for it once, and names it only where the test can move it`, () => {
      // The runs below leave out exactly the document's server start and readiness wait, and move
      // its port: any other line left out would be an example skipped unseen, and a port not moved
      // an example talking to some other server on 8080.
      const blocks = shellBlocks(readFileSync(join(REPO_ROOT, file), "utf8"));
      const leftOut = blocks.flatMap((b) => b.split("\n").filter(startsOrWaits));
      assert.equal(leftOut.length, 3, `${file} leaves out: ${leftOut.join(" | ")}`);
      assert.match(leftOut[0], /^ADMIN_TOKEN=\S+ npm start &$/);
      assert.match(leftOut[1], /^SERVER=\$!/);
      assert.match(leftOut[2], new RegExp(`^for _ in .*curl -sf localhost:${DOC_PORT}/health `));
      for (const b of blocks) {
        const port = new RegExp(`\\b${DOC_PORT}\\b`);
        assert.ok(!port.test(runnable(b, 4321)), `${file}: port ${DOC_PORT} not moved in\n${b}`);
      }
    });
  }

  it("README.md's wait for readiness ends when the server it started refuses to start", async () => {
    // What the issue saw: a second server on the same database refuses to start, and a wait
    // that only polled /health went on forever. The README's start and wait lines, with the
    // launcher of `npm start` (scripts/start.mjs, without the web build) on the first server's
    // database and another port.
    const first = await TestServer.start();
    try {
      const block = shellBlocks(readFileSync(join(REPO_ROOT, "README.md"), "utf8"))[0];
      const lines = block.split("\n");
      const wait = lines.findIndex((line) => /^\s*(until|for) .*curl .*\/health/.test(line));
      assert.ok(wait > 0, "README's first block waits for /health");
      // A port nothing listens on: the refusal is the database's, not the port's.
      const probe = createServer();
      await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
      const { port } = probe.address() as AddressInfo;
      await new Promise((resolve) => probe.close(resolve));
      const script = lines
        .slice(0, wait + 1)
        .join("\n")
        .replace(/\bnpm start\b/, `node scripts/start.mjs --db ${first.dbPath} --port ${port}`)
        .replaceAll("localhost:8080", `localhost:${port}`);
      const { code, stdout, stderr } = await bash(`${script}\necho waited`, {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
      });
      assert.equal(code, 0, stderr);
      assert.equal(stdout.trim().split("\n").at(-1), "waited", stdout);
      assert.match(stderr, /config error: .*exchange\.db/, stderr);
    } finally {
      await first.close();
    }
  });

  it("README.md's run in order against a fresh server", async () => {
    const outputs = await runDocument("README.md");
    // The signed create-order, then the signed GETs (plain and bound form) that list it.
    assert.match(
      outputs.join(""),
      /"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":25000/,
    );
  });

  it("docs/API.md's run in order against a fresh server", async () => {
    const outputs = await runDocument("docs/API.md");
    assert.match(outputs.join(""), /"clientOrderId":"mm-1"/);
    assert.match(outputs.join(""), /"cancelled":\[/);
    // Section 10: a listen key handed out, extended and closed.
    assert.match(outputs.join(""), /"listenKey":"[0-9a-f]{64}"/);
    // Section 13: the packed client, imported from another project, placed and cancelled an order.
    assert.match(
      outputs.join(""),
      /\{"id":\d+,"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":20000,"amount":0\.001,/,
    );
  });
});
