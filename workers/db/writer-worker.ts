/**
 * The writer thread: owns the only read-write connection. Each batch from `src/db/writer.ts` is
 * applied in one IMMEDIATE transaction with prepared statements, then acknowledged; the main thread
 * releases the answers that depended on it only after that ack. On the first error the thread
 * answers every later batch with an error too, so nothing after a lost write is ever acknowledged.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { Statement } from "better-sqlite3";
import { type Db, openDatabase } from "../../src/protocol/db-open.ts";
import {
  BALANCE,
  CANDLE,
  compileRunner,
  type FromWriter,
  KIND_COUNT,
  KINDS,
  NONCE,
  ORDER,
  ORDER_UPDATE,
  type RecordKind,
  type ToWriter,
  TRADE,
  type WriterWorkerData,
} from "../../src/protocol/writer-batch.ts";

type Batch = Extract<ToWriter, { t: "batch" }>;

const port = parentPort!;
const data = workerData as WriterWorkerData;

function post(m: FromWriter): void {
  port.postMessage(m);
}

/** One statement per record kind, from its field table (writer-batch.ts). */
function prepare(db: Db): Statement[] {
  return KINDS.map((k) => db.prepare(k.sql));
}

let db: Db;
let st: Statement[];
try {
  db = openDatabase(data.path, {
    synchronous: data.synchronous,
    walAutocheckpointPages: data.walAutocheckpointPages,
  });
  st = prepare(db);
} catch (err) {
  post({ t: "error", seq: 0, message: (err as Error).message });
  // In a worker, process.exit ends only this thread; start() rejects with the message above.
  process.exit(1);
}

// ---- per-user rows, written in bulk (migration 002) ---------------------------------------------
// Invariants: every order with id <= `ordersThrough` has its user_orders row, and every trade with
// id <= `tradesThrough` its two user_trades rows (readers scan the tails above the marks). New
// rows wait and are written together, sorted by user, in the transaction of the batch that brings
// the orders or the trades waiting to `flushAt`: a user's page is then written once per flush
// instead of once per group commit. A mark moves only in the transaction that wrote every row
// below it. Trades reach the writer in id order (the core numbers them as it records them), so the
// trades waiting are exactly those above the mark, and their rows come from the `trade_sides`
// view. An order's id is given when its command enters a pair worker and the pairs answer out of
// order, so the orders waiting are tracked by id, and the orders' mark moves only up to what the
// main side reports as settled (`settledBelow`).
const setMark = db.prepare("UPDATE meta SET value = ? WHERE key = ?");
const markOf = db.prepare<[string], number>("SELECT value FROM meta WHERE key = ?").pluck();
const maxId = (table: "orders" | "trades") =>
  db.prepare<[], number>(`SELECT COALESCE(MAX(id), 0) FROM ${table}`).pluck().get()!;
const userOrder = db.prepare("INSERT OR IGNORE INTO user_orders (user_id, order_id) VALUES (?, ?)");
const userOrdersAbove = db.prepare(
  "INSERT OR IGNORE INTO user_orders (user_id, order_id) SELECT user_id, id FROM orders WHERE id > ?",
);
const userTradesAbove = db.prepare(
  `INSERT INTO user_trades (user_id, trade_id, pair, side, type, price, amount, time_micro, fee_rate)
     SELECT user_id, trade_id, pair, side, type, price, amount, time_micro, fee_rate FROM trade_sides
     WHERE trade_id > ? ORDER BY user_id, trade_id`,
);
let ordersThrough = markOf.get("user_orders_through")!;
let tradesThrough = markOf.get("user_trades_through")!;
/** Order id -> user of orders above `ordersThrough` whose user_orders row is not written yet. */
const heldOrders = new Map<number, number>();
/** Highest order id reported settled: the orders' mark may move up to here after a flush. */
let settled = ordersThrough;
/** The last trade written: the trades above `tradesThrough` up to it wait for their rows. */
let lastTrade = tradesThrough;

/** Writes the rows of the trades above the mark, up to `upTo`, and moves the mark there. */
function flushUserTrades(upTo: number): void {
  if (upTo <= tradesThrough) return;
  userTradesAbove.run(tradesThrough);
  tradesThrough = upTo;
  setMark.run(tradesThrough, "user_trades_through");
}

/** Writes every held row (sorted by user, then id) and moves the marks. In a transaction. */
function flushUserRows(): void {
  const orders = [...heldOrders].sort((a, b) => a[1] - b[1] || a[0] - b[0]);
  for (const [id, user] of orders) userOrder.run(user, id);
  heldOrders.clear();
  if (settled > ordersThrough) {
    ordersThrough = settled;
    setMark.run(ordersThrough, "user_orders_through");
  }
  flushUserTrades(lastTrade);
}

// Catch up at start: nothing is in flight, so every stored order and trade is settled.
db.transaction(() => {
  userOrdersAbove.run(ordersThrough);
  const maxOrder = maxId("orders");
  if (maxOrder > ordersThrough) {
    ordersThrough = settled = maxOrder;
    setMark.run(ordersThrough, "user_orders_through");
  }
  lastTrade = Math.max(lastTrade, maxId("trades"));
  flushUserTrades(lastTrade);
}).immediate();

/** Symbol table: ids assigned by the main side in order of first use, sent with the batches. */
const syms: string[] = [];
// Keys already written in the current batch, for last-wins coalescing of repeated upserts
// (walking the records backwards, a key seen once has had its final value written).
const seenNum = new Set<number>();
const seenStr = new Set<string>();

