import assert from "node:assert/strict";
import fs from "node:fs";
import { after, afterEach, before, describe, it } from "node:test";
import { DbWriter, type ShippedFrame } from "../../src/db/writer.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";
import { applyJournal, type JournalRow, journalPath } from "../../src/protocol/db/journal.ts";
import { EXEC_ORDER, EXEC_TRADE } from "../../src/protocol/db/rows.ts";
import { ORDER } from "../../src/protocol/db/writer-batch.ts";
import { batchFrame } from "../../src/replication/protocol.ts";
import { waitFor } from "../wait.ts";
import { tempDir } from "./helpers.ts";

const tmp = tempDir("writer");
after(tmp.cleanup);

/** Writers a test started: closed after it, passed or failed, so no thread outlives it. */
const started: DbWriter[] = [];
afterEach(async () => {
  while (started.length > 0)
    await started
      .pop()!
      .close()
      .catch(() => {});
});

/** DbWriter.start, closed after the test. */
async function startWriter(...args: Parameters<typeof DbWriter.start>): Promise<DbWriter> {
  const w = await DbWriter.start(...args);
  started.push(w);
  return w;
}

function fresh(file: string) {
  return openDatabase(file, { readonly: true });
}

describe("DbWriter", () => {
  // One writer for the tests that need a healthy one (starting a thread costs a few 100 ms).
  const file = `${tmp.dir}/shared.db`;
  let w: DbWriter;
  before(async () => {
    // Per-user rows with every batch (not held back for a bulk write; see user-orders.test.ts).
    w = await DbWriter.start(file, { userRowsFlushAt: 1 });
  });

  it("writes every record kind, visible from a fresh connection once flushed", async () => {
    w.pair("btc_usdt", 2, 6);
    w.currency("usdt", 8);
    w.user(1, "uid-1", 100);
    w.user(2, "uid-2", 101);
    w.apiKey("tok-1", 1, "sec-1", 102);
    w.apiKey("tok-2", 2, "sec-2", 103);
    w.revokeKey("tok-2"); // same batch as its creation: the revoke must still win
    w.nonce("tok-1", 5n);
    w.nonce("tok-1", 18446744073709551617n); // last wins, and beyond 2^64
    w.balance(1, "usdt", 10n, 0n);
    w.balance(1, "usdt", 123456789012345678901234567890n, 5n); // last wins
    w.transfer(1, "usdt", 123456789012345678901234567895n, "deposit", 104);
    w.transfer(1, "usdt", -5n, "withdraw", 105);
    w.order(7, 1, "btc_usdt", 0, 0, 5000000, 100, 0, false, 200, 200, 0, undefined, 1);
    w.execution(1, 1, EXEC_ORDER, 7);
    w.order(8, 2, "btc_usdt", 1, 1, 0, 40, 0, false, 300, 300, 0, undefined, 1);
    w.execution(2, 1, EXEC_ORDER, 8);
    w.trade(1, "btc_usdt", 5000000, 40, 8, 7, 2, 1, 1, 1, 0, 1_700_000_000_000_001, 2000, 1000, 2, 2);
    w.execution(2, 2, EXEC_TRADE, 1);
    w.execution(1, 2, EXEC_TRADE, 1);
    w.order(7, 1, "btc_usdt", 0, 0, 5000000, 100, 40, false, 200, 300, 0, undefined, 3, 200000000n); // update
    w.execution(1, 3, EXEC_ORDER, 7);
    w.order(8, 2, "btc_usdt", 1, 1, 5000000, 40, 40, false, 300, 300, 0, undefined, 3, 200000000n);
    w.execution(2, 3, EXEC_ORDER, 8);
    w.meta("book_seq:btc_usdt", 41);
    w.meta("book_seq:btc_usdt", 42); // upsert
    w.candle("btc_usdt", "1m", 1_700_000_000_000, 5000000, 5000000, 5000000, 5000000, 10);
    w.candle("btc_usdt", "1m", 1_700_000_000_000, 5000000, 5000001, 4999999, 5000000, 40); // upsert
    await w.flush();
    await w.applied();

    const db = fresh(file);
    assert.deepEqual(db.prepare("SELECT * FROM pairs").all(), [
      { name: "btc_usdt", price_decimals: 2, amount_decimals: 6 },
    ]);
    assert.deepEqual(db.prepare("SELECT * FROM currencies").all(), [{ name: "usdt", scale: 8 }]);
    assert.deepEqual(db.prepare("SELECT * FROM users ORDER BY id").all(), [
      { id: 1, uid: "uid-1", created_micro: 100 },
      { id: 2, uid: "uid-2", created_micro: 101 },
    ]);
    assert.deepEqual(
      db.prepare("SELECT token, user_id, secret, revoked FROM api_keys ORDER BY token").all(),
      [
        { token: "tok-1", user_id: 1, secret: "sec-1", revoked: 0 },
        { token: "tok-2", user_id: 2, secret: "sec-2", revoked: 1 },
      ],
    );
    assert.deepEqual(db.prepare("SELECT * FROM nonces").all(), [
      { token: "tok-1", last_nonce: "18446744073709551617" },
    ]);
    assert.deepEqual(db.prepare("SELECT user_id, currency, available, reserved FROM balances").all(), [
      { user_id: 1, currency: "usdt", available: "123456789012345678901234567890", reserved: "5" },
    ]);
    assert.deepEqual(db.prepare("SELECT user_id, currency, amount, kind FROM transfers ORDER BY id").all(), [
      { user_id: 1, currency: "usdt", amount: "123456789012345678901234567895", kind: "deposit" },
      { user_id: 1, currency: "usdt", amount: "-5", kind: "withdraw" },
    ]);
    assert.deepEqual(db.prepare("SELECT * FROM orders ORDER BY id").all(), [
      {
        id: 7,
        user_id: 1,
        pair: "btc_usdt",
        side: 0,
        type: 0,
        price: 5000000,
        amount: 100,
        amount_used: 40,
        is_cancelled: 0,
        create_micro: 200,
        update_micro: 300,
        flags: 0,
        client_order_id: null,
        exec_seq: 3,
        executed_quote: "200000000",
        stop_price: 0,
        stop_direction: 0,
        trigger_micro: 0,
        cancel_reason: 0,
        trailing_delta: 0,
        oco_id: 0,
      },
      {
        id: 8,
        user_id: 2,
        pair: "btc_usdt",
        side: 1,
        type: 1,
        price: 5000000,
        amount: 40,
        amount_used: 40,
        is_cancelled: 0,
        create_micro: 300,
        update_micro: 300,
        flags: 0,
        client_order_id: null,
        exec_seq: 3,
        executed_quote: "200000000",
        stop_price: 0,
        stop_direction: 0,
        trigger_micro: 0,
        cancel_reason: 0,
        trailing_delta: 0,
        oco_id: 0,
      },
    ]);
    assert.deepEqual(db.prepare("SELECT * FROM trades").all(), [
      {
        id: 1,
        pair: "btc_usdt",
        price: 5000000,
        amount: 40,
        taker_order_id: 8,
        maker_order_id: 7,
        taker_user_id: 2,
        maker_user_id: 1,
        taker_side: 1,
        taker_type: 1,
        maker_type: 0,
        time_micro: 1_700_000_000_000_001,
        taker_fee_rate: 2000,
        maker_fee_rate: 1000,
        taker_exec_seq: 2,
        maker_exec_seq: 2,
      },
    ]);
    // Each user's numbers as one block, with what each numbers: the order's id, minus the trade's
    // (migration 012).
    assert.deepEqual(db.prepare("SELECT * FROM execution_blocks ORDER BY user_id, first_seq").raw().all(), [
      [1, 1, 3, "7,-1,7"],
      [2, 1, 3, "8,-1,8"],
    ]);
    assert.deepEqual(
      db.prepare("SELECT value FROM meta WHERE key = 'book_seq:btc_usdt'").pluck().all(),
      [42],
    );
    assert.deepEqual(db.prepare("SELECT user_id, side, type FROM user_trade_rows ORDER BY user_id").all(), [
      { user_id: 1, side: 0, type: 0 }, // maker: opposite direction, its own order type
      { user_id: 2, side: 1, type: 1 },
    ]);
    assert.deepEqual(db.prepare("SELECT * FROM candles").all(), [
      {
        pair: "btc_usdt",
        period: "1m",
        start_ms: 1_700_000_000_000,
        open: 5000000,
        high: 5000001,
        low: 4999999,
        close: 5000000,
        volume: 40,
      },
    ]);
    // Doubles from the Float64Array columns land as integers in the STRICT tables.
    assert.equal(
      db.prepare<[], { t: string }>("SELECT typeof(time_micro) AS t FROM trades").get()!.t,
      "integer",
    );
    db.close();
  });

  it("writes a batch of many orders and trades (16 rows per statement) exactly as recorded", async () => {
    // 37 orders and 35 trades: two full 16-row statements and a rest written row by row, for
    // both kinds. Every third order changes within the batch: its last record is the row.
    const orders: unknown[] = [];
    for (let i = 0; i < 37; i++) {
      const id = 5000 + i;
      const client = i % 4 === 0 ? undefined : `c-${i}`;
      const type = i % 7 === 0 ? 1 : 0;
      const record = (used: number, cancelled: boolean, updated: number) =>
        w.order(
          id,
          1 + (i % 5),
          "btc_usdt",
          i & 1,
          type,
          100 + i,
          50 + i,
          used,
          cancelled,
          10 + i,
          updated,
          0,
          client,
        );
      record(0, false, 10 + i);
      const used = i % 3 === 0 ? 5 + i : 0;
      if (used > 0) record(used, i % 6 === 0, 20 + i);
      orders.push({
        id,
        user_id: 1 + (i % 5),
        side: i & 1,
        type,
        price: 100 + i,
        amount: 50 + i,
        amount_used: used,
        is_cancelled: used > 0 && i % 6 === 0 ? 1 : 0,
        create_micro: 10 + i,
        update_micro: used > 0 ? 20 + i : 10 + i,
        client_order_id: client ?? null,
      });
    }
    const trades: unknown[] = [];
    for (let i = 0; i < 35; i++) {
      const id = 9000 + i;
      w.trade(
        id,
        "btc_usdt",
        200 + i,
        1 + i,
        5000 + i,
        5001 + i,
        1 + (i % 5),
        2 + (i % 5),
        i & 1,
        0,
        0,
        1_000 + i,
        i,
        2 * i,
      );
      trades.push({
        id,
        price: 200 + i,
        amount: 1 + i,
        taker_order_id: 5000 + i,
        maker_order_id: 5001 + i,
        taker_fee_rate: i,
        maker_fee_rate: 2 * i,
      });
    }
    await w.flush();
    await w.applied();
    const db = fresh(file);
    assert.deepEqual(
      db
        .prepare(
          "SELECT id, user_id, side, type, price, amount, amount_used, is_cancelled, create_micro, update_micro, client_order_id FROM orders WHERE id >= 5000 AND id < 6000 ORDER BY id",
        )
        .all(),
      orders,
    );
    assert.deepEqual(
      db
        .prepare(
          "SELECT id, price, amount, taker_order_id, maker_order_id, taker_fee_rate, maker_fee_rate FROM trades WHERE id >= 9000 ORDER BY id",
        )
        .all(),
      trades,
    );
    db.close();
  });

  it("runs afterCommit callbacks in order, only once their records are committed", async () => {
    await w.applied(); // the orders of the test before are in their table, not in the journal
    const reader = fresh(file);
    const journal = fresh(journalPath(file));
    // Committed: in the journal file (written there on the ack path), or in its table. The journal
    // first: a batch applied (and its journal row deleted) between the two reads is then counted
    // twice rather than not at all.
    const journaled = journal
      .prepare<[], number>(`SELECT COALESCE(SUM(json_extract(counts, '$[${ORDER.id}]')), 0) FROM journal`)
      .pluck();
    const count = {
      get: () => {
        const n = journaled.get()!;
        return { n: n + inTable.get()!.n };
      },
    };
    const inTable = reader.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM orders WHERE id > 100");
    const seen: string[] = [];
    const reads: Promise<void>[] = [];
    let id = 100;
    const addAndWatch = (label: string): void => {
      w.order(++id, 1, "p", 0, 0, 1, 1, 0, false, id, id);
      const expected = id;
      w.afterCommit(() => {
        // A fresh read transaction on another connection sees the record: it is committed.
        assert.ok(count.get()!.n >= expected - 100, `${label}: record ${expected} not visible yet`);
        seen.push(label);
        // And its row, once the writer has applied what it acknowledged.
        reads.push(
          w.applied().then(() => {
            assert.ok(inTable.get()!.n >= expected - 100, `${label}: row ${expected} not applied`);
          }),
        );
      });
    };
    addAndWatch("a");
    addAndWatch("b");
    assert.deepEqual(seen, [], "no callback runs synchronously");
    await new Promise<void>((resolve) => setImmediate(resolve));
    addAndWatch("c"); // next batch, queued behind the one in flight
    addAndWatch("d");
    await w.flush();
    assert.deepEqual(seen, ["a", "b", "c", "d"]);
    await Promise.all(reads);
    assert.equal(reads.length, 4);
    reader.close();
    journal.close();
  });

  it("beforeSend hooks add their records to each batch as it is sealed, once per batch", async () => {
    const own = await startWriter(`${tmp.dir}/hooks.db`);
    try {
      const reader = fresh(`${tmp.dir}/hooks.db`);
      const balance = reader.prepare<[], { available: string }>(
        "SELECT available FROM balances WHERE user_id = 1 AND currency = 'usdt'",
      );
      // The "latest value" the hook persists, changed many times between batches.
      let latest = 0n;
      let hookRuns = 0;
      own.beforeSend(() => {
        hookRuns++;
        own.balance(1, "usdt", latest, 0n);
      });
      const checked: bigint[] = [];
      const reads: Promise<void>[] = [];
      let id = 0;
      for (let tick = 0; tick < 20; tick++) {
        for (let i = 0; i < 10; i++) {
          latest++;
          own.order(++id, 1, "p", 0, 0, 1, 1, 0, false, id, id);
          const expected = latest;
          own.afterCommit(() => {
            // The committed balance is at least the value the callback's command left, once the
            // writer has written the rows of what it acknowledged.
            reads.push(
              own.applied().then(() => {
                const committed = BigInt(balance.get()!.available);
                assert.ok(committed >= expected, `balance ${committed} committed before ${expected}`);
                checked.push(expected);
              }),
            );
          });
        }
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      await own.flush();
      await Promise.all(reads);
      assert.equal(checked.length, 200);
      assert.equal(balance.get()!.available, "200");
      // One balance record per transaction, not one per change.
      assert.equal(hookRuns, own.stats.batches);
      assert.equal(own.stats.records, 200 + own.stats.batches);
      reader.close();
    } finally {
      await own.close();
    }
  });

  it("group-commits 10,000 records added in one tick into a single transaction", async () => {
    const before = w.stats;
    let acked = 0;
    for (let i = 1_000_001; i <= 1_010_000; i++) {
      w.order(i, i % 50, "btc_usdt", i & 1, 0, 1000 + i, 10, 0, false, i, i);
      w.afterCommit(() => acked++);
    }
    await w.flush();
    assert.equal(acked, 10_000);
    assert.deepEqual(w.stats, { batches: before.batches + 1, records: before.records + 10_000 });
  });

  it("coalesces records arriving while a commit is in flight into few transactions", async () => {
    const before = w.stats;
    let next = 2_000_000;
    for (let tick = 0; tick < 200; tick++) {
      for (let i = 0; i < 50; i++) {
        next++;
        w.order(next, 1, "btc_usdt", 0, 0, 1, 1, 0, false, next, next);
      }
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await w.flush();
    const batches = w.stats.batches - before.batches;
    assert.equal(w.stats.records - before.records, 10_000);
    assert.ok(batches < 200, `expected fewer transactions than the 200 ticks, got ${batches}`);
    await w.applied();
    const db = fresh(file);
    const n = db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM orders WHERE id > 2000000").get()!.n;
    assert.equal(n, 10_000);
    db.close();
  });

  it("close commits what is pending, checkpoints the WAL and ends the thread", async () => {
    w.order(3_000_000, 1, "btc_usdt", 0, 0, 1, 1, 0, false, 1, 1);
    let called = false;
    w.afterCommit(() => {
      called = true;
      w.order(3_000_001, 1, "btc_usdt", 0, 0, 1, 1, 0, false, 1, 1); // recorded while closing
    });
    await w.close();
    assert.equal(called, true);
    // The last connection to close removes the WAL; with a reader still open it would be empty.
    assert.equal(fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0, 0);
    const db = fresh(file);
    assert.equal(
      db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM orders WHERE id = 3000000").get()!.n,
      1,
    );
    db.close();
    await w.close(); // idempotent
  });

  it("fails for good on a write error: onFatal fires and no later callback ever runs", async () => {
    const w = await startWriter(`${tmp.dir}/fatal.db`);
    const fatal: Error[] = [];
    w.onFatal((err) => fatal.push(err));
    const ran: string[] = [];
    w.trade(1, "p", 1, 1, 1, 2, 1, 2, 0, 0, 0, 1);
    w.afterCommit(() => ran.push("first"));
    await w.flush();
    w.trade(1, "p", 1, 1, 1, 2, 1, 2, 0, 0, 0, 2); // duplicate trade id: writing its row fails
    w.afterCommit(() => ran.push("dup"));
    // The batch is journaled as it came and acknowledged (its journal row is sound); writing its
    // rows, after the ack, fails.
    await w.flush();
    await assert.rejects(w.applied(), /database write failed.*UNIQUE/);
    w.order(1, 1, "p", 0, 0, 1, 1, 0, false, 1, 1);
    w.afterCommit(() => ran.push("after"));
    // Rather than a guessed wait: close() ends the writer thread, the only source of acks, and
    // rejects; a turn later the batch scheduled above has been dealt with too. Nothing is left that
    // could run a callback.
    await assert.rejects(w.close(), /UNIQUE/);
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.deepEqual(ran, ["first", "dup"]);
    assert.equal(fatal.length, 1);
    assert.ok(w.failed);
    // The failed apply rolled back and left the journal whole: the next start replays it and
    // refuses the same way, rather than drop an acknowledged batch.
    await assert.rejects(DbWriter.start(`${tmp.dir}/fatal.db`), /UNIQUE/);
  });

  it("copies committed pages into the database file from the checkpointer thread while the writer runs", async () => {
    /**
     * Growth of the main database file after writing 3,000 orders, once it has grown or `waitMs`
     * passed. For the control (no checkpointer) nothing can be observed to have not happened, so the
     * wait is bounded: ten of the other run's checkpoint intervals.
     */
    const grown = async (name: string, checkpointIntervalMs: number, waitMs: number): Promise<number> => {
      const f = `${tmp.dir}/${name}.db`;
      const cw = await startWriter(f, { checkpointIntervalMs, walAutocheckpointPages: 100_000 });
      try {
        const initial = fs.statSync(f).size;
        for (let id = 1; id <= 3000; id++)
          cw.order(id, id % 50, "btc_usdt", id & 1, 0, 100 + id, 10, 0, false, id, id);
        await cw.flush();
        await waitFor(() => fs.statSync(f).size > initial, {
          what: `pages copied into ${name}.db`,
          timeoutMs: waitMs,
        }).catch(() => {});
        return fs.statSync(f).size - initial;
      } finally {
        await cw.close();
      }
    };
    assert.ok((await grown("with-checkpointer", 20, 5000)) > 0, "the checkpointer copied pages");
    // Control: no checkpointer and a threshold far away: every page stays in the WAL meanwhile.
    assert.equal(await grown("without", 0, 200), 0);
  });

  it("fails rather than apply batches that another connection replayed from the journal meanwhile", async () => {
    const file = `${tmp.dir}/twice.db`;
    const own = await startWriter(file, {
      applyAfterBatches: 1e9,
      applyAfterRecords: 1e9,
      applyQuietMs: 1e9,
    });
    const fatal: Error[] = [];
    own.onFatal((err) => fatal.push(err));
    own.order(1, 1, "btc_usdt", 0, 0, 1, 1, 0, false, 1, 1);
    await own.flush();
    // The batch is journaled, not applied; a second connection replays it and moves the mark.
    const rw = openDatabase(file);
    assert.equal(rw.transaction(() => applyJournal(rw)).immediate(), 1);
    rw.close();
    await assert.rejects(own.applied(), /another connection/);
    assert.equal(fatal.length, 1);
    const db = fresh(file);
    assert.equal(db.prepare("SELECT COUNT(*) FROM orders").pluck().get(), 1, "written once");
    db.close();
  });

  it("holds each committed batch's callbacks behind a release gate until it passes their journal key, in commit order", async () => {
    const gw = await startWriter(`${tmp.dir}/gate.db`);
    let through = -1;
    gw.setReleaseGate({ released: (key) => key <= through });
    const ran: string[] = [];
    gw.meta("gate_a", 1);
    gw.afterCommit(() => ran.push("a"));
    await waitFor(() => gw.heldSince() !== null, { what: "the first batch to be held" });
    const keyA = gw.lastRowKey;
    assert.ok(keyA > gw.base, "the batch wrote a journal row");
    gw.meta("gate_b", 2);
    gw.afterCommit(() => ran.push("b"));
    await waitFor(() => gw.lastRowKey > keyA, { what: "the second batch to commit" });
    // A batch of callbacks only waits for the last key that wrote a row.
    gw.afterCommit(() => ran.push("c"));
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual([...ran], [], "nothing runs before the gate passes it");
    through = keyA;
    gw.releaseHeld();
    assert.deepEqual([...ran], ["a"]);
    through = gw.lastRowKey;
    gw.releaseHeld();
    assert.deepEqual([...ran], ["a", "b", "c"]);
    assert.equal(gw.heldSince(), null);
    // No gate: everything held runs, and later batches at their commit.
    through = -1;
    gw.meta("gate_d", 4);
    gw.afterCommit(() => ran.push("d"));
    await waitFor(() => gw.heldSince() !== null, { what: "the batch to be held" });
    gw.setReleaseGate(null);
    assert.deepEqual([...ran], ["a", "b", "c", "d"]);
    await gw.flush();
  });

  it("hands each committed row over as the BATCH frame of the journal row, after shipFrames, before the ack listeners", async () => {
    const sw = await startWriter(`${tmp.dir}/frames.db`);
    const got: ShippedFrame[] = [];
    const order: string[] = [];
    sw.shipFrames((f) => {
      got.push(f);
      order.push(`frame ${f.key}`);
    });
    sw.onAck(() => order.push(`ack ${sw.lastRowKey}`));
    sw.pair("btc_usdt", 2, 6);
    sw.user(1, "uid-1", 1);
    await sw.flush();
    await sw.flush(); // callbacks only: no row, no frame
    sw.user(2, "uid-2", 2);
    sw.pair("eth_usdt", 2, 6);
    await sw.flush();
    const j = openDatabase(journalPath(`${tmp.dir}/frames.db`), { readonly: true });
    const rows = j.prepare<[], JournalRow>("SELECT * FROM journal ORDER BY seq").all();
    const syms = j.prepare<[], string>("SELECT name FROM journal_syms ORDER BY id").pluck().all();
    j.close();
    assert.equal(rows.length, 2);
    assert.deepEqual(
      got.map((f) => ({ ...f, frame: [...f.frame] })),
      [
        { key: rows[0].seq, prev: sw.base, symFrom: 0, syms: ["btc_usdt"], frame: [...batchFrame(rows[0])] },
        {
          key: rows[1].seq,
          prev: rows[0].seq,
          symFrom: 1,
          syms: ["eth_usdt"],
          frame: [...batchFrame(rows[1])],
        },
      ],
    );
    assert.deepEqual(syms, ["btc_usdt", "eth_usdt"]);
    assert.deepEqual(order.slice(0, 2), [`frame ${rows[0].seq}`, `ack ${rows[0].seq}`]);
  });

  it("refuses to start on a path it cannot open", async () => {
    await assert.rejects(DbWriter.start(`${file}/not-a-folder/x.db`), /failed to start|EEXIST|ENOTDIR/);
  });
});
