/**
 * The batch journal (src/protocol/db/journal.ts) across kill -9: the writer thread acknowledges a batch
 * once its row in the journal file is committed, and the apply thread writes its rows later; whatever moment the process dies at, the
 * replay at the next start (src/protocol/db/journal.ts) leaves every acknowledged record in its table
 * exactly once. A real writer thread in a child process, SIGKILLed; a real SQLite file.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { type Db, openDatabase } from "../../src/protocol/db/db-open.ts";
import {
  appliedMark,
  journalPath,
  journalWriter,
  openJournal,
  replayJournal,
  trimOf,
} from "../../src/protocol/db/journal.ts";
import { encodeSlots } from "../../src/protocol/db/slot-codec.ts";
import {
  EXECUTION,
  KIND_COUNT,
  LEGACY_KIND_COUNT,
  META,
  MMP_SETTING,
  ORDER,
  ORDER_UPDATE,
  TRADE,
} from "../../src/protocol/db/writer-batch.ts";
import {
  BATCHES,
  ORDERS_PER_BATCH,
  orderId,
  pairsOf,
  TRADES_PER_BATCH,
  tradeId,
  USERS,
  usdtOf,
} from "./fixtures/journal-batches.ts";
import { tempDir } from "./helpers.ts";

const tmp = tempDir("journal");
after(tmp.cleanup);

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const FIXTURE = fileURLToPath(new URL("./fixtures/journal-writer.ts", import.meta.url));
const NEVER = 1_000_000_000;

/**
 * Runs one phase of the fixture until it prints `done` (every batch acknowledged, and applied
 * when `waitApplied`), then SIGKILLs it.
 */
