/**
 * The server's log (docs/OPERATIONS.md "Logs") on the real process: every stdout line is one JSON object with
 * `time`, `level` and `msg`; start, recovery, readiness and shutdown are there; every admin call is
 * logged with what it did; a 500 answer names a request id that its error line carries; orders
 * write no line; `--log-level` filters; and no secret (admin token, API secret, whole API token,
 * signature) is in any line of the whole run, stdout or stderr.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { after, before, describe, it } from "node:test";
import Database from "better-sqlite3";
import { waitFor } from "../wait.ts";
import { TestServer, type TestUser } from "./harness.ts";

interface Line {
  time: number;
  level: string;
  msg: string;
  [field: string]: unknown;
}

/** Every stdout line as JSON; fails on a line that is not a log object. */
function lines(server: TestServer): Line[] {
  const out: Line[] = [];
  for (const text of server.output().stdout.split("\n")) {
    if (text === "") continue;
    let line: Line;
    try {
      line = JSON.parse(text) as Line;
    } catch {
      assert.fail(`a stdout line that is not JSON: ${text}`);
    }
    assert.equal(typeof line.time, "number", text);
    assert.ok(Math.abs(line.time - Date.now()) < 3_600_000, `time is Unix ms: ${text}`);
    assert.ok(["error", "warn", "info", "debug"].includes(line.level), text);
    assert.equal(typeof line.msg, "string", text);
    out.push(line);
  }
  return out;
}

