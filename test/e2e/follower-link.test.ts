/**
 * A follower's link to its leader when things go wrong (docs/OPERATIONS.md, "A second box:
 * follower"), with real processes on real sockets: a network that goes silent without closing
 * anything (a relay between the two that stops forwarding), a follower restarted while its leader
 * is down, a follower that was away longer than its leader's journal keeps, and a `sync` leader
 * whose follower disconnects.
 */

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, describe, it } from "node:test";
import { SILENT_MS } from "../../src/replication/protocol.ts";
import { waitFor } from "../wait.ts";
import { expectOk, limit, PAIRS, TestServer, type TestUser } from "./harness.ts";
import { adoptPromoted, FUNDS, freePort, health, metric, Network, promote } from "./replication.ts";

const TOKEN = randomBytes(16).toString("hex");
const REPLICATION = { REPLICATION_TOKEN: TOKEN };
const _JSON_TYPE = { "Content-Type": "application/json" };
const PAIR = PAIRS[0].name;

/** `user`'s open orders of PAIR on `server`, as their ids. */
async function openIds(server: TestServer, user: TestUser): Promise<number[]> {
  const orders = expectOk(await server.client(user).openOrders(PAIR), "open orders");
  return orders.map((o) => o.id).sort((a, b) => a - b);
}

/** Waits until `follower` shows `user`'s open orders of PAIR as `leader` does. */
async function caughtUp(leader: TestServer, follower: TestServer, user: TestUser): Promise<void> {
  const expected = await openIds(leader, user);
  await waitFor(async () => JSON.stringify(await openIds(follower, user)) === JSON.stringify(expected), {
    what: `the follower to show the leader's ${expected.length} open orders`,
    timeoutMs: 20_000,
  });
}

/** Places `n` resting buys, each far below the book and in a commit of its own. */
async function restingBuys(user: TestUser, n: number, from = 1): Promise<void> {
  for (let i = 0; i < n; i++)
    expectOk(await user.client.createOrder(limit(PAIR, "buy", String(from + i), "0.001")), "a resting buy");
}

