/**
 * One server per port and per database. A second server on the same port used to start silently
 * (uWebSockets.js shares ports by default) and take half of the connections; one on the same
 * database acknowledged orders that the first one's journal then lost. Both now refuse to start,
 * with one `config error:` line and exit code 1, and the first server keeps everything.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { dec } from "./decimal.ts";
import { placeLimit, runToExit, TestServer, type TestUser } from "./harness.ts";

describe("a second server", () => {
  let server: TestServer;
  let user: TestUser;
  const acknowledged: number[] = [];
  before(async () => {
    server = await TestServer.start();
    user = await server.newUser({ usdt: "100000" });
    acknowledged.push((await placeLimit(user, "btc_usdt", "buy", "20000", "0.01")).id);
  });
  after(() => server.close());

  /** One line on stderr, `config error: ...`, exit code 1, and never `listening on`. */
  function assertRefused(result: { code: number | null; stdout: string; stderr: string }, why: RegExp) {
    const output = `--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`;
    assert.equal(result.code, 1, output);
    assert.doesNotMatch(result.stdout, /listening on/, output);
    const lines = result.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 1, output);
    assert.match(lines[0], /^config error: /, output);
    assert.match(lines[0], why, output);
  }

  it("refuses to start on a port another server listens on, and the first keeps serving", async () => {
    const result = await runToExit([
      "--host",
      "127.0.0.1",
      "--port",
      String(server.port),
      "--db",
      join(server.dir, "second.db"),
      "--config",
      server.configPath,
    ]);
    assertRefused(result, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${server.port}: the port is in use`));
    acknowledged.push((await placeLimit(user, "btc_usdt", "buy", "20001", "0.01")).id);
  });

  it("refuses to start on a database another live server holds, and the first loses nothing", async () => {
    const result = await runToExit(
      ["--host", "127.0.0.1", "--port", "0", "--db", server.dbPath, "--config", server.configPath],
      { ADMIN_TOKEN: server.adminToken ?? "" },
    );
    assertRefused(result, /database .* is in use by another running server/);
    acknowledged.push((await placeLimit(user, "btc_usdt", "buy", "20002", "0.01")).id);

    // kill -9: the kernel drops the lock, the next start takes it, and every acknowledged order is there.
    await server.kill();
    await server.restart();
    const orders = await server.allOrders(user);
    assert.deepEqual(
      orders.map((o) => o.id).sort((a, b) => a - b),
      acknowledged,
    );
    const balances = await server.balances(user);
    assert.equal(balances.get("usdt")?.reserved, dec("200") + dec("200.01") + dec("200.02"));
  });
});
