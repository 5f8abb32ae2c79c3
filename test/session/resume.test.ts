/**
 * Executions that survive a reconnect (docs/API.md 16), on the real server: each user's execution
 * numbers (a trade below the order change it makes, one report per number), `session.logon` with
 * `resumeFrom` (the replay, `resumed`, then live reports), its refusals, `GET /trade/executions`
 * and the session call `executions`, and a resume in the middle of a burst of fills that loses and
 * repeats nothing at the seam.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Execution } from "../../src/client/types.ts";
import {
  expectError,
  expectOk,
  limit,
  placeLimit,
  readAllPages,
  sharedServer,
  type TestServer,
  type TestUser,
} from "../e2e/harness.ts";
import { waitFor } from "../wait.ts";
import { errorOf, type Frame, SessionSocket } from "./helpers.ts";

/** Every execution of `user` through GET /trade/executions, paged by `after`. */
async function allExecutions(user: TestUser, pageSize = 1000): Promise<{ items: Execution[]; last: number }> {
  const items: Execution[] = [];
  let after = 0;
  for (;;) {
    const page = expectOk(await user.client.executions({ after, limit: pageSize }));
    items.push(...page.items);
    if (page.items.length === 0 || page.items[page.items.length - 1].execSeq >= page.lastExecSeq)
      return { items, last: page.lastExecSeq };
    after = page.items[page.items.length - 1].execSeq;
  }
}

/** The execution reports of a session (`order`, `trade`) as `[execSeq, event, id]`. */
function numbered(frames: readonly Frame[]): [number, string, number][] {
  return frames
    .filter((f) => f.event === "order" || f.event === "trade")
    .map((f) => [f.execSeq as number, f.event as string, (f.data as { id: number }).id]);
}