describe("the log of a run", () => {
  let server: TestServer;
  /** Every secret the run handled: none may appear in its output. */
  const secrets = new Set<string>();
  const signatures: string[] = [];

  before(async () => {
    server = await TestServer.start({ args: ["--log-level", "debug"] });
    secrets.add(server.adminToken!);
  });
  after(async () => {
    await server?.close();
  });

  function remember(user: { apiToken: string; secretKey: string }) {
    secrets.add(user.apiToken);
    secrets.add(user.secretKey);
  }

  async function adminCall(route: string, body: unknown, token = server.adminToken!) {
    const res = await fetch(`${server.origin}${route}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  }

  /** A signed call in the plain form, its signature kept for the scan. */
  async function signed(
    user: { apiToken: string; secretKey: string },
    method: string,
    route: string,
    payload = "",
  ) {
    const signature = createHmac("sha256", user.secretKey).update(payload).digest("hex");
    signatures.push(signature);
    const get = method === "GET";
    const res = await fetch(`${server.origin}${route}${get && payload !== "" ? `?${payload}` : ""}`, {
      method,
      headers: { Authorization: user.apiToken, "X-Signature": signature, "content-type": "application/json" },
      body: get ? undefined : payload,
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  }

  function order(price: string) {
    return JSON.stringify({
      pairName: "btc_usdt",
      tradeType: "limit",
      directionType: "buy",
      price,
      amount: "0.01",
    });
  }

  let user: TestUser;

  it("logs start, recovery and readiness as JSON lines", async () => {
    const all = lines(server);
    const starting = all.find((l) => l.msg === "starting");
    assert.ok(starting, server.logs());
    assert.equal(starting.level, "info");
    assert.equal(starting.adminApi, true);
    const recovered = all.find((l) => l.msg.startsWith("recovered "));
    assert.ok(recovered, server.logs());
    assert.equal(recovered.openOrders, 0);
    assert.equal(typeof recovered.nextOrderId, "number");
    const ready = all.find((l) => l.msg.startsWith("listening on http://127.0.0.1:"));
    assert.ok(ready, server.logs());
    assert.equal(ready.ready, true);
    assert.equal(ready.url, server.origin);
  });

  it("logs every admin call with what it did, and a refused one with why", async () => {
    user = await server.newUser({ usdt: "1000" });
    remember(user);
    const key = await adminCall("/admin/api-keys", { uid: user.uid });
    assert.equal(key.status, 200);
    const second = key.json as { apiToken: string; secretKey: string };
    remember(second);
    assert.equal((await adminCall("/admin/api-keys/revoke", { apiToken: second.apiToken })).status, 200);
    assert.equal(
      (await adminCall("/admin/withdraw", { uid: user.uid, currency: "usdt", amount: "1.5" })).status,
      200,
    );
    assert.equal((await adminCall("/admin/fees", undefined)).status, 200);
    const wrongToken = "wrong-admin-token-0123456789abcdef";
    secrets.add(wrongToken);
    assert.equal((await adminCall("/admin/deposit", { uid: user.uid }, wrongToken)).status, 401);

    const all = await waitFor(
      () => {
        const l = lines(server);
        return l.some((x) => x.msg.includes("refused: bad admin token")) ? l : null;
      },
      { what: "the refused admin call in the log" },
    );
    const created = all.find((l) => l.msg === "admin: user created" && l.uid === user.uid);
    assert.ok(created, server.logs());
    assert.equal(created.apiTokenPrefix, user.apiToken.slice(0, 8));
    const deposit = all.find((l) => l.msg === "admin: deposit" && l.uid === user.uid);
    assert.deepEqual([deposit?.currency, deposit?.amount], ["usdt", "1000"]);
    const newKey = all.find((l) => l.msg === "admin: API key created");
    assert.equal(newKey?.apiTokenPrefix, second.apiToken.slice(0, 8));
    const revoked = all.find((l) => l.msg === "admin: API key revoked");
    assert.equal(revoked?.apiTokenPrefix, second.apiToken.slice(0, 8));
    const withdrawal = all.find((l) => l.msg === "admin: withdrawal");
    assert.deepEqual(
      [withdrawal?.currency, withdrawal?.amount, withdrawal?.balance],
      ["usdt", "1.5", "998.5"],
    );
    assert.ok(all.some((l) => l.msg === "admin: fee balances read"));
    const refused = all.find((l) => l.msg.includes("refused: bad admin token"));
    assert.deepEqual([refused?.level, refused?.route, refused?.status], ["warn", "/admin/deposit", 401]);
  });

  it("writes no line for orders, even at debug", async () => {
    const before = server.output().stdout;
    for (let i = 0; i < 20; i++) {
      const res = await signed(user, "POST", "/1.0/trade/create-order", order(`${100 + i}.5`));
      assert.equal(res.status, 200, JSON.stringify(res.json));
    }
    // One refused by its signature too (a wrong one, still a secret-shaped value to scan for).
    const forged = { apiToken: user.apiToken, secretKey: "0".repeat(64) };
    assert.equal((await signed(forged, "POST", "/1.0/trade/create-order", order("99"))).status, 401);
    const listed = await signed(user, "GET", "/1.0/trade/pairs/btc_usdt/user-orders", "page=1&pageSize=50");
    assert.equal(listed.status, 200);
    assert.equal(server.output().stdout, before);
  });

  it("answers a 500 with a request id that its error line carries", async () => {
    // The reads of a user's orders fail while their table is away (the writer has nothing to
    // write: every batch so far was applied for the read just above).
    const db = new Database(server.dbPath);
    db.pragma("busy_timeout = 5000");
    db.exec("ALTER TABLE orders RENAME TO orders_away");
    let res: Awaited<ReturnType<typeof signed>>;
    try {
      res = await signed(user, "GET", "/1.0/trade/pairs/btc_usdt/user-orders", "page=1&pageSize=10");
    } finally {
      db.exec("ALTER TABLE orders_away RENAME TO orders");
      db.close();
    }
    assert.equal(res.status, 500, JSON.stringify(res.json));
    const message = (res.json.errors as Record<string, string[]>).server[0];
    const id = /request id ([0-9a-f-]{36})/.exec(message)?.[1];
    assert.ok(id, message);
    const line = await waitFor(() => lines(server).find((l) => l.requestId === id), {
      what: "the 500's error line",
    });
    assert.equal(line.level, "error");
    assert.equal(line.route, "/trade/pairs/:pairName/user-orders");
    // The cause as the read pool passes it on (across a thread, an SqliteError keeps its code).
    assert.match(JSON.stringify(line.err), /SQLITE_ERROR|no such table/);
    // The server goes on answering.
    assert.equal(
      (await signed(user, "GET", "/1.0/trade/pairs/btc_usdt/user-orders", "page=1&pageSize=10")).status,
      200,
    );
  });

  it("logs the shutdown, and no line of the whole run holds a secret", async () => {
    assert.equal(await server.stop(), 0);
    const all = lines(server);
    assert.ok(all.some((l) => l.msg === "SIGTERM: shutting down"));
    assert.ok(all.some((l) => l.msg.startsWith("stopped")));
    const { stdout, stderr } = server.output();
    assert.ok(stdout.length < 200_000, "the whole output was kept");
    assert.ok(secrets.size >= 6 && signatures.length >= 20);
    for (const secret of [...secrets, ...signatures]) {
      assert.ok(!stdout.includes(secret), `stdout holds a secret: ${secret.slice(0, 4)}...`);
      assert.ok(!stderr.includes(secret), `stderr holds a secret: ${secret.slice(0, 4)}...`);
    }
  });
});

describe("--log-level", () => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start({ args: ["--log-level", "warn"] });
  });
  after(async () => {
    await server?.close();
  });

  it("at warn writes warnings and the readiness line only", async () => {
    const user = await server.newUser({ usdt: "10" });
    const res = await fetch(`${server.origin}/admin/deposit`, {
      method: "POST",
      headers: { Authorization: "Bearer not-the-admin-token-0123456789", "content-type": "application/json" },
      body: JSON.stringify({ uid: user.uid, currency: "usdt", amount: "1" }),
    });
    assert.equal(res.status, 401);
    const all = await waitFor(
      () => {
        const l = lines(server);
        return l.some((x) => x.level === "warn") ? l : null;
      },
      { what: "the refused admin call at warn" },
    );
    assert.deepEqual(
      all.filter((l) => l.level !== "warn").map((l) => l.msg.replace(/ .*/, "")),
      ["listening"],
      server.logs(),
    );
  });
});
