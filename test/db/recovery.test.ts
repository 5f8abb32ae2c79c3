import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { checkPairs, loadState, type RecoveredState, resolveCurrencyScales } from "../../src/db/recovery.ts";
import { DbWriter } from "../../src/db/writer.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";
import type { CandleRow, OrderRow, TradeRow } from "../../src/protocol/db/rows.ts";
import { tempDir } from "./helpers.ts";

const tmp = tempDir("recovery");
after(tmp.cleanup);

const HOUR = 3_600_000_000;
const NOW = 1_700_000_000_000_000; // µs

/** What the scenario wrote, in the shape loadState must return. */
const trades: TradeRow[] = [];
const orders: OrderRow[] = [];
const candles1m: CandleRow[] = [];

describe("recovery", () => {
  let state: RecoveredState;

  before(async () => {
    const w = await DbWriter.start(tmp.dbPath);
    w.user(1, "uid-1", 10);
    w.user(2, "uid-2", 11);
    w.apiKey("tok-1", 1, "sec-1", 12);
    w.apiKey("tok-2", 2, "sec-2", 13);
    w.revokeKey("tok-2");
    w.nonce("tok-1", 99n);
    w.transfer(1, "usdt", 1_000_000n, "deposit", 20);
    w.transfer(2, "btc", 500n, "deposit", 21);
    w.transfer(1, "usdt", -1n, "withdraw", 22);
    w.balance(1, "usdt", 999_000n, 999n);
    w.balance(2, "btc", 400n, 100n);
    w.balance(1, "btc", 0n, 0n);

    // Orders 1..30: every third cancelled, every fifth fully used; the rest open. Plus a market
    // order (final) and the last update of an order that fills later.
    for (let id = 1; id <= 30; id++) {
      const cancelled = id % 3 === 0;
      const used = id % 5 === 0 ? 10 : id % 2;
      const row: OrderRow = {
        id,
        userId: 1 + (id % 2),
        pair: id % 4 === 0 ? "eth_usdt" : "btc_usdt",
        side: id % 2,
        type: 0,
        price: 1000 + id,
        amount: 10,
        amountUsed: used,
        isCancelled: cancelled,
        createMicro: 100 + id,
        updateMicro: 200 + id,
        flags: 0,
        clientOrderId: null,
        execSeq: 0,
        executedQuote: "0",
        stopPrice: 0,
        stopDirection: 0,
        triggerMicro: 0,
        cancelReason: 0,
        trailingDelta: 0,
        ocoId: 0,
      };
      w.order(
        id,
        row.userId,
        row.pair,
        row.side,
        row.type,
        row.price,
        row.amount,
        0,
        false,
        row.createMicro,
        row.createMicro,
      );
      w.order(
        id,
        row.userId,
        row.pair,
        row.side,
        row.type,
        row.price,
        row.amount,
        used,
        cancelled,
        row.createMicro,
        row.updateMicro,
      );
      orders.push(row);
    }
    w.order(31, 2, "btc_usdt", 0, 1, 1005, 7, 5, true, 300, 300);
    await w.flush();

    // 250 btc trades, one per 7 minutes ending just before NOW: about 205 inside the 24 h window.
    for (let i = 0; i < 250; i++) {
      const t: TradeRow = {
        id: 1 + i * 2, // ids with gaps, as when other pairs trade in between
        pair: "btc_usdt",
        price: 5000 + (i % 13),
        amount: 1 + (i % 3),
        takerOrderId: 1000 + i,
        makerOrderId: 2000 + i,
        takerUserId: 1 + (i % 2),
        makerUserId: 2 - (i % 2),
        takerSide: i % 2,
        takerType: 0,
        makerType: 0,
        timeMicro: NOW - (250 - i) * 7 * 60_000_000,
      };
      w.trade(
        t.id,
        t.pair,
        t.price,
        t.amount,
        t.takerOrderId,
        t.makerOrderId,
        t.takerUserId,
        t.makerUserId,
        t.takerSide,
        t.takerType,
        t.makerType,
        t.timeMicro,
      );
      trades.push(t);
    }
    for (let i = 0; i < 1005; i++) {
      const c: CandleRow = { startMs: 60_000 * i, open: i, high: i + 2, low: i - 1, close: i + 1, volume: 3 };
      w.candle("btc_usdt", "1m", c.startMs, c.open, c.high, c.low, c.close, c.volume);
      candles1m.push(c);
    }
    w.candle("btc_usdt", "1h", 0, 1, 9, 1, 5, 100);
    w.candle("btc_usdt", "1h", 3_600_000, 5, 6, 4, 4, 50);
    await w.close();

    const db = openDatabase(tmp.dbPath);
    state = loadState(db, ["btc_usdt", "eth_usdt"], NOW);
    db.close();
  });

  it("returns users, api keys (with revocation) and nonces", () => {
    assert.deepEqual(state.users, [
      { id: 1, uid: "uid-1", createdMicro: 10 },
      { id: 2, uid: "uid-2", createdMicro: 11 },
    ]);
    assert.deepEqual(state.apiKeys, [
      { token: "tok-1", userId: 1, secret: "sec-1", revoked: false, createdMicro: 12 },
      { token: "tok-2", userId: 2, secret: "sec-2", revoked: true, createdMicro: 13 },
    ]);
    assert.deepEqual(state.nonces, new Map([["tok-1", 99n]]));
  });

  it("returns balances as bigints and per-currency totals that balance", () => {
    assert.deepEqual(state.balances, [
      // Written by a writer without a core: each row holds every trade (migration 005).
      { userId: 1, currency: "btc", available: 0n, reserved: 0n, throughTrade: Number.MAX_SAFE_INTEGER },
      {
        userId: 1,
        currency: "usdt",
        available: 999_000n,
        reserved: 999n,
        throughTrade: Number.MAX_SAFE_INTEGER,
      },
      { userId: 2, currency: "btc", available: 400n, reserved: 100n, throughTrade: Number.MAX_SAFE_INTEGER },
    ]);
    assert.deepEqual(
      state.currencies,
      new Map([
        ["usdt", { transfers: 999_999n, balances: 999_999n }],
        ["btc", { transfers: 500n, balances: 500n }],
      ]),
    );
  });

  it("returns exactly the open orders, in id order, with every field", () => {
    const open = orders.filter((o) => !o.isCancelled && o.amountUsed < o.amount);
    assert.ok(open.length > 5);
    assert.deepEqual(state.openOrders, open);
    assert.equal(state.nextOrderId, 32);
    assert.equal(state.nextTradeId, trades.at(-1)!.id + 1);
  });

  it("returns the newest 200 trades, the 24 h window oldest first and the last price", () => {
    const btc = state.pairs.get("btc_usdt")!;
    assert.deepEqual(btc.recentTrades, trades.slice(-200).reverse());
    const window = trades.filter((t) => t.timeMicro > NOW - 24 * HOUR);
    assert.ok(window.length > 200 && window.length < 250);
    assert.deepEqual(btc.window, window);
    assert.equal(btc.lastPrice, trades.at(-1)!.price);
    assert.equal(btc.lastTimeMicro, trades.at(-1)!.timeMicro);
  });

  it("returns the newest 1000 candles of each period, oldest first", () => {
    const btc = state.pairs.get("btc_usdt")!;
    assert.deepEqual([...btc.candles.keys()], ["1h", "1m"]);
    assert.deepEqual(btc.candles.get("1m"), candles1m.slice(-1000));
    assert.deepEqual(btc.candles.get("1h"), [
      { startMs: 0, open: 1, high: 9, low: 1, close: 5, volume: 100 },
      { startMs: 3_600_000, open: 5, high: 6, low: 4, close: 4, volume: 50 },
    ]);
  });

  it("returns empty values for a pair that never traded", () => {
    assert.deepEqual(state.pairs.get("eth_usdt"), {
      recentTrades: [],
      window: [],
      lastPrice: 0,
      lastTimeMicro: 0,
      candles: new Map(),
      bookSeq: 0,
      bookMicro: 0,
      status: 0,
    });
  });

  it("keeps the last price when no trade falls in the 24 h window", () => {
    const db = openDatabase(tmp.dbPath, { readonly: true });
    const later = loadState(db, ["btc_usdt"], NOW + 48 * HOUR).pairs.get("btc_usdt")!;
    db.close();
    assert.deepEqual(later.window, []);
    assert.equal(later.recentTrades.length, 200);
    assert.equal(later.lastPrice, trades.at(-1)!.price);
  });

  it("loads a fresh database as empty state", () => {
    const db = openDatabase(`${tmp.dir}/empty.db`);
    const s = loadState(db, [], NOW);
    db.close();
    assert.equal(s.nextOrderId, 1);
    assert.equal(s.nextTradeId, 1);
    assert.deepEqual(s.openOrders, []);
    assert.deepEqual(s.currencies, new Map());
  });
});

