/**
 * Client order ids in bounded memory (docs/API.md 8.2, src/core/client-ids.ts) on the real server: with a
 * window of two recent ids (`--client-id-window 2`), a repeat is refused whether the first order is
 * open, closed recently, closed long ago (judged by the database: the metrics count the check), or
 * from before a restart; of creates with one id sent at once, exactly one is accepted.
 */

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import type { CreatedOrder } from "../../src/client/index.ts";
import {
  expectError,
  expectOk,
  limit,
  market,
  sharedServer,
  type TestServer,
  type TestUser,
} from "./harness.ts";

const WINDOW = ["--client-id-window", "2"];

/** A client order id no test used before. */
function freshId(): string {
  return `c-${randomBytes(12).toString("hex")}`;
}

/** `exchange_client_id_db_checks_total` from /metrics. */
async function dbChecks(server: TestServer): Promise<number> {
  const text = await (await fetch(`${server.origin}/metrics`)).text();
  const m = /^exchange_client_id_db_checks_total (\d+)$/m.exec(text);
  assert.ok(m !== null, "exchange_client_id_db_checks_total missing from /metrics");
  return Number(m[1]);
}

async function placeWithId(user: TestUser, price: string, clientOrderId: string): Promise<CreatedOrder> {
  return expectOk(
    await user.client.createOrder({ ...limit("btc_usdt", "buy", price, "1"), clientOrderId }),
    `create ${clientOrderId}`,
  );
}

/** Commits two creates with new ids: every id committed before them is out of the window of two. */
async function pushOutOfWindow(user: TestUser): Promise<void> {
  for (let i = 0; i < 2; i++) await placeWithId(user, "1", freshId());
}

async function expectDuplicate(user: TestUser, clientOrderId: string, what: string): Promise<void> {
  const res = await user.client.createOrder({ ...limit("btc_usdt", "buy", "2", "1"), clientOrderId });
  assert.deepEqual(expectError(res, 400, "clientOrderId", what), [
    "An order with this client order id already exists",
  ]);
}

