/**
 * The client library's TradingSession (src/client/session.ts) against a real server: logon with the
 * HMAC of the challenge, each call's promise, errors carrying the contract body, pipelining and the
 * in-flight bound, reports as events, reconnects with a fresh logon (a rotated key; a server that
 * stopped answering; the server's heartbeat close 4002 of a client that stalled), calls in flight
 * rejected on a drop, cancel on disconnect, and the resume after a drop (docs/API.md 16: every
 * execution reported once, numbers 1..last, a refused epoch answered with a logon without resume). Every frame a session receives is checked against
 * the AsyncAPI document through its `onFrame` and `onSend` hooks, as test/session/helpers.ts checks
 * the test's own session client: an answer against the answer of the call with its id, any other
 * frame against everything the session may send; a mismatch fails the test (the harness checks
 * `asyncApiMismatches` after each test).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type CreatedOrder,
  type DisconnectInfo,
  type Order,
  type PairStatusUpdate,
  type ResumedInfo,
  type ResumeRefusal,
  SessionConnectError,
  SessionDisconnected,
  SessionError,
  TradingSession,
  type TradingSessionOptions,
  type UserTrade,
} from "../../src/client/index.ts";
import { asyncApi } from "../e2e/asyncapi-check.ts";
import {
  expectOk,
  limit,
  market,
  placeLimit,
  sharedServer,
  type TestServer,
  type TestUser,
} from "../e2e/harness.ts";
import { waitFor } from "../wait.ts";

describe("TradingSession", () => {
  let server: TestServer;
  sharedServer((s) => {
    server = s;
  });

  /**
   * The hooks that check each frame a session receives against the AsyncAPI document: the answer of
   * a call of the document against that call's answers (the method known by the id it was sent
   * with), any other frame (hello, reports, the answer of an unknown method) against everything the
   * session may send. A session's ids count up for its life, across reconnects.
   */
  const checked = (): Pick<TradingSessionOptions, "onFrame" | "onSend"> => {
    const methods = new Map<number, string>();
    return {
      onSend: (f) => {
        if (asyncApi.hasCall(f.method)) methods.set(f.id, f.method);
      },
      onFrame: (frame) => {
        const f = typeof frame === "object" && frame !== null ? (frame as Record<string, unknown>) : null;
        const id = f !== null && "status" in f ? f.id : undefined;
        const method = typeof id === "number" ? methods.get(id) : undefined;
        if (method !== undefined) methods.delete(id as number);
        const mismatch =
          method === undefined ? asyncApi.sessionMismatch(frame) : asyncApi.answerMismatch(method, frame);
        if (mismatch !== null) server.asyncApiMismatches.push(mismatch);
      },
    };
  };

  const open = (user: TestUser, extra: Partial<TradingSessionOptions> = {}) =>
    TradingSession.connect({
      baseUrl: () => server.origin,
      apiToken: user.apiToken,
      secretKey: user.secretKey,
      ...extra,
      ...checked(),
    });

  /** Blocks this process's event loop for `ms`: nothing is read or sent meanwhile (a stalled client). */
  const stall = (ms: number): void => {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      // busy: a timer or a socket cannot run in between
    }
  };

  /** The rejection of `p`, failing when it resolves. */
  const rejection = async (p: Promise<unknown>): Promise<Error> => {
    try {
      await p;
    } catch (error) {
      return error as Error;
    }
    assert.fail("expected a rejection");
  };

  it("logs on with the HMAC of the challenge and answers each call's promise with its result", async () => {
    const u = await server.newUser({ usdt: "10000", btc: "2" });
    const s = await open(u, { heartbeatSeconds: 20 });
    assert.deepEqual(s.logonResult, {
      uid: u.uid,
      cancelOnDisconnect: false,
      heartbeatSeconds: 20,
      reports: true,
    });
    assert.equal(s.connected, true);

    const o = await s.createOrder({ ...limit("btc_usdt", "buy", "100", "1"), clientOrderId: "s-1" });
    assert.equal(o.clientOrderId, "s-1");
    assert.equal(typeof o.updateTime, "string");
    assert.deepEqual(await s.order(o.id), expectOk(await u.client.order(o.id)));
    assert.deepEqual(await s.orderByClientId("s-1"), await s.order(o.id));
    assert.deepEqual(
      (await s.openOrders("btc_usdt")).map((x) => x.id),
      [o.id],
    );
    const amended = await s.amendOrder({ orderId: o.id, amount: "0.5" });
    assert.equal(amended.amount, 0.5);
    const balances = await s.balances();
    assert.deepEqual(
      balances.find((b) => b.currency === "usdt"),
      { currency: "usdt", balance: "9950", reserved: "50" },
    );
    const batch = await s.createOrders([
      limit("btc_usdt", "sell", "200", "1"),
      limit("btc_usdt", "sell", "x", "1"),
    ]);
    const made = batch[0] as CreatedOrder;
    assert.equal(made.directionType, "sell");
    assert.deepEqual(Object.keys((batch[1] as { errors: object }).errors), ["price"]);
    assert.deepEqual(await s.cancelOrders([made.id, 99_999_999]), [
      { orderId: made.id },
      (await s.cancelOrders([99_999_999]))[0],
    ]);
    assert.deepEqual(await s.cancelOrder(o.id), []);
    await s.createOrder(limit("eth_usdt", "buy", "10", "1"), { expiresAt: Date.now() + 60_000 });
    assert.equal((await s.cancelAllOrders("eth_usdt")).cancelled.length, 1);
    assert.deepEqual(await s.cancelAllOrders(), { cancelled: [] });
    assert.deepEqual(await s.cancelAllAfter(0), { triggerTime: 0 });
    const { serverTime } = await s.ping();
    assert.ok(Math.abs(serverTime - Date.now()) < 5000);
    assert.deepEqual(await s.call("order.get", { orderId: o.id }), await s.order(o.id));
    await s.close();
    assert.equal(s.connected, false);
  });

  it("rejects a call with the contract's error body, and refuses wrong credentials at connect", async () => {
    const u = await server.newUser({ usdt: "100" });
    const s = await open(u, { lang: "ru" });
    const tooBig = await rejection(s.createOrder(limit("btc_usdt", "buy", "100", "5")));
    assert.ok(tooBig instanceof SessionError);
    assert.equal(tooBig.status, 400);
    assert.equal(tooBig.method, "order.create");
    assert.deepEqual(Object.keys(tooBig.errors), ["amount"]);
    assert.match(tooBig.errors.amount[0], /[а-яА-Я]/, "messages in the upgrade's language");
    assert.equal(Object.getPrototypeOf(tooBig.errors), null);
    const missing = await rejection(s.order(123_456_789));
    assert.ok(missing instanceof SessionError);
    assert.equal(missing.status, 404);
    assert.deepEqual(Object.keys(missing.body.codes), ["orderId"]);
    const expired = await rejection(s.createOrder(limit("btc_usdt", "buy", "1", "1"), { expiresAt: 1 }));
    assert.deepEqual((expired as SessionError).codes.expiresAt, ["REQUEST_EXPIRED"]);
    const unknown = await rejection(s.call("no.such.call", {}));
    assert.deepEqual(Object.keys((unknown as SessionError).errors), ["method"]);
    assert.equal(s.connected, true, "errors leave the session up");
    await s.close();

    const wrong = await rejection(open({ ...u, secretKey: "0".repeat(64) }));
    assert.ok(wrong instanceof SessionConnectError);
    assert.equal(wrong.error?.status, 401);
    assert.deepEqual(Object.keys(wrong.error?.errors ?? {}), ["auth"]);
    const badSetting = await rejection(open(u, { heartbeatSeconds: 500 }));
    assert.deepEqual(Object.keys((badSetting as SessionConnectError).error?.errors ?? {}), [
      "heartbeatSeconds",
    ]);
  });

  it("pipelines 200 creates and resolves them in order", async () => {
    const u = await server.newUser({ usdt: "1000000" });
    const s = await open(u);
    const resolved: number[] = [];
    const calls = Array.from({ length: 200 }, (_, i) =>
      s.createOrder(limit("btc_usdt", "buy", String(100 + i), "1")).then((o) => {
        resolved.push(i);
        return o;
      }),
    );
    assert.equal(s.inFlight, 200, "all sent before the first answer");
    const orders = await Promise.all(calls);
    assert.deepEqual(
      resolved,
      calls.map((_, i) => i),
    );
    assert.deepEqual(
      orders.map((o) => o.price),
      calls.map((_, i) => 100 + i),
    );
    for (let i = 1; i < orders.length; i++) assert.ok(orders[i].id > orders[i - 1].id);
    await s.close();
  });

  it("keeps at most maxInFlight calls unanswered, so a burst beyond the server's 1,000 is never refused", async () => {
    const u = await server.newUser();
    const s = await open(u);
    let most = 0;
    const calls = Array.from({ length: 1500 }, () =>
      s.ping().then((r) => {
        most = Math.max(most, s.inFlight);
        return r;
      }),
    );
    assert.equal(s.inFlight, 1000);
    assert.equal(s.queued, 500);
    const answers = await Promise.all(calls);
    assert.equal(answers.length, 1500);
    assert.ok(most <= 1000);

    const narrow = await open(u, { maxInFlight: 3 });
    const few = Array.from({ length: 10 }, () => narrow.ping());
    assert.deepEqual([narrow.inFlight, narrow.queued], [3, 7]);
    await Promise.all(few);
    await Promise.all([s.close(), narrow.close()]);
  });

  it("delivers the reports of a call to listeners only after the code awaiting its answer ran on", async () => {
    const u = await server.newUser({ usdt: "1000" });
    const s = await open(u);
    // A bot that knows its orders by the ids it awaited, through a wrapper of its own.
    const known = new Set<number>();
    const place = async (price: string) => {
      const o = await s.createOrder(limit("btc_usdt", "buy", price, "0.01"));
      await Promise.resolve();
      known.add(o.id);
      return o.id;
    };
    const unknown: number[] = [];
    const reported: number[] = [];
    s.on("order", (o) => {
      reported.push(o.id);
      if (!known.has(o.id)) unknown.push(o.id);
    });
    const ids = [await place("100"), await place("101")];
    ids.push(...(await Promise.all(["102", "103", "104", "105"].map(place))));
    await waitFor(() => ids.every((id) => reported.includes(id)), { what: "a report of every order" });
    assert.deepEqual(unknown, [], "reports of orders whose create had not resolved yet");
    await s.cancelAllOrders("btc_usdt");
    await s.close();
  });

  it("emits reports as events: its own resting order filled by another user's taker", async () => {
    const maker = await server.newUser({ btc: "1" });
    const taker = await server.newUser({ usdt: "1000" });
    const s = await open(maker);
    const orders: Order[] = [];
    const trades: UserTrade[] = [];
    s.on("order", (o) => orders.push(o));
    s.on("trade", (t) => trades.push(t));
    const resting = await s.createOrder(limit("btc_usdt", "sell", "300", "1"));
    expectOk(await taker.client.createOrder(limit("btc_usdt", "buy", "300", "0.4")));
    await waitFor(() => trades.length === 1 && orders.some((o) => o.amountUsed === 0.4), {
      what: "the maker's fill as order and trade events",
      detail: () => JSON.stringify({ orders, trades }),
    });
    assert.deepEqual(
      trades.map((t) => [t.pairName, t.directionType, t.price, t.amount]),
      [["btc_usdt", "sell", 300, 0.4]],
    );
    assert.ok(orders.every((o) => o.id === resting.id));
    await s.close();

    const quiet = await open(maker, { reports: false });
    let heard = 0;
    quiet.on("order", () => heard++);
    await quiet.cancelOrder(resting.id);
    await quiet.ping();
    assert.equal(heard, 0, "reports: false turns them off");
    await quiet.close();
  });

  it("emits a pair's status change as a pairStatus event, with or without reports", async () => {
    const user = await server.newUser();
    const s = await open(user, { reports: false });
    const updates: PairStatusUpdate[] = [];
    const others: unknown[] = [];
    s.on("pairStatus", (u) => updates.push(u));
    s.on("event", (f) => others.push(f));
    try {
      expectOk(await server.admin.setPairStatus("eth_btc", "cancelOnly"));
      expectOk(await server.admin.setPairStatus("eth_btc", "trading"));
      await waitFor(() => updates.length === 2, {
        what: "two pairStatus events",
        detail: () => JSON.stringify({ updates, others }),
      });
      assert.deepEqual(updates, [
        { pairName: "eth_btc", status: "cancelOnly" },
        { pairName: "eth_btc", status: "trading" },
      ]);
      assert.deepEqual(others, []);
    } finally {
      await s.close();
    }
  });

  it("reconnects with a fresh logon when the server ends the session for a revoked key, with the new key", async () => {
    const u = await server.newUser({ usdt: "100" });
    let creds = { apiToken: u.apiToken, secretKey: u.secretKey };
    const s = await TradingSession.connect({
      baseUrl: () => server.origin,
      credentials: () => creds,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
      ...checked(),
    });
    const events: string[] = [];
    s.on("disconnect", (d) => events.push(`disconnect ${d.code} ${d.reconnecting}`));
    s.on("logon", (r, again) => events.push(`logon ${r.uid === u.uid} ${again}`));
    const next = expectOk(await server.admin.createApiKey(u.uid));
    creds = next;
    expectOk(await server.admin.revokeApiKey(u.apiToken));
    await waitFor(() => events.includes("logon true true"), {
      what: "the logon after the reconnect",
      detail: () => events.join(", "),
    });
    assert.deepEqual(events, ["disconnect 4001 true", "logon true true"]);
    assert.equal((await s.balances()).find((b) => b.currency === "usdt")?.balance, "100");

    // Revoked again with no new key for the session: the fresh logon is refused and it ends for good.
    // (The test's own REST client moves to a third key, for the clean-up after the test.)
    const third = expectOk(await server.admin.createApiKey(u.uid));
    Object.assign(u, { ...third, client: u.client.with(third) });
    let closed: { code: number; error?: Error } | undefined;
    s.on("close", (c) => {
      closed = c;
    });
    expectOk(await server.admin.revokeApiKey(next.apiToken));
    await waitFor(() => closed, { what: "the end after a refused logon" });
    assert.equal((closed?.error as SessionConnectError).error?.status, 401);
    const after = await rejection(s.ping());
    assert.ok(after instanceof SessionDisconnected);
    assert.equal(after.sent, false);
  });

  it("rejects calls in flight when the server stops answering (heartbeat), never resends them, and reconnects", async () => {
    const u = await server.newUser({ usdt: "100" });
    const s = await open(u, {
      heartbeatSeconds: 1,
      reconnect: { initialDelayMs: 50, maxDelayMs: 300 },
      connectTimeoutMs: 1000,
    });
    const pid = server.pid!;
    const disconnects: number[] = [];
    s.on("disconnect", (d) => disconnects.push(d.code));
    let logons = 0;
    s.on("logon", () => logons++);
    process.kill(pid, "SIGSTOP");
    let create: Promise<CreatedOrder>;
    let read: Promise<unknown>;
    try {
      create = s.createOrder({ ...limit("btc_usdt", "buy", "1", "1"), clientOrderId: "lost-1" });
      read = s.balances();
      const createError = await rejection(create);
      const readError = await rejection(read);
      assert.ok(createError instanceof SessionDisconnected);
      assert.equal(createError.sent, true);
      assert.equal(createError.outcomeUnknown, true);
      assert.match(createError.message, /outcome is unknown/);
      assert.ok(readError instanceof SessionDisconnected);
      assert.equal(readError.outcomeUnknown, false);
      assert.equal(s.connected, false);
      const meanwhile = await rejection(s.ping());
      assert.equal((meanwhile as SessionDisconnected).sent, false);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    await waitFor(() => logons === 1 && s.connected, { what: "the reconnect once the server answers again" });
    assert.deepEqual(disconnects, [1006]);
    // Whether the create ran is for the client to read now; it was not sent a second time.
    const still = await s.openOrders("btc_usdt");
    assert.ok(still.length <= 1 && still.every((o) => o.clientOrderId === "lost-1"), JSON.stringify(still));
    await s.close();
  });

  it("reports the server's heartbeat close 4002 when this process stalls, rejects the call left unanswered, and logs on afresh", async () => {
    const u = await server.newUser({ usdt: "100" });
    const s = await open(u, { heartbeatSeconds: 1, reconnect: { initialDelayMs: 50, maxDelayMs: 300 } });
    try {
      const disconnects: DisconnectInfo[] = [];
      s.on("disconnect", (d) => disconnects.push(d));
      const logons: boolean[] = [];
      s.on("logon", (_, reconnected) => logons.push(reconnected));
      let ended = false;
      s.on("close", () => {
        ended = true;
      });
      // Sent before the stall: the server answers it, ahead of its close.
      const before = s.balances();
      // No frame (not even the pong to the server's ping) leaves this process for 3 s: more than the
      // heartbeat of 1 s and the server's 1 s of slack (docs/API.md 13).
      stall(3000);
      // The close waits unread in the socket: the session still counts as logged on and sends this call,
      // which the server, having ended the session, never answers.
      assert.equal(s.connected, true);
      const late = s.createOrder({ ...limit("btc_usdt", "buy", "1", "1"), clientOrderId: "late-1" });

      const balances = await before;
      assert.equal(
        balances.find((b) => b.currency === "usdt")?.balance,
        "100",
        "the answer before the close",
      );
      const lateError = await rejection(late);
      assert.ok(lateError instanceof SessionDisconnected, String(lateError));
      assert.deepEqual(
        [lateError.closeCode, lateError.sent, lateError.outcomeUnknown],
        [4002, true, true],
        lateError.message,
      );
      assert.match(lateError.message, /close 4002/);
      assert.deepEqual(
        disconnects.map((d) => [d.code, d.reconnecting]),
        [[4002, true]],
      );
      assert.equal(s.connected, false);
      const meanwhile = await rejection(s.ping());
      assert.ok(meanwhile instanceof SessionDisconnected);
      assert.equal(meanwhile.sent, false);

      await waitFor(() => logons.length === 1 && s.connected, {
        what: "the fresh logon after the 4002",
        detail: () => JSON.stringify({ logons, disconnects }),
      });
      assert.deepEqual(logons, [true]);
      assert.equal(typeof (await s.ping()).serverTime, "number");
      assert.deepEqual(await s.openOrders("btc_usdt"), [], "the call after the server's close did not run");
      assert.equal(ended, false);
    } finally {
      await s.close();
    }
  });

  it("honours cancelOnDisconnect: the session's orders are cancelled when it closes, others stay", async () => {
    const u = await server.newUser({ usdt: "1000" });
    const kept = await open(u);
    const keptOrder = await kept.createOrder(limit("btc_usdt", "buy", "10", "1"));
    const s = await open(u, { cancelOnDisconnect: true });
    assert.equal(s.logonResult?.cancelOnDisconnect, true);
    const o = await s.createOrder(limit("btc_usdt", "buy", "11", "1"));
    assert.equal(o.cancelOnDisconnect, true);
    await s.close();
    await waitFor(async () => expectOk(await u.client.order(o.id)).isCancelled, {
      what: "the cancel of the session's order after its close",
    });
    assert.equal(expectOk(await u.client.order(keptOrder.id)).isCancelled, false);
    await kept.close();
  });
  /** The `session.logon` frames a session sends, and the hooks that record them beside the AsyncAPI check. */
  const logons = () => {
    const sent: Record<string, unknown>[] = [];
    const hooks = checked();
    const onSend: TradingSessionOptions["onSend"] = (f) => {
      hooks.onSend?.(f);
      if (f.method === "session.logon") sent.push(f.params ?? {});
    };
    return { sent, hooks: { ...hooks, onSend } };
  };

  /** Cuts a session's WebSocket as a broken network would: no close frame, the client sees 1006. */
  const cut = (s: TradingSession) => (s as unknown as { ws: { terminate(): void } }).ws.terminate();

  it("resumes after a drop: every trade reported once, every order's last report the REST state, numbers 1..last", async () => {
    const [maker, taker] = await server.newUsers(2, { usdt: "100000", btc: "10" });
    const { sent, hooks } = logons();
    const s = await TradingSession.connect({
      baseUrl: () => server.origin,
      apiToken: maker.apiToken,
      secretKey: maker.secretKey,
      reconnect: { initialDelayMs: 1000, maxDelayMs: 2000 },
      ...hooks,
    });
    const numbers: number[] = [];
    const lastOrder = new Map<number, Order>();
    const trades: number[] = [];
    const seen: string[] = [];
    s.on("order", (o, n) => {
      numbers.push(n);
      lastOrder.set(o.id, o);
      assert.equal(o.execSeq, n, "the record carries the report's number");
    });
    s.on("trade", (t, n) => {
      numbers.push(n);
      trades.push(t.id);
      seen.push("trade");
    });
    s.on("resumed", (r) => seen.push(`resumed ${r.execSeq} ${r.execEpoch}`));
    s.on("logon", (_, again) => seen.push(`logon ${again}`));
    try {
      const RESTING = 6;
      const made: CreatedOrder[] = [];
      for (let i = 0; i < RESTING; i++)
        made.push(await s.createOrder(limit("btc_usdt", "sell", "20000", "0.1")));
      await waitFor(() => numbers.length === RESTING, { what: "the reports of the resting orders" });
      assert.equal(s.execSeq, RESTING);

      // One fill races the cut, two land while the session is away, the rest after it is back.
      const first = placeLimit(taker, "btc_usdt", "buy", "20000", "0.1");
      cut(s);
      await first;
      await waitFor(() => !s.connected, { what: "the drop" });
      await placeLimit(taker, "btc_usdt", "buy", "20000", "0.1");
      await placeLimit(taker, "btc_usdt", "buy", "20000", "0.1");
      assert.equal(s.connected, false, "the fills happened while the session was away");
      await waitFor(() => seen.some((e) => e.startsWith("resumed")), {
        what: "the resume",
        detail: () => seen.join(", "),
      });
      expectOk(await taker.client.createOrder(market("btc_usdt", "buy", "0.3")));

      const rest = await Promise.all(made.map(async (o) => expectOk(await maker.client.order(o.id))));
      assert.ok(
        rest.every((o) => o.amountUsed === 0.1),
        JSON.stringify(rest),
      );
      const last = expectOk(await maker.client.executions({ limit: 1 })).lastExecSeq;
      assert.equal(last, RESTING * 3, "each order: created, one trade, one fill");
      await waitFor(() => s.execSeq === last, {
        what: "every report",
        detail: () => JSON.stringify(numbers),
      });

      // The reconnect's logon resumed from the number received last; the first did not resume.
      assert.equal(sent.length, 2);
      assert.equal(sent[0].resumeFrom, undefined);
      assert.equal(typeof sent[1].resumeFrom, "number");
      assert.equal(sent[1].resumeEpoch, 1);
      assert.ok((sent[1].resumeFrom as number) >= RESTING);
      // The replay carried what the cut lost: the trades of the two fills made while away at least.
      const resumedAt = seen.findIndex((e) => e.startsWith("resumed"));
      assert.ok(seen.slice(seen.indexOf("logon true"), resumedAt).filter((e) => e === "trade").length >= 2);
      assert.equal(seen.filter((e) => e.startsWith("resumed")).length, 1);
      assert.equal(s.execEpoch, 1);

      assert.deepEqual(
        numbers,
        Array.from({ length: last }, (_, i) => i + 1),
        "strictly increasing, no gap",
      );
      const history = expectOk(await maker.client.userHistory()).items.map((t) => t.id);
      assert.deepEqual(
        [...trades].sort((a, b) => a - b),
        [...history].sort((a, b) => a - b),
      );
      assert.equal(new Set(trades).size, trades.length, "no trade twice");
      // A report is the order of 5.1 without `updateTime` (docs/API.md 12.1, `user_orders`).
      for (const { updateTime: _, ...o } of rest)
        assert.deepEqual(lastOrder.get(o.id), o, `the last report of order ${o.id}`);
    } finally {
      await s.close();
    }
  });

  it("logs on without resume when the server refuses the epoch, says so once, and resumes in the right epoch after", async () => {
    const u = await server.newUser({ usdt: "1000" });
    const { sent, hooks } = logons();
    const s = await TradingSession.connect({
      baseUrl: () => server.origin,
      apiToken: u.apiToken,
      secretKey: u.secretKey,
      resumeFrom: 0,
      resumeEpoch: 99,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
      ...hooks,
    });
    const refusals: ResumeRefusal[] = [];
    s.on("resumeRefused", (r) => refusals.push(r));
    const resumed: ResumedInfo[] = [];
    s.on("resumed", (r) => resumed.push(r));
    try {
      assert.equal(s.connected, true);
      await waitFor(() => refusals.length === 1 && s.execEpoch === 1, {
        what: "the refusal, then the epoch learnt",
      });
      assert.deepEqual(
        [refusals[0].resumeFrom, refusals[0].resumeEpoch, refusals[0].error.status],
        [0, 99, 400],
      );
      assert.deepEqual(refusals[0].error.codes.resumeFrom, ["RESUME_EPOCH"]);
      assert.deepEqual(
        sent.map((p) => [p.resumeFrom, p.resumeEpoch]),
        [
          [0, 99],
          [undefined, undefined],
        ],
      );
      const o = await s.createOrder(limit("btc_usdt", "buy", "10", "1"));
      await waitFor(() => s.execSeq === o.execSeq, { what: "the order's report" });

      cut(s);
      await waitFor(() => resumed.length === 1, { what: "the resume after the cut" });
      assert.deepEqual(sent[2], { ...sent[2], resumeFrom: o.execSeq, resumeEpoch: 1 });
      assert.deepEqual(resumed, [{ execSeq: o.execSeq, execEpoch: 1 }]);
      assert.equal(refusals.length, 1, "no second refusal");
      assert.equal(sent.length, 3);
    } finally {
      await s.close();
    }
  });
});
