import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { DbReader } from "../../src/db/reader.ts";
import { DbWriter } from "../../src/db/writer.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";
import { appliedMark, journalPath } from "../../src/protocol/db/journal.ts";
import { tempDir } from "./helpers.ts";

const tmp = tempDir("reader");

describe("DbReader", () => {
  let reader: DbReader;
  let writer: DbWriter;

  before(async () => {
    writer = await DbWriter.start(tmp.dbPath);
    // User 1: orders 1, 3, 5, ..., 89 (45); user 2: the even ids (45). Trades 1..30, user 1 always
    // the taker (sell, market) against user 2 (maker: buy, limit); user 3 has nothing.
    for (let id = 1; id <= 90; id++) {
      writer.order(
        id,
        2 - (id % 2),
        "btc_usdt",
        id % 2,
        0,
        100 + id,
        10,
        id % 10,
        id % 7 === 0,
        id,
        id + 1,
        0,
        undefined,
        3 * id,
        // Ticks × lots executed, past 2^63 (stored as text, migration 013).
        BigInt(100 + id) * BigInt(id % 10) * 10n ** 18n,
      );
    }
    for (let id = 1; id <= 30; id++)
      writer.trade(
        id,
        "eth_btc",
        50 + id,
        id,
        1000 + id,
        2000 + id,
        1,
        2,
        1,
        1,
        0,
        id * 10,
        0,
        0,
        2 * id,
        2 * id + 1,
      );
    await writer.flush();
    reader = DbReader.start(tmp.dbPath, { before: () => writer.applied() });
  });

  after(async () => {
    await reader.close();
    await writer.close();
    tmp.cleanup();
  });

  it("pages a user's orders newest first with the total of all of them", async () => {
    const p1 = await reader.userOrders(1, 1, 20);
    assert.equal(p1.total, 45);
    assert.deepEqual(
      p1.items.map((o) => o.id),
      Array.from({ length: 20 }, (_, i) => 89 - 2 * i),
    );
    assert.deepEqual(p1.items[0], {
      id: 89,
      userId: 1,
      pair: "btc_usdt",
      side: 1,
      type: 0,
      price: 189,
      amount: 10,
      amountUsed: 9,
      isCancelled: false,
      createMicro: 89,
      updateMicro: 90,
      flags: 0,
      clientOrderId: null,
      execSeq: 3 * 89,
      executedQuote: "1701000000000000000000",
      stopPrice: 0,
      stopDirection: 0,
      triggerMicro: 0,
      cancelReason: 0,
      trailingDelta: 0,
      ocoId: 0,
    });
    assert.equal(p1.items.find((o) => o.id === 77)!.isCancelled, true);
    const p3 = await reader.userOrders(1, 3, 20);
    assert.deepEqual(
      p3.items.map((o) => o.id),
      [9, 7, 5, 3, 1],
    );
    const beyond = await reader.userOrders(1, 4, 20);
    assert.deepEqual(beyond, { total: 45, items: [] });
    assert.equal((await reader.userOrders(2, 1, 100)).items.length, 45);
    assert.deepEqual(await reader.userOrders(3, 1, 20), { total: 0, items: [] });
  });

  it("pages a user's trades from that user's side", async () => {
    const taker = await reader.userTrades(1, 2, 7);
    assert.equal(taker.total, 30);
    assert.deepEqual(
      taker.items.map((t) => t.id),
      [23, 22, 21, 20, 19, 18, 17],
    );
    assert.deepEqual(taker.items[0], {
      id: 23,
      pair: "eth_btc",
      side: 1,
      type: 1,
      price: 73,
      amount: 23,
      timeMicro: 230,
      feeRate: 0,
      execSeq: 2 * 23,
      orderId: 1023,
      maker: 0,
    });
    const maker = await reader.userTrades(2, 1, 1);
    assert.deepEqual(maker, {
      total: 30,
      items: [
        {
          id: 30,
          pair: "eth_btc",
          side: 0,
          type: 0,
          price: 80,
          amount: 30,
          timeMicro: 300,
          feeRate: 0,
          execSeq: 2 * 30 + 1,
          orderId: 2030,
          maker: 1,
        },
      ],
    });
  });

  it("returns a user's newest orders and trades together", async () => {
    const recent = await reader.recentForUser(2, 3);
    assert.deepEqual(
      recent.orders.map((o) => o.id),
      [90, 88, 86],
    );
    assert.deepEqual(
      recent.trades.map((t) => t.id),
      [30, 29, 28],
    );
  });

  it("sees what the writer commits afterwards, in parallel tasks", async () => {
    writer.order(91, 3, "btc_usdt", 0, 0, 1, 1, 0, false, 91, 91);
    await writer.flush();
    const pages = await Promise.all([
      reader.userOrders(3, 1, 5),
      reader.userOrders(1, 1, 5),
      reader.userTrades(1, 1, 5),
    ]);
    assert.deepEqual(
      pages.map((p) => p.total),
      [1, 45, 30],
    );
  });

  it("sees an order from a read made right after its ack, while the writer holds it in the journal only", async () => {
    // The writer applies only when asked: the rows stay in the journal until a read asks.
    const file = `${tmp.dir}/journal-only.db`;
    const w = await DbWriter.start(file, {
      applyAfterBatches: 1_000_000,
      applyAfterRecords: 1_000_000,
      applyQuietMs: 1_000_000,
    });
    const r = DbReader.start(file, { before: () => w.applied() });
    const direct = openDatabase(file, { readonly: true });
    const journal = openDatabase(journalPath(file), { readonly: true });
    try {
      const inTable = direct.prepare<[number], number>("SELECT COUNT(*) FROM orders WHERE id = ?").pluck();
      // Journal rows not applied yet: above the applied mark (applied ones are deleted later).
      const above = journal.prepare<[number], number>("SELECT COUNT(*) FROM journal WHERE seq > ?").pluck();
      const journaled = () => above.get(appliedMark(direct))!;
      for (let id = 1; id <= 3; id++) {
        w.order(id, 7, "btc_usdt", 0, 0, 100 + id, 10, 0, false, id, id);
        const read = await new Promise<Awaited<ReturnType<DbReader["order"]>>>((resolve, reject) =>
          w.afterCommit(() => {
            // Answered: committed in the journal, not yet in its table; the read asks for it.
            assert.equal(inTable.get(id), 0);
            assert.equal(journaled(), 1);
            r.order(id).then(resolve, reject);
          }),
        );
        assert.equal(read?.id, id);
        assert.equal(read?.price, 100 + id);
        assert.equal(journaled(), 0, "the apply the read asked for moved the applied mark past it");
        const page = await r.userOrders(7, 1, 10);
        assert.deepEqual(
          page.items.map((o) => o.id),
          Array.from({ length: id }, (_, i) => id - i),
        );
      }
    } finally {
      direct.close();
      journal.close();
      await r.close();
      await w.close();
    }
  });

  it("rejects a page or size that is not a positive integer", async () => {
    await assert.rejects(reader.userOrders(1, 0, 20), /page must be an integer >= 1/);
    await assert.rejects(reader.userTrades(1, 1, 1.5), /pageSize must be an integer >= 1/);
  });
});