function writeAndKill(file: string, phase: number, applyAfterBatches: number, waitApplied: boolean) {
  return new Promise<string[]>((resolve, reject) => {
    // `node --import tsx` runs the fixture in this one process (see durability.test.ts).
    const child = spawn(
      process.execPath,
      ["--import", "tsx", FIXTURE, file, String(phase), String(applyAfterBatches), waitApplied ? "1" : "0"],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let stderr = "";
    let killed = false;
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (!killed && out.includes("done\n")) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    child.on("exit", (code, signal) => {
      if (signal === "SIGKILL" && killed) resolve(out.trim().split("\n"));
      else reject(new Error(`fixture ended with code ${code} signal ${signal}: ${stderr}`));
    });
  });
}

const count = (db: Db, sql: string): number =>
  db.prepare<[], number>(`SELECT COUNT(*) FROM ${sql}`).pluck().get()!;

/** Every table as rows, for comparing two states. */
function dump(db: Db): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  const tables = db
    .prepare<[], string>("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
    .pluck()
    .all();
  for (const t of tables) out[t] = db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2`).all();
  return out;
}

/** Checks that the tables hold every record of phases 0 .. phases-1, each exactly once. */
function checkRows(db: Db, phases: number): void {
  assert.equal(count(db, "journal"), 0);
  assert.equal(count(db, "journal_syms"), 0);
  const orders = db.prepare<[number], { pair: string; amount_used: number; client_order_id: string }>(
    "SELECT pair, amount_used, client_order_id FROM orders WHERE id = ?",
  );
  const trades = db.prepare<[number], { pair: string; taker_fee_rate: number }>(
    "SELECT pair, taker_fee_rate FROM trades WHERE id = ?",
  );
  for (let phase = 0; phase < phases; phase++) {
    const pairs = pairsOf(phase);
    for (let b = 0; b < BATCHES; b++) {
      for (let i = 0; i < ORDERS_PER_BATCH; i++) {
        const id = orderId(phase, b, i);
        assert.deepEqual(
          { ...orders.get(id) },
          { pair: pairs[i % 2], amount_used: i < TRADES_PER_BATCH ? 10 : 0, client_order_id: `c-${id}` },
          `order ${id}`,
        );
      }
      for (let i = 0; i < TRADES_PER_BATCH; i++)
        assert.deepEqual(
          { ...trades.get(tradeId(phase, b, i)) },
          { pair: pairs[i % 2], taker_fee_rate: 2000 },
        );
    }
  }
  const nOrders = phases * BATCHES * ORDERS_PER_BATCH;
  const nTrades = phases * BATCHES * TRADES_PER_BATCH;
  assert.equal(count(db, "orders"), nOrders);
  assert.equal(count(db, "trades"), nTrades);
  // The per-user rows of every order and trade, and the marks at the last ones (migration 002).
  assert.equal(count(db, "user_orders"), nOrders);
  assert.equal(count(db, "user_trades"), 2 * nTrades);
  const mark = db.prepare<[string], number>("SELECT value FROM meta WHERE key = ?").pluck();
  assert.equal(mark.get("user_orders_through"), orderId(phases - 1, BATCHES - 1, ORDERS_PER_BATCH - 1));
  assert.equal(mark.get("user_trades_through"), tradeId(phases - 1, BATCHES - 1, TRADES_PER_BATCH - 1));
  // Plain inserts: a batch applied twice would show here (or have failed on a unique key).
  assert.equal(count(db, "transfers"), phases * BATCHES);
  // Upserts end with the last batch's values.
  assert.deepEqual(
    db.prepare("SELECT user_id, currency, available, reserved FROM balances ORDER BY user_id").all(),
    Array.from({ length: USERS }, (_, u) => ({
      user_id: u + 1,
      currency: "usdt",
      available: usdtOf(phases - 1, BATCHES - 1, u + 1).toString(),
      reserved: String(BATCHES - 1),
    })),
  );
  assert.equal(mark.get(`book_seq:${pairsOf(phases - 1)[0]}`), (phases - 1) * 1000 + BATCHES - 1);
  assert.equal(count(db, "candles"), phases === 1 ? BATCHES : 2 * BATCHES);
  assert.equal(count(db, "nonces"), USERS);
  assert.equal(count(db, "users"), USERS);
  assert.deepEqual(
    db.prepare("SELECT token, revoked FROM api_keys ORDER BY token").all(),
    Array.from({ length: USERS }, (_, u) => ({
      token: `token-${u + 1}`,
      revoked: phases > 1 && u === 3 ? 1 : 0,
    })),
  );
  assert.deepEqual(
    db.prepare("SELECT name FROM pairs ORDER BY name").pluck().all(),
    phases > 1 ? ["btc_usdt", "eth_usdt", "ltc_usdt"] : ["btc_usdt", "eth_usdt"],
  );
}

/** Replays on a read-write connection as the server's start does, checks, and replays again. */
function replayAndCheck(file: string, phases: number): number {
  const db = openDatabase(file); // recovers from the WAL left behind
  try {
    assert.equal(db.pragma("integrity_check", { simple: true }), "ok");
    const replayed = replayJournal(db);
    checkRows(db, phases);
    // The journal file is emptied once its rows are applied.
    const j = openDatabase(journalPath(file), { readonly: true });
    assert.equal(count(j, "journal"), 0);
    assert.equal(count(j, "journal_syms"), 0);
    j.close();
    // Nothing is left to apply twice: a second replay (a crash right after the first) changes nothing.
    const state = dump(db);
    assert.equal(replayJournal(db), 0);
    assert.deepEqual(dump(db), state);
    return replayed;
  } finally {
    db.close();
  }
}

describe("batch journal", { concurrency: true }, () => {
  it("replays every acknowledged batch exactly once after a kill -9 before any bulk apply", async () => {
    const file = `${tmp.dir}/journal-only.db`;
    const lines = await writeAndKill(file, 0, NEVER, false);
    assert.ok(lines.includes(`acked ${BATCHES - 1}`));
    // Before the replay: every batch is in the journal file, none in the tables.
    const ro = openDatabase(file, { readonly: true });
    const j = openDatabase(journalPath(file), { readonly: true });
    assert.equal(count(j, "journal"), BATCHES);
    assert.equal(count(ro, "orders"), 0);
    assert.equal(count(ro, "trades"), 0);
    assert.deepEqual(j.prepare("SELECT id, name FROM journal_syms ORDER BY id").all().slice(0, 2), [
      { id: 0, name: "btc_usdt" },
      { id: 1, name: "eth_usdt" },
    ]);
    ro.close();
    j.close();
    assert.equal(replayAndCheck(file, 1), BATCHES);
  });

  it("replays what a server of migration 006 left in the exchange file's own journal table", async () => {
    const file = `${tmp.dir}/legacy.db`;
    await writeAndKill(file, 0, NEVER, false);
    // Move the journal file's rows into the exchange file's tables, where that version kept them.
    const db = openDatabase(file);
    db.prepare("ATTACH DATABASE ? AS j").run(journalPath(file));
    db.exec(`BEGIN IMMEDIATE;
      INSERT INTO main.journal SELECT * FROM j.journal;
      INSERT INTO main.journal_syms SELECT * FROM j.journal_syms;
      DELETE FROM j.journal; DELETE FROM j.journal_syms;
      COMMIT;`);
    db.exec("DETACH DATABASE j");
    assert.equal(count(db, "journal"), BATCHES);
    db.close();
    assert.equal(replayAndCheck(file, 1), BATCHES);
  });

  it("leaves nothing to replay after a kill -9 right after the bulk apply committed", async () => {
    const file = `${tmp.dir}/applied.db`;
    const lines = await writeAndKill(file, 0, NEVER, true);
    assert.ok(lines.includes("applied"));
    const ro = openDatabase(file, { readonly: true });
    const j = openDatabase(journalPath(file), { readonly: true });
    // Every journal row is at or below the applied mark (the rows left are deleted lazily).
    assert.equal(count(j, `journal WHERE seq > ${appliedMark(ro)}`), 0);
    assert.ok(appliedMark(ro) >= BATCHES);
    assert.equal(count(ro, "orders"), BATCHES * ORDERS_PER_BATCH);
    ro.close();
    j.close();
    assert.equal(replayAndCheck(file, 1), 0);
  });

  it("replays the batches left between bulk applies, and a next run's batches with its own symbol ids", async () => {
    const file = `${tmp.dir}/two-runs.db`;
    await writeAndKill(file, 0, 5, false);
    const replayed = replayAndCheck(file, 1);
    // 12 batches applied every 5: 2 or more left (the apply of 5..9 may have died with the process).
    assert.ok(replayed >= BATCHES % 5 && replayed <= BATCHES, `replayed ${replayed}`);
    // The second run's writer numbers its symbols from 0 again: ltc_usdt is its symbol 0, the
    // first run's btc_usdt.
    const before = openDatabase(file, { readonly: true });
    const mark = appliedMark(before);
    before.close();
    assert.ok(mark >= BATCHES, `applied mark ${mark}`);
    await writeAndKill(file, 1, NEVER, false);
    const j = openDatabase(journalPath(file), { readonly: true });
    assert.equal(j.prepare("SELECT name FROM journal_syms WHERE id = 0").pluck().get(), "ltc_usdt");
    // The second run numbers its journal rows on from the mark: none of them looks applied.
    assert.equal(j.prepare("SELECT MIN(seq) FROM journal").pluck().get(), mark + 1);
    j.close();
    assert.equal(replayAndCheck(file, 2), BATCHES);
  });

  it("keeps the trim mark: the key through which rows may be gone, moved by every delete and by the start's replay", () => {
    const file = `${tmp.dir}/trim.db`;
    openDatabase(file).close();
    const j = openJournal(file);
    const w = journalWriter(j);
    const counts = new Array(KIND_COUNT).fill(0);
    counts[META.id] = 1;
    j.transaction(() => {
      w.appendSym(0, "some_key");
      for (const key of [3, 4, 7])
        w.append(key, { seq: key, counts, slots: new Float64Array([0, key]), strs: [], settledBelow: 1 });
    }).immediate();
    assert.equal(trimOf(j).get(), 0, "nothing deleted yet: every row since the start is there");
    j.transaction(() => w.deleteThrough(4)).immediate();
    assert.equal(trimOf(j).get(), 4);
    assert.deepEqual(j.prepare("SELECT seq FROM journal").pluck().all(), [7]);
    // It never moves back.
    j.transaction(() => trimOf(j).set(2)).immediate();
    assert.equal(trimOf(j).get(), 4);
    j.close();
    const db = openDatabase(file);
    try {
      // The start applies what is above the mark (0 here: every row) and empties the file.
      assert.equal(replayJournal(db), 1);
      assert.equal(appliedMark(db), 7);
    } finally {
      db.close();
    }
    const after = openJournal(file);
    assert.equal(trimOf(after).get(), 7, "after the replay every row through the applied mark is gone");
    after.close();
  });

  it("replays a row written before the newest record kind existed as none of that kind", () => {
    const file = `${tmp.dir}/older-kinds.db`;
    openDatabase(file).close();
    const j = openJournal(file);
    const w = journalWriter(j);
    j.transaction(() => {
      w.appendSym(0, "some_key");
      w.appendSym(1, "btc_usdt");
      // A row of a version before MMP_SETTING: one META record, one count fewer.
      const oldCounts = new Array(KIND_COUNT).fill(0);
      oldCounts[META.id] = 1;
      const bytes = encodeSlots(new Float64Array([0, 42]), oldCounts);
      j.prepare("INSERT INTO journal (seq, counts, slots, strs, settled_below) VALUES (?, ?, ?, ?, ?)").run(
        1,
        JSON.stringify(oldCounts.slice(0, MMP_SETTING.id)),
        Buffer.from(bytes),
        "[]",
        1,
      );
      // A row of this version with an MMP_SETTING record: user 7, btc_usdt, 30 s, 5 lots, 10 s.
      const counts = new Array(KIND_COUNT).fill(0);
      counts[MMP_SETTING.id] = 1;
      w.append(2, { seq: 2, counts, slots: new Float64Array([7, 1, 30, 5, 10]), strs: [], settledBelow: 1 });
    }).immediate();
    j.close();
    const db = openDatabase(file);
    try {
      assert.equal(replayJournal(db), 2);
      assert.deepEqual(db.prepare("SELECT key, value FROM meta WHERE key = 'some_key'").all(), [
        { key: "some_key", value: 42 },
      ]);
      assert.deepEqual(db.prepare("SELECT * FROM mmp_settings").all(), [
        { user_id: 7, pair: "btc_usdt", interval_seconds: 30, qty_limit: 5, frozen_seconds: 10 },
      ]);
    } finally {
      db.close();
    }
  });

  it("replays orders and trades of a row written before execution numbers as numbered 0, with executed values from the trades", () => {
    const file = `${tmp.dir}/before-exec-seq.db`;
    openDatabase(file).close();
    const j = openJournal(file);
    const w = journalWriter(j);
    // The layout of that version: ORDER without exec_seq (13 slots), ORDER_UPDATE without it (6, id
    // last), TRADE without the two numbers (14), and no EXECUTION kind.
    const order = [7, 1, 0, 0, 0, 5000000, 100, 0, 0, 200, 200, 0, -1];
    const update = [5000000, 100, 40, 0, 300, 7];
    const trade = [1, 0, 5000000, 40, 8, 7, 2, 1, 1, 1, 0, 1_700_000_000_000_001, 2000, 1000];
    const counts = new Array(LEGACY_KIND_COUNT).fill(0);
    counts[ORDER.id] = 1;
    counts[ORDER_UPDATE.id] = 1;
    counts[TRADE.id] = 1;
    assert.equal(EXECUTION.id, LEGACY_KIND_COUNT);
    const slots = new Float64Array([...order, ...update, ...trade]);
    // The raw form (format byte 0, then the float64 slots as they are).
    const bytes = Buffer.concat([Buffer.from([0]), Buffer.from(slots.buffer)]);
    j.transaction(() => {
      w.appendSym(0, "btc_usdt");
      j.prepare("INSERT INTO journal (seq, counts, slots, strs, settled_below) VALUES (?, ?, ?, ?, ?)").run(
        1,
        JSON.stringify(counts),
        bytes,
        "[]",
        1,
      );
    }).immediate();
    j.close();
    const db = openDatabase(file);
    try {
      assert.equal(replayJournal(db), 1);
      assert.deepEqual(
        db
          .prepare(
            "SELECT id, user_id, pair, price, amount, amount_used, update_micro, exec_seq, executed_quote FROM orders",
          )
          .all(),
        [
          {
            id: 7,
            user_id: 1,
            pair: "btc_usdt",
            price: 5000000,
            amount: 100,
            amount_used: 40,
            update_micro: 300,
            exec_seq: 0,
            executed_quote: "200000000",
          },
        ],
      );
      assert.deepEqual(
        db
          .prepare("SELECT id, taker_order_id, maker_fee_rate, taker_exec_seq, maker_exec_seq FROM trades")
          .all(),
        [{ id: 1, taker_order_id: 8, maker_fee_rate: 1000, taker_exec_seq: 0, maker_exec_seq: 0 }],
      );
      assert.deepEqual(db.prepare("SELECT * FROM execution_blocks").all(), []);
    } finally {
      db.close();
    }
  });

  it("replays a row written before executed values with each order's sum over all its trades", () => {
    const file = `${tmp.dir}/before-executed-quote.db`;
    const db0 = openDatabase(file);
    // Applied before: order 7 rests with 10 lots filled at 49,900.00 (trade 1).
    db0.exec(`INSERT INTO orders (id, user_id, pair, side, type, price, amount, amount_used, is_cancelled,
                create_micro, update_micro, executed_quote)
              VALUES (7, 1, 'btc_usdt', 0, 0, 5000000, 100, 10, 0, 200, 250, '49900000');
              INSERT INTO trades (id, pair, price, amount, taker_order_id, maker_order_id, taker_user_id,
                maker_user_id, taker_side, taker_type, maker_type, time_micro)
              VALUES (1, 'btc_usdt', 4990000, 10, 9, 7, 3, 1, 1, 0, 0, 250);`);
    db0.close();
    const j = openJournal(file);
    const w = journalWriter(j);
    // The layout of that version: execution numbers, but ORDER (14 slots) and ORDER_UPDATE (7, id
    // last) without executed_quote; the journal row has no layout of its own (the default).
    const order = [8, 2, 0, 1, 1, 5000000, 30, 30, 0, 300, 300, 0, -1, 4];
    const update = [5000000, 100, 40, 0, 300, 5, 7];
    const trade = [2, 0, 5000000, 30, 8, 7, 2, 1, 1, 1, 0, 300, 0, 0, 3, 4];
    const execution = [1, 5, 0, 7];
    const counts = new Array(KIND_COUNT).fill(0);
    counts[ORDER.id] = 1;
    counts[ORDER_UPDATE.id] = 1;
    counts[TRADE.id] = 1;
    counts[EXECUTION.id] = 1;
    // Migration 015's stop columns came later still: 4 in ORDER, 2 in ORDER_UPDATE; 016's
    // trailing_delta and 017's oco_id: 1 each in ORDER.
    assert.equal(ORDER.stride, order.length + 1 + 4 + 1 + 1);
    assert.equal(ORDER_UPDATE.stride, update.length + 1 + 2);
    assert.equal(TRADE.stride, trade.length);
    const slots = new Float64Array([...order, ...update, ...trade, ...execution]);
    const bytes = Buffer.concat([Buffer.from([0]), Buffer.from(slots.buffer)]);
    j.transaction(() => {
      w.appendSym(0, "btc_usdt");
      j.prepare("INSERT INTO journal (seq, counts, slots, strs, settled_below) VALUES (?, ?, ?, ?, ?)").run(
        1,
        JSON.stringify(counts),
        bytes,
        "[]",
        1,
      );
    }).immediate();
    j.close();
    const db = openDatabase(file);
    try {
      assert.equal(replayJournal(db), 1);
      // 7: 10 lots at 49,900.00 before and 30 at 50,000.00 in the row; 8: the 30 it took.
      assert.deepEqual(
        db.prepare("SELECT id, amount_used, exec_seq, executed_quote FROM orders ORDER BY id").all(),
        [
          { id: 7, amount_used: 40, exec_seq: 5, executed_quote: String(4990000 * 10 + 5000000 * 30) },
          { id: 8, amount_used: 30, exec_seq: 4, executed_quote: String(5000000 * 30) },
        ],
      );
      assert.deepEqual(db.prepare("SELECT user_id, first_seq, last_seq, refs FROM execution_blocks").all(), [
        { user_id: 1, first_seq: 5, last_seq: 5, refs: "7" },
      ]);
    } finally {
      db.close();
    }
  });

  it("replays a row written before stop orders with its executed values kept and no stop", () => {
    const file = `${tmp.dir}/before-stops.db`;
    openDatabase(file).close();
    const j = openJournal(file);
    const w = journalWriter(j);
    // The layout of that version (LAYOUT_BEFORE_STOPS): ORDER (15 slots) and ORDER_UPDATE (8, id
    // last) with executed_quote but without migration 015's columns.
    const order = [9, 1, 0, 0, 0, 5000000, 100, 0, 0, 200, 200, 0, -1, 1, 0];
    const update = [5000000, 100, 50, 0, 300, 2, 1, 9];
    const counts = new Array(KIND_COUNT).fill(0);
    counts[ORDER.id] = 1;
    counts[ORDER_UPDATE.id] = 1;
    assert.equal(ORDER.stride, order.length + 4 + 1 + 1);
    assert.equal(ORDER_UPDATE.stride, update.length + 2);
    const slots = new Float64Array([...order, ...update]);
    const bytes = Buffer.concat([Buffer.from([0]), Buffer.from(slots.buffer)]);
    j.transaction(() => {
      w.appendSym(0, "btc_usdt");
      j.prepare(
        "INSERT INTO journal (seq, counts, slots, strs, settled_below, layout) VALUES (?, ?, ?, ?, ?, 2)",
      ).run(1, JSON.stringify(counts), bytes, JSON.stringify(["0", "250000000"]), 1);
    }).immediate();
    j.close();
    const db = openDatabase(file);
    try {
      assert.equal(replayJournal(db), 1);
      assert.deepEqual(
        db
          .prepare(
            `SELECT id, amount_used, exec_seq, executed_quote, stop_price, stop_direction, trigger_micro,
               cancel_reason FROM orders`,
          )
          .all(),
        [
          {
            id: 9,
            amount_used: 50,
            exec_seq: 2,
            executed_quote: "250000000",
            stop_price: 0,
            stop_direction: 0,
            trigger_micro: 0,
            cancel_reason: 0,
          },
        ],
      );
    } finally {
      db.close();
    }
  });

  it("replays a row written before trailing stops with its stop kept and no trailing delta", () => {
    const file = `${tmp.dir}/before-trailing.db`;
    openDatabase(file).close();
    const j = openJournal(file);
    const w = journalWriter(j);
    // The layout of that version (LAYOUT_BEFORE_TRAILING): ORDER (19 slots) with migration 015's
    // columns (a waiting stop at 49,000.00, down) but without trailing_delta; ORDER_UPDATE as now.
    const order = [9, 1, 0, 1, 0, 5000000, 100, 0, 0, 200, 200, 0, -1, 1, 0, 4900000, 2, 0, 0];
    const update = [5000000, 100, 50, 0, 300, 2, 1, 0, 0, 9];
    const counts = new Array(KIND_COUNT).fill(0);
    counts[ORDER.id] = 1;
    counts[ORDER_UPDATE.id] = 1;
    assert.equal(ORDER.stride, order.length + 1 + 1);
    assert.equal(ORDER_UPDATE.stride, update.length);
    const slots = new Float64Array([...order, ...update]);
    const bytes = Buffer.concat([Buffer.from([0]), Buffer.from(slots.buffer)]);
    j.transaction(() => {
      w.appendSym(0, "btc_usdt");
      j.prepare(
        "INSERT INTO journal (seq, counts, slots, strs, settled_below, layout) VALUES (?, ?, ?, ?, ?, 3)",
      ).run(1, JSON.stringify(counts), bytes, JSON.stringify(["0", "250000000"]), 1);
    }).immediate();
    j.close();
    const db = openDatabase(file);
    try {
      assert.equal(replayJournal(db), 1);
      assert.deepEqual(
        db
          .prepare(
            `SELECT id, amount_used, exec_seq, executed_quote, stop_price, stop_direction, trigger_micro,
               cancel_reason, trailing_delta FROM orders`,
          )
          .all(),
        [
          {
            id: 9,
            amount_used: 50,
            exec_seq: 2,
            executed_quote: "250000000",
            stop_price: 4900000,
            stop_direction: 2,
            trigger_micro: 0,
            cancel_reason: 0,
            trailing_delta: 0,
          },
        ],
      );
    } finally {
      db.close();
    }
  });

  it("replays a row written before OCO orders with its stop and trailing delta kept and no OCO id", () => {
    const file = `${tmp.dir}/before-oco.db`;
    openDatabase(file).close();
    const j = openJournal(file);
    const w = journalWriter(j);
    // The layout of that version (LAYOUT_BEFORE_OCO): ORDER (20 slots) with trailing_delta (a
    // trailing stop of delta 5.00 at 49,000.00, down) but without oco_id; ORDER_UPDATE as now.
    const order = [9, 1, 0, 1, 0, 5000000, 100, 0, 0, 200, 200, 0, -1, 1, 0, 4900000, 2, 0, 0, 500];
    const update = [5000000, 100, 50, 0, 300, 2, 1, 0, 0, 9];
    const counts = new Array(KIND_COUNT).fill(0);
    counts[ORDER.id] = 1;
    counts[ORDER_UPDATE.id] = 1;
    assert.equal(ORDER.stride, order.length + 1);
    assert.equal(ORDER_UPDATE.stride, update.length);
    const slots = new Float64Array([...order, ...update]);
    const bytes = Buffer.concat([Buffer.from([0]), Buffer.from(slots.buffer)]);
    j.transaction(() => {
      w.appendSym(0, "btc_usdt");
      j.prepare(
        "INSERT INTO journal (seq, counts, slots, strs, settled_below, layout) VALUES (?, ?, ?, ?, ?, 4)",
      ).run(1, JSON.stringify(counts), bytes, JSON.stringify(["0", "250000000"]), 1);
    }).immediate();
    j.close();
    const db = openDatabase(file);
    try {
      assert.equal(replayJournal(db), 1);
      assert.deepEqual(
        db
          .prepare("SELECT id, amount_used, stop_price, stop_direction, trailing_delta, oco_id FROM orders")
          .all(),
        [{ id: 9, amount_used: 50, stop_price: 4900000, stop_direction: 2, trailing_delta: 500, oco_id: 0 }],
      );
    } finally {
      db.close();
    }
  });

  it("adds the layout column to a journal file made before it, and reads its rows in their layout", () => {
    const file = `${tmp.dir}/old-journal-file.db`;
    openDatabase(file).close();
    const old = openDatabase(journalPath(file), {
      schema: `CREATE TABLE IF NOT EXISTS journal (seq INTEGER PRIMARY KEY, counts TEXT NOT NULL,
                 slots BLOB NOT NULL, strs TEXT NOT NULL, settled_below INTEGER NOT NULL) STRICT;
               CREATE TABLE IF NOT EXISTS journal_syms (id INTEGER PRIMARY KEY, name TEXT NOT NULL) STRICT;`,
    });
    // An ORDER of that version (no executed_quote), as the file's only row.
    const counts = new Array(KIND_COUNT).fill(0);
    counts[ORDER.id] = 1;
    const slots = new Float64Array([11, 1, 0, 0, 0, 5000000, 100, 0, 0, 200, 200, 0, -1, 1]);
    old.prepare("INSERT INTO journal_syms (id, name) VALUES (0, 'btc_usdt')").run();
    old
      .prepare("INSERT INTO journal (seq, counts, slots, strs, settled_below) VALUES (1, ?, ?, '[]', 1)")
      .run(JSON.stringify(counts), Buffer.concat([Buffer.from([0]), Buffer.from(slots.buffer)]));
    old.close();
    const j = openJournal(file);
    assert.equal(j.prepare("SELECT layout FROM journal WHERE seq = 1").pluck().get(), 1);
    j.close();
    const db = openDatabase(file);
    try {
      assert.equal(replayJournal(db), 1);
      assert.deepEqual(db.prepare("SELECT id, price, exec_seq, executed_quote FROM orders").all(), [
        { id: 11, price: 5000000, exec_seq: 1, executed_quote: "0" },
      ]);
    } finally {
      db.close();
    }
  });
});
