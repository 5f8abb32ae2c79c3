/**
 * The pair workers' wait strategy (--wait-strategy, src/pair/pair-client.ts): a server whose workers
 * busy-spin matches and answers like one whose workers sleep. The same seeded sequence of creates
 * and cancels on all three pairs goes to a server of each strategy; every answer, the trades, the
 * balances and the books must be the same (times aside). A concurrent burst on the busy-spin server
 * then leaves the ledger and the books exact (audit.ts).
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import type { Order } from "../../src/client/index.ts";
import { mulberry32 } from "../support/prng.ts";
import { auditExchange, readBooks } from "./audit.ts";
import { isOpen, PAIR_NAMES, TestServer, type TestUser } from "./harness.ts";
import { type Flow, newAcknowledged, randomOrder, runBurst } from "./workload.ts";

/** Crossing flow on all three pairs, with market orders: fills, partial fills, self-trades. */
const FLOW: Flow = {
  pairs: [
    { pair: "btc_usdt", midTicks: 3_000_000, spreadTicks: 300, minLots: 1_000, maxLots: 50_000 },
    { pair: "eth_usdt", midTicks: 200_000, spreadTicks: 20, minLots: 1_000, maxLots: 50_000 },
    { pair: "eth_btc", midTicks: 66_000, spreadTicks: 6, minLots: 100, maxLots: 5_000 },
  ],
  marketShare: 0.15,
};
const FUNDS = { usdt: "1000000", btc: "100", eth: "1000" };
const STEPS = 150;
/** Fields that carry the time of the run, which two runs cannot share. */
const TIME_FIELDS = new Set(["createTime", "updateTime", "tradeTime", "eventTimeMicro"]);

/** A JSON value without its time fields, at any depth. */
function timeless(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(timeless);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !TIME_FIELDS.has(k))
      .map(([k, v]) => [k, timeless(v)]),
  );
}

/**
 * The seeded sequence, one request at a time (so both servers see the same order of events):
 * every answer, then each user's trades and balances and every book, all without times.
 */
async function runSequence(server: TestServer): Promise<unknown[]> {
  const users: TestUser[] = [];
  for (let i = 0; i < 3; i++) users.push(await server.newUser(FUNDS));
  const rng = mulberry32(11);
  const open = users.map((): number[] => []);
  const seen: unknown[] = [];
  for (let step = 0; step < STEPS; step++) {
    const u = Math.floor(rng() * users.length);
    if (open[u].length > 0 && rng() < 0.25) {
      const [id] = open[u].splice(Math.floor(rng() * open[u].length), 1);
      const res = await users[u].client.cancelOrder(id);
      seen.push(["cancel", u, id, res.status, timeless(res.body)]);
    } else {
      const res = await users[u].client.createOrder(randomOrder(rng, FLOW));
      seen.push(["create", u, res.status, timeless(res.body)]);
      const order = res.body as Order;
      if (res.status === 200 && order.tradeType === "limit" && isOpen(order)) open[u].push(order.id);
    }
  }
  for (const user of users) {
    seen.push(timeless(await server.allTrades(user)));
    seen.push(await server.balanceTable(user));
  }
  const books = await readBooks(server);
  for (const pair of PAIR_NAMES) seen.push(books.get(pair));
  return seen;
}

describe("wait strategy", () => {
  let blocking: TestServer | undefined;
  let spinning: TestServer | undefined;
  after(async () => {
    await blocking?.close();
    await spinning?.close();
  });

  it("says which strategy it chose, and busy-spinning pair workers answer as sleeping ones do", async () => {
    // One server at a time: busy-spinning workers take a core each.
    blocking = await TestServer.start({ args: ["--wait-strategy", "blocking"] });
    assert.match(blocking.logs(), /pair workers wait for commands: blocking/);
    const expected = await runSequence(blocking);
    await blocking.close();

    spinning = await TestServer.start({ args: ["--wait-strategy", "busy-spin"] });
    assert.match(spinning.logs(), /pair workers wait for commands: busy-spin/);
    const actual = await runSequence(spinning);
    assert.deepEqual(actual, expected);

    // The sequence traded, partly filled and cancelled: what it compares is not an empty book.
    const answers = expected.slice(0, STEPS) as [string, number, ...unknown[]][];
    const created = answers.filter((a) => a[0] === "create" && a[2] === 200).map((a) => a[3] as Order);
    assert.ok(created.filter((o) => o.amountUsed > 0).length >= 20, "many orders traded");
    assert.ok(
      created.some((o) => o.tradeType === "limit" && o.amountUsed > 0 && isOpen(o)),
      "a partial fill",
    );
    assert.ok(answers.filter((a) => a[0] === "cancel" && a[3] === 200).length >= 5, "cancels");
  });

  it("keeps the ledger and the books exact through a concurrent burst with busy-spinning workers", async () => {
    spinning ??= await TestServer.start({ args: ["--wait-strategy", "busy-spin"] });
    const users = await spinning.newUsers(4, FUNDS);
    const acked = newAcknowledged();
    await runBurst(
      { users, flow: FLOW, seed: 5, loopsPerUser: 2, stepsPerLoop: 60, cancelShare: 0.2 },
      acked,
    );
    assert.equal(acked.unanswered, 0);
    for (const key of acked.refusals.keys()) {
      assert.match(key, /^(create 400 amount|cancel 400 orderId)$/, `unexpected answer in the burst: ${key}`);
    }
    assert.ok(acked.orders.size >= 200, `${acked.orders.size} orders acknowledged`);
    const { states } = await auditExchange(spinning);
    assert.ok(
      states.some((s) => s.trades.length > 0),
      "the burst traded",
    );
  });
});
