/**
 * The exchange core through real parts: a real pair worker (with a deliberately tiny command
 * ring), the real database writer on a temp file, the real ledger.
 */
import assert from "node:assert/strict";
import { after, afterEach, describe, it } from "node:test";
import {
  type CommitListener,
  type Exchange,
  LIMIT,
  MARKET,
  type OrderView,
} from "../../src/core/exchange.ts";
import { FLAG_CANCEL_ON_DISCONNECT } from "../../src/core/order-options.ts";
import type { WriterOptions } from "../../src/db/writer-threads.ts";
import { Answers } from "../../src/entry/answers.ts";
import { Code } from "../../src/errors/catalogue.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";
import { BUY, SELL } from "../../src/protocol/pair/engine.ts";
import { tempDir } from "../db/helpers.ts";
import { waitFor } from "../wait.ts";
import { startCore } from "./core-fixture.ts";

const BTC = 0;
const USDT = 1;
/** Ledger units per coin: btc at scale 6 (amountDecimals), usdt at 8 (price + amount decimals). */
const BTC_UNIT = 10n ** 6n;
const USDT_UNIT = 10n ** 8n;

/** Cores not closed yet: closed after each test, passed or failed, so no thread outlives it. */
const openCores: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (openCores.length > 0) await openCores.pop()!();
});

/** The edge's map from request id to the test waiting for the answer. */
const answers = new Answers();

/** A core of real parts (test/core/core-fixture.ts) with a 4-slot command ring, answering through `answers`. */
async function core(file: string, writer: WriterOptions = {}, listener: CommitListener | null = null) {
  const c = await startCore(file, { commandSlots: 4, writer, listener, answers });
  openCores.push(c.close);
  return c;
}

/** Places an order (price in ticks, amount in lots) and resolves with its answer. */
function place(
  exchange: Exchange,
  user: number,
  type: 0 | 1,
  side: 0 | 1,
  price: number,
  amount: number,
  session = 0,
  expiresAt = 0,
): Promise<{ err: number; order: OrderView | null }> {
  return new Promise((resolve) => {
    const request = answers.order((err, order) => resolve({ err, order }));
    const code = exchange.createOrder(
      user,
      0,
      { type, side, price, amount, flags: 0, clientOrderId: undefined, expiresAt, session },
      request,
    );
    if (code === 0) return;
    // Refused at once (nothing changed); a full queue would be a failure of the test itself.
    answers.drop(request);
    assert.notEqual(code, Code.BUSY);
    resolve({ err: code, order: null });
  });
}