describe("executions that survive a reconnect", () => {
  let server: TestServer;
  sharedServer((s) => {
    server = s;
  });

  it("numbers a trade below the order change it makes, one report per number, on both sides", async () => {
    const [maker, taker] = await server.newUsers(2, { usdt: "100000", btc: "10" });
    const ms = await SessionSocket.logon(server, maker);
    const ts = await SessionSocket.logon(server, taker);
    const sell = await placeLimit(maker, "btc_usdt", "sell", "20000", "0.5");
    assert.equal(sell.execSeq, 1, "the maker's first change: its order resting");
    const buy = await placeLimit(taker, "btc_usdt", "buy", "20000", "0.2");
    // The taker's trade is its number 1, the order change it made (created and filled) number 2.
    assert.equal(buy.execSeq, 2);
    await waitFor(() => numbered(ms.frames).length === 3 && numbered(ts.frames).length === 2, {
      what: "the reports of both sides",
    });
    const trade = expectOk(await taker.client.userHistory()).items[0];
    assert.deepEqual(numbered(ms.frames), [
      [1, "order", sell.id],
      [2, "trade", trade.id],
      [3, "order", sell.id],
    ]);
    assert.deepEqual(numbered(ts.frames), [
      [1, "trade", trade.id],
      [2, "order", buy.id],
    ]);
    // Each report's record carries the same number as the report (docs/API.md 16).
    for (const f of [...ms.reports(), ...ts.reports()])
      assert.equal((f.data as { execSeq: number }).execSeq, f.execSeq);
    // The reads agree: the order at its latest number, the history item at its trade's number.
    assert.equal(expectOk(await maker.client.order(sell.id)).execSeq, 3);
    assert.equal(expectOk(await maker.client.userHistory()).items[0].execSeq, 2);
    const pulled = await allExecutions(maker);
    assert.equal(pulled.last, 3);
    // The merged view: the trade at 2, the order once, at its latest change (3).
    assert.deepEqual(
      pulled.items.map((e) => [e.execSeq, e.event, e.data.id]),
      [
        [2, "trade", trade.id],
        [3, "order", sell.id],
      ],
    );
    ms.close();
    ts.close();
  });

  it("replays above resumeFrom, then says resumed, then reports live above it", async () => {
    const [maker, taker] = await server.newUsers(2, { usdt: "100000", btc: "10" });
    const a = await placeLimit(maker, "btc_usdt", "sell", "21000", "0.3"); // 1
    const b = await placeLimit(maker, "btc_usdt", "sell", "21001", "0.3"); // 2
    await placeLimit(taker, "btc_usdt", "buy", "21000", "0.1"); // maker: trade 3, order a 4
    expectOk(await maker.client.cancelOrder(b.id)); // maker: order b 5
    const s = await SessionSocket.logon(server, maker, { resumeFrom: 1 });
    await waitFor(() => s.frames.some((f) => f.event === "resumed"), { what: "the resumed event" });
    const trade = expectOk(await maker.client.userHistory()).items[0];
    const afterLogon = s.frames.slice(s.frames.findIndex((f) => f.id === 1) + 1);
    // Each order once, at its latest number: b's change at 2 is not replayed, b comes at 5.
    assert.deepEqual(
      afterLogon.map((f) => (f.event === "resumed" ? ["resumed", f.execSeq, f.execEpoch] : numbered([f])[0])),
      [
        [3, "trade", trade.id],
        [4, "order", a.id],
        [5, "order", b.id],
        ["resumed", 5, 1],
      ],
    );
    // docs/API.md 20.1: the replayed trade names the maker's order and its liquidity, as the REST item.
    const replayed = afterLogon.find((f) => f.event === "trade")!.data as {
      orderId: number;
      liquidity: string;
    };
    assert.deepEqual([replayed.orderId, replayed.liquidity], [a.id, "maker"]);
    assert.deepEqual([trade.orderId, trade.liquidity], [a.id, "maker"]);
    // The replayed records are the orders' current state.
    const replayedB = afterLogon.find((f) => f.execSeq === 5)!.data as { isCancelled: boolean };
    assert.equal(replayedB.isCancelled, true);
    // Live reports follow, above the cut.
    expectOk(await maker.client.cancelOrder(a.id));
    await waitFor(() => numbered(s.frames).some(([n]) => n === 6), { what: "the live report at 6" });
    assert.deepEqual(numbered(s.frames).at(-1), [6, "order", a.id]);
    s.close();
  });

  it("refuses a resume ahead of the user's last number, without reports, or of another epoch", async () => {
    const [u] = await server.newUsers(1, { usdt: "1000" });
    await placeLimit(u, "btc_usdt", "buy", "100", "0.1"); // 1
    const s = await SessionSocket.open(server);
    const ahead = await s.call("session.logon", { ...s.credentials(u), resumeFrom: 2 });
    assert.deepEqual(errorOf(ahead), {
      status: 400,
      keys: ["resumeFrom"],
      codes: { resumeFrom: ["RESUME_AHEAD"] },
    });
    const quiet = await s.call("session.logon", { ...s.credentials(u), resumeFrom: 0, reports: false });
    assert.deepEqual(errorOf(quiet), {
      status: 400,
      keys: ["resumeFrom"],
      codes: { resumeFrom: ["RESUME_WITHOUT_REPORTS"] },
    });
    const epoch = await s.call("session.logon", { ...s.credentials(u), resumeFrom: 0, resumeEpoch: 2 });
    assert.deepEqual(errorOf(epoch), {
      status: 400,
      keys: ["resumeFrom"],
      codes: { resumeFrom: ["RESUME_EPOCH"] },
    });
    const bad = await s.call("session.logon", { ...s.credentials(u), resumeFrom: -1 });
    assert.deepEqual(errorOf(bad), {
      status: 400,
      keys: ["resumeFrom"],
      codes: { resumeFrom: ["RESUME_FROM_INVALID"] },
    });
    // The connection stays, and a resume at the last number replays nothing.
    assert.equal(s.closeCode, null);
    const ok = await s.call("session.logon", { ...s.credentials(u), resumeFrom: 1, resumeEpoch: 1 });
    assert.equal(ok.status, 200);
    await waitFor(() => s.frames.some((f) => f.event === "resumed"), { what: "resumed" });
    assert.deepEqual(numbered(s.frames), []);
    s.close();
  });

  it("answers the executions read by pages and as a session call, with errors keyed by field", async () => {
    const [maker, taker] = await server.newUsers(2, { usdt: "100000", btc: "10" });
    for (let i = 0; i < 3; i++) await placeLimit(maker, "btc_usdt", "sell", String(22000 + i), "0.1");
    await placeLimit(taker, "btc_usdt", "buy", "22002", "0.3");
    const all = await allExecutions(maker);
    const paged = await allExecutions(maker, 2);
    assert.deepEqual(paged, all);
    assert.deepEqual(
      all.items.map((e) => e.execSeq),
      [...all.items.map((e) => e.execSeq)].sort((x, y) => x - y),
    );
    assert.equal(all.items.filter((e) => e.event === "trade").length, 3);
    const s = await SessionSocket.logon(server, maker);
    const viaSession = await s.call("executions", { after: 0, limit: 1000 });
    assert.equal(viaSession.status, 200);
    assert.deepEqual(viaSession.result, { items: all.items, lastExecSeq: all.last, execEpoch: 1 });
    const badAfter = await s.call("executions", { after: -1 });
    assert.deepEqual(errorOf(badAfter).codes, { after: ["EXECUTIONS_AFTER_INVALID"] });
    s.close();
    expectError(await maker.client.executions({ limit: 0 }), 400, "limit");
    expectError(await maker.client.executions({ limit: 1001 }), 400, "limit");
  });

  it("loses and repeats nothing when the link drops in the middle of a burst of fills", async () => {
    const [maker, taker] = await server.newUsers(2, { usdt: "10000000", btc: "1000" });
    const RESTING = 60;
    for (let i = 0; i < RESTING; i++) await placeLimit(maker, "btc_usdt", "sell", String(30000 + i), "0.01");
    const first = await SessionSocket.logon(server, maker);
    // The burst: the taker lifts the maker's orders one by one, concurrently in flight.
    const burst = (async () => {
      const done: Promise<unknown>[] = [];
      for (let i = 0; i < RESTING; i++) {
        done.push(taker.client.createOrder(limit("btc_usdt", "buy", String(30000 + i), "0.01")));
        if (i % 10 === 9) await Promise.all(done.splice(0));
      }
      await Promise.all(done);
    })();
    // Drop the link once some fills came in, and resume from the last number seen.
    await waitFor(() => numbered(first.frames).filter(([, e]) => e === "trade").length >= 10, {
      what: "some fills before the drop",
    });
    first.ws.terminate();
    const seen = numbered(first.frames);
    // Fills go on while no session of the maker is logged on: their reports are built for nobody,
    // and only the replay can carry them.
    await new Promise((r) => setTimeout(r, 30));
    const resumeFrom = seen.length === 0 ? 0 : Math.max(...seen.map(([n]) => n));
    const second = await SessionSocket.logon(server, maker, { resumeFrom });
    await burst;
    const { last } = await allExecutions(maker);
    await waitFor(() => numbered(second.frames).some(([n]) => n === last), {
      what: `the report at ${last}`,
      timeoutMs: 20_000,
    });
    const after = numbered(second.frames);
    // Nothing at or below resumeFrom, numbers only go up, and resumed sits between replay and live.
    assert.ok(after.every(([n]) => n > resumeFrom));
    for (let i = 1; i < after.length; i++)
      assert.ok(after[i][0] > after[i - 1][0], `${after[i - 1]} then ${after[i]}`);
    const resumedAt = second.frames.findIndex((f) => f.event === "resumed");
    const cut = second.frames[resumedAt].execSeq as number;
    for (const f of second.frames.slice(resumedAt + 1))
      if (f.execSeq !== undefined) assert.ok((f.execSeq as number) > cut);
    // Every trade exactly once over the two sessions.
    const trades = expectOk(await maker.client.userHistory({ pageSize: 100 })).items;
    assert.equal(trades.length, RESTING);
    const tradeIds = [...seen, ...after].filter(([, e]) => e === "trade").map(([, , id]) => id);
    assert.deepEqual(
      [...tradeIds].sort((x, y) => x - y),
      trades.map((t) => t.id).sort((x, y) => x - y),
    );
    // Every order ends in its current state: the last report of it over both sessions.
    const orders = await readAllPages((page) => maker.client.userOrders("btc_usdt", { page, pageSize: 100 }));
    const lastOf = new Map<number, Frame>();
    for (const f of [...first.frames, ...second.frames])
      if (f.event === "order") lastOf.set((f.data as { id: number }).id, f.data as Frame);
    for (const o of orders) assert.deepEqual(lastOf.get(o.id), o, `order ${o.id}`);
    second.close();
  });
});