describe("a follower's link to its leader", () => {
  const servers: TestServer[] = [];
  const networks: Network[] = [];
  after(async () => {
    for (const n of networks) n.drop();
    for (const s of servers) await s.close();
  });

  /** A leader (with `leaderArgs`) and a follower that reaches it through a Network; one user. */
  async function overNetwork(leaderArgs: readonly string[]) {
    const port = await freePort();
    const leader = await TestServer.start({
      args: ["--replication-port", String(port), ...leaderArgs],
      env: REPLICATION,
    });
    servers.push(leader);
    const network = await Network.start(port);
    networks.push(network);
    const [user] = await leader.newUsers(1, FUNDS);
    const follower = await TestServer.start({
      args: ["--follow", `127.0.0.1:${network.port}`],
      env: REPLICATION,
    });
    servers.push(follower);
    return { leader, network, user, follower };
  }

  it("takes a silent network for a lost leader: its lag grows, and it reconnects and catches up once the network is back", async () => {
    const { leader, network, user, follower } = await overNetwork([]);
    await restingBuys(user, 3);
    await caughtUp(leader, follower, user);
    assert.deepEqual([(await health(follower)).lagMs, (await health(follower)).connected], [0, true]);

    network.cut();
    const cutAt = Date.now();
    await restingBuys(user, 2, 10);
    // Nothing closed the connection: the silence tells.
    await waitFor(async () => (await health(follower)).connected === false, {
      what: "the follower to take the silent leader for lost",
      timeoutMs: SILENT_MS + 5000,
    });
    const h = await health(follower);
    assert.equal(h.status, "ok", "it goes on serving what it has");
    assert.ok(
      typeof h.lagMs === "number" && h.lagMs >= SILENT_MS - 1100,
      `lagMs ${String(h.lagMs)} counts from the last head heard, ${Date.now() - cutAt} ms after the cut`,
    );
    assert.ok(((await metric(follower, "exchange_replication_lag_ms")) ?? 0) >= SILENT_MS - 1100);
    assert.match(follower.logs(), /nothing heard for 3000 ms/);
    // The leader, which heard no answer to its heads either, lets it go.
    await waitFor(async () => (await health(leader)).followers === 0, {
      what: "the leader to drop the silent follower",
      timeoutMs: SILENT_MS + 5000,
    });
    assert.equal((await openIds(follower, user)).length, 3, "the follower shows what it had");

    network.restore();
    await caughtUp(leader, follower, user);
    await waitFor(async () => (await health(follower)).lagMs === 0, { what: "the lag back to 0" });
    assert.equal((await health(follower)).connected, true);
    assert.equal((await health(leader)).followers, 1);
  });

  it("starts on its own database while its leader is down, serves it, and is promoted only when forced", async () => {
    const port = await freePort();
    const leader = await TestServer.start({ args: ["--replication-port", String(port)], env: REPLICATION });
    servers.push(leader);
    const users = await leader.newUsers(2, FUNDS);
    const follower = await TestServer.start({ args: ["--follow", `127.0.0.1:${port}`], env: REPLICATION });
    servers.push(follower);
    await restingBuys(users[0], 4);
    await caughtUp(leader, follower, users[0]);
    const before = await openIds(leader, users[0]);
    const balances = expectOk(await users[0].client.balances(PAIR), "balances");

    await leader.kill();
    await follower.restart();
    assert.match(
      follower.logs(),
      /the leader cannot be reached: serving this database's state at journal key \d+/,
    );
    const h = await health(follower);
    assert.deepEqual([h.status, h.role, h.connected], ["ok", "follower", false]);
    assert.ok(typeof h.behindSince === "number", `behindSince: ${JSON.stringify(h)}`);
    assert.ok(typeof h.lagMs === "number" && h.lagMs >= 0);
    assert.deepEqual(await openIds(follower, users[0]), before, "it serves its database's orders");
    assert.deepEqual(expectOk(await follower.client(users[0]).balances(PAIR), "balances"), balances);

    const refused = await promote(follower, {});
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.deepEqual(refused.body.codes, { force: ["FOLLOWER_BEHIND"] });
    assert.match(JSON.stringify(refused.body.errors), /has not heard from its leader since it started/);
    const forced = await promote(follower, { force: true });
    assert.equal(forced.status, 200, JSON.stringify(forced.body));
    assert.deepEqual([forced.body.epoch, forced.body.forced], [2, true]);
    const [u0] = adoptPromoted(follower, users);
    expectOk(await u0.client.createOrder(limit(PAIR, "buy", "99", "0.001")), "an order on the promoted box");
    assert.equal((await openIds(follower, users[0])).length, before.length + 1);
  });

  it("takes a new copy while it runs when it was away longer than its leader's journal keeps", async () => {
    const { leader, network, user, follower } = await overNetwork(["--replication-keep", "4"]);
    await restingBuys(user, 2);
    await caughtUp(leader, follower, user);

    network.cut();
    await waitFor(async () => (await health(follower)).connected === false, {
      what: "the follower to lose its leader",
      timeoutMs: SILENT_MS + 5000,
    });
    // Far more commits than the leader keeps for it, and applied past them.
    await restingBuys(user, 40, 10);
    network.restore();
    await waitFor(() => /took the leader's copy/g.test(follower.logs().split("starting again")[1] ?? ""), {
      what: "the running follower to take a new copy",
      timeoutMs: 30_000,
    });
    assert.match(
      follower.logs(),
      /the leader no longer holds what this follower lacks: starting again to take a new copy/,
    );
    await caughtUp(leader, follower, user);
    assert.equal((await openIds(follower, user)).length, 42);
    const h = await health(follower);
    assert.deepEqual([h.status, h.role, h.connected], ["ok", "follower", true]);
    // And it follows on from the copy.
    await restingBuys(user, 1, 100);
    await caughtUp(leader, follower, user);
  });

  it("has a sync leader go on alone when its follower disconnects, and count it again once it is back", async () => {
    const port = await freePort();
    const leader = await TestServer.start({
      args: ["--replication-port", String(port), "--replication", "sync"],
      env: REPLICATION,
    });
    servers.push(leader);
    const [user] = await leader.newUsers(1, FUNDS);
    const follower = await TestServer.start({ args: ["--follow", `127.0.0.1:${port}`], env: REPLICATION });
    servers.push(follower);
    await waitFor(async () => (await health(leader)).synchronous === true, {
      what: "the leader to count the follower",
    });
    await restingBuys(user, 1);

    await follower.kill();
    await waitFor(async () => (await health(leader)).synchronous === false, {
      what: "the leader to go on alone",
    });
    const h = await health(leader);
    assert.deepEqual([h.followers, typeof h.aloneSince], [0, "number"]);
    assert.equal(await metric(leader, "exchange_replication_synchronous"), 0);
    // The disconnect, not the 2 s stall, is what it says.
    assert.match(
      leader.logs(),
      /"level":"warn".*replication sync: follower 127\.0\.0\.1:\d+ disconnected; going on alone/,
    );
    assert.doesNotMatch(leader.logs(), /acknowledged nothing for/);
    await restingBuys(user, 1, 10);

    await follower.restart();
    await waitFor(async () => (await health(leader)).synchronous === true, {
      what: "the leader to count the follower again",
    });
    assert.equal((await health(leader)).aloneSince, null);
    assert.equal((leader.logs().match(/answers wait for it again/g) ?? []).length, 2);
    await restingBuys(user, 1, 20);
    await caughtUp(leader, follower, user);
  });
});