describe("checkPairs", () => {
  it("records new pairs and accepts the same decimals again", () => {
    const db = openDatabase(`${tmp.dir}/pairs.db`);
    checkPairs(db, [{ name: "btc_usdt", priceDecimals: 2, amountDecimals: 6 }]);
    checkPairs(db, [
      { name: "btc_usdt", priceDecimals: 2, amountDecimals: 6 },
      { name: "eth_btc", priceDecimals: 6, amountDecimals: 4 },
    ]);
    assert.deepEqual(db.prepare("SELECT * FROM pairs ORDER BY name").all(), [
      { name: "btc_usdt", price_decimals: 2, amount_decimals: 6 },
      { name: "eth_btc", price_decimals: 6, amount_decimals: 4 },
    ]);
    db.close();
  });

  it("refuses a pair whose decimals differ from the stored ones, writing nothing", () => {
    const db = openDatabase(`${tmp.dir}/pairs.db`);
    assert.throws(
      () =>
        checkPairs(db, [
          { name: "ltc_usdt", priceDecimals: 2, amountDecimals: 2 },
          { name: "btc_usdt", priceDecimals: 3, amountDecimals: 6 },
        ]),
      /pair btc_usdt: configured priceDecimals 3, amountDecimals 6; the database holds priceDecimals 2, amountDecimals 6/,
    );
    assert.equal(
      db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM pairs WHERE name = 'ltc_usdt'").get()!.n,
      0,
    );
    db.close();
  });
});

