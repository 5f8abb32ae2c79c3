/**
 * An order's first record inserts its row (ORDER), its later records update the fields that change
 * (ORDER_UPDATE); an order the writer has not sent since it started (recovered from the database)
 * is written whole again by an upsert. These tests check the rows each path leaves.
 */
import assert from "node:assert/strict";
import { after, afterEach, describe, it } from "node:test";
import { DbWriter } from "../../src/db/writer.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";
import { tempDir } from "./helpers.ts";

const tmp = tempDir("writer-orders");
after(tmp.cleanup);

const started: DbWriter[] = [];
afterEach(async () => {
  while (started.length > 0)
    await started
      .pop()!
      .close()
      .catch(() => {});
});

async function startWriter(file: string): Promise<DbWriter> {
  const w = await DbWriter.start(file, { userRowsFlushAt: 1 });
  started.push(w);
  return w;
}

function rows(file: string, sql: string): unknown[] {
  const db = openDatabase(file, { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

const ORDER_ROW =
  "SELECT id, user_id, pair, side, type, price, amount, amount_used, is_cancelled, create_micro, update_micro, flags, client_order_id FROM orders ORDER BY id";

describe("order records", () => {
  it("inserts a new order, then updates its fills, amend and cancel in later batches", async () => {
    const file = `${tmp.dir}/paths.db`;
    const w = await startWriter(file);
    w.order(1, 5, "btc_usdt", 0, 0, 100, 50, 0, false, 10, 10, 4, "c-1");
    await w.flush();
    await w.applied();
    assert.deepEqual(rows(file, ORDER_ROW), [
      {
        id: 1,
        user_id: 5,
        pair: "btc_usdt",
        side: 0,
        type: 0,
        price: 100,
        amount: 50,
        amount_used: 0,
        is_cancelled: 0,
        create_micro: 10,
        update_micro: 10,
        flags: 4,
        client_order_id: "c-1",
      },
    ]);
    w.order(1, 5, "btc_usdt", 0, 0, 100, 50, 20, false, 10, 11, 4, "c-1"); // a fill
    await w.flush();
    w.order(1, 5, "btc_usdt", 0, 0, 99, 40, 20, false, 10, 12, 4, "c-1"); // an amend
    await w.flush();
    await w.applied();
    assert.deepEqual(
      rows(file, "SELECT price, amount, amount_used, is_cancelled, update_micro FROM orders"),
      [{ price: 99, amount: 40, amount_used: 20, is_cancelled: 0, update_micro: 12 }],
    );
    w.order(1, 5, "btc_usdt", 0, 0, 99, 40, 20, true, 10, 13, 4, "c-1"); // the cancel
    await w.flush();
    await w.applied();
    assert.deepEqual(rows(file, ORDER_ROW), [
      {
        id: 1,
        user_id: 5,
        pair: "btc_usdt",
        side: 0,
        type: 0,
        price: 99,
        amount: 40,
        amount_used: 20,
        is_cancelled: 1,
        create_micro: 10,
        update_micro: 13,
        flags: 4,
        client_order_id: "c-1",
      },
    ]);
    assert.deepEqual(rows(file, "SELECT user_id, order_id FROM user_orders"), [{ user_id: 5, order_id: 1 }]);
  });

  it("ends with the last state of an order inserted and changed within one batch", async () => {
    const file = `${tmp.dir}/one-batch.db`;
    const w = await startWriter(file);
    w.order(1, 5, "btc_usdt", 1, 0, 100, 50, 0, false, 10, 10);
    w.order(2, 6, "btc_usdt", 0, 0, 100, 30, 30, false, 20, 20); // a taker filled at once: closed
    w.order(1, 5, "btc_usdt", 1, 0, 100, 50, 30, false, 10, 20); // the maker's fill
    w.order(1, 5, "btc_usdt", 1, 0, 100, 50, 50, false, 10, 21); // filled: closed
    await w.flush();
    await w.applied();
    assert.deepEqual(
      rows(file, "SELECT id, amount_used, is_cancelled, update_micro FROM orders ORDER BY id"),
      [
        { id: 1, amount_used: 50, is_cancelled: 0, update_micro: 21 },
        { id: 2, amount_used: 30, is_cancelled: 0, update_micro: 20 },
      ],
    );
  });

  it("writes an order inserted and changed over the batches of one apply as its last state", async () => {
    const file = `${tmp.dir}/folded.db`;
    // Batches wait until applied() asks: the batches below are applied in one transaction, where
    // an order's later records are folded into its insert (src/protocol/db/batch-apply.ts).
    const w = await DbWriter.start(file, {
      userRowsFlushAt: 1,
      applyAfterBatches: 1000,
      applyQuietMs: 60_000,
    });
    started.push(w);
    w.order(9, 4, "btc_usdt", 0, 0, 70, 10, 0, false, 1, 1); // applied before: its update is a row update
    await w.flush();
    await w.applied();
    w.order(1, 5, "btc_usdt", 1, 0, 100, 50, 0, false, 10, 10); // rests
    w.order(2, 6, "btc_usdt", 1, 0, 101, 20, 0, false, 11, 11); // rests and stays open
    await w.flush();
    // Executed values (text slots) are folded too: into an insert of another batch, as a copy.
    w.order(1, 5, "btc_usdt", 1, 0, 100, 50, 30, false, 10, 20, 0, undefined, 0, 3000n); // a fill
    w.order(9, 4, "btc_usdt", 0, 0, 70, 10, 10, false, 1, 20, 0, undefined, 0, 700n); // filled: closed
    await w.flush();
    w.order(1, 5, "btc_usdt", 1, 0, 98, 40, 30, false, 10, 30, 0, undefined, 0, 3000n); // an amend
    w.order(3, 7, "eth_usdt", 0, 0, 500, 5, 0, false, 31, 31, 0, "c-3");
    await w.flush();
    w.order(1, 5, "btc_usdt", 1, 0, 98, 40, 40, false, 10, 40, 0, undefined, 0, 3980n); // filled: closed
    w.order(3, 7, "eth_usdt", 0, 0, 500, 5, 0, true, 31, 41, 0, "c-3"); // cancelled
    await w.flush();
    await w.applied();
    assert.deepEqual(
      rows(
        file,
        "SELECT id, user_id, pair, price, amount, amount_used, is_cancelled, create_micro, update_micro, client_order_id, executed_quote FROM orders ORDER BY id",
      ),
      [
        {
          id: 1,
          user_id: 5,
          pair: "btc_usdt",
          price: 98,
          amount: 40,
          amount_used: 40,
          is_cancelled: 0,
          create_micro: 10,
          update_micro: 40,
          client_order_id: null,
          executed_quote: "3980",
        },
        {
          id: 2,
          user_id: 6,
          pair: "btc_usdt",
          price: 101,
          amount: 20,
          amount_used: 0,
          is_cancelled: 0,
          create_micro: 11,
          update_micro: 11,
          client_order_id: null,
          executed_quote: "0",
        },
        {
          id: 3,
          user_id: 7,
          pair: "eth_usdt",
          price: 500,
          amount: 5,
          amount_used: 0,
          is_cancelled: 1,
          create_micro: 31,
          update_micro: 41,
          client_order_id: "c-3",
          executed_quote: "0",
        },
        {
          id: 9,
          user_id: 4,
          pair: "btc_usdt",
          price: 70,
          amount: 10,
          amount_used: 10,
          is_cancelled: 0,
          create_micro: 1,
          update_micro: 20,
          client_order_id: null,
          executed_quote: "700",
        },
      ],
    );
    // The open-orders index (recovery reads it) holds only the order still open.
    assert.deepEqual(
      rows(
        file,
        "SELECT id FROM orders INDEXED BY orders_open WHERE is_cancelled = 0 AND amount_used < amount",
      ),
      [{ id: 2 }],
    );
    assert.deepEqual(rows(file, "SELECT order_id FROM user_orders ORDER BY order_id"), [
      { order_id: 1 },
      { order_id: 2 },
      { order_id: 3 },
      { order_id: 9 },
    ]);
  });

  it("writes the change of an order stored before the writer started (recovered) by upsert", async () => {
    const file = `${tmp.dir}/recovered.db`;
    const first = await startWriter(file);
    first.order(3, 7, "eth_usdt", 1, 0, 500, 10, 0, false, 30, 30, 0, "keep");
    await first.close();
    started.length = 0;
    const second = await startWriter(file);
    // The new writer has not sent order 3: its record goes whole, as an upsert of the stored row.
    second.order(3, 7, "eth_usdt", 1, 0, 500, 10, 4, false, 30, 40, 0, "keep");
    await second.flush();
    second.order(3, 7, "eth_usdt", 1, 0, 500, 10, 10, false, 30, 50, 0, "keep");
    await second.flush();
    await second.applied();
    assert.deepEqual(rows(file, ORDER_ROW), [
      {
        id: 3,
        user_id: 7,
        pair: "eth_usdt",
        side: 1,
        type: 0,
        price: 500,
        amount: 10,
        amount_used: 10,
        is_cancelled: 0,
        create_micro: 30,
        update_micro: 50,
        flags: 0,
        client_order_id: "keep",
      },
    ]);
  });

  it("keeps batches of every size apart when their send buffers are reused", async () => {
    const file = `${tmp.dir}/sizes.db`;
    const w = await startWriter(file);
    // One large batch, then small ones that reuse smaller buffers, then one in the large buffer
    // again with fewer records than the stale slots it holds.
    for (let id = 1; id <= 3000; id++)
      w.order(id, 1 + (id % 7), "btc_usdt", id & 1, 0, 100 + id, 10, 0, false, id, id);
    await w.flush();
    w.order(3001, 2, "btc_usdt", 0, 0, 5, 10, 0, false, 3001, 3001);
    await w.flush();
    for (let id = 1; id <= 2000; id++)
      w.order(id, 1 + (id % 7), "btc_usdt", id & 1, 0, 100 + id, 10, 10, false, id, 5000);
    await w.flush();
    await w.applied();
    assert.deepEqual(
      rows(file, "SELECT COUNT(*) AS n, SUM(amount_used) AS used, MAX(price) AS top FROM orders"),
      [{ n: 3001, used: 20000, top: 3100 }],
    );
    assert.deepEqual(
      rows(file, "SELECT id, price, amount_used FROM orders WHERE id IN (2000, 2001, 3001) ORDER BY id"),
      [
        { id: 2000, price: 2100, amount_used: 10 },
        { id: 2001, price: 2101, amount_used: 0 },
        { id: 3001, price: 5, amount_used: 0 },
      ],
    );
  });
});
