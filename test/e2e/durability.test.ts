/**
 * Durability end to end (docs/API.md 6): a graceful SIGTERM restart changes nothing readable, and a
 * `kill -9` in the middle of a burst of concurrent, crossing orders loses nothing that was
 * acknowledged. After every restart the whole exchange is audited from the outside (audit.ts):
 * balances and reservations rebuilt from trades and open orders, books rebuilt from open orders,
 * conservation of every currency. A signed read's nonce is durable before the read is answered
 * (docs/API.md 3): replayed after a `kill -9` it is refused.
 */

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { CreatedOrder, Order } from "../../src/client/index.ts";
import { StreamClient, StreamRejected } from "../../src/client/stream.ts";
import { openRaw, requestHead } from "../support/raw-http.ts";
import { waitFor } from "../wait.ts";
import { auditExchange, snapshotExchange, type UserState } from "./audit.ts";
import { dec } from "./decimal.ts";
import { expectError, expectOk, limit, TestServer, type TestUser } from "./harness.ts";
import { BURST_PAIRS, type Flow, newAcknowledged, runBurst } from "./workload.ts";

/** Crossing flow on all three pairs; btc_usdt and eth_usdt share usdt, eth_btc links them. */
const FLOW: Flow = {
  pairs: BURST_PAIRS,
  marketShare: 0.1,
  // Waiting stop orders (docs/API.md 18) hold funds and are in no book: the audit covers them, and
  // some are set off by the burst itself.
  stopShare: 0.15,
};
const USERS = 6;
const FUNDS = { usdt: "1000000", btc: "100", eth: "1000" };
/** Answers to wait for before `kill -9`. */
const KILL_AFTER = 150;

function withoutUpdateTime(o: CreatedOrder): Order {
  const { updateTime: _u, ...rest } = o;
  return rest;
}

function ordersById(states: readonly UserState[]): Map<number, { order: Order; uid: string }> {
  const byId = new Map<number, { order: Order; uid: string }>();
  for (const s of states) {
    for (const order of s.orders) {
      assert.ok(!byId.has(order.id), `order id ${order.id} appears twice`);
      byId.set(order.id, { order, uid: s.user.uid });
    }
  }
  return byId;
}

