/**
 * The pair workers' wait strategy (--wait-strategy, src/pair/pair-client.ts): a server whose workers
 * busy-spin matches and answers like one whose workers sleep.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { expectOk, limit, TestServer } from "./harness.ts";

describe("wait strategy", () => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start({ args: ["--wait-strategy", "busy-spin"] });
  });
  after(async () => {
    await server?.close();
  });

  it("says which strategy it chose, and matches with busy-spinning pair workers", async () => {
    assert.match(server.logs(), /pair workers wait for commands: busy-spin/);
    const [seller, buyer] = await server.newUsers(2, { usdt: "1000", btc: "1" });
    expectOk(await seller.client.createOrder(limit("btc_usdt", "sell", "100", "0.5")));
    const o = expectOk(await buyer.client.createOrder(limit("btc_usdt", "buy", "100", "0.2")));
    assert.equal(o.amountUsed, 0.2);
  });
});