/** Per kind, its statement's runner, compiled from the field table. */
const runners = KINDS.map(compileRunner);

/** Runs kind `k`'s statement for the record at `o`. */
function put(k: RecordKind, b: Float64Array, o: number, s: readonly string[]): void {
  runners[k.id](st[k.id], b, o, s, syms);
}

/** Every record of the kind, in order. */
function putAll(k: RecordKind, b: Float64Array, s: readonly string[]): void {
  for (let o = 0; o < b.length; o += k.stride) put(k, b, o, s);
}

type Apply = (b: Float64Array, s: readonly string[]) => void;

/** Per kind, how its records are written. `b` holds whole records; `s` is the batch's strings. */
const apply: Apply[] = KINDS.map((k) => (b: Float64Array, s: readonly string[]) => putAll(k, b, s));

// Upserts of which only the last value counts are coalesced: walking the records backwards, a key
// seen once has had its final value written.
apply[NONCE.id] = (b, s) => {
  seenStr.clear();
  for (let o = b.length - NONCE.stride; o >= 0; o -= NONCE.stride) {
    const token = s[b[o + NONCE.at.token]];
    if (seenStr.has(token)) continue;
    seenStr.add(token);
    put(NONCE, b, o, s);
  }
};

apply[BALANCE.id] = (b, s) => {
  seenNum.clear();
  for (let o = b.length - BALANCE.stride; o >= 0; o -= BALANCE.stride) {
    // User ids are small and symbol ids below 2^20: the key stays an exact integer.
    const key = b[o + BALANCE.at.user_id] * 1048576 + b[o + BALANCE.at.currency];
    if (seenNum.has(key)) continue;
    seenNum.add(key);
    put(BALANCE, b, o, s);
  }
};

apply[ORDER.id] = (b, s) => {
  seenNum.clear();
  for (let o = b.length - ORDER.stride; o >= 0; o -= ORDER.stride) {
    const id = b[o + ORDER.at.id];
    if (seenNum.has(id)) continue;
    seenNum.add(id);
    if (id > ordersThrough) heldOrders.set(id, b[o + ORDER.at.user_id]);
    put(ORDER, b, o, s);
  }
};

// After ORDER (kinds apply in id order), so an order inserted and changed in one batch ends as changed.
apply[ORDER_UPDATE.id] = (b, s) => {
  seenNum.clear();
  for (let o = b.length - ORDER_UPDATE.stride; o >= 0; o -= ORDER_UPDATE.stride) {
    const id = b[o + ORDER_UPDATE.at.id];
    if (seenNum.has(id)) continue;
    seenNum.add(id);
    put(ORDER_UPDATE, b, o, s);
  }
};

apply[TRADE.id] = (b, s) => {
  putAll(TRADE, b, s);
  // The user_trades rows follow in bulk (flushUserTrades); trades come in id order.
  if (b.length > 0) lastTrade = b[b.length - TRADE.stride + TRADE.at.id];
};

apply[CANDLE.id] = (b, s) => {
  seenStr.clear();
  for (let o = b.length - CANDLE.stride; o >= 0; o -= CANDLE.stride) {
    const key = `${b[o + CANDLE.at.pair]}:${b[o + CANDLE.at.period]}:${b[o + CANDLE.at.start_ms]}`;
    if (seenStr.has(key)) continue;
    seenStr.add(key);
    put(CANDLE, b, o, s);
  }
};

/** Kinds in numeric order (see writer-batch.ts: a key's creation precedes its revocation). */
function applyBatch(m: Batch): void {
  const slots = new Float64Array(m.slots);
  let at = 0;
  for (let k = 0; k < KIND_COUNT; k++) {
    const len = m.counts[k] * KINDS[k].stride;
    if (len > 0) apply[k](slots.subarray(at, at + len), m.strs);
    at += len;
  }
  if (m.settledBelow - 1 > settled) settled = m.settledBelow - 1;
  if (heldOrders.size >= data.userRowsFlushAt || lastTrade - tradesThrough >= data.userRowsFlushAt)
    flushUserRows();
}

const applyTx = db.transaction(applyBatch);
let broken: string | null = null;

port.on("message", (m: ToWriter) => {
  if (m.t === "close") {
    try {
      // Fold the WAL into the main file so the next start reads one file; TRUNCATE leaves the
      // WAL empty (a reader still holding a snapshot only makes this a partial checkpoint).
      if (broken === null) {
        db.transaction(flushUserRows).immediate();
        db.pragma("wal_checkpoint(TRUNCATE)");
      }
      db.close();
      post({ t: "closed" });
    } catch (err) {
      post({ t: "error", seq: -1, message: (err as Error).message });
    }
    port.close();
    return;
  }
  if (broken !== null) {
    post({ t: "error", seq: m.seq, message: `writer already failed: ${broken}` });
    return;
  }
  try {
    for (const name of m.syms) syms.push(name);
    let records = 0;
    for (let k = 0; k < KIND_COUNT; k++) records += m.counts[k];
    // A batch of callbacks only needs no transaction: the earlier batches are already committed.
    if (records > 0) applyTx.immediate(m);
    post({ t: "ack", seq: m.seq, records });
  } catch (err) {
    broken = (err as Error).message;
    post({ t: "error", seq: m.seq, message: broken });
  }
});

post({ t: "ready" });
