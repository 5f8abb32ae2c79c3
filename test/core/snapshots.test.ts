/**
 * Snapshots of balances and candles (src/core/snapshots.ts, migration 005) on a core of real parts
 * (test/core/core-fixture.ts): a snapshot writes every changed balance and candle with the last
 * settled trade's id as its mark, a batch sealed within SNAPSHOT_MS of the last snapshot writes
 * none, and one sealed later does.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SNAPSHOT_MS } from "../../src/core/exchange.ts";
import { PERIODS } from "../../src/core/read-models/pair-market.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";
import { BUY, SELL } from "../../src/protocol/pair/engine.ts";
import { tempDir } from "../db/helpers.ts";
import { sleepUntil } from "../wait.ts";
import { BTC, placeResting, sendCreate, startCore, type TestCore, USDT } from "./core-fixture.ts";

interface BalanceRow {
  user_id: number;
  currency: string;
  available: string;
  reserved: string;
  through_trade: number;
}

/** What the exchange file holds once every committed batch is applied. */
async function stored(core: TestCore, file: string) {
  await core.writer.applied();
  const db = openDatabase(file, { readonly: true });
  try {
    const balances = db
      .prepare<[], BalanceRow>(
        "SELECT user_id, currency, available, reserved, through_trade FROM balances ORDER BY user_id, currency",
      )
      .all();
    const candles = db
      .prepare<
        [],
        { period: string; open: number; high: number; low: number; close: number; volume: number }
      >("SELECT period, open, high, low, close, volume FROM candles WHERE pair = 'btc_usdt' ORDER BY period")
      .all();
    const meta = (key: string) =>
      db.prepare<[string], number>("SELECT value FROM meta WHERE key = ?").pluck().get(key);
    return {
      balances,
      candles,
      balancesThrough: meta("balances_through"),
      candlesThrough: meta("candles_through"),
    };
  } finally {
    db.close();
  }
}

/** A balance row as the ledger holds it now. */
function ledgerRow(core: TestCore, user: number, c: number, name: string, through: number): BalanceRow {
  return {
    user_id: user,
    currency: name,
    available: core.ledger.available(user, c).toString(),
    reserved: core.ledger.reserved(user, c).toString(),
    through_trade: through,
  };
}

describe("Snapshots", () => {
  const tmp = tempDir("snapshots");
  const file = tmp.dbPath;
  // One core for the file (starting one costs seconds); each test has users of its own.
  let core: TestCore;
  before(async () => {
    core = await startCore(file);
  });
  after(async () => {
    await core?.close();
    tmp.cleanup();
  });

  it("writes every changed balance and candle, marked with the last settled trade", async () => {
    core.ledger.deposit(1, USDT, 1_000_000n);
    core.ledger.deposit(2, BTC, 10n);
    await placeResting(core, 2, SELL, 10_000, 4);
    const buy = sendCreate(core, 1, BUY, 10_000, 6);
    assert.equal(buy.code, 0);
    assert.equal((await buy.answer).err, 0);
    // One trade of 4 lots at 100.00 settled: trade id 1.
    core.exchange.snapshot();
    await core.writer.flush();
    const s = await stored(core, file);
    assert.equal(s.balancesThrough, 1);
    assert.equal(s.candlesThrough, 1);
    const expected = [
      ledgerRow(core, 1, BTC, "btc", 1),
      ledgerRow(core, 1, USDT, "usdt", 1),
      ledgerRow(core, 2, BTC, "btc", 1),
      ledgerRow(core, 2, USDT, "usdt", 1),
    ];
    assert.deepEqual(
      s.balances.filter((r) => r.user_id === 1 || r.user_id === 2),
      expected,
    );
    // The buyer holds 2 lots' worth still open at 100.00: 2 × 10_000 usdt units.
    assert.equal(expected[1].reserved, "20000");
    assert.equal(expected[0].available, "4");
    assert.equal(expected[3].available, "40000");
    // One candle per period, each the single trade.
    assert.deepEqual(s.candles.map((c) => c.period).sort(), [...PERIODS].sort());
    for (const c of s.candles)
      assert.deepEqual(
        [c.open, c.high, c.low, c.close, c.volume],
        [10_000, 10_000, 10_000, 10_000, 4],
        c.period,
      );
  });

  it("writes no balance in a batch sealed within SNAPSHOT_MS of the last snapshot, and does in one sealed after", async () => {
    core.ledger.deposit(4, USDT, 100n);
    // Past SNAPSHOT_MS since any batch of this core: the next batch takes a snapshot.
    await sleepUntil(Date.now() + SNAPSHOT_MS);
    const sealed = Date.now();
    await core.writer.flush();
    const first = await stored(core, file);
    assert.deepEqual(
      first.balances.filter((r) => r.user_id === 4),
      [ledgerRow(core, 4, USDT, "usdt", 1)],
    );
    core.ledger.deposit(4, USDT, 5n);
    await core.writer.flush();
    const within = Date.now() - sealed < SNAPSHOT_MS;
    const second = await stored(core, file);
    // On a machine so loaded that the second batch went out a whole SNAPSHOT_MS later, it rightly
    // took a snapshot: only a batch sealed within the interval must leave the row as it was.
    if (within) assert.equal(second.balances.find((r) => r.user_id === 4)!.available, "100");
    // The next batch sealed SNAPSHOT_MS after the first one writes the change.
    await sleepUntil(sealed + SNAPSHOT_MS + 1);
    await core.writer.flush();
    const third = await stored(core, file);
    assert.equal(third.balances.find((r) => r.user_id === 4)!.available, "105");
  });

  it("writes each balance changed since the last snapshot, at its latest value, when one is taken on demand (at shutdown, src/boot.ts)", async () => {
    core.ledger.deposit(3, BTC, 7n);
    core.exchange.snapshot();
    await core.writer.flush();
    core.ledger.deposit(3, BTC, 1n);
    core.ledger.deposit(3, USDT, 9n);
    core.exchange.snapshot();
    await core.writer.flush();
    const s = await stored(core, file);
    assert.deepEqual(
      s.balances.filter((r) => r.user_id === 3),
      [ledgerRow(core, 3, BTC, "btc", 1), ledgerRow(core, 3, USDT, "usdt", 1)],
    );
    assert.equal(s.balances.find((r) => r.user_id === 3 && r.currency === "btc")!.available, "8");
    // Still trade 1 the last settled: the mark stays.
    assert.equal(s.balancesThrough, 1);
  });
});