describe("Exchange core", () => {
  const tmp = tempDir("exchange-core");
  after(() => tmp.cleanup());

  it("holds commands while the pair's command ring is full and answers every one in order", async () => {
    const { exchange, ledger, market, close } = await core(tmp.dbPath);
    ledger.deposit(0, BTC, 1_000n * BTC_UNIT);
    ledger.deposit(1, USDT, 10_000_000n * USDT_UNIT);

    // 200 sells of 1 lot at 100.00..101.99 by user 0, then one market buy of 150 lots by user 1:
    // far more commands than the 4-slot ring holds, all sent in one tick.
    const sells = Array.from({ length: 200 }, (_, i) => place(exchange, 0, LIMIT, SELL, 10_000 + i, 1));
    const buy = place(exchange, 1, MARKET, BUY, 0, 150);
    const answers = await Promise.all(sells);
    const market150 = await buy;

    assert.deepEqual(
      answers.map((a) => [a.err, a.order?.id]),
      Array.from({ length: 200 }, (_, i) => [0, i + 1]),
    );
    assert.equal(market150.err, 0);
    assert.equal(market150.order?.id, 201);
    assert.equal(market150.order?.amountUsed, 0.00015);
    // Cost: the 150 cheapest asks, 100.00 + 100.01 + ... + 101.49 for one lot each (ticks × lots).
    let cost = 0n;
    for (let i = 0; i < 150; i++) cost += BigInt(10_000 + i);
    assert.equal(ledger.available(1, USDT), 10_000_000n * USDT_UNIT - cost);
    assert.equal(ledger.available(0, USDT), cost);
    assert.equal(ledger.reserved(0, BTC), 50n);
    assert.equal(market.asks.size, 50);
    assert.equal(market.asks.priceAt(0), 10_150);
    assert.deepEqual(ledger.check([1_000n * BTC_UNIT, 10_000_000n * USDT_UNIT]), []);
    assert.equal(exchange.inFlight(0), 0);
    await close();
  });

  it("decides an order sent while the same user's market buy is in flight against what that buy leaves", async () => {
    const { exchange, ledger, close } = await core(`${tmp.dbPath}-2`);
    ledger.deposit(0, BTC, 10n * BTC_UNIT);
    ledger.deposit(1, USDT, 1_000n * USDT_UNIT);
    // Asks: 1 btc (10^6 lots) at 100.00 usdt.
    assert.equal((await place(exchange, 0, LIMIT, SELL, 10_000, 1_000_000)).err, 0);

    // In one tick: a market buy of 2 btc (costs 200 usdt) and a limit buy of 8 btc at 100.00
    // (holds 800 usdt). Together they need exactly the 1,000 usdt the user has; the limit buy
    // must not be refused because the market buy briefly holds the whole balance.
    const market = place(exchange, 1, MARKET, BUY, 0, 2_000_000);
    const limit = place(exchange, 1, LIMIT, BUY, 10_000, 8_000_000);
    // A third order beyond the balance is still refused for funds.
    const third = place(exchange, 1, LIMIT, BUY, 10_000, 1);
    const [m, l, t] = await Promise.all([market, limit, third]);
    assert.equal(m.err, 0);
    // Only 1 btc was on offer: the market buy filled 1 btc (100 usdt) and cancelled the rest.
    assert.equal(m.order?.amountUsed, 1);
    assert.equal(m.order?.isCancelled, true);
    assert.equal(l.err, 0);
    assert.equal(l.order?.amountUsed, 0);
    assert.equal(t.err, 0);
    // 1,000 − 100 spent − 800 held by the limit buy − 0.0001 held by the third = 99.9999 usdt.
    assert.equal(ledger.reserved(1, USDT), 800n * USDT_UNIT + 10_000n);
    assert.equal(
      ledger.available(1, USDT),
      1_000n * USDT_UNIT - 100n * USDT_UNIT - 800n * USDT_UNIT - 10_000n,
    );

    // Now a limit buy that the remaining balance cannot cover is refused at once.
    const refused = await place(exchange, 1, LIMIT, BUY, 10_000, 100_000_000);
    assert.equal(refused.err, Code.INSUFFICIENT_FUNDS);
    assert.deepEqual(ledger.check([10n * BTC_UNIT, 1_000n * USDT_UNIT]), []);
    await close();
  });

  it("releases the price improvement of a limit buy filled below its limit", async () => {
    const { exchange, ledger, close } = await core(`${tmp.dbPath}-improve`);
    try {
      ledger.deposit(0, BTC, 1n * BTC_UNIT);
      ledger.deposit(1, USDT, 1_000n * USDT_UNIT);
      assert.equal((await place(exchange, 0, LIMIT, SELL, 10_000, 300_000)).err, 0);
      // 0.5 btc at 101.00: 0.3 fill at 100.00 (the maker's price), 0.2 rests at 101.00.
      const buy = await place(exchange, 1, LIMIT, BUY, 10_100, 500_000);
      assert.equal(buy.order?.amountUsed, 0.3);
      assert.equal(ledger.reserved(1, USDT), 10_100n * 200_000n);
      assert.equal(ledger.available(1, USDT), 1_000n * USDT_UNIT - 10_000n * 300_000n - 10_100n * 200_000n);
      assert.equal(ledger.available(1, BTC), 300_000n);
      assert.deepEqual(ledger.check([1n * BTC_UNIT, 1_000n * USDT_UNIT]), []);
    } finally {
      await close();
    }
  });

  it("fills a market buy whose cost is exactly the available balance", async () => {
    const { exchange, ledger, close } = await core(`${tmp.dbPath}-exact`);
    try {
      ledger.deposit(0, BTC, 1n * BTC_UNIT);
      // 0.4 btc at 100.00 and 0.1 at 100.01: 40.001 usdt in all, exactly what the buyer has.
      const cost = 10_000n * 400_000n + 10_001n * 100_000n;
      ledger.deposit(1, USDT, cost);
      assert.equal((await place(exchange, 0, LIMIT, SELL, 10_000, 400_000)).err, 0);
      assert.equal((await place(exchange, 0, LIMIT, SELL, 10_001, 100_000)).err, 0);
      const m = await place(exchange, 1, MARKET, BUY, 0, 500_000);
      assert.equal(m.err, 0);
      assert.equal(m.order?.amountUsed, 0.5);
      assert.equal(m.order?.isCancelled, false);
      assert.equal(ledger.available(1, USDT), 0n);
      assert.equal(ledger.reserved(1, USDT), 0n);
      // One tick more is refused, nothing changed.
      ledger.deposit(2, USDT, cost - 1n);
      assert.equal((await place(exchange, 0, LIMIT, SELL, 10_000, 400_000)).err, 0);
      assert.equal((await place(exchange, 0, LIMIT, SELL, 10_001, 100_000)).err, 0);
      const refused = await place(exchange, 2, MARKET, BUY, 0, 500_000);
      assert.equal(refused.err, Code.INSUFFICIENT_FUNDS);
      assert.equal(ledger.available(2, USDT), cost - 1n);
    } finally {
      await close();
    }
  });

  it("builds stream records only for the channels someone holds", async () => {
    const calls: string[] = [];
    let wantTrades = false;
    const listener: CommitListener = {
      wantsOrders: (user) => user === 1,
      wantsUserTrades: (user) => user === 0,
      wantsTrades: () => wantTrades,
      orderChanged: (user, view) => calls.push(`order ${user} ${view.id}`),
      userTrade: (user, view) => calls.push(`trade ${user} ${view.id}`),
      publicTrades: (_pair, trades) => calls.push(`public ${trades.length}`),
      levelsChanged: () => calls.push("levels"),
      bboChanged: () => {},
      l3Changed: () => {},
    };
    const { exchange, ledger, close } = await core(`${tmp.dbPath}-views`, {}, listener);
    ledger.deposit(0, BTC, 10n * BTC_UNIT);
    ledger.deposit(1, USDT, 10_000n * USDT_UNIT);
    try {
      const sell = await place(exchange, 0, LIMIT, SELL, 10_000, 100);
      const buy = await place(exchange, 1, LIMIT, BUY, 10_000, 40);
      wantTrades = true;
      await place(exchange, 1, LIMIT, BUY, 10_000, 10);
      // User 0's orders and user 1's trades are wanted by nobody; public trades only once asked for.
      assert.deepEqual(calls, [
        "levels",
        "levels",
        "trade 0 1",
        `order 1 ${buy.order!.id}`,
        "levels",
        "public 1",
        "trade 0 2",
        `order 1 ${buy.order!.id + 1}`,
      ]);
      assert.equal(sell.err, 0);
    } finally {
      await close();
    }
  });

  it("moves the user_orders mark only past orders whose records the writer has, at every commit", async () => {
    const file = tmp.dbPath.replace(/\.db$/, "-marks.db");
    // Each batch's rows in a transaction of their own, as soon as the batch is journaled.
    const { exchange, ledger, writer, close } = await core(file, {
      userRowsFlushAt: 3,
      applyAfterBatches: 1,
    });
    ledger.deposit(0, BTC, 1_000n * BTC_UNIT);
    ledger.deposit(1, USDT, 10_000_000n * USDT_UNIT);
    // At every commit: each order at or below the mark has its user_orders row.
    const ro = openDatabase(file, { readonly: true });
    const through = ro
      .prepare<[], number>("SELECT value FROM meta WHERE key = 'user_orders_through'")
      .pluck();
    const missing = ro
      .prepare<[number], number>(
        `SELECT COUNT(*) FROM orders o WHERE o.id <= ? AND NOT EXISTS
           (SELECT 1 FROM user_orders u WHERE u.user_id = o.user_id AND u.order_id = o.id)`,
      )
      .pluck();
    const marks: number[] = [];
    const violations: string[] = [];
    const checks: Promise<void>[] = [];
    let checking = true;
    writer.beforeSend(() => {
      if (!checking) return;
      // Once the batch's rows are in their tables (they follow its journal row).
      writer.afterCommit(() =>
        checks.push(
          writer.applied().then(() => {
            const t = through.get()!;
            marks.push(t);
            const n = missing.get(t)!;
            if (n > 0) violations.push(`${n} orders at or below the mark ${t} without their row`);
          }),
        ),
      );
    });
    // Four waves of 30 sells and 30 buys, each in one tick through the 4-slot ring: commands wait, a
    // few are in the worker at each commit, and their ids are below ids already answered on the
    // other side. The waves make sure of several commits however the machine schedules them.
    try {
      for (let wave = 0; wave < 4; wave++) {
        const orders: Promise<{ err: number }>[] = [];
        for (let i = 0; i < 30; i++) {
          orders.push(place(exchange, 0, LIMIT, SELL, 10_000 + (i % 7), 1));
          orders.push(place(exchange, 1, LIMIT, BUY, 10_000 + (i % 5), 1));
        }
        for (const o of await Promise.all(orders)) assert.equal(o.err, 0);
        await writer.flush();
      }
      checking = false;
      await Promise.all(checks);
      assert.deepEqual(violations, []);
      // The mark moved during the run, not only at the end.
      const moved = new Set(marks).size;
      assert.ok(moved >= 3, `${marks.length} commits checked, ${moved} distinct marks`);
      assert.ok(marks[marks.length - 1] > 200, `the mark reached ${marks[marks.length - 1]}`);
    } finally {
      ro.close();
      await close();
    }
  });

  it("tags orders with their session and cancels a session's open orders through the normal path", async () => {
    const file = tmp.dbPath.replace(/\.db$/, "-sessions.db");
    const streamed: OrderView[] = [];
    const { exchange, ledger, writer, close } = await core(
      file,
      {},
      {
        wantsOrders: (user) => user === 0,
        wantsUserTrades: () => false,
        wantsTrades: () => false,
        orderChanged: (_user, view) => streamed.push(view),
        userTrade: () => {},
        publicTrades: () => {},
        levelsChanged: () => {},
        bboChanged: () => {},
        l3Changed: () => {},
      },
    );
    ledger.deposit(0, BTC, 10n * BTC_UNIT);
    ledger.deposit(1, USDT, 10_000n * USDT_UNIT);
    const ro = openDatabase(file, { readonly: true });
    try {
      // Session 7: three sells, one partly filled; session 8: one sell; no session: one sell.
      const s7 = [
        await place(exchange, 0, LIMIT, SELL, 10_000, 100, 7),
        await place(exchange, 0, LIMIT, SELL, 10_100, 100, 7),
        await place(exchange, 0, LIMIT, SELL, 10_200, 100, 7),
      ];
      const s8 = await place(exchange, 0, LIMIT, SELL, 10_300, 100, 8);
      const plain = await place(exchange, 0, LIMIT, SELL, 10_400, 100);
      for (const o of [...s7, s8]) assert.equal(o.order?.cancelOnDisconnect, true);
      assert.equal(plain.order?.cancelOnDisconnect, undefined);
      assert.equal("cancelOnDisconnect" in plain.order!, false);
      assert.equal((await place(exchange, 1, LIMIT, BUY, 10_000, 40)).err, 0);
      assert.equal(ledger.reserved(0, BTC), 460n);

      streamed.length = 0;
      exchange.cancelSessionOrders(7);
      // Committed like any cancel: the stream is told after the commit, the holds are released.
      const ids7 = s7.map((o) => o.order!.id);
      await waitFor(() => streamed.length === 3, { what: "the three cancels of session 7 streamed" });
      assert.deepEqual(
        streamed
          .map((v) => [v.id, v.isCancelled, v.cancelOnDisconnect])
          .sort((a, b) => Number(a[0]) - Number(b[0])),
        ids7.map((id) => [id, true, true]),
      );
      assert.equal(ledger.reserved(0, BTC), 200n);
      // The rows: cancelled, with the flag kept; session 8 and the untagged order still open.
      await writer.flush();
      await writer.applied();
      const row = ro.prepare<[number], { is_cancelled: number; flags: number }>(
        "SELECT is_cancelled, flags FROM orders WHERE id = ?",
      );
      for (const id of ids7) {
        assert.equal(row.get(id)!.is_cancelled, 1);
        assert.equal(row.get(id)!.flags & FLAG_CANCEL_ON_DISCONNECT, FLAG_CANCEL_ON_DISCONNECT);
      }
      assert.equal(row.get(s8.order!.id)!.is_cancelled, 0);
      assert.equal(row.get(plain.order!.id)!.is_cancelled, 0);
      assert.equal(row.get(plain.order!.id)!.flags & FLAG_CANCEL_ON_DISCONNECT, 0);
      assert.deepEqual(exchange.openOrderIds(0, 0).sort(), [s8.order!.id, plain.order!.id].sort());
      // Again, or an unknown or zero tag: nothing left to cancel.
      streamed.length = 0;
      exchange.cancelSessionOrders(7);
      exchange.cancelSessionOrders(99);
      exchange.cancelSessionOrders(0);
      await place(exchange, 0, LIMIT, SELL, 10_500, 1);
      assert.equal(streamed.length, 1);
      assert.deepEqual(ledger.check([10n * BTC_UNIT, 10_000n * USDT_UNIT]), []);
    } finally {
      ro.close();
      await close();
    }
  });

  it("cancels a session's create still in the worker once it rests", async () => {
    const { exchange, ledger, close } = await core(`${tmp.dbPath}-session-inflight`);
    ledger.deposit(0, BTC, 10n * BTC_UNIT);
    try {
      // Many creates in one tick through the 4-slot ring, then the session ends at once: those in
      // the worker and those resting are cancelled; those still waiting for the ring are not yet
      // created and are the session's to stop sending.
      const orders = Array.from({ length: 3 }, (_, i) => place(exchange, 0, LIMIT, SELL, 10_000 + i, 1, 5));
      exchange.cancelSessionOrders(5);
      const answered = await Promise.all(orders);
      for (const o of answered) assert.equal(o.err, 0);
      await waitFor(() => ledger.reserved(0, BTC) === 0n && exchange.openOrderIds(0, 0).length === 0, {
        what: "every order of session 5 cancelled and committed",
        detail: () => `reserved ${ledger.reserved(0, BTC)}, open ${exchange.openOrderIds(0, 0)}`,
      });
    } finally {
      await close();
    }
  });

  it("refuses a command whose deadline passed before its risk check, changing nothing", async () => {
    const { exchange, ledger, close } = await core(`${tmp.dbPath}-deadline`);
    ledger.deposit(0, BTC, 10n * BTC_UNIT);
    try {
      const past = Date.now() - 1;
      assert.equal((await place(exchange, 0, LIMIT, SELL, 10_000, 1, 0, past)).err, Code.REQUEST_EXPIRED);
      assert.equal(ledger.reserved(0, BTC), 0n);
      const o = await place(exchange, 0, LIMIT, SELL, 10_000, 1, 0, Date.now() + 60_000);
      assert.equal(o.err, 0);
      const open = exchange.ownOpenOrder(0, o.order!.id)!;
      assert.equal(exchange.amendOrder(open, 10_100, 2, 0, past), Code.REQUEST_EXPIRED);
      assert.equal(exchange.cancelOrder(0, open.id, 0, past), Code.REQUEST_EXPIRED);
      assert.equal(exchange.cancelAll(0, -1, 0, past), Code.REQUEST_EXPIRED);
      assert.equal(ledger.reserved(0, BTC), 1n);
      assert.deepEqual(exchange.openOrderIds(0, 0), [open.id]);
    } finally {
      await close();
    }
  });
});
