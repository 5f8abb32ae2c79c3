/**
 * Synchronous replication and promotion (docs/OPERATIONS.md, "A second box: follower" and
 * "Promoting a follower"), with real processes on their own databases:
 *
 * - sync: a leader under a flow of orders, fills, cancels and transfers is killed with -9 at a
 *   random moment; its follower, promoted, holds every order, cancel, trade and transfer the leader
 *   acknowledged, its ledger invariant holds, and it takes orders at epoch 2;
 * - async: the same, where only what was acknowledged longer ago than the follower's reported lag
 *   (plus the polling interval) must be there;
 * - a sync leader with no follower goes on alone and says so (/health, /metrics, a warn line), and
 *   a follower that stalls is dropped after SYNC_TIMEOUT_MS; a follower the leader went on without
 *   refuses promote unless forced; a leader refuses promote;
 * - the old leader rejoins the new one as a follower when it holds nothing the new one lacks, and
 *   is refused (diverged) when it does.
 */

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, rmSync } from "node:fs";
import { after, describe, it } from "node:test";
import type { CreatedOrder, Order, Transfer } from "../../src/client/index.ts";
import { SYNC_TIMEOUT_MS } from "../../src/replication/leader.ts";
import { SessionSocket } from "../session/helpers.ts";
import { cli } from "../support/cli-run.ts";
import { waitFor } from "../wait.ts";
import { auditExchange, type UserState } from "./audit.ts";
import { dec } from "./decimal.ts";
import { CURRENCIES, expectOk, limit, PAIRS, TestServer, type TestUser } from "./harness.ts";
import { adoptPromoted, FUNDS, freePort, health, metric, promote, Relay } from "./replication.ts";
import { type Acknowledged, BURST_PAIRS, type Flow, newAcknowledged, runBurst } from "./workload.ts";

const FLOW: Flow = {
  pairs: BURST_PAIRS.slice(0, 2),
  marketShare: 0.1,
};
const TOKEN = randomBytes(16).toString("hex");
const REPLICATION = { REPLICATION_TOKEN: TOKEN };
const _JSON_TYPE = { "Content-Type": "application/json" };

/** A transfer the leader acknowledged: its user, kind, currency and amount (unique per user). */
interface AckedTransfer {
  uid: string;
  type: "deposit" | "withdraw";
  amount: string;
}

/** Deposits and withdrawals of usdt, each of an amount no other of its user has, until `stop`. */
async function transferLoop(
  server: TestServer,
  users: readonly TestUser[],
  acked: AckedTransfer[],
  stop: () => boolean,
): Promise<void> {
  for (let step = 1; !stop(); step++) {
    const u = users[step % users.length];
    const type = step % 2 === 0 ? "deposit" : "withdraw";
    const amount = type === "deposit" ? `${1000 + step}` : `${step}.25`;
    try {
      const call = type === "deposit" ? server.admin.deposit : server.admin.withdraw;
      const res = await call.call(server.admin, u.uid, "usdt", amount, { timeoutMs: 5000 });
      if (res.status === 200) acked.push({ uid: u.uid, type, amount });
    } catch {
      return;
    }
  }
}

/** Every transfer of `user` as `box` has them. */
async function transfersOn(user: TestUser): Promise<Transfer[]> {
  const out: Transfer[] = [];
  for (let page = 1; ; page++) {
    const p = expectOk(await user.client.transfers({ page, pageSize: 100 }), "transfers");
    out.push(...p.items);
    if (p.items.length < 100) return out;
  }
}

/**
 * The promoted box's users' books of money from its own transfers (every acknowledged transfer
 * among them), then the audit: ledger per user, conservation, books.
 */
async function auditPromoted(box: TestServer, transfers: readonly AckedTransfer[]): Promise<UserState[]> {
  for (const c of CURRENCIES) box.totals.set(c, 0n);
  for (const u of box.users) {
    const held = await transfersOn(u);
    for (const t of transfers.filter((x) => x.uid === u.uid)) {
      assert.ok(
        held.some((h) => h.type === t.type && h.currency === "usdt" && dec(h.amount) === dec(t.amount)),
        `acknowledged ${t.type} of ${t.amount} usdt for ${u.uid} is missing`,
      );
    }
    u.net.clear();
    for (const h of held) {
      const v = h.type === "deposit" ? dec(h.amount) : -dec(h.amount);
      u.net.set(h.currency, (u.net.get(h.currency) ?? 0n) + v);
      box.totals.set(h.currency, (box.totals.get(h.currency) ?? 0n) + v);
    }
  }
  return (await auditExchange(box)).states;
}

