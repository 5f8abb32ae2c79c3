/**
 * A follower's live streams (docs/OPERATIONS.md, "A second box: follower"): a client subscribed to
 * the same channels on the leader and on a follower, real processes over real sockets, receives
 * the same messages while orders flow on the leader: the book's levels with the same `seq` and
 * `checksum`, BBO, L3 events, trades, pair statuses, and each user's order changes and trades with
 * the same `execSeq`, on the user channels and as a trading session's reports. Only the levels' `eventTimeMicro`, which each server stamps when it sends, differs.
 */

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { ExchangeClient } from "../../src/client/index.ts";
import { StreamClient, type StreamMessage } from "../../src/client/stream.ts";
import { SessionSocket } from "../session/helpers.ts";
import { waitFor } from "../wait.ts";
import { expectOk, limit, PAIRS, placeLimit, TestServer, type TestUser } from "./harness.ts";
import { FUNDS, freePort, health } from "./replication.ts";
import { tradeAt } from "./stop-helpers.ts";
import { BURST_PAIRS, type Flow, newAcknowledged, runBurst } from "./workload.ts";

const PAIR = PAIRS[0].name;
const FLOW: Flow = {
  pairs: BURST_PAIRS,
  marketShare: 0.1,
};
const TOKEN = randomBytes(16).toString("hex");

/** Every message of one connection, in arrival order. */
interface Feed {
  stream: StreamClient;
  messages: StreamMessage[];
}

async function subscribe(server: TestServer, streams: readonly string[], user?: TestUser): Promise<Feed> {
  const messages: StreamMessage[] = [];
  const stream = await StreamClient.connect({
    baseUrl: server.origin,
    streams,
    apiToken: user?.apiToken,
    secretKey: user?.secretKey,
    onMessage: (m) => messages.push(m),
  });
  return { stream, messages };
}

/** A message as both servers must send it: the levels' send time left out. */
function comparable(m: StreamMessage): unknown {
  const data = m.data as { buy?: { eventTimeMicro?: string }[]; sell?: { eventTimeMicro?: string }[] };
  if (!m.stream.startsWith("orders:")) return m;
  const strip = (levels: { eventTimeMicro?: string }[] | undefined) =>
    levels?.map(({ eventTimeMicro: _t, ...rest }) => rest);
  return { ...m, data: { ...data, buy: strip(data.buy), sell: strip(data.sell) } };
}

/** A connection's messages per channel, each as `comparable` gives it. */
function byChannel(messages: readonly StreamMessage[]): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  for (const m of messages) {
    const list = out.get(m.stream);
    if (list === undefined) out.set(m.stream, [comparable(m)]);
    else list.push(comparable(m));
  }
  return out;
}

