/**
 * docs/API.md 7.11 and 11 on the real server: the caller's transfers history (`GET /trade/transfers`) and the
 * operator's view of one user (`GET /admin/users/{uid}`), through the client library and the
 * `exchange transfers` / `exchange user` commands.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { run } from "../../src/cli.ts";
import type { Transfer } from "../../src/client/index.ts";
import {
  CURRENCIES,
  expectError,
  expectOk,
  limit,
  readAllPages,
  TestServer,
  type TestUser,
} from "./harness.ts";

const DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

async function cli(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(
    argv,
    {},
    (l) => out.push(l),
    (l) => err.push(l),
  );
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("transfers history and the admin view of a user (docs/API.md 7.11, 11)", () => {
  let server: TestServer;
  let fromConfig: TestUser;
  let alice: TestUser;
  let bob: TestUser;

  before(async () => {
    server = await TestServer.start({ configUsers: [{ btc: "2", usdt: "1000" }] });
    [fromConfig] = server.users;
    alice = await server.newUser();
    bob = await server.newUser({ eth: "5" });
    await server.deposit(alice, "usdt", "100.5");
    await server.deposit(alice, "btc", "0.25");
    expectOk(await server.withdraw(alice, "usdt", "0.5"), "withdraw");
    await server.deposit(alice, "usdt", "7");
  });
  after(async () => {
    await server?.close();
  });

  it("lists the caller's deposits and withdrawals newest first, unsigned amounts, UTC datetimes", async () => {
    const page = expectOk(await alice.client.transfers());
    assert.equal(page.total, 4);
    assert.deepEqual(
      page.items.map((t) => [t.type, t.currency, t.amount]),
      [
        ["deposit", "usdt", "7"],
        ["withdraw", "usdt", "0.5"],
        ["deposit", "btc", "0.25"],
        ["deposit", "usdt", "100.5"],
      ],
    );
    const ids = page.items.map((t) => t.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => b - a),
      "newest first",
    );
    assert.equal(new Set(ids).size, ids.length);
    for (const t of page.items) {
      assert.deepEqual(Object.keys(t), ["id", "type", "currency", "amount", "time"]);
      assert.match(t.time, DATETIME);
    }
  });

  it("shows the config file's credits as deposits and never another user's transfers", async () => {
    const own = expectOk(await fromConfig.client.transfers());
    assert.deepEqual(own.items.map((t) => [t.type, t.currency, t.amount]).sort(), [
      ["deposit", "btc", "2"],
      ["deposit", "usdt", "1000"],
    ]);
    const bobs = expectOk(await bob.client.transfers());
    assert.deepEqual(
      bobs.items.map((t) => [t.type, t.currency, t.amount]),
      [["deposit", "eth", "5"]],
    );
    // One increasing sequence over all users: the config's credits, then bob's deposit, then alice's.
    const alices = expectOk(await alice.client.transfers()).items;
    assert.ok(Math.max(...own.items.map((t) => t.id)) < bobs.items[0].id);
    assert.ok(bobs.items[0].id < Math.min(...alices.map((t) => t.id)));
  });

  it("pages as 4.9: page and pageSize, total of all, 400 on a bad value", async () => {
    const all = expectOk(await alice.client.transfers()).items;
    const second = expectOk(await alice.client.transfers({ page: 2, pageSize: 3 }));
    assert.equal(second.total, 4);
    assert.deepEqual(second.items, all.slice(3));
    const pages = await readAllPages<Transfer>((page) => alice.client.transfers({ page, pageSize: 1 }));
    assert.deepEqual(pages, all);
    expectError(await alice.client.transfers({ page: 0 }), 400, "page");
    expectError(await alice.client.transfers({ pageSize: 101 }), 400, "pageSize");
    expectError(await alice.client.transfers({ page: "x" }), 400, "page");
    const anonymous = await server.public.raw("GET", "/1.0/trade/transfers");
    expectError(anonymous, 401, "auth");
  });

  it("keeps the history across a restart", async () => {
    const before = expectOk(await alice.client.transfers()).items;
    await server.restart();
    assert.deepEqual(expectOk(await alice.client.transfers()).items, before);
  });

  it("shows a user's balances of every currency, reserved included, and key prefixes", async () => {
    expectOk(await alice.client.createOrder(limit("btc_usdt", "buy", "0.1", "100")), "a buy holds usdt");
    const extra = expectOk(await server.admin.createApiKey(alice.uid));
    expectOk(await server.admin.revokeApiKey(extra.apiToken));
    const user = expectOk(await server.admin.user(alice.uid.toUpperCase()));
    assert.deepEqual(Object.keys(user), ["uid", "balances", "apiKeys"]);
    assert.equal(user.uid, alice.uid);
    assert.deepEqual(
      user.balances.map((b) => b.currency),
      CURRENCIES,
      "every currency of the configured pairs in config order",
    );
    const byCurrency = new Map(user.balances.map((b) => [b.currency, [b.balance, b.reserved]]));
    assert.deepEqual(byCurrency.get("usdt"), ["97", "10"]);
    assert.deepEqual(byCurrency.get("btc"), ["0.25", "0"]);
    assert.deepEqual(user.apiKeys, [
      { apiTokenPrefix: alice.apiToken.slice(0, 8), revoked: false },
      { apiTokenPrefix: extra.apiToken.slice(0, 8), revoked: true },
    ]);
    assert.ok(!JSON.stringify(user).includes(alice.apiToken), "never a whole token");
    assert.ok(!JSON.stringify(user).includes(alice.secretKey));
  });

  it("answers 404 errors.uid for an unknown or malformed uid, 401 without the admin token", async () => {
    expectError(await server.admin.user("00000000-0000-4000-8000-000000000001"), 404, "uid");
    expectError(await server.admin.user("not-a-uid"), 404, "uid");
    expectError(await server.admin.with({ adminToken: "wrong" }).user(alice.uid), 401, "auth");
    const post = await server.admin.raw("POST", `/admin/users/${alice.uid}`, {
      headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get("allow"), "GET");
  });

  it("prints both from the command line", async () => {
    const url = server.origin;
    const t = await cli(["transfers", "--url", url, "--token", bob.apiToken, "--secret", bob.secretKey]);
    assert.equal(t.code, 0, t.err);
    assert.deepEqual(
      JSON.parse(t.out).items.map((x: Transfer) => [x.type, x.currency, x.amount]),
      [["deposit", "eth", "5"]],
    );
    const u = await cli(["user", bob.uid, "--url", url, "--admin-token", server.adminToken!]);
    assert.equal(u.code, 0, u.err);
    assert.equal(JSON.parse(u.out).uid, bob.uid);
    const missing = await cli(["user", "--url", url, "--admin-token", server.adminToken!]);
    assert.equal(missing.code, 2, "UID is required");
  });
});
