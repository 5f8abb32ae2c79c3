/**
 * The writer thread: owns the only read-write connection. Each batch from `src/db/writer.ts` is
 * applied in one IMMEDIATE transaction with prepared statements, then acknowledged; the main thread
 * releases the answers that depended on it only after that ack. On the first error the thread
 * answers every later batch with an error too, so nothing after a lost write is ever acknowledged.
 */
import { parentPort, workerData } from "node:worker_threads";
import {
  BAL_AVAILABLE,
  BAL_CURRENCY,
  BAL_RESERVED,
  BAL_USER,
  CDL_CLOSE,
  CDL_HIGH,
  CDL_LOW,
  CDL_OPEN,
  CDL_PAIR,
  CDL_PERIOD,
  CDL_START,
  CDL_VOLUME,
  CURRENCY_NAME,
  CURRENCY_SCALE,
  type FromWriter,
  K_API_KEY,
  K_BALANCE,
  K_CANDLE,
  K_CURRENCY,
  K_META,
  K_NONCE,
  K_ORDER,
  K_PAIR,
  K_REVOKE_KEY,
  K_TRADE,
  K_TRANSFER,
  K_USER,
  KEY_MICRO,
  KEY_SECRET,
  KEY_TOKEN,
  KEY_USER,
  KIND_COUNT,
  META_KEY,
  META_VALUE,
  NONCE_TOKEN,
  NONCE_VALUE,
  ORD_AMOUNT,
  ORD_CANCELLED,
  ORD_CLIENT_ID,
  ORD_CREATE,
  ORD_FLAGS,
  ORD_ID,
  ORD_PAIR,
  ORD_PRICE,
  ORD_SIDE,
  ORD_TYPE,
  ORD_UPDATE,
  ORD_USED,
  ORD_USER,
  PAIR_AMOUNT_DECIMALS,
  PAIR_NAME,
  PAIR_PRICE_DECIMALS,
  REVOKE_TOKEN,
  STRIDE,
  type ToWriter,
  TR_AMOUNT,
  TR_ID,
  TR_MAKER_FEE,
  TR_MAKER_ORDER,
  TR_MAKER_TYPE,
  TR_MAKER_USER,
  TR_MICRO,
  TR_PAIR,
  TR_PRICE,
  TR_TAKER_FEE,
  TR_TAKER_ORDER,
  TR_TAKER_SIDE,
  TR_TAKER_TYPE,
  TR_TAKER_USER,
  USER_ID,
  USER_MICRO,
  USER_UID,
  type WriterWorkerData,
  XFER_AMOUNT,
  XFER_CURRENCY,
  XFER_DEPOSIT,
  XFER_KIND,
  XFER_MICRO,
  XFER_USER,
} from "../../src/db/batch-layout.ts";
import { type Db, openDatabase } from "../../src/protocol/db-open.ts";

type Batch = Extract<ToWriter, { t: "batch" }>;

const port = parentPort!;
const data = workerData as WriterWorkerData;

function post(m: FromWriter): void {
  port.postMessage(m);
}