describe("client order ids beyond the in-memory window", () => {
  let server: TestServer;
  sharedServer(
    (s) => {
      server = s;
    },
    { args: WINDOW },
  );

  it("refuses a repeat while the first order is open, in the window and beyond it", async () => {
    const u = await server.newUser({ usdt: "1000" });
    const id = freshId();
    await placeWithId(u, "10", id);
    const checks = await dbChecks(server);
    await expectDuplicate(u, id, "open, in the window");
    assert.equal(await dbChecks(server), checks, "decided in memory");
    await pushOutOfWindow(u);
    await expectDuplicate(u, id, "open, beyond the window");
    assert.equal(await dbChecks(server), checks + 1, "decided by the database");
    assert.equal(expectOk(await u.client.openOrders("btc_usdt")).length, 3, "nothing created");
  });

  it("refuses a repeat of an order closed recently", async () => {
    const u = await server.newUser({ usdt: "1000" });
    const id = freshId();
    const o = await placeWithId(u, "10", id);
    expectOk(await u.client.cancelOrder(o.id));
    const checks = await dbChecks(server);
    await expectDuplicate(u, id, "cancelled, in the window");
    assert.equal(await dbChecks(server), checks, "decided in memory");
  });

  it("refuses a repeat of an order closed long ago and still finds that order by its id", async () => {
    const buyer = await server.newUser({ usdt: "1000" });
    const seller = await server.newUser({ btc: "1" });
    const id = freshId();
    const o = await placeWithId(buyer, "10", id);
    // Filled: closed by a trade.
    expectOk(await seller.client.createOrder(market("btc_usdt", "sell", "1")));
    await pushOutOfWindow(buyer);
    const checks = await dbChecks(server);
    await expectDuplicate(buyer, id, "filled, beyond the window");
    assert.equal(await dbChecks(server), checks + 1, "decided by the database");
    const found = expectOk(await buyer.client.orderByClientId(id));
    assert.equal(found.id, o.id);
    assert.equal(found.amountUsed, 1);
    // A new id goes straight on.
    await placeWithId(buyer, "1", freshId());
    assert.equal(await dbChecks(server), checks + 1, "a new id is not sent to the database");
  });

  it("accepts exactly one of several creates sent at once with one new id", async () => {
    const u = await server.newUser({ usdt: "1000" });
    const id = freshId();
    const answers = await Promise.all(
      [0, 1, 2, 3, 4].map(() =>
        u.client.createOrder({ ...limit("btc_usdt", "buy", "3", "1"), clientOrderId: id }),
      ),
    );
    assert.equal(answers.filter((a) => a.status === 200).length, 1, JSON.stringify(answers));
    for (const a of answers) if (a.status !== 200) expectError(a, 400, "clientOrderId");
    assert.equal(expectOk(await u.client.openOrders("btc_usdt")).length, 1);
  });

  it("accepts exactly one of several creates sent at once with an id the database must judge", async () => {
    const u = await server.newUser({ usdt: "1000", btc: "1" });
    const id = freshId();
    // Refused by the book (no liquidity): nothing created, but the filter has seen the id, so the
    // next creates with it are judged by the database, which has no order with it.
    expectError(
      await u.client.createOrder({ ...market("btc_usdt", "sell", "1"), clientOrderId: id }),
      400,
      "amount",
    );
    const checks = await dbChecks(server);
    const answers = await Promise.all(
      [0, 1, 2, 3, 4].map(() =>
        u.client.createOrder({ ...limit("btc_usdt", "buy", "3", "1"), clientOrderId: id }),
      ),
    );
    assert.equal(answers.filter((a) => a.status === 200).length, 1, JSON.stringify(answers));
    for (const a of answers) if (a.status !== 200) expectError(a, 400, "clientOrderId");
    assert.ok((await dbChecks(server)) > checks, "judged by the database");
    assert.equal(expectOk(await u.client.openOrders("btc_usdt")).length, 1);
  });

  it("keeps a batch in array order while the database judges one of its ids", async () => {
    const u = await server.newUser({ usdt: "1000" });
    const id = freshId();
    expectError(
      await u.client.createOrder({ ...market("btc_usdt", "buy", "1"), clientOrderId: id }),
      400,
      "amount",
    );
    const checks = await dbChecks(server);
    const out = expectOk(
      await u.client.createOrders([
        { ...limit("btc_usdt", "buy", "4", "1"), clientOrderId: id },
        limit("btc_usdt", "buy", "5", "1"),
        { ...limit("btc_usdt", "buy", "6", "1"), clientOrderId: id },
      ]),
    ) as (CreatedOrder & { errors?: Record<string, string[]> })[];
    assert.equal(out[0].clientOrderId, id);
    assert.ok(out[0].id < out[1].id, "executed in array order");
    assert.deepEqual(Object.keys(out[2].errors!), ["clientOrderId"]);
    assert.equal(await dbChecks(server), checks + 1);
  });
});

describe("client order ids across a restart", () => {
  let server: TestServer;
  sharedServer(
    (s) => {
      server = s;
    },
    { args: WINDOW },
  );

  it("refuses the id of an order from before the restart, open or closed", async () => {
    const u = await server.newUser({ usdt: "1000" });
    const openId = freshId();
    const closedId = freshId();
    const open = await placeWithId(u, "10", openId);
    const closed = await placeWithId(u, "11", closedId);
    expectOk(await u.client.cancelOrder(closed.id));
    await server.restart();
    const checks = await dbChecks(server);
    await expectDuplicate(u, openId, "open before the restart");
    await expectDuplicate(u, closedId, "cancelled before the restart");
    assert.equal(await dbChecks(server), checks + 2, "both decided by the database");
    assert.equal(expectOk(await u.client.orderByClientId(openId)).id, open.id);
    assert.equal(expectOk(await u.client.orderByClientId(closedId)).id, closed.id);
    const fresh = await placeWithId(u, "1", freshId());
    assert.ok(fresh.id > closed.id);
    assert.equal(await dbChecks(server), checks + 2, "a new id is not sent to the database");
  });
});