function withoutUpdateTime(o: CreatedOrder): Order {
  const { updateTime: _u, ...rest } = o;
  return rest;
}

/** Every acknowledged order (`since`: acknowledged at or before it) and cancel is on the box as answered. */
function expectAcknowledged(
  states: readonly UserState[],
  acked: Acknowledged,
  answeredAt: ReadonlyMap<number, number>,
  before = Number.POSITIVE_INFINITY,
): number {
  const byId = new Map<number, { order: Order; uid: string }>();
  for (const s of states) for (const o of s.orders) byId.set(o.id, { order: o, uid: s.user.uid });
  let checked = 0;
  for (const [id, { order, user }] of acked.orders) {
    if ((answeredAt.get(id) ?? Number.POSITIVE_INFINITY) > before) continue;
    checked++;
    const found = byId.get(id);
    assert.ok(found !== undefined, `acknowledged order ${id} is missing on the promoted follower`);
    assert.equal(found.uid, user.uid, `order ${id} changed owner`);
    const now = found.order;
    const was = withoutUpdateTime(order);
    assert.deepEqual(
      [now.pairName, now.tradeType, now.directionType, now.amount, now.createTime],
      [was.pairName, was.tradeType, was.directionType, was.amount, was.createTime],
      `order ${id} fields`,
    );
    assert.ok(dec(now.amountUsed) >= dec(was.amountUsed), `order ${id} lost executed amount`);
    const final = was.tradeType === "market" || was.isCancelled || dec(was.amountUsed) === dec(was.amount);
    if (final) assert.deepEqual(now, was, `order ${id} was final when acknowledged`);
  }
  for (const id of acked.cancels) {
    if ((answeredAt.get(-id) ?? Number.POSITIVE_INFINITY) > before) continue;
    assert.equal(byId.get(id)?.order.isCancelled, true, `acknowledged cancel of ${id} is lost`);
  }
  return checked;
}

/**
 * A flow of orders, cancels and transfers on `leader`, killed with -9 after a random number of
 * answers (requests go on until it is dead, so some are in flight at the kill). Returns what was
 * acknowledged and when each order and cancel was answered (a cancel under its id negated).
 */
async function flowThenKill(
  leader: TestServer,
  users: readonly TestUser[],
  seed: number,
  beforeKill: () => Promise<void> = async () => undefined,
): Promise<{
  acked: Acknowledged;
  transfers: AckedTransfer[];
  answeredAt: Map<number, number>;
  killedAt: number;
}> {
  const acked = newAcknowledged();
  const transfers: AckedTransfer[] = [];
  const answeredAt = new Map<number, number>();
  const killAfter = 150 + Math.floor(Math.random() * 150);
  let dead = false;
  let killedAt = 0;
  let killing: Promise<void> | null = null;
  const seen = { orders: 0, cancels: 0 };
  const note = () => {
    // The answers since the last call: stamped now (runBurst records them as they come).
    const now = Date.now();
    if (acked.orders.size > seen.orders)
      for (const id of [...acked.orders.keys()].slice(seen.orders)) answeredAt.set(id, now);
    if (acked.cancels.size > seen.cancels)
      for (const id of [...acked.cancels].slice(seen.cancels)) answeredAt.set(-id, now);
    seen.orders = acked.orders.size;
    seen.cancels = acked.cancels.size;
  };
  const transfersDone = transferLoop(leader, users, transfers, () => dead);
  await runBurst(
    {
      users,
      flow: FLOW,
      seed,
      loopsPerUser: 3,
      stepsPerLoop: 400,
      cancelShare: 0.2,
      timeoutMs: 5000,
      shouldStop: () => dead,
      onAnswer: (answers) => {
        note();
        if (answers >= killAfter && killing === null) {
          killing = beforeKill().then(async () => {
            killedAt = Date.now();
            await leader.kill();
            dead = true;
          });
        }
      },
    },
    acked,
  );
  note();
  assert.ok(killing !== null, `the flow ended before ${killAfter} answers\n${leader.logs()}`);
  await killing;
  await transfersDone;
  assert.ok(acked.orders.size > 0 && transfers.length > 0);
  return { acked, transfers, answeredAt, killedAt };
}

