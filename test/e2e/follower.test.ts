/**
 * A second box (docs/OPERATIONS.md, "A second box: follower"): a leader with a replication port and
 * followers started with `--follow`, each a real process on its own database, over real sockets. A
 * follower started after the leader has traded takes the leader's copy, then follows every order,
 * cancel, trade, deposit and withdrawal; its reads equal the leader's (books, trades, candles, pair
 * pages, balances, orders, user histories, execution numbers). Writes on a follower (REST, admin,
 * a trading session's and a FIX order call) answer 503 FOLLOWER_READ_ONLY and change nothing; a
 * wrong token is refused; a follower keeps serving while its leader restarts and follows on after;
 * killed with -9 it goes on from its own database; it refuses a leader behind its own database.
 */

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { StreamClient, StreamRejected } from "../../src/client/stream.ts";
import { fixLogon, newOrder, nextReport } from "../fix/helpers.ts";
import { errorOf, SessionSocket } from "../session/helpers.ts";
import { selfSignedCertificate } from "../support/certificate.ts";
import { waitFor } from "../wait.ts";
import { type ExchangeSnapshot, snapshotExchange } from "./audit.ts";
import { expectError, expectOk, limit, PAIRS, TestServer, type TestUser } from "./harness.ts";
import { FUNDS, freePort, health } from "./replication.ts";
import { BURST_PAIRS, type Flow, newAcknowledged, runBurst } from "./workload.ts";

const FLOW: Flow = {
  pairs: BURST_PAIRS,
  marketShare: 0.1,
};
const TOKEN = randomBytes(16).toString("hex");
const JSON_TYPE = { "Content-Type": "application/json" };

/** The leader's users as clients of `follower` (same keys, the follower's address). */
function adopt(follower: TestServer, users: readonly TestUser[]): TestUser[] {
  const adopted = users.map((u) => ({ ...u, client: follower.client(u) }));
  follower.users.push(...adopted);
  return adopted;
}

/**
 * What both answer alike: the snapshot (books, trades, candles, pair pages, every user's balances,
 * orders and trades), each pair's BBO and L3 book, `/info` without its clock, and each user's
 * executions, MMP settings, account, transfers and open orders of each pair.
 */
async function reads(
  server: TestServer,
): Promise<ExchangeSnapshot & Record<"info" | "executions" | "bbo" | "l3" | "mmp" | "mine", unknown>> {
  const snapshot = await snapshotExchange(server);
  const { serverTime: _t, ...info } = expectOk(await server.public.info(), "info");
  const executions: unknown[] = [];
  for (const u of server.users)
    executions.push(expectOk(await u.client.executions({ limit: 1000 }), "executions"));
  const bbo: unknown[] = [];
  const l3: unknown[] = [];
  for (const p of PAIRS) {
    bbo.push(expectOk(await server.public.bbo(p.name), "bbo"));
    l3.push(expectOk(await server.public.orderBookL3(p.name), "L3 book"));
  }
  const mine: unknown[] = [];
  for (const u of server.users) {
    mine.push(expectOk(await u.client.account(), "account"));
    mine.push(expectOk(await u.client.transfers({ pageSize: 100 }), "transfers"));
    for (const p of PAIRS) mine.push(expectOk(await u.client.openOrders(p.name), "open orders"));
  }
  const mmp = await Promise.all(
    server.users.map(async (u) => expectOk(await u.client.getMmp(PAIRS[0].name), "mmp")),
  );
  return { ...snapshot, info, executions, bbo, l3, mmp, mine };
}

