/**
 * The port the core writes its records through (src/core/record-sink.ts holds only its type): what
 * its comments promise, checked on the part that implements it, a real DbWriter (src/db/writer.ts)
 * on a temp SQLite file. Each record reaches its table; an order's update changes only what an
 * update may; `afterCommit` callbacks run in order once what was added before them is committed;
 * `beforeSend` hooks run as a batch is sealed and what they add joins it, then `settledOrderIds` is
 * asked; balances carry the `tradesThroughMark`; and the stats count batches and records as added.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { RecordSink, WriterStats } from "../../src/core/record-sink.ts";
import { DbWriter } from "../../src/db/writer.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";
import { BUY, SELL } from "../../src/protocol/pair/engine.ts";
import { tempDir } from "../db/helpers.ts";

describe("RecordSink as DbWriter implements it", () => {
  const tmp = tempDir("record-sink");
  let writer: DbWriter;
  /** The writer as the core sees it. */
  let sink: RecordSink;
  /** What `tradesThroughMark` answers now. */
  let mark = 0;

  before(async () => {
    writer = await DbWriter.start(tmp.dbPath);
    sink = writer;
    sink.tradesThroughMark(() => mark);
  });
  after(async () => {
    await writer?.close();
    tmp.cleanup();
  });

  /** Resolves once everything added so far is committed (the core's afterCommit). */
  const committed = () => new Promise<void>((resolve) => sink.afterCommit(resolve));

  /** Runs `fn` on a read-only connection once the committed rows are in their tables. */
  async function read<T>(fn: (db: ReturnType<typeof openDatabase>) => T): Promise<T> {
    await writer.applied();
    const db = openDatabase(tmp.dbPath, { readonly: true });
    try {
      return fn(db);
    } finally {
      db.close();
    }
  }

  it("stores an order, and an update changes its price, amounts, cancellation and update time only", async () => {
    sink.insertOrder(10, 7, "btc_usdt", BUY, 0, 9_000, 5, 0, false, 1_000, 1_000, 4, "cid-10");
    sink.updateOrder(10, 9_100, 4, 1, true, 2_000);
    await committed();
    const row = await read((db) =>
      db
        .prepare(
          "SELECT id, user_id, pair, side, type, price, amount, amount_used, is_cancelled, create_micro, update_micro, flags, client_order_id FROM orders WHERE id = 10",
        )
        .get(),
    );
    assert.deepEqual(row, {
      id: 10,
      user_id: 7,
      pair: "btc_usdt",
      side: BUY,
      type: 0,
      price: 9_100,
      amount: 4,
      amount_used: 1,
      is_cancelled: 1,
      create_micro: 1_000,
      update_micro: 2_000,
      flags: 4,
      client_order_id: "cid-10",
    });
  });

  it("stores a trade whose two sides, as the trade_sides view reads them (migration 003), have the maker's side the opposite of the taker's and each its own type and fee rate", async () => {
    sink.trade(3, "btc_usdt", 10_000, 2, 11, 10, 8, 7, SELL, 1, 0, 5_000, 2_000, 1_000);
    await committed();
    const { trade, sides } = await read((db) => ({
      trade: db
        .prepare(
          "SELECT id, price, amount, taker_order_id, maker_order_id, taker_user_id, maker_user_id FROM trades",
        )
        .all(),
      sides: db
        .prepare(
          "SELECT user_id, side, type, price, amount, fee_rate FROM trade_sides WHERE trade_id = 3 ORDER BY user_id",
        )
        .all(),
    }));
    assert.deepEqual(trade, [
      {
        id: 3,
        price: 10_000,
        amount: 2,
        taker_order_id: 11,
        maker_order_id: 10,
        taker_user_id: 8,
        maker_user_id: 7,
      },
    ]);
    assert.deepEqual(sides, [
      { user_id: 7, side: BUY, type: 0, price: 10_000, amount: 2, fee_rate: 1_000 },
      { user_id: 8, side: SELL, type: 1, price: 10_000, amount: 2, fee_rate: 2_000 },
    ]);
  });

  it("keeps the last balance of a key within a batch, stamped with the trades-through mark, and counts every record as added", async () => {
    await committed();
    const before: WriterStats = writer.stats;
    mark = 3;
    sink.balance(7, "usdt", 100n, 0n);
    sink.balance(7, "usdt", 90n, 10n);
    // Beyond a double's 53 bits: stored as exact text.
    sink.balance(7, "usdt", 2n ** 70n, 5n);
    sink.meta("book_seq:btc_usdt", 42);
    sink.candle("btc_usdt", "1m", 60_000, 10_000, 10_100, 9_900, 10_050, 12);
    sink.mmpSetting(7, "btc_usdt", 10, 50_000, 30);
    await committed();
    const after: WriterStats = writer.stats;
    assert.equal(
      after.records - before.records,
      6,
      "records as added, before the repeated upserts are coalesced",
    );
    assert.ok(after.batches > before.batches, "their batch was acknowledged");
    const rows = await read((db) => ({
      balances: db.prepare("SELECT available, reserved, through_trade FROM balances WHERE user_id = 7").all(),
      meta: db.prepare("SELECT value FROM meta WHERE key = 'book_seq:btc_usdt'").pluck().get(),
      candle: db
        .prepare(
          "SELECT open, high, low, close, volume FROM candles WHERE pair = 'btc_usdt' AND start_ms = 60000",
        )
        .get(),
      mmp: db
        .prepare("SELECT interval_seconds, qty_limit, frozen_seconds FROM mmp_settings WHERE user_id = 7")
        .get(),
    }));
    assert.deepEqual(rows.balances, [{ available: (2n ** 70n).toString(), reserved: "5", through_trade: 3 }]);
    assert.equal(rows.meta, 42);
    assert.deepEqual(rows.candle, { open: 10_000, high: 10_100, low: 9_900, close: 10_050, volume: 12 });
    assert.deepEqual(rows.mmp, { interval_seconds: 10, qty_limit: 50_000, frozen_seconds: 30 });
  });

  it("runs afterCommit callbacks once each, in the order registered, each after what was added before it is committed", async () => {
    await committed();
    const before = writer.stats.records;
    const order: string[] = [];
    let recordsAtA = -1;
    sink.meta("k1", 1);
    sink.afterCommit(() => {
      order.push("a");
      recordsAtA = writer.stats.records;
    });
    sink.afterCommit(() => order.push("b"));
    // Added after the first two: their batch may be a later one, never an earlier one.
    sink.meta("k2", 2);
    sink.afterCommit(() => order.push("c"));
    await committed();
    assert.deepEqual(order, ["a", "b", "c"]);
    assert.ok(recordsAtA - before >= 1, "k1 was committed when the callback after it ran");
    const values = await read((db) =>
      db.prepare("SELECT key, value FROM meta WHERE key IN ('k1', 'k2') ORDER BY key").all(),
    );
    assert.deepEqual(values, [
      { key: "k1", value: 1 },
      { key: "k2", value: 2 },
    ]);
  });

  it("runs beforeSend hooks as each batch is sealed, the records they add joining that batch, then asks settledOrderIds", async () => {
    const calls: string[] = [];
    let sealed = 0;
    sink.beforeSend(() => {
      calls.push("hook");
      sink.meta("sealed", ++sealed);
    });
    sink.settledOrderIds(() => {
      calls.push("settled");
      return 1;
    });
    sink.meta("x", 1);
    await committed();
    assert.ok(sealed >= 1, "a batch was sealed");
    assert.deepEqual(calls.slice(0, 2), ["hook", "settled"], "the hooks first, then settledOrderIds");
    for (let i = 0; i < calls.length; i += 2) assert.deepEqual(calls.slice(i, i + 2), ["hook", "settled"]);
    // The hook's record went with the batch it was sealing: committed when that batch's callback ran.
    const stored = await read((db) =>
      db.prepare("SELECT value FROM meta WHERE key = 'sealed'").pluck().get(),
    );
    assert.equal(stored, sealed);
  });
});