describe("promotion after kill -9 of a sync leader", () => {
  const servers: TestServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });

  it("keeps every acknowledged order, cancel, trade and transfer on the promoted follower, which takes orders at epoch 2", async () => {
    const port = await freePort();
    const leader = await TestServer.start({
      args: ["--replication-port", String(port), "--replication", "sync"],
      env: REPLICATION,
    });
    servers.push(leader);
    const users = await leader.newUsers(4, FUNDS);
    const relay = await Relay.start(port);
    const follower = await TestServer.start({
      args: ["--follow", `127.0.0.1:${relay.port}`],
      env: REPLICATION,
    });
    servers.push(follower);
    await waitFor(async () => (await health(leader)).synchronous === true, {
      what: "the leader to count the follower's acks",
    });
    // A session's cancel-on-disconnect order and a REST order on a pair the flow leaves alone: the
    // promotion cancels the first (its session died with the leader) and keeps the second.
    const session = await SessionSocket.logon(leader, users[0], { cancelOnDisconnect: true });
    const cod = await session.call("order.create", { ...limit("eth_btc", "sell", "10", "0.01") });
    assert.equal(cod.status, 200, JSON.stringify(cod));
    const codId = (cod.result as Order).id;
    const kept = expectOk(
      await users[1].client.createOrder(limit("eth_btc", "sell", "10", "0.01")),
      "a REST order",
    );
    // Before the kill, the leader's batches stop reaching the follower for 400 ms (well under
    // SYNC_TIMEOUT_MS): whatever the leader acknowledged then would be lost with it.
    const { acked, transfers, answeredAt } = await flowThenKill(leader, users, 21, async () => {
      relay.hold();
      await new Promise((r) => setTimeout(r, 400));
    });
    relay.drop();

    const promoted = await promote(follower, {});
    assert.equal(promoted.status, 200, JSON.stringify(promoted.body));
    assert.deepEqual({ ...promoted.body, began: 0 }, { role: "leader", epoch: 2, began: 0, forced: false });
    const h = await health(follower);
    assert.deepEqual([h.status, h.role, h.epoch], ["ok", "leader", 2]);

    adoptPromoted(follower, users);
    const states = await auditPromoted(follower, transfers);
    const checked = expectAcknowledged(states, acked, answeredAt);
    assert.ok(checked > 50, `${checked} acknowledged orders checked`);
    assert.ok(
      states.some((s) => s.trades.length > 0),
      "the flow must have produced trades",
    );
    const codNow = expectOk(await follower.users[0].client.order(codId), "the session's order");
    assert.equal(codNow.isCancelled, true, "the cancel-on-disconnect order is cancelled at promotion");
    const keptNow = expectOk(await follower.users[1].client.order(kept.id), "the REST order");
    assert.equal(keptNow.isCancelled, false);
    // A leader now: it takes orders, and refuses promote.
    const order = expectOk(
      await follower.users[0].client.createOrder(limit(PAIRS[0].name, "buy", "1", "0.01")),
      "an order on the promoted follower",
    );
    assert.ok(order.id > Math.max(...acked.orders.keys()), "ids go on after the old leader's");
    const again = await promote(follower, { force: true });
    assert.equal(again.status, 400);
    assert.deepEqual(again.body.codes, { role: ["NOT_A_FOLLOWER"] });
  });

  it("under async loses nothing acknowledged longer ago than the lag the follower reported", async () => {
    const port = await freePort();
    const leader = await TestServer.start({ args: ["--replication-port", String(port)], env: REPLICATION });
    servers.push(leader);
    const users = await leader.newUsers(4, FUNDS);
    const follower = await TestServer.start({ args: ["--follow", `127.0.0.1:${port}`], env: REPLICATION });
    servers.push(follower);
    // The follower's reported lag, polled every POLL_MS through the flow: the bound of the loss.
    const POLL_MS = 50;
    let maxLag = 0;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const lag = (await health(follower)).lagMs;
        if (typeof lag === "number" && lag > maxLag) maxLag = lag;
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    })();
    const { acked, transfers, answeredAt, killedAt } = await flowThenKill(leader, users, 22);
    polling = false;
    await poll;

    const promoted = await promote(follower, {});
    assert.equal(promoted.status, 200, JSON.stringify(promoted.body));
    assert.equal(promoted.body.epoch, 2);
    adoptPromoted(follower, users);
    // The transfers' acknowledgements are not timed: the ledger invariant checks those it holds.
    const states = await auditPromoted(follower, []);
    const bound = killedAt - maxLag - POLL_MS - 100;
    const checked = expectAcknowledged(states, acked, answeredAt, bound);
    assert.ok(checked > 0, `orders acknowledged before ${bound} (max lag ${maxLag} ms) are checked`);
    assert.ok(transfers.length > 0);
    expectOk(
      await follower.users[1].client.createOrder(limit(PAIRS[0].name, "sell", "999999", "0.01")),
      "an order on the promoted follower",
    );
  });
});