/** Waits until the follower's reads equal the leader's, then asserts them equal (the diff on failure). */
async function expectSameReads(leader: TestServer, follower: TestServer): Promise<void> {
  let last: [unknown, unknown] = [null, null];
  let lastError: unknown = null;
  try {
    await waitFor(
      async () => {
        try {
          const l = await reads(leader);
          const f = await reads(follower);
          last = [l, f];
          assert.deepEqual(f, l);
          return true;
        } catch (err) {
          lastError = err;
          throw err;
        }
      },
      { what: "the follower's reads to equal the leader's", timeoutMs: 20_000, intervalMs: 200 },
    );
  } catch {
    const lines = (s: TestServer) =>
      `${s
        .output()
        .stdout.split("\n")
        .filter((l) => !l.includes("admin"))
        .join("\n")}\n${s.output().stderr}`;
    const why = `${lastError instanceof Error ? lastError.message.slice(0, 1500) : String(lastError)}\nhealth: ${JSON.stringify(await health(follower))}`;
    assert.deepEqual(
      last[1],
      last[0],
      `last error: ${why}\nfollower:\n${lines(follower)}\nleader:\n${lines(leader)}`,
    );
    assert.fail(`last error: ${why}`);
  }
}

describe("a second box: follower", () => {
  let leader: TestServer;
  let follower: TestServer | null = null;
  let users: TestUser[] = [];
  let replicationPort = 0;

  before(async () => {
    replicationPort = await freePort();
    leader = await TestServer.start({
      args: ["--replication-port", String(replicationPort)],
      env: { REPLICATION_TOKEN: TOKEN },
    });
    assert.equal(leader.replicationPort, replicationPort, "the readiness line names the replication port");
    users = await leader.newUsers(4, FUNDS);
  });
  after(async () => {
    await follower?.close();
    await leader?.close();
  });

  it("takes the leader's copy when started later, then follows orders, cancels, trades and transfers with equal reads", async () => {
    const acked = newAcknowledged();
    await runBurst(
      { users, flow: FLOW, seed: 7, loopsPerUser: 1, stepsPerLoop: 25, cancelShare: 0.2 },
      acked,
    );
    assert.ok(acked.orders.size > 0);

    follower = await TestServer.start({
      args: ["--follow", `127.0.0.1:${replicationPort}`, "--fix-port", "0"],
      env: { REPLICATION_TOKEN: TOKEN },
    });
    assert.match(follower.output().stdout, /took the leader's copy at journal key \d+/);
    adopt(follower, users);
    await expectSameReads(leader, follower);

    // Live: more orders, cancels and trades, a deposit and a withdrawal, after the copy.
    await runBurst(
      { users, flow: FLOW, seed: 8, loopsPerUser: 2, stepsPerLoop: 20, cancelShare: 0.2 },
      acked,
    );
    await leader.deposit(users[0], "usdt", "123.45");
    expectOk(
      await users[2].client.setMmp({
        pairName: PAIRS[0].name,
        intervalSeconds: 10,
        qtyLimit: "1000",
        frozenSeconds: 5,
      }),
      "MMP settings",
    );
    expectOk(await leader.withdraw(users[1], "btc", "0.5"), "withdraw");
    // A stop order waiting for its trigger: open on both, in neither's book (docs/API.md 18).
    const stop = expectOk(
      await users[0].client.createOrder({
        ...limit(PAIRS[0].name, "buy", "1", "0.001"),
        stopPrice: "9999999",
        stopDirection: "up",
      }),
      "a waiting stop",
    );
    assert.equal(stop.triggered, false);
    await expectSameReads(leader, follower);
    const snapshot = await snapshotExchange(follower);
    assert.ok(
      Object.values(snapshot.history).some((h) => h.length > 0),
      "the flow must have produced trades",
    );

    const lh = await health(leader);
    assert.deepEqual(
      { status: lh.status, role: lh.role, epoch: lh.epoch, followers: lh.followers },
      { status: "ok", role: "leader", epoch: 1, followers: 1 },
    );
    const fh = await health(follower);
    assert.equal(fh.status, "ok");
    assert.equal(fh.role, "follower");
    assert.equal(fh.epoch, 1);
    assert.equal(fh.leader, `127.0.0.1:${replicationPort}`);
    assert.equal(fh.lagMs, 0);
    assert.ok(typeof fh.lastCommit === "number" && fh.lastCommit > 0);
    const metrics = await (await fetch(`${follower.origin}/metrics`)).text();
    assert.match(metrics, /^exchange_replication_lag_ms 0$/m);
    assert.match(metrics, new RegExp(`^exchange_replication_last_commit ${fh.lastCommit}$`, "m"));
    assert.match(
      await (await fetch(`${leader.origin}/metrics`)).text(),
      /^exchange_replication_followers 1$/m,
    );
    // After the copy every batch moved the read models in place (DECISIONS.md "Live streams on a follower").
    assert.doesNotMatch(follower.output().stdout, /does not fit the read models/);
  });

  it("answers every write with 503 FOLLOWER_READ_ONLY after 401 and 429 and changes nothing", async () => {
    assert.ok(follower !== null);
    const f = follower;
    const [user] = f.users;
    const before = await reads(f);

    const created = await user.client.createOrder(limit(PAIRS[0].name, "buy", "1", "1"));
    expectError(created, 503, "server");
    assert.deepEqual((created.body as { codes: Record<string, string[]> }).codes, {
      server: ["FOLLOWER_READ_ONLY"],
    });
    expectError(await user.client.cancelOrder(1), 503, "server");
    expectError(await user.client.cancelAllAfter(1000), 503, "server");
    // A signed read carrying a nonce would record it: refused; without one it reads.
    expectError(await user.client.executions({}, { nonce: Date.now() }), 503, "server");
    // 401 first: a bad signature is a bad signature on a follower too.
    const stranger = f.client({ apiToken: randomBytes(32).toString("hex"), secretKey: "00" });
    expectError(await stranger.createOrder(limit(PAIRS[0].name, "buy", "1", "1")), 401, "auth");
    // Admin writes too (a backup changes nothing and is allowed).
    expectError(await f.admin.deposit(user.uid, "usdt", "1"), 503, "server");
    expectError(await f.admin.createUser(), 503, "server");
    const res = await fetch(`${f.origin}/admin/pairs/status`, {
      method: "POST",
      headers: { ...JSON_TYPE, Authorization: `Bearer ${f.adminToken}` },
      body: JSON.stringify({ pairName: PAIRS[0].name, status: "halted" }),
    });
    assert.equal(res.status, 503);
    await res.text();
    // A trading session logs on (it changes nothing) and its order calls are refused the same way.
    const session = await SessionSocket.logon(f, user);
    try {
      const a = await session.call("order.create", limit(PAIRS[0].name, "buy", "1", "1") as never);
      assert.equal(a.status, 503, JSON.stringify(a));
      assert.deepEqual(errorOf(a).codes, { server: ["FOLLOWER_READ_ONLY"] });
    } finally {
      session.ws.close();
    }

    // A signed stream upgrade carrying a nonce would record it: refused.
    const query = `streams=user_orders:${user.uid}&nonce=${Date.now()}`;
    const refused = await StreamClient.connect({
      baseUrl: () => f.origin,
      streams: [],
      rawQuery: query,
      headers: user.client.signFor("GET", "/stream", query),
    }).then(
      async (stream) => {
        await stream.close();
        return null;
      },
      (error: unknown) => error,
    );
    assert.ok(refused instanceof StreamRejected, `the upgrade was accepted: ${refused}`);
    assert.equal(refused.status, 503);
    assert.deepEqual(JSON.parse(refused.text).codes, { server: ["FOLLOWER_READ_ONLY"] });
    // A FIX NewOrderSingle: rejected with the same code.
    const fix = await fixLogon(f, user);
    try {
      fix.send("D", newOrder("ro-1", "buy", "1", "1"));
      assert.match((await nextReport(fix, "8", "ro-1")).get(58)!, /^FOLLOWER_READ_ONLY: /);
    } finally {
      await fix.logout();
    }

    assert.deepEqual(await reads(f), before);
  });

  it("refuses a follower with a wrong token", async () => {
    await assert.rejects(
      TestServer.start({
        args: ["--follow", `127.0.0.1:${replicationPort}`],
        env: { REPLICATION_TOKEN: randomBytes(16).toString("hex") },
      }),
      /wrong REPLICATION_TOKEN/,
    );
  });

  it("keeps serving while the leader restarts, reconnects and follows on", async () => {
    assert.ok(follower !== null);
    const f = follower;
    await leader.stop();
    await waitFor(async () => (await health(f)).connected === false, {
      what: "the follower to see the leader gone",
    });
    // Reads go on from what it has.
    expectOk(await f.public.orderBook(PAIRS[0].name), "book while the leader is down");
    expectOk(await f.users[0].client.balances(PAIRS[0].name), "balances while the leader is down");

    await leader.restart();
    await waitFor(async () => (await health(f)).connected === true, { what: "the follower to reconnect" });
    const acked = newAcknowledged();
    await runBurst(
      { users, flow: FLOW, seed: 9, loopsPerUser: 1, stepsPerLoop: 20, cancelShare: 0.2 },
      acked,
    );
    await leader.deposit(users[2], "eth", "7");
    await expectSameReads(leader, f);
  });

  it("goes on from its own database after a kill -9 of its own in the middle of a flow, without a copy", async () => {
    assert.ok(follower !== null);
    const f = follower;
    const acked = newAcknowledged();
    let answers = 0;
    const flow = runBurst(
      {
        users,
        flow: FLOW,
        seed: 10,
        loopsPerUser: 1,
        stepsPerLoop: 40,
        cancelShare: 0.2,
        onAnswer: (n) => {
          answers = n;
        },
      },
      acked,
    );
    await waitFor(() => answers >= 30, { what: "30 answers of the leader's flow" });
    await f.kill();
    await flow;
    await f.restart();
    const copies = f.output().stdout.match(/took the leader's copy/g) ?? [];
    assert.equal(copies.length, 1, "only the first start took a copy");
    await expectSameReads(leader, f);
  });

  it("refuses to follow a leader that is behind its own database (another history)", async () => {
    assert.ok(follower !== null);
    const f = follower;
    await leader.stop();
    const other = await TestServer.start({
      args: ["--replication-port", String(replicationPort)],
      env: { REPLICATION_TOKEN: TOKEN },
    });
    try {
      await f.stop();
      await assert.rejects(f.restart(), /ahead: the follower is at journal key \d+, this leader at \d+/);
    } finally {
      await other.close();
    }
  });
});

describe("a second box over TLS", () => {
  const dir = mkdtempSync(join(tmpdir(), "exchange-follower-tls-"));
  const certFile = join(dir, "cert.pem");
  const keyFile = join(dir, "key.pem");
  let leader: TestServer | null = null;
  let follower: TestServer | null = null;

  before(() => selfSignedCertificate(certFile, keyFile));
  after(async () => {
    await follower?.close();
    await leader?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("follows a leader with a certificate over TLS on its replication port", async () => {
    leader = await TestServer.start({
      args: ["--tls-cert", certFile, "--tls-key", keyFile, "--replication-port", "0"],
      env: { REPLICATION_TOKEN: TOKEN },
      tlsCa: readFileSync(certFile, "utf8"),
      configUsers: [{ usdt: "1234.5", btc: "0.25" }],
    });
    assert.match(leader.output().stdout, /replication on 127\.0\.0\.1:\d+ \(TLS\)/);
    follower = await TestServer.start({
      args: ["--follow", `tls://127.0.0.1:${leader.replicationPort}`],
      // The follower trusts the leader's self-signed certificate as node trusts a private CA.
      env: { REPLICATION_TOKEN: TOKEN, NODE_EXTRA_CA_CERTS: certFile },
    });
    const [user] = adopt(follower, leader.users);
    const balances = expectOk(await user.client.balances(PAIRS[0].name), "balances on the follower");
    assert.deepEqual(
      balances.map((b) => [b.currency, b.balance, b.reserved]),
      [
        ["btc", "0.25", "0"],
        ["usdt", "1234.5", "0"],
      ],
    );
  });
});