describe("durability", () => {
  let server: TestServer;
  let users: TestUser[] = [];

  before(async () => {
    server = await TestServer.start();
    users = await server.newUsers(USERS, FUNDS);
  });
  after(async () => {
    await server?.close();
  });

  it("keeps books, balances, reservations, pages and pair values identical across a graceful restart", async () => {
    const acked = newAcknowledged();
    await runBurst(
      { users, flow: FLOW, seed: 1, loopsPerUser: 1, stepsPerLoop: 20, cancelShare: 0.15 },
      acked,
    );
    assert.equal(acked.unanswered, 0);
    assert.ok(acked.orders.size > 0, "some orders were accepted");
    await auditExchange(server);
    const before = await snapshotExchange(server);
    assert.ok(
      Object.values(before.history).some((h) => h.length > 0),
      "the flow must have produced trades",
    );

    await server.restart(); // SIGTERM, exit code 0 checked, start on the same database
    const afterRestart = await snapshotExchange(server);
    assert.deepEqual(afterRestart, before);
    await auditExchange(server);
  });

  it("keeps every acknowledged order, cancel and trade after kill -9 in the middle of a burst", async () => {
    const acked = newAcknowledged();
    let killing: Promise<void> | null = null;
    // Requests keep going until the process is dead, so some are always in flight at the kill
    // (stopping when the kill merely starts let a quick server answer everything first).
    let dead = false;
    await runBurst(
      {
        users,
        flow: FLOW,
        seed: 2,
        loopsPerUser: 3,
        stepsPerLoop: 400,
        cancelShare: 0.15,
        timeoutMs: 5000,
        shouldStop: () => dead,
        onAnswer: (answers) => {
          if (answers >= KILL_AFTER && killing === null) {
            killing = server.kill().then(() => {
              dead = true;
            });
          }
        },
      },
      acked,
    );
    assert.ok(
      killing !== null,
      `the burst ended before ${KILL_AFTER} answers (${acked.orders.size} orders acknowledged, ` +
        `${acked.unanswered} requests unanswered)\n${server.logs()}`,
    );
    await killing;
    assert.ok(acked.unanswered > 0, "the kill must cut requests in flight, or it did not happen mid-burst");
    for (const key of acked.refusals.keys()) {
      assert.match(
        key,
        /^(create 400 amount|create 400 stopPrice|cancel 400 orderId)$/,
        `unexpected answer during the burst: ${key}`,
      );
    }

    await server.restart();
    const { states } = await auditExchange(server);
    const byId = ordersById(states);
    const stops = new Map<number, string>();
    for (const [id, { order, user }] of acked.orders) {
      const found = byId.get(id);
      assert.ok(found !== undefined, `acknowledged order ${id} is missing after kill -9`);
      assert.equal(found.uid, user.uid, `order ${id} changed owner`);
      const now = found.order;
      const was = withoutUpdateTime(order);
      assert.deepEqual(
        [now.pairName, now.tradeType, now.directionType, now.amount, now.createTime],
        [was.pairName, was.tradeType, was.directionType, was.amount, was.createTime],
        `order ${id} fields`,
      );
      assert.ok(dec(now.amountUsed) >= dec(was.amountUsed), `order ${id} lost executed amount`);
      const waiting = was.triggered === false && !was.isCancelled;
      const final =
        !waiting &&
        (was.tradeType === "market" || was.isCancelled || dec(was.amountUsed) === dec(was.amount));
      if (final) assert.deepEqual(now, was, `order ${id} was final when acknowledged`);
      // A market order's price is its average execution price (docs/API.md 18: a waiting stop-market has none yet).
      else if (was.tradeType === "limit") assert.equal(now.price, was.price, `order ${id} price`);
      // A stop still waiting waits again with the stop price it had; one set off has its time.
      if (waiting && now.triggered === false && !now.isCancelled)
        assert.deepEqual(
          [now.stopPrice, now.stopDirection],
          [was.stopPrice, was.stopDirection],
          `order ${id} stop`,
        );
      if (now.triggered === true)
        assert.ok(now.triggerTime !== undefined, `order ${id} set off without its time`);
      if (waiting)
        stops.set(id, now.triggered === false ? (now.isCancelled ? "cancelled" : "waiting") : "set off");
    }
    // The burst must have left stops of every kind, or the audit proved nothing about them.
    const kinds = new Set(stops.values());
    assert.ok(
      kinds.has("waiting") && kinds.has("set off"),
      `stops after the kill: ${JSON.stringify([...kinds])}`,
    );
    for (const id of acked.cancels) {
      assert.equal(byId.get(id)?.order.isCancelled, true, `acknowledged cancel of ${id} is lost`);
    }
    // Trades seen in answers (amountUsed > 0) are covered by auditUser: Σ amountUsed per pair and
    // side equals Σ trade amounts in user-history, and amountUsed never went down.
    assert.ok(
      states.some((s) => s.trades.length > 0),
      "the burst must have produced trades",
    );
    // Candles are rebuilt from the trades committed after their last snapshot (migration 005):
    // each pair's candles hold exactly its committed trades, however recent.
    const traded = new Map<string, Map<number, bigint>>();
    for (const st of states)
      for (const t of st.trades) {
        if (!traded.has(t.pairName)) traded.set(t.pairName, new Map());
        traded.get(t.pairName)!.set(t.id, dec(t.amount));
      }
    for (const [pair, trades] of traded) {
      const candles = expectOk(await server.public.chart(pair, "1w"), "chart");
      const volume = candles.reduce((sum, c) => sum + dec(c[5]), 0n);
      const amounts = [...trades.values()].reduce((sum, a) => sum + a, 0n);
      assert.equal(volume, amounts, `${pair}: candle volume after kill -9 against the committed trades`);
    }
  });

  it("keeps the recovered state across a further graceful restart and goes on with fresh ids", async () => {
    const before = await snapshotExchange(server);
    await server.restart(); // SIGTERM, exit code 0 checked, start on the same database
    assert.deepEqual(await snapshotExchange(server), before);

    const maxOrderId = Math.max(0, ...before.users.flatMap((u) => u.orders.map((o) => o.id)));
    const maxTradeId = Math.max(0, ...before.users.flatMap((u) => u.trades.map((t) => t.id)));
    // Cancels work on recovered orders; with empty books only the two new users can meet.
    await server.cancelOpenOrders();
    for (const pair of ["btc_usdt", "eth_usdt", "eth_btc"]) {
      const { buy, sell } = expectOk(await server.public.orderBook(pair));
      assert.deepEqual({ buy, sell }, { buy: [], sell: [] }, `book ${pair}`);
    }
    const seller = await server.newUser({ btc: "1" });
    const buyer = await server.newUser({ usdt: "1000" });
    const maker = expectOk(await seller.client.createOrder(limit("btc_usdt", "sell", "10", "0.5")));
    const taker = expectOk(await buyer.client.createOrder(limit("btc_usdt", "buy", "10", "0.5")));
    assert.ok(maker.id > maxOrderId, `order id ${maker.id} reused (max before ${maxOrderId})`);
    assert.ok(taker.id > maker.id);
    assert.equal(taker.amountUsed, 0.5);
    const trade = expectOk(await buyer.client.userHistory()).items[0];
    assert.ok(trade.id > maxTradeId, `trade id ${trade.id} reused (max before ${maxTradeId})`);
    await auditExchange(server);
  });

  it("answers a cancel of a closed order the same from memory and, after a restart, from its row", async () => {
    const seller = await server.newUser({ btc: "1" });
    const buyer = await server.newUser({ usdt: "1000" });
    const maker = expectOk(await seller.client.createOrder(limit("btc_usdt", "sell", "10", "0.5")));
    expectOk(await buyer.client.createOrder(limit("btc_usdt", "buy", "10", "0.5")));
    const resting = expectOk(await buyer.client.createOrder(limit("btc_usdt", "buy", "1", "0.1")));
    expectOk(await buyer.client.cancelOrder(resting.id));
    // Each cancel of a closed order: the executed maker (its owner, another user) and the
    // cancelled one. Right after their commits the core still remembers why they closed.
    const answers = async () => [
      await seller.client.cancelOrder(maker.id),
      await buyer.client.cancelOrder(maker.id),
      await buyer.client.cancelOrder(resting.id),
    ];
    const fromMemory = await answers();
    for (const a of fromMemory) expectError(a, 400, "orderId");
    assert.notDeepEqual(fromMemory[0], fromMemory[1], "another user's cancel is 'not found', not 'executed'");
    assert.notDeepEqual(fromMemory[0], fromMemory[2], "executed is not cancelled");
    // A new process remembers nothing: the answers come from the committed rows.
    await server.restart();
    assert.deepEqual(await answers(), fromMemory);
  });
});