describe("a sync leader alone, a stalled follower, promote refused and forced", () => {
  let leader: TestServer;
  let follower: TestServer;
  let users: TestUser[];
  let port = 0;
  after(async () => {
    if (follower?.pid !== null && follower?.pid !== undefined) process.kill(follower.pid, "SIGCONT");
    await follower?.close();
    await leader?.close();
  });

  it("goes on alone with no follower and says so in /health, /metrics and a warn line", async () => {
    port = await freePort();
    leader = await TestServer.start({
      args: ["--replication-port", String(port), "--replication", "sync"],
      env: REPLICATION,
    });
    users = await leader.newUsers(2, FUNDS);
    const h = await health(leader);
    assert.deepEqual(
      [h.role, h.epoch, h.replication, h.followers, h.synchronous],
      ["leader", 1, "sync", 0, false],
    );
    assert.ok(typeof h.aloneSince === "number" && h.aloneSince <= Date.now());
    assert.equal(await metric(leader, "exchange_replication_synchronous"), 0);
    assert.match(leader.logs(), /"level":"warn".*replication sync: no follower attached yet; going on alone/);
    expectOk(await users[0].client.createOrder(limit(PAIRS[0].name, "buy", "1", "0.01")), "an order alone");
  });

  it("counts a follower once it caught up, and drops it when it stalls for the timeout", async () => {
    follower = await TestServer.start({ args: ["--follow", `127.0.0.1:${port}`], env: REPLICATION });
    await waitFor(async () => (await health(leader)).synchronous === true, {
      what: "the leader to count the follower's acks",
    });
    assert.equal((await health(leader)).aloneSince, null);
    assert.equal(await metric(leader, "exchange_replication_synchronous"), 1);
    assert.match(leader.logs(), /"level":"info".*answers wait for it again/);
    await waitFor(async () => (await health(follower)).synchronous === true, {
      what: "the follower to know",
    });
    const fh = await health(follower);
    assert.deepEqual([fh.replication, fh.behindSince], ["sync", null]);
    expectOk(await users[0].client.createOrder(limit(PAIRS[0].name, "buy", "1", "0.01")), "an order in sync");

    // The follower stops acknowledging: the answer waits for the timeout, then the leader goes alone.
    process.kill(follower.pid!, "SIGSTOP");
    const started = Date.now();
    expectOk(
      await users[1].client.createOrder(limit(PAIRS[0].name, "sell", "999999", "0.01"), {
        timeoutMs: 10_000,
      }),
      "an order while the follower is stalled",
    );
    const took = Date.now() - started;
    assert.ok(took >= SYNC_TIMEOUT_MS - 50 && took < SYNC_TIMEOUT_MS + 3000, `answered after ${took} ms`);
    const h = await health(leader);
    assert.equal(h.synchronous, false);
    assert.ok(typeof h.aloneSince === "number");
    assert.match(leader.logs(), /"level":"warn".*acknowledged nothing for 2000 ms; going on alone/);
    // Alone, the next answers do not wait.
    const t0 = Date.now();
    expectOk(await users[1].client.createOrder(limit(PAIRS[0].name, "sell", "999998", "0.01")), "alone");
    assert.ok(Date.now() - t0 < SYNC_TIMEOUT_MS, "an answer alone does not wait for the follower");
  });

  it("refuses promote of a follower the leader went on without unless forced", async () => {
    await leader.kill();
    process.kill(follower.pid!, "SIGCONT");
    await waitFor(async () => (await health(follower)).connected === false, {
      what: "the follower to see the leader gone",
    });
    const fh = await health(follower);
    assert.equal(fh.synchronous, false);
    assert.ok(typeof fh.behindSince === "number", `behindSince: ${JSON.stringify(fh)}`);

    const refused = await promote(follower, {});
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.deepEqual(refused.body.codes, { force: ["FOLLOWER_BEHIND"] });
    assert.match(refused.body.errors?.force[0] ?? "", /went on without it/);
    const bad = await promote(follower, { force: "yes" });
    assert.deepEqual(bad.body.codes, { force: ["PROMOTE_FORCE_INVALID"] });
    assert.equal((await health(follower)).role, "follower", "a refused promote leaves it a follower");

    const forced = await promote(follower, { force: true });
    assert.equal(forced.status, 200, JSON.stringify(forced.body));
    assert.deepEqual([forced.body.epoch, forced.body.forced], [2, true]);
    const adopted = adoptPromoted(follower, users);
    expectOk(
      await adopted[0].client.createOrder(limit(PAIRS[0].name, "buy", "1", "0.01")),
      "an order after a forced promote",
    );
  });
});

