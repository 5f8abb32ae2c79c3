/**
 * Concurrency end to end: 20 users place 50 orders each, five at a time per user, crossing on
 * btc_usdt and eth_usdt at once. Both pairs spend the same usdt, and each user's usdt covers only
 * part of its buys, so some orders must be refused. Whatever the interleaving: nothing is ever
 * negative, nothing is overdrawn, every refusal is `errors.amount`, every accepted order is
 * visible, and the ledger, the books and the conservation of every currency check out (audit.ts):
 * the audit rebuilds each balance from deposits and trades, so an overdraft cannot hide.
 */

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { auditExchange } from "./audit.ts";
import { dec, fmt } from "./decimal.ts";
import { TestServer, type TestUser } from "./harness.ts";
import { type Flow, newAcknowledged, runBurst } from "./workload.ts";

const USERS = 20;
const ORDERS_PER_USER = 50;
const LOOPS_PER_USER = 5;
/** A buy costs 10..100 usdt (about 55 on average); 25 buys would need ~1375, far more than 800. */
const FUNDS = { usdt: "800", btc: "0.5", eth: "5" };
const FLOW: Flow = {
  pairs: [
    { pair: "btc_usdt", midTicks: 100_000, spreadTicks: 1_000, minLots: 10_000, maxLots: 100_000 },
    { pair: "eth_usdt", midTicks: 10_000, spreadTicks: 100, minLots: 10_000, maxLots: 100_000 },
  ],
  marketShare: 0.1,
};

describe("concurrency", () => {
  let server: TestServer;
  let users: TestUser[] = [];

  before(async () => {
    server = await TestServer.start();
    users = await server.newUsers(USERS, FUNDS);
  });
  after(async () => {
    await server?.close();
  });

  it("refuses what shared balances cannot cover and never overdraws under 20 concurrent users", async () => {
    const acked = newAcknowledged();
    let running = true;
    const negatives: string[] = [];
    // Reads balances while the burst runs: no value may ever be negative.
    const sampler = (async () => {
      let i = 0;
      while (running) {
        const user = users[i++ % users.length];
        const balances = await server.balances(user);
        for (const [currency, b] of balances) {
          if (b.available < 0n || b.reserved < 0n) {
            negatives.push(`${user.uid} ${currency} ${fmt(b.available)} / ${fmt(b.reserved)}`);
          }
        }
      }
    })();
    try {
      await runBurst(
        {
          users,
          flow: FLOW,
          seed: 42,
          loopsPerUser: LOOPS_PER_USER,
          stepsPerLoop: ORDERS_PER_USER / LOOPS_PER_USER,
          cancelShare: 0,
        },
        acked,
      );
    } finally {
      running = false;
      await sampler;
    }
    assert.deepEqual(negatives, [], "balances seen negative during the burst");
    assert.equal(acked.unanswered, 0, "every request is answered");
    assert.deepEqual([...acked.refusals.keys()], ["create 400 amount"], "every refusal is 400 errors.amount");
    const refused = acked.refusals.get("create 400 amount") ?? 0;
    assert.ok(refused > 0, "balances are sized so that some orders must be refused");
    assert.equal(acked.orders.size + refused, USERS * ORDERS_PER_USER, "every order is answered once");

    const { states } = await auditExchange(server);
    for (const state of states) {
      const mine = [...acked.orders.values()].filter((a) => a.user === state.user).map((a) => a.order);
      assert.equal(
        state.orders.length,
        mine.length,
        `user ${state.user.uid}: orders visible = orders accepted`,
      );
      const byId = new Map(state.orders.map((o) => [o.id, o]));
      for (const was of mine) {
        const now = byId.get(was.id);
        assert.ok(now !== undefined, `accepted order ${was.id} is not visible`);
        assert.deepEqual(
          [now.pairName, now.tradeType, now.directionType, now.amount, now.createTime],
          [was.pairName, was.tradeType, was.directionType, was.amount, was.createTime],
        );
        assert.ok(dec(now.amountUsed) >= dec(was.amountUsed));
      }
    }
    const trades = states.reduce((n, s) => n + s.trades.length, 0);
    assert.ok(trades > 0, "crossing orders must have traded");
  });
});