function prepare(db: Db) {
  return {
    pair: db.prepare(
      `INSERT INTO pairs (name, price_decimals, amount_decimals) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET price_decimals = excluded.price_decimals,
         amount_decimals = excluded.amount_decimals`,
    ),
    currency: db.prepare(
      `INSERT INTO currencies (name, scale) VALUES (?, ?)
       ON CONFLICT (name) DO UPDATE SET scale = excluded.scale`,
    ),
    // Users, keys, transfers and trades are facts recorded once: a duplicate is a bug upstream and
    // fails the writer instead of being silently merged.
    user: db.prepare("INSERT INTO users (id, uid, created_micro) VALUES (?, ?, ?)"),
    apiKey: db.prepare(
      "INSERT INTO api_keys (token, user_id, secret, revoked, created_micro) VALUES (?, ?, ?, 0, ?)",
    ),
    revokeKey: db.prepare("UPDATE api_keys SET revoked = 1 WHERE token = ?"),
    nonce: db.prepare(
      `INSERT INTO nonces (token, last_nonce) VALUES (?, ?)
       ON CONFLICT (token) DO UPDATE SET last_nonce = excluded.last_nonce`,
    ),
    balance: db.prepare(
      `INSERT INTO balances (user_id, currency, available, reserved) VALUES (?, ?, ?, ?)
       ON CONFLICT (user_id, currency) DO UPDATE SET available = excluded.available,
         reserved = excluded.reserved`,
    ),
    transfer: db.prepare(
      "INSERT INTO transfers (user_id, currency, amount, kind, time_micro) VALUES (?, ?, ?, ?, ?)",
    ),
    order: db.prepare(
      `INSERT INTO orders (id, user_id, pair, side, type, price, amount, amount_used, is_cancelled,
         create_micro, update_micro, flags, client_order_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET price = excluded.price, amount = excluded.amount,
         amount_used = excluded.amount_used, is_cancelled = excluded.is_cancelled,
         update_micro = excluded.update_micro`,
    ),
    trade: db.prepare(
      `INSERT INTO trades (id, pair, price, amount, taker_order_id, maker_order_id, taker_user_id,
         maker_user_id, taker_side, taker_type, maker_type, time_micro, taker_fee_rate, maker_fee_rate)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    meta: db.prepare(
      "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    ),
    candle: db.prepare(
      `INSERT INTO candles (pair, period, start_ms, open, high, low, close, volume)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (pair, period, start_ms) DO UPDATE SET open = excluded.open,
         high = excluded.high, low = excluded.low, close = excluded.close, volume = excluded.volume`,
    ),
  };
}

let db: Db;
let st: ReturnType<typeof prepare>;
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

type Apply = (b: Float64Array, s: readonly string[]) => void;

/** Per kind, how its records are written. `b` holds whole records; `s` is the batch's strings. */
const apply: Apply[] = new Array(KIND_COUNT);

apply[K_PAIR] = (b) => {
  for (let o = 0; o < b.length; o += STRIDE[K_PAIR])
    st.pair.run(syms[b[o + PAIR_NAME]], b[o + PAIR_PRICE_DECIMALS], b[o + PAIR_AMOUNT_DECIMALS]);
};

apply[K_CURRENCY] = (b) => {
  for (let o = 0; o < b.length; o += STRIDE[K_CURRENCY])
    st.currency.run(syms[b[o + CURRENCY_NAME]], b[o + CURRENCY_SCALE]);
};

apply[K_USER] = (b, s) => {
  for (let o = 0; o < b.length; o += STRIDE[K_USER])
    st.user.run(b[o + USER_ID], s[b[o + USER_UID]], b[o + USER_MICRO]);
};

apply[K_API_KEY] = (b, s) => {
  for (let o = 0; o < b.length; o += STRIDE[K_API_KEY])
    st.apiKey.run(s[b[o + KEY_TOKEN]], b[o + KEY_USER], s[b[o + KEY_SECRET]], b[o + KEY_MICRO]);
};

apply[K_REVOKE_KEY] = (b, s) => {
  for (let o = 0; o < b.length; o += STRIDE[K_REVOKE_KEY]) st.revokeKey.run(s[b[o + REVOKE_TOKEN]]);
};

apply[K_NONCE] = (b, s) => {
  seenStr.clear();
  for (let o = b.length - STRIDE[K_NONCE]; o >= 0; o -= STRIDE[K_NONCE]) {
    const token = s[b[o + NONCE_TOKEN]];
    if (seenStr.has(token)) continue;
    seenStr.add(token);
    st.nonce.run(token, s[b[o + NONCE_VALUE]]);
  }
};

apply[K_BALANCE] = (b, s) => {
  seenNum.clear();
  for (let o = b.length - STRIDE[K_BALANCE]; o >= 0; o -= STRIDE[K_BALANCE]) {
    // User ids are small and symbol ids below 2^20: the key stays an exact integer.
    const key = b[o + BAL_USER] * 1048576 + b[o + BAL_CURRENCY];
    if (seenNum.has(key)) continue;
    seenNum.add(key);
    st.balance.run(
      b[o + BAL_USER],
      syms[b[o + BAL_CURRENCY]],
      s[b[o + BAL_AVAILABLE]],
      s[b[o + BAL_RESERVED]],
    );
  }
};

apply[K_TRANSFER] = (b, s) => {
  for (let o = 0; o < b.length; o += STRIDE[K_TRANSFER])
    st.transfer.run(
      b[o + XFER_USER],
      syms[b[o + XFER_CURRENCY]],
      s[b[o + XFER_AMOUNT]],
      b[o + XFER_KIND] === XFER_DEPOSIT ? "deposit" : "withdraw",
      b[o + XFER_MICRO],
    );
};

apply[K_ORDER] = (b, s) => {
  seenNum.clear();
  for (let o = b.length - STRIDE[K_ORDER]; o >= 0; o -= STRIDE[K_ORDER]) {
    const id = b[o + ORD_ID];
    if (seenNum.has(id)) continue;
    seenNum.add(id);
    if (id > ordersThrough) heldOrders.set(id, b[o + ORD_USER]);
    st.order.run(
      id,
      b[o + ORD_USER],
      syms[b[o + ORD_PAIR]],
      b[o + ORD_SIDE],
      b[o + ORD_TYPE],
      b[o + ORD_PRICE],
      b[o + ORD_AMOUNT],
      b[o + ORD_USED],
      b[o + ORD_CANCELLED],
      b[o + ORD_CREATE],
      b[o + ORD_UPDATE],
      b[o + ORD_FLAGS],
      b[o + ORD_CLIENT_ID] === -1 ? null : s[b[o + ORD_CLIENT_ID]],
    );
  }
};

apply[K_TRADE] = (b) => {
  for (let o = 0; o < b.length; o += STRIDE[K_TRADE]) {
    st.trade.run(
      b[o + TR_ID],
      syms[b[o + TR_PAIR]],
      b[o + TR_PRICE],
      b[o + TR_AMOUNT],
      b[o + TR_TAKER_ORDER],
      b[o + TR_MAKER_ORDER],
      b[o + TR_TAKER_USER],
      b[o + TR_MAKER_USER],
      b[o + TR_TAKER_SIDE],
      b[o + TR_TAKER_TYPE],
      b[o + TR_MAKER_TYPE],
      b[o + TR_MICRO],
      b[o + TR_TAKER_FEE],
      b[o + TR_MAKER_FEE],
    );
    // The user_trades rows follow in bulk (flushUserTrades).
    lastTrade = b[o + TR_ID];
  }
};

apply[K_META] = (b) => {
  for (let o = 0; o < b.length; o += STRIDE[K_META]) st.meta.run(syms[b[o + META_KEY]], b[o + META_VALUE]);
};

apply[K_CANDLE] = (b) => {
  seenStr.clear();
  for (let o = b.length - STRIDE[K_CANDLE]; o >= 0; o -= STRIDE[K_CANDLE]) {
    const key = `${b[o + CDL_PAIR]}:${b[o + CDL_PERIOD]}:${b[o + CDL_START]}`;
    if (seenStr.has(key)) continue;
    seenStr.add(key);
    st.candle.run(
      syms[b[o + CDL_PAIR]],
      syms[b[o + CDL_PERIOD]],
      b[o + CDL_START],
      b[o + CDL_OPEN],
      b[o + CDL_HIGH],
      b[o + CDL_LOW],
      b[o + CDL_CLOSE],
      b[o + CDL_VOLUME],
    );
  }
};

/** Kinds in numeric order (see batch-layout.ts: a key's creation precedes its revocation). */
function applyBatch(m: Batch): void {
  for (let k = 0; k < KIND_COUNT; k++) {
    const buf = m.bufs[k];
    if (buf !== null) apply[k](new Float64Array(buf, 0, m.counts[k] * STRIDE[k]), m.strs);
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