describe("the old leader rejoins the promoted follower", () => {
  const servers: TestServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });

  it("follows when it holds nothing the new leader lacks, and is refused when it does", async () => {
    const port = await freePort();
    const newPort = await freePort();
    const leader = await TestServer.start({ args: ["--replication-port", String(port)], env: REPLICATION });
    servers.push(leader);
    const users = await leader.newUsers(2, FUNDS);
    expectOk(await users[0].client.createOrder(limit(PAIRS[0].name, "sell", "1", "0.5")), "a sell");
    expectOk(
      await users[1].client.createOrder(limit(PAIRS[0].name, "buy", "1", "0.25")),
      "a buy that trades",
    );
    const follower = await TestServer.start({
      args: ["--follow", `127.0.0.1:${port}`, "--replication-port", String(newPort)],
      env: REPLICATION,
    });
    servers.push(follower);
    await waitFor(async () => (await health(follower)).lagMs === 0, { what: "the follower to catch up" });
    // A graceful stop hands the follower every batch first.
    assert.equal(await leader.stop(), 0);
    // A second copy of the old leader's database, to take a change of its own below.
    const other = await TestServer.start({ args: ["--replication-port", "0"], env: REPLICATION });
    servers.push(other);
    await other.stop();
    for (const suffix of ["", ".journal"]) {
      for (const f of [other.dbPath + suffix, `${other.dbPath}${suffix}-wal`, `${other.dbPath}${suffix}-shm`])
        rmSync(f, { force: true });
      if (existsSync(leader.dbPath + suffix)) copyFileSync(leader.dbPath + suffix, other.dbPath + suffix);
    }

    const promoted = await cli(["promote", "--url", follower.origin, "--admin-token", follower.adminToken!]);
    assert.equal(promoted.code, 0, promoted.err);
    assert.deepEqual(
      { ...JSON.parse(promoted.out), began: 0 },
      { role: "leader", epoch: 2, began: 0, forced: false },
    );
    assert.match(follower.logs(), /promoted: leader at epoch 2/);
    const [u0] = adoptPromoted(follower, users);
    const after = expectOk(
      await u0.client.createOrder(limit(PAIRS[0].name, "sell", "1", "0.125")),
      "an order on the new leader",
    );

    // The old leader, with nothing of its own past the promotion: it follows (a copy of epoch 2).
    leader.options.args = ["--follow", `127.0.0.1:${newPort}`];
    await leader.restart();
    const lh = await health(leader);
    assert.deepEqual([lh.role, lh.epoch], ["follower", 2]);
    await waitFor(
      async () => {
        const o = await users[0].client.order(after.id);
        return o.status === 200;
      },
      { what: "the old leader to hold the new leader's order" },
    );

    // Its copy takes a deposit of its own as a leader of epoch 1, then cannot follow.
    await other.restart();
    expectOk(await other.admin.deposit(users[0].uid, "usdt", "1"), "a change the new leader never had");
    await other.stop();
    other.options.args = ["--follow", `127.0.0.1:${newPort}`];
    await assert.rejects(
      other.restart(),
      /config error: --follow 127\.0\.0\.1:\d+: the leader refused this follower: diverged: the follower's database holds journal keys \d+ to \d+ of epoch 1/,
    );
    assert.match(follower.logs(), /refused: diverged/);
  });
});
