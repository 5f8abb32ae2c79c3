/**
 * A start with more open orders on one pair than the pair's queues hold at once (the command ring
 * and the commands waiting for it: src/core/sequencer.ts MAX_WAITING): each restored order enters
 * its worker as room frees, and the server comes up with its whole book (DECISIONS.md "A start
 * with many open orders"). Before, the restore waited on the ring's room, which the queue behind
 * it never used, and the start spun on the main thread forever.
 */

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { MAX_WAITING } from "../../src/core/sequencer.ts";
import { DEFAULT_COMMAND_SLOTS } from "../../src/pair/pair-client.ts";
import { expectOk, limit, TestServer, type TestUser } from "./harness.ts";

const PAIR = "btc_usdt";
/** More than the ring and the waiting queue hold together. */
const ORDERS = MAX_WAITING + DEFAULT_COMMAND_SLOTS + 500;
const IN_FLIGHT = 64;

describe("a start with many open orders", () => {
  let server: TestServer;
  let users: TestUser[] = [];

  before(async () => {
    server = await TestServer.start();
    users = await server.newUsers(4, { usdt: "100000000", btc: "100000" });
  });
  after(async () => {
    await server?.close();
  });

  it(`restores ${ORDERS} open orders of one pair and serves its whole book`, async () => {
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < ORDERS) {
          const i = next++;
          const buy = i % 2 === 0;
          // 500 levels a side, far apart, so nothing trades.
          const price = buy ? 19_000 - (i % 500) : 41_000 + (i % 500);
          expectOk(
            await users[i % users.length].client.createOrder(
              limit(PAIR, buy ? "buy" : "sell", String(price), "0.001"),
            ),
            "resting order",
          );
        }
      }),
    );
    const before = expectOk(await server.public.orderBook(PAIR), "book before");
    await server.restart();
    const after = expectOk(await server.public.orderBook(PAIR), "book after");
    assert.deepEqual(after, before);
    const lots = (side: { amount: number }[]) => side.reduce((s, l) => s + Math.round(l.amount * 1000), 0);
    assert.equal(lots(after.buy) + lots(after.sell), ORDERS, "every order is back in the book");
  });
});
