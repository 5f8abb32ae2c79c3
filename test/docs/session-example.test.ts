/**
 * The TradingSession example of docs/API.md section 13 runs as written against a real server: the
 * ```ts block after "A full example with the client library", with the package name pointed at
 * src/client/index.ts and the documents' port (8080) at the test server's, and API_TOKEN and
 * SECRET_KEY of a funded user. It must exit 0 and print what its comments promise.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { REPO_ROOT, TestServer } from "../e2e/harness.ts";

const run = promisify(execFile);

/** The first ```ts block after `marker` in docs/API.md. */
function exampleAfter(marker: string): string {
  const doc = readFileSync(join(REPO_ROOT, "docs", "API.md"), "utf8");
  const at = doc.indexOf(marker);
  assert.ok(at >= 0, `docs/API.md has "${marker}"`);
  const block = /^```ts\n([\s\S]*?)^```$/m.exec(doc.slice(at));
  assert.ok(block !== null, "a ts block follows it");
  return block[1];
}

describe("docs/API.md trading-session example", () => {
  let server: TestServer;
  const dir = mkdtempSync(join(tmpdir(), "session-example-"));
  const file = join(dir, "example.mts");

  before(async () => {
    server = await TestServer.start();
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await server?.close();
  });

  it("runs against a real server: logon, place, amend, cancel, an error body, close", async () => {
    const user = await server.newUser({ usdt: "1000" });
    const code = exampleAfter("A full example with the client library")
      .replace('"exchange-client"', JSON.stringify(join(REPO_ROOT, "src", "client", "index.ts")))
      .replace("127.0.0.1:8080", `127.0.0.1:${server.port}`);
    writeFileSync(file, code);
    const { stdout } = await run(process.execPath, ["--import", "tsx", file], {
      cwd: REPO_ROOT,
      env: { ...process.env, API_TOKEN: user.apiToken, SECRET_KEY: user.secretKey },
      timeout: 60_000,
    });
    assert.match(stdout, new RegExp(`^logged on as ${user.uid}$`, "m"));
    assert.match(stdout, /^amended 25010$/m);
    assert.match(stdout, /^order \d+ 0 \/ 0\.01 true$/m, "the cancel's report");
    assert.match(stdout, /^400 .*AMOUNT_ABOVE_MAX/m);
    assert.match(stdout, /^dropped 1000 reconnecting: false$/m);
  });
});
