/** The `npm start` entry point as a process. */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";

const ROOT = path.resolve(import.meta.dirname, "..");

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => {
      output += d;
    });
    child.stderr.on("data", (d) => {
      output += d;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`server did not exit within 20 s:\n${output}`));
    }, 20_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
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
});