/**
 * Sends `head` (a whole request without a body) over a socket and kill -9s the server the moment
 * the status line of its answer arrives, from the socket's data callback: the answer was written,
 * and nothing that happens after it in the server gets a chance to finish. Resolves the status.
 */
function sendThenKill(server: TestServer, head: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let answered = false;
    // The kill resets the connection: openRaw ignores the socket's errors.
    openRaw(server, head, (received) => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(received);
      if (m === null || answered) return;
      answered = true;
      // kill() sends SIGKILL before its first await: the signal leaves now.
      server.kill().then(() => resolve(Number(m[1])), reject);
    });
  });
}

/**
 * Keeps the database writer busy until the server dies: a few loops of limit orders, each waiting
 * for its answer (so for its commit) before the next. A batch is then nearly always in flight, and
 * what a request records meanwhile waits for that batch's commit before its own. Resolves once
 * `warm` orders were answered; `stopped` settles when every loop has ended.
 */
async function keepWriterBusy(user: TestUser, warm = 20): Promise<{ stopped: Promise<void> }> {
  let answered = 0;
  let dead = false;
  const loop = async (i: number) => {
    for (let n = 0; !dead; n++) {
      const res = await user.client
        .createOrder(limit("btc_usdt", "buy", String(1 + ((i * 7 + n) % 50)), "0.001"), { timeoutMs: 5000 })
        .catch(() => null);
      if (res === null) dead = true;
      else answered++;
    }
  };
  const stopped = Promise.all([0, 1, 2, 3].map(loop)).then(() => {});
  await waitFor(() => answered >= warm || dead, { what: `${warm} orders answered` });
  return { stopped };
}

