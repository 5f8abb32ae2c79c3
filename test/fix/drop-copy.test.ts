/**
 * FIX drop copy (docs/API.md 17.3) and resume (docs/API.md 16) through jspurefix against the real
 * server: a DROPCOPY session receives a report of every change of its user's orders, whichever
 * interface made it, refuses order messages, and a Logon with ResumeFromExecSeq replays what came
 * after that number (trades as ExecType=F, order states as ExecType=I, PossResend=Y) before live
 * reports.
 */
import assert from "node:assert/strict";
import { renameSync } from "node:fs";
import { describe, it } from "node:test";
import { expectOk, sharedServer, type TestServer } from "../e2e/harness.ts";
import { assertMatchesRest, fixLogon, newOrder, nextReport } from "./helpers.ts";
import type { FixClient } from "./jspurefix-client.ts";

describe("FIX drop copy", () => {
  let server: TestServer;
  sharedServer(
    (s) => {
      server = s;
    },
    { args: ["--fix-port", "0"] },
  );

  it("reports every change of the user's orders from REST and FIX, in number order", async () => {
    const [u, other] = await server.newUsers(2, { usdt: "100000", btc: "10" });
    const dc = await fixLogon(server, u, { dropCopy: true });
    const entry = await fixLogon(server, u);
    const viaRest = expectOk(
      await u.client.createOrder({
        pairName: "btc_usdt",
        tradeType: "limit",
        directionType: "sell",
        price: "200",
        amount: "0.4",
        clientOrderId: "dc-rest",
      }),
    );
    const r0 = await nextReport(dc, "0", "dc-rest");
    assert.equal(Number(r0.get(37)), viaRest.id);
    assert.equal(Number(r0.get(20002)), viaRest.execSeq);
    entry.send("D", newOrder("dc-fix", "buy", "0.1", "50"));
    const f0 = await nextReport(dc, "0", "dc-fix");
    await assertMatchesRest(u, f0);
    // Another user takes part of the REST order: a fill as maker.
    expectOk(
      await other.client.createOrder({
        pairName: "btc_usdt",
        tradeType: "market",
        directionType: "buy",
        amount: "0.15",
      }),
    );
    const fill = await nextReport(dc, "F", "dc-rest");
    assert.deepEqual(
      [fill.get(32), fill.get(31), fill.get(14), fill.get(851), fill.get(39)],
      ["0.15", "200", "0.15", "1", "1"],
    );
    await assertMatchesRest(u, fill);
    expectOk(await u.client.cancelAllOrders("btc_usdt"));
    const cancels = await Promise.all([nextReport(dc, "4", "dc-rest"), nextReport(dc, "4", "dc-fix")]);
    for (const x of cancels) await assertMatchesRest(u, x);
    const numbers = dc.received.filter((m) => m.get(20002) !== undefined).map((m) => Number(m.get(20002)));
    assert.deepEqual(
      numbers,
      [...numbers].sort((a, b) => a - b),
    );
    // Order messages have no place on a drop copy.
    dc.send("D", newOrder("dc-no", "buy", "0.1", "50"));
    const j = await dc.next("j");
    assert.equal(j.get(58), "drop copy session");
    assert.equal(j.get(372), "D");
    await dc.logout();
    await entry.logout();
  });

  it("replays after ResumeFromExecSeq with PossResend=Y, then reports live above the cut", async () => {
    const [u, other] = await server.newUsers(2, { usdt: "100000", btc: "10" });
    const first = expectOk(
      await u.client.createOrder({
        pairName: "btc_usdt",
        tradeType: "limit",
        directionType: "sell",
        price: "300",
        amount: "1",
        clientOrderId: "rs-1",
      }),
    );
    const from = first.execSeq;
    const second = expectOk(
      await u.client.createOrder({
        pairName: "btc_usdt",
        tradeType: "limit",
        directionType: "buy",
        price: "100",
        amount: "1",
        clientOrderId: "rs-2",
      }),
    );
    expectOk(
      await other.client.createOrder({
        pairName: "btc_usdt",
        tradeType: "market",
        directionType: "buy",
        amount: "0.25",
      }),
    );
    expectOk(await u.client.cancelOrder(second.id));
    const dc = await fixLogon(server, u, { dropCopy: true, resumeFromExecSeq: from, resumeEpoch: 1 });
    // rs-1's trade (F), then the orders at their latest change (I): rs-2 cancelled, rs-1 filled in part.
    const trade = await nextReport(dc, "F", "rs-1");
    assert.equal(trade.get(97), "Y");
    assert.equal(trade.get(32), "0.25");
    assert.equal(trade.get(14), "0.25");
    const states = [await nextReport(dc, "I"), await nextReport(dc, "I")];
    for (const s of states) {
      assert.equal(s.get(97), "Y");
      await assertMatchesRest(u, s);
    }
    const replayed = [trade, ...states].map((m) => Number(m.get(20002)));
    assert.ok(replayed.every((n) => n > from));
    assert.deepEqual(
      replayed,
      [...replayed].sort((a, b) => a - b),
    );
    const byId = new Map(states.map((s) => [s.get(11), s.get(39)]));
    assert.equal(byId.get("rs-2"), "4");
    assert.equal(byId.get("rs-1"), "1");
    // Then live, above the cut.
    expectOk(await u.client.cancelOrder(first.id));
    const live = await nextReport(dc, "4", "rs-1");
    assert.equal(live.get(97), undefined);
    assert.ok(Number(live.get(20002)) > Math.max(...replayed));
    await dc.logout();
  });
});

describe("FIX resume whose executions cannot be read", () => {
  let server: TestServer;
  sharedServer(
    (s) => {
      server = s;
    },
    { args: ["--fix-port", "0"] },
  );

  it("ends the session with a Logout instead of going on to live reports", { timeout: 20_000 }, async () => {
    const u = await server.newUser({ usdt: "1000" });
    expectOk(
      await u.client.createOrder({
        pairName: "btc_usdt",
        tradeType: "limit",
        directionType: "buy",
        price: "10",
        amount: "1",
      }),
    );
    // Each reader thread opens the database on its first read, and none has read yet on this
    // server: with the file moved away, the replay's read fails to open it.
    const moved = `${server.dbPath}.moved`;
    renameSync(server.dbPath, moved);
    let closed: Awaited<FixClient["closed"]>;
    let received: string[];
    try {
      const c = await fixLogon(server, u, { resumeFromExecSeq: 0 });
      closed = await c.closed;
      received = c.received.map((m) => m.msgType);
    } finally {
      renameSync(moved, server.dbPath);
    }
    assert.equal(closed.logoutText, "resume failed: the executions could not be read");
    assert.deepEqual(
      received.filter((type) => type === "8"),
      [],
      "no ExecutionReport before the Logout",
    );
    // With the file back, the next resume replays the order.
    const again = await fixLogon(server, u, { resumeFromExecSeq: 0 });
    const state = await nextReport(again, "I");
    assert.equal(state.get(97), "Y");
    await again.logout();
  });
});
