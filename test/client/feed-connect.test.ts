/**
 * A feed whose first connection fails (nothing listens on the port) rejects `open` and leaves
 * nothing behind: the failed attempt's close used to start a reconnect loop of its own, and every
 * failed attempt of that loop another one, until the process ran out of memory. Each feed runs in a
 * child process, which must end by itself once `open` has rejected.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net, { type AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { REPO_ROOT } from "../e2e/harness.ts";

/** A guard against a child that never ends (the fault itself), not a measure. */
const HANG_GUARD_MS = 60_000;

/** Runs `script` (an ES module, under tsx) to its end: its exit code and output. */
function runScript(script: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d) => {
    output += d;
  });
  child.stderr.on("data", (d) => {
    output += d;
  });
  const guard = setTimeout(() => {
    output += `\n[test] still running after ${HANG_GUARD_MS / 1000} s: killed`;
    child.kill("SIGKILL");
  }, HANG_GUARD_MS);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearTimeout(guard);
      resolve({ code, output });
    }),
  );
}

describe("a feed that cannot connect", () => {
  for (const [feed, module, options] of [
    ["OrderBookFeed", "./src/client/book.ts", "pairName: 'btc_usdt'"],
    ["L3BookFeed", "./src/client/market-data.ts", "pairName: 'btc_usdt'"],
    ["BboFeed", "./src/client/market-data.ts", "pairName: 'btc_usdt'"],
  ] as const) {
    it(`${feed} rejects open and leaves the process free to end`, async () => {
      const probe = net.createServer();
      await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
      const { port } = probe.address() as AddressInfo;
      await new Promise((resolve) => probe.close(resolve));
      const { code, output } = await runScript(
        `import { ${feed} } from "${module}";
         try {
           await ${feed}.open({ baseUrl: "http://127.0.0.1:${port}", ${options} });
           console.log("opened");
         } catch (error) {
           console.log("rejected: " + error.message);
         }`,
      );
      assert.equal(code, 0, output);
      assert.equal(output.trim(), `rejected: connect ECONNREFUSED 127.0.0.1:${port}`);
    });
  }
});