/** `GET path?query HTTP/1.1` with these headers, ready for sendThenKill. */
function getHead(server: TestServer, pathAndQuery: string, headers: Record<string, string>): string {
  return requestHead("GET", pathAndQuery, `${server.host}:${server.port}`, headers);
}

describe("durability of a signed read's nonce (docs/API.md 3)", () => {
  let server: TestServer;
  let user: TestUser;

  /** Places the orders that keep the writer busy (keepWriterBusy). */
  let busy: TestUser;

  before(async () => {
    server = await TestServer.start();
    user = await server.newUser({ usdt: "1" });
    busy = await server.newUser({ usdt: "1000000" });
  });
  after(async () => {
    await server?.close();
  });

  /** A window of 60 s keeps a timestamp good across the restart: only the nonce can refuse a replay. */
  const WINDOW = 60_000;
  const path = "/1.0/trade/pairs/btc_usdt/user-balances";

  for (const form of ["legacy", "bound"] as const) {
    it(`refuses a signed GET (${form} form) with a nonce replayed after kill -9 right after its answer`, async () => {
      const query = `nonce=${Date.now()}`;
      const headers = user.client.signFor("GET", path, query, { signatureForm: form, recvWindow: WINDOW });
      const { stopped } = await keepWriterBusy(busy);
      const status = await sendThenKill(server, getHead(server, `${path}?${query}`, headers));
      await stopped;
      assert.equal(status, 200, "the read was answered before the kill");

      await server.restart();
      const replay = await user.client.raw("GET", path, { query, headers });
      expectError(replay, 401, "auth", "the same read replayed after kill -9");
      assert.deepEqual(
        (replay.body as { codes: unknown }).codes,
        { auth: ["AUTH_NONCE_REPLAY"] },
        replay.text,
      );
    });
  }

  it("refuses a signed stream upgrade with a nonce replayed after kill -9 right after its 101", async () => {
    const query = `streams=user_orders:${user.uid}&nonce=${Date.now()}`;
    const signed = user.client.signFor("GET", "/stream", query, { recvWindow: WINDOW });
    const upgrade = {
      Upgrade: "websocket",
      Connection: "Upgrade",
      "Sec-WebSocket-Key": randomBytes(16).toString("base64"),
      "Sec-WebSocket-Version": "13",
      ...signed,
    };
    const { stopped } = await keepWriterBusy(busy);
    const status = await sendThenKill(server, getHead(server, `/stream?${query}`, upgrade));
    await stopped;
    assert.equal(status, 101, "the upgrade was answered before the kill");

    await server.restart();
    const replay = await StreamClient.connect({
      baseUrl: () => server.origin,
      streams: [],
      rawQuery: query,
      headers: signed,
    }).then(
      async (stream) => {
        await stream.close();
        return null;
      },
      (error: unknown) => error,
    );
    assert.ok(replay instanceof StreamRejected, `the upgrade replayed after kill -9 was accepted: ${replay}`);
    assert.equal(replay.status, 401);
    assert.deepEqual(JSON.parse(replay.text).codes, { auth: ["AUTH_NONCE_REPLAY"] }, replay.text);
  });
});