describe("resolveCurrencyScales", () => {
  it("stores new scales, rescales stored integers up, keeps a larger stored scale", () => {
    const db = openDatabase(`${tmp.dir}/scales.db`);
    assert.deepEqual(
      resolveCurrencyScales(
        db,
        new Map([
          ["usdt", 4],
          ["btc", 8],
        ]),
      ),
      new Map([
        ["usdt", 4],
        ["btc", 8],
      ]),
    );
    db.prepare(
      `INSERT INTO balances (user_id, currency, available, reserved)
       VALUES (1, 'usdt', '12345', '5'), (1, 'btc', '7', '0')`,
    ).run();
    db.prepare(
      `INSERT INTO transfers (user_id, currency, amount, kind, time_micro)
       VALUES (1, 'usdt', '12350', 'deposit', 1), (1, 'usdt', '-50', 'withdraw', 2), (1, 'btc', '7', 'deposit', 3)`,
    ).run();

    // usdt 4 → 6 (×100); btc configured 6 < stored 8: keeps 8 and its integers.
    const scales = resolveCurrencyScales(
      db,
      new Map([
        ["usdt", 6],
        ["btc", 6],
      ]),
    );
    assert.deepEqual(
      scales,
      new Map([
        ["usdt", 6],
        ["btc", 8],
      ]),
    );
    assert.deepEqual(
      db.prepare("SELECT currency, available, reserved FROM balances ORDER BY currency").all(),
      [
        { currency: "btc", available: "7", reserved: "0" },
        { currency: "usdt", available: "1234500", reserved: "500" },
      ],
    );
    assert.deepEqual(db.prepare("SELECT amount FROM transfers ORDER BY id").all(), [
      { amount: "1235000" },
      { amount: "-5000" },
      { amount: "7" },
    ]);
    assert.deepEqual(db.prepare("SELECT * FROM currencies ORDER BY name").all(), [
      { name: "btc", scale: 8 },
      { name: "usdt", scale: 6 },
    ]);
    // Same configuration again: nothing changes.
    resolveCurrencyScales(
      db,
      new Map([
        ["usdt", 6],
        ["btc", 6],
      ]),
    );
    assert.equal(
      db.prepare<[], { available: string }>("SELECT available FROM balances WHERE currency = 'usdt'").get()!
        .available,
      "1234500",
    );
    db.close();
  });
});

describe("a database written under the 64-bit bound", () => {
  it("grows its scale past 2^63 and still sums to deposits − withdrawals exactly", () => {
    const db = openDatabase(`${tmp.dir}/old-bound.db`);
    resolveCurrencyScales(db, new Map([["usdt", 8]]));
    // The largest balances the old bound (2^63 − 1 units) let two accounts hold, and their transfers.
    const old = 2n ** 63n - 1n;
    db.prepare(
      `INSERT INTO balances (user_id, currency, available, reserved)
       VALUES (1, 'usdt', ?, '0'), (2, 'usdt', ?, ?)`,
    ).run(old.toString(), (old - 5n).toString(), "5");
    db.prepare(
      `INSERT INTO transfers (user_id, currency, amount, kind, time_micro)
       VALUES (1, 'usdt', ?, 'deposit', 1), (2, 'usdt', ?, 'deposit', 2)`,
    ).run(old.toString(), old.toString());

    // Fees of 6 decimals grow usdt from 8 to 14 decimals: every value × 10^6, far past 2^63.
    assert.deepEqual(resolveCurrencyScales(db, new Map([["usdt", 14]])), new Map([["usdt", 14]]));
    assert.deepEqual(
      db.prepare("SELECT typeof(available) AS a, typeof(reserved) AS r FROM balances GROUP BY 1, 2").all(),
      [{ a: "text", r: "text" }],
    );
    const state = loadState(db, [], NOW);
    const grown = old * 10n ** 6n;
    assert.deepEqual(
      state.balances.map((b) => [b.userId, b.available, b.reserved]),
      [
        [1, grown, 0n],
        [2, grown - 5_000_000n, 5_000_000n],
      ],
    );
    assert.deepEqual(state.currencies.get("usdt"), { transfers: 2n * grown, balances: 2n * grown });
    db.close();
  });
});
