/**
 * Trading-session calls and execution reports (docs/API.md 13) on the real server: every call
 * of the table and its errors as REST answers them, frame judging, pipelining order, the in-flight
 * bound, reports of the user's own and other sessions (never another user's), answer before its
 * reports, and the heartbeat close (11.4).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sharedServer, TestServer } from "../e2e/harness.ts";
import { waitFor } from "../wait.ts";
import { errorOf, type Frame, SessionSocket, serverTime } from "./helpers.ts";

describe("session calls", () => {
  let server: TestServer;
  sharedServer((s) => {
    server = s;
  });

  const order = (side: string, price: string, amount: string, extra: Frame = {}) => ({
    pairName: "btc_usdt",
    tradeType: "limit",
    directionType: side,
    price,
    amount,
    ...extra,
  });

  it("runs every call of the table as its REST call does", async () => {
    const u = await server.newUser({ usdt: "10000", btc: "1" });
    const s = await SessionSocket.logon(server, u);
    const created = await s.call("order.create", order("buy", "100", "1", { clientOrderId: "a-1" }));
    assert.equal(created.status, 200, JSON.stringify(created));
    const o = created.result as { id: number; price: number; clientOrderId: string };
    assert.equal(o.clientOrderId, "a-1");
    const rest = await u.client.raw("GET", `/1.0/trade/orders/${o.id}`, { sign: true });
    const byId = await s.call("order.get", { orderId: o.id });
    assert.deepEqual(byId.result, JSON.parse(rest.text));
    const byClient = await s.call("order.get", { clientOrderId: "a-1" });
    assert.deepEqual(byClient.result, byId.result);
    const open = await s.call("orders.open", { pairName: "btc_usdt" });
    assert.deepEqual(
      (open.result as { id: number }[]).map((x) => x.id),
      [o.id],
    );
    const amended = await s.call("order.amend", { orderId: o.id, amount: "0.5" });
    assert.equal(amended.status, 200);
    assert.equal((amended.result as { amount: number }).amount, 0.5);
    const bal = await s.call("balances");
    const rows = bal.result as { currency: string; balance: string; reserved: string }[];
    assert.deepEqual(
      rows.map((r) => r.currency),
      ["btc", "usdt", "eth"],
    );
    assert.equal(rows[1].reserved, "50");
    const many = await s.call("orders.create", { orders: [order("buy", "90", "1"), order("buy", "x", "1")] });
    const items = many.result as Frame[];
    assert.equal(items.length, 2);
    assert.equal(typeof items[0].id, "number");
    assert.deepEqual(Object.keys(items[1].errors as object), ["price"]);
    const cancelled = await s.call("order.cancel", { orderId: o.id });
    assert.deepEqual(cancelled, { id: cancelled.id, status: 200, result: [] });
    const again = await s.call("order.cancel", { orderId: o.id });
    assert.deepEqual(errorOf(again).codes, { orderId: ["ORDER_ALREADY_CANCELLED"] });
    const batchCancel = await s.call("orders.cancel", { orderIds: [items[0].id, 999999] });
    const bc = batchCancel.result as Frame[];
    assert.deepEqual(bc[0], { orderId: items[0].id });
    assert.ok("errors" in bc[1]);
    await s.call("order.create", order("buy", "80", "1"));
    const all = await s.call("orders.cancelAll", {});
    assert.equal((all.result as { cancelled: number[] }).cancelled.length, 1);
    const dms = await s.call("orders.cancelAllAfter", { timeout: 0 });
    assert.deepEqual(dms.result, { triggerTime: 0 });
    const ping = await s.call("ping");
    assert.ok(Math.abs((ping.result as { serverTime: number }).serverTime - Date.now()) < 5000);
    s.close();
  });

  it("answers the REST errors, strict params and frames, and changes nothing", async () => {
    const u = await server.newUser({ usdt: "100" });
    const s = await SessionSocket.logon(server, u);
    const before = await server.balanceTable(u);
    const cases: [Frame | string, number, string][] = [
      [{ id: "e1", method: "order.create", params: order("buy", "100", "5") }, 400, "amount"],
      [{ id: "e2", method: "order.create", params: { ...order("buy", "1", "1"), nonce: 5 } }, 400, "nonce"],
      [{ id: "e3", method: "order.cancel", params: { orderId: 0 } }, 400, "orderId"],
      [{ id: "e4", method: "order.get", params: { orderId: 123456 } }, 404, "orderId"],
      [{ id: "e5", method: "order.get", params: {} }, 400, "orderId"],
      [{ id: "e6", method: "orders.open", params: { pairName: "nope" } }, 404, "pairName"],
      [{ id: "e7", method: "orders.create", params: { orders: [] } }, 400, "orders"],
      [{ id: "e8", method: "nope" }, 400, "method"],
      [{ id: "e9" }, 400, "method"],
      [{ id: "e10", method: "ping", params: [] }, 400, "params"],
      [{ id: "e11", method: "ping", extra: 1 }, 400, "extra"],
      [{ id: "a b", method: "ping" }, 400, "id"],
      [{ id: null, method: "ping" }, 400, "id"],
      [{ id: -1, method: "ping" }, 400, "id"],
      ["[1,2]", 400, "body"],
      ["{nope", 400, "body"],
      // A JSON value that is not an object is a frame error, never an id error (docs/API.md 11.2).
      ["1e400", 400, "body"],
      ["-1E+400", 400, "body"],
      ["1", 400, "body"],
      ["null", 400, "body"],
      ["[]", 400, "body"],
      ['"x"', 400, "body"],
    ];
    for (const [frame, status, key] of cases) {
      s.send(typeof frame === "string" ? frame : JSON.stringify(frame));
      const expectedId = typeof frame === "string" || key === "id" || key === "body" ? null : frame.id;
      const a = await waitFor(() => s.frames.find((f) => "status" in f && f.id === expectedId && !f.seen), {
        what: `answer to ${JSON.stringify(frame)}`,
      });
      a.seen = true;
      assert.equal(a.status, status, JSON.stringify([frame, a]));
      assert.deepEqual(Object.keys(a.errors as object), [key], JSON.stringify([frame, a]));
    }
    s.send(Buffer.from([1, 2, 3]), true);
    const bin = await waitFor(() => s.frames.find((f) => f.id === null && !f.seen), {
      what: "binary answer",
    });
    assert.deepEqual(Object.keys(bin.errors as object), ["body"]);
    assert.equal(s.closeCode, null);
    assert.deepEqual(await server.balanceTable(u), before);
    s.close();
  });

  it("answers in arrival order, and reports after the answer that caused them, to every session of the user", async () => {
    const u = await server.newUser({ usdt: "100000", btc: "10" });
    const other = await server.newUser({ usdt: "100000", btc: "10" });
    const s = await SessionSocket.logon(server, u);
    const t = await SessionSocket.logon(server, u);
    const x = await SessionSocket.logon(server, other);
    const quiet = await SessionSocket.logon(server, u, { reports: false });
    const n = 50;
    for (let i = 0; i < n; i++)
      s.ws.send(
        JSON.stringify({
          id: `p${i}`,
          method: "order.create",
          params: order("buy", String(100 + i), "0.01"),
        }),
      );
    await s.answer(`p${n - 1}`);
    const answers = s.frames.filter((f) => "status" in f);
    assert.deepEqual(
      answers.map((f) => f.id),
      [1, ...[...Array(n).keys()].map((i) => `p${i}`)],
    );
    // Each created order's report comes after its answer, on this session and on the other one of the user.
    // (The last answer may leave before the reports of earlier calls: each report follows its own answer.)
    answers.shift();
    await waitFor(() => s.reports().length >= n, { what: "the reports of the created orders" });
    for (let i = 0; i < n; i++) {
      const id = (answers[i].result as { id: number }).id;
      const ai = s.frames.indexOf(answers[i]);
      const ri = s.frames.findIndex((f) => f.event === "order" && (f.data as { id: number }).id === id);
      assert.ok(ri > ai, `report of ${id} after its answer`);
    }
    await waitFor(() => t.reports().length >= n, { what: "reports on the user's other session" });
    // A trade by another user's REST order reaches both sessions as order and trade reports.
    const sold = await other.client.createOrder({
      pairName: "btc_usdt",
      tradeType: "limit",
      directionType: "sell",
      price: "149",
      amount: "0.01",
    });
    assert.equal(sold.status, 200);
    await waitFor(() => s.reports().some((f) => f.event === "trade"), { what: "the trade report" });
    const trade = s.reports().find((f) => f.event === "trade")!;
    // docs/API.md 20: the report names the user's order in the trade (its resting buy at 149) and its side.
    const tradeData = trade.data as { orderId: number; liquidity: string };
    assert.equal(tradeData.orderId, (answers[n - 1].result as { id: number }).id);
    assert.equal(tradeData.liquidity, "maker");
    const restTrades = await u.client.raw("GET", "/1.0/trade/pairs/btc_usdt/user-history", { sign: true });
    assert.ok(restTrades.text.includes(String((trade.data as { id: number }).id)));
    await waitFor(() => x.reports().length > 0, { what: "the other user's own report" });
    for (const f of x.reports()) assert.equal((f.data as { userId?: unknown }).userId, undefined);
    const mine = new Set(
      s
        .reports()
        .filter((f) => f.event === "order")
        .map((f) => (f.data as { id: number }).id),
    );
    for (const f of x.reports()) if (f.event === "order") assert.ok(!mine.has((f.data as { id: number }).id));
    assert.equal(quiet.reports().length, 0);
    for (const c of [s, t, x, quiet]) c.close();
  });

  it("answers 429 TOO_MANY_IN_FLIGHT beyond 1,000 unanswered calls and keeps reading", async () => {
    const u = await server.newUser({ usdt: "100000" });
    const s = await SessionSocket.logon(server, u);
    const n = 1100;
    const frames: string[] = [];
    for (let i = 0; i < n; i++)
      frames.push(JSON.stringify({ id: `g${i}`, method: "order.get", params: { orderId: 1 + i } }));
    for (const f of frames) s.ws.send(f);
    await waitFor(() => s.frames.filter((f) => "status" in f).length >= n + 1, {
      what: "every answer",
      timeoutMs: 30_000,
    });
    const limited = s.frames.filter((f) => f.status === 429);
    for (const f of limited) {
      assert.deepEqual(f.codes, { rate: ["TOO_MANY_IN_FLIGHT"] });
      assert.equal(f.retryAfterMs, undefined);
    }
    assert.ok(s.frames.filter((f) => f.status === 404).length >= 1000);
    const ping = await s.call("ping");
    assert.equal(ping.status, 200);
    s.close();
  });

  it("pings after half the heartbeat and closes with 4002 after a full one without a frame", async () => {
    const u = await server.newUser();
    const s = await SessionSocket.open(server);
    // ws answers pings by itself: turn that off to be silent.
    (s.ws as unknown as { pong: () => void }).pong = () => {};
    // Bounds on the server's clock only (docs/API.md 13, "Heartbeat and end"): the hello's
    // serverTime is before the logon, the session's last frame; a GET /time sent once the ping or
    // the close has arrived answers a time after it. So each difference below is at least how long
    // the server waited after the last frame, never less, however slow this machine is.
    const opened = s.frames[0].serverTime as number;
    const events: string[] = [];
    let timeAfterPing: Promise<number> | null = null;
    s.ws.on("ping", () => {
      events.push("ping");
      timeAfterPing ??= serverTime(server);
    });
    s.ws.on("close", (code) => events.push(`close ${code}`));
    const a = await s.call("session.logon", { ...s.credentials(u), heartbeatSeconds: 1 });
    assert.equal(a.status, 200);
    assert.equal(await s.closed(), 4002);
    const timeAfterClose = await serverTime(server);
    assert.deepEqual(events, ["ping", "close 4002"], "one ping, then the close");
    assert.ok((await timeAfterPing!) - opened >= 500, "pinged after half the heartbeat");
    assert.ok(timeAfterClose - opened >= 1000, "closed after the full heartbeat");
  });
});

describe("session rate limit", () => {
  // Not sharedServer: its clean-up after each test would be rate limited too.
  let server: TestServer;
  before(async () => {
    server = await TestServer.start({ rateLimit: 5 });
  });
  after(async () => {
    await server.close();
  });

  it("counts session calls under the API token and answers 429 with retryAfterMs", async () => {
    const u = await server.newUser();
    const s = await SessionSocket.logon(server, u);
    for (let i = 0; i < 20; i++) s.ws.send(JSON.stringify({ id: `r${i}`, method: "ping" }));
    await s.answer("r19");
    const limited = s.frames.filter((f) => f.status === 429);
    assert.ok(limited.length >= 10, `${limited.length} limited`);
    for (const f of limited) {
      assert.deepEqual(f.codes, { rate: ["RATE_LIMITED"] });
      assert.equal(typeof f.retryAfterMs, "number");
    }
    s.close();
  });
});