describe("a follower's live streams", () => {
  let leader: TestServer;
  let follower: TestServer;
  let users: TestUser[] = [];

  before(async () => {
    const replicationPort = await freePort();
    leader = await TestServer.start({
      args: ["--replication-port", String(replicationPort)],
      env: { REPLICATION_TOKEN: TOKEN },
    });
    users = await leader.newUsers(3, FUNDS);
    follower = await TestServer.start({
      args: ["--follow", `127.0.0.1:${replicationPort}`],
      env: { REPLICATION_TOKEN: TOKEN },
    });
  });
  after(async () => {
    await follower?.close();
    await leader?.close();
  });

  it("sends the same book, BBO, L3, trade and user messages as the leader while orders flow", async () => {
    const publicChannels = [
      ...FLOW.pairs.flatMap(({ pair }) => [
        `orders:${pair}`,
        `bbo:${pair}`,
        `orders_l3:${pair}`,
        `history:${pair}`,
      ]),
      "status",
    ];
    const userChannels = (u: TestUser) => [`user_orders:${u.uid}`, `user_history:${u.uid}`];
    const feeds: [Feed, Feed][] = [];
    feeds.push([await subscribe(leader, publicChannels), await subscribe(follower, publicChannels)]);
    for (const u of users.slice(0, 2))
      feeds.push([
        await subscribe(leader, userChannels(u), u),
        await subscribe(follower, userChannels(u), u),
      ]);
    // A trading session of the first user on each: its order and trade reports.
    const sessions = [
      await SessionSocket.logon(leader, users[0]),
      await SessionSocket.logon(follower, users[0]),
    ];

    // Fills, partial fills and market orders, with cancels.
    await runBurst(
      { users, flow: FLOW, seed: 21, loopsPerUser: 2, stepsPerLoop: 40, cancelShare: 0.25 },
      newAcknowledged(),
    );
    // Cancels of every order left, which empties the book for what follows.
    await leader.cancelOpenOrders(users);
    const [a, b, c] = users;
    // Amends: a reduce in place (an L3 change) and a move (done, then open at the back).
    const kept = await placeLimit(a, PAIR, "buy", "29000", "0.5");
    expectOk(await a.client.amendOrder({ orderId: kept.id, amount: "0.3" }), "amend in place");
    const moved = await placeLimit(b, PAIR, "sell", "31500", "0.4");
    expectOk(await b.client.amendOrder({ orderId: moved.id, price: "31400" }), "amend that moves");
    // A stop that triggers on a trade at its stop price and rests as a limit order.
    const stop = expectOk(
      await c.client.createOrder({
        ...limit(PAIR, "buy", "31000", "0.01"),
        stopPrice: "31000",
        stopDirection: "up",
      }),
      "a stop",
    );
    assert.equal(stop.triggered, false);
    await tradeAt(a, b, PAIR, "31000", "0.002");
    expectOk(await a.client.cancelOrder(kept.id), "cancel");
    // OCOs (docs/API.md 18.1): a buy whose stop-limit leg holds more than its limit leg (one hold,
    // the larger), the limit leg then partly filled (the stop leg cancelled, reason OCO); a sell
    // left open, its two legs sharing one hold of base.
    const ocoBuy = expectOk(
      await c.client.createOco({
        pairName: PAIR,
        directionType: "buy",
        amount: "0.01",
        price: "30000",
        stopPrice: "32000",
        stopLimitPrice: "32500",
      }),
      "an OCO buy",
    );
    expectOk(await b.client.createOrder(limit(PAIR, "sell", "30000", "0.014")), "a fill of its limit leg");
    assert.equal(expectOk(await c.client.order(ocoBuy.orders[1].id)).cancelReason, "OCO");
    expectOk(
      await a.client.createOco({
        pairName: PAIR,
        directionType: "sell",
        amount: "0.02",
        price: "33000",
        stopPrice: "29500",
      }),
      "an OCO sell left open",
    );
    // A pair halted and trading again (docs/API.md 11): the `status` channel.
    for (const status of ["halted", "trading"]) {
      const res = await fetch(`${leader.origin}/admin/pairs/status`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${leader.adminToken}` },
        body: JSON.stringify({ pairName: PAIR, status }),
      });
      assert.equal(res.status, 200, await res.text());
    }

    // The follower has applied the leader's last commit.
    const leaderHealth = await health(leader);
    assert.equal(leaderHealth.status, "ok");
    for (const [l, f] of feeds)
      await waitFor(() => f.messages.length >= l.messages.length, {
        what: `the follower's ${f.messages[0]?.stream ?? "stream"} messages to catch up`,
        timeoutMs: 20_000,
      });
    await waitFor(() => sessions[1].reports().length >= sessions[0].reports().length, {
      what: "the follower's session reports to catch up",
      timeoutMs: 20_000,
    });
    // Nothing more arrives on either.
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(sessions[0].reports().length > 0, "the leader's session reported");
    assert.deepEqual(sessions[1].reports(), sessions[0].reports());
    for (const s of sessions) s.ws.close();
    for (const [l, f] of feeds) {
      assert.ok(l.messages.length > 1, `messages on ${l.messages[0]?.stream}`);
      // Channel by channel: the order across the channels of one connection is not part of the stream.
      assert.deepEqual(byChannel(f.messages), byChannel(l.messages));
    }
    const channels = new Set(feeds.flatMap(([l]) => l.messages.map((m) => m.stream.split(":")[0])));
    for (const kind of ["orders", "bbo", "orders_l3", "history", "status", "user_orders", "user_history"])
      assert.ok(channels.has(kind), `the flow sent ${kind} messages`);
    const triggered = feeds
      .flatMap(([l]) => l.messages)
      .some((m) => m.stream.startsWith("orders_l3:") && JSON.stringify(m.data).includes(`"id":${stop.id}`));
    assert.ok(triggered, "the triggered stop rested in the L3 book");
    for (const [l, f] of feeds) {
      await l.stream.close();
      await f.stream.close();
    }
    assert.doesNotMatch(follower.output().stdout, /does not fit/, "every batch applied in place");
    // The holds moved in place equal the leader's, the OCOs' shared ones included.
    for (const u of [a, b, c]) {
      const there = new ExchangeClient({
        baseUrl: follower.origin,
        apiToken: u.apiToken,
        secretKey: u.secretKey,
      });
      assert.deepEqual(
        expectOk(await there.balances(PAIR)),
        expectOk(await u.client.balances(PAIR)),
        `balances of ${u.uid} on the follower`,
      );
      assert.deepEqual(expectOk(await there.openOrders(PAIR)), expectOk(await u.client.openOrders(PAIR)));
    }
  });
});
