/**
 * How a writer batch becomes rows: the one definition, used by the apply thread's bulk apply
 * (workers/db/apply-worker.ts) and by the journal replay at start (journal.ts). Every function
 * here runs inside a transaction of its caller on the read-write connection it was made for.
 *
 * A batch's records are applied kind after kind in kind order (writer-batch.ts), records of one
 * kind in the order they were added; upserts of which only the last value counts are coalesced,
 * within an order's records of a batch, and over all the batches of one call for the nonces,
 * balances, candles and meta values (applyBatches). An order inserted and changed within one call
 * is written once, as its insert carrying its last state (foldUpdates). Each user's execution
 * numbers of one call are written as one block (migration 012).
 */
import type { Statement } from "better-sqlite3";
import type { Db } from "./db-open.ts";
import { EXEC_TRADE } from "./rows.ts";
import {
  BALANCE,
  CANDLE,
  compileRowsRunner,
  compileRunner,
  EXECUTION,
  JOURNAL_ONLY,
  KIND_COUNT,
  KINDS,
  META,
  MMP_SETTING,
  NONCE,
  ORDER,
  ORDER_UPDATE,
  type RecordKind,
  type RowsRunner,
  STR,
  slotsOf,
  TRADE,
} from "./writer-batch.ts";

type KeyOf = (b: Float64Array, o: number, s: readonly string[]) => number | string;

/**
 * Upserts of which only the last value per key counts (the nonce of a token, a balance, a candle,
 * a meta value): written once per key per applyBatches call.
 */
const LAST_WINS: readonly [RecordKind, KeyOf][] = [
  [NONCE, (b, o, s) => s[b[o + NONCE.at.token]]],
  // User ids are small and symbol ids below 2^20: the key stays an exact integer.
  [BALANCE, (b, o) => b[o + BALANCE.at.user_id] * 1048576 + b[o + BALANCE.at.currency]],
  [CANDLE, (b, o) => `${b[o + CANDLE.at.pair]}:${b[o + CANDLE.at.period]}:${b[o + CANDLE.at.start_ms]}`],
  // A symbol id names one key in every batch of a call (they share the applier's table). Each
  // batch brings the book sequence of the pairs it touched, and only the last counts.
  [META, (b, o) => b[o + META.at.key]],
  [MMP_SETTING, (b, o) => b[o + MMP_SETTING.at.user_id] * 1048576 + b[o + MMP_SETTING.at.pair]],
];
const LAST_WINS_KIND: readonly boolean[] = KINDS.map((k) => LAST_WINS.some(([l]) => l === k));

/**
 * Orders and trades are inserted this many rows per statement (the rest of a batch one by one):
 * one statement run instead of 16 (BENCHMARKS.md, "Changes kept").
 */
const ROWS_PER_INSERT = 16;

/** An ORDER_UPDATE record folded into its order's ORDER record: its id slot is set to this. */
const FOLDED = -1;
/**
 * [slot in ORDER_UPDATE, slot of the same column in ORDER, whether it is a STR] for each column an
 * update sets.
 */
const FOLD_COLUMNS: readonly (readonly [number, number, boolean])[] = Object.entries(ORDER_UPDATE.at)
  .filter(([column]) => column !== "id")
  .map(
    ([column, at]) =>
      [at, (ORDER.at as Record<string, number>)[column], ORDER_UPDATE.slots[at] === STR] as const,
  );
/** An ORDER record's place in one call's batches: batch index × 2^32 + slot offset. */
const BATCH_PLACE = 2 ** 32;

/** What applying a batch needs of it: its records (a copy the applier may keep reading) and strings. */
/**
 * The meta key of a follower's settled orders: every order id up to it has all its records in the
 * batches its database holds (its leader's `settledBelow` - 1). Absent on a leader.
 */
export const REPLICATION_SETTLED = "replication_settled_through";

export interface BatchRecords {
  /** Per kind: number of records. */
  counts: readonly number[];
  /**
   * The records, kind after kind in kind order; may be longer than the records. The applier owns
   * them: applyBatches folds an order's updates into its insert in place (foldUpdates).
   */
  slots: Float64Array;
  /** The strings STR slots index; the applier may append (foldUpdates). */
  strs: string[];
  /** See ToWriter's `settledBelow`. */
  settledBelow: number;
}

export interface BatchApplier {
  /**
   * The symbol table the batches' SYM slots index: ids in order of first use, as the main side
   * assigned them in the run that produced the batches. The caller appends each batch's new names.
   */
  readonly syms: string[];
  /** Writes the rows of the batches, given in batch order. In a transaction. */
  applyBatches(batches: readonly BatchRecords[]): void;
  /** Writes every held user_orders / user_trades row and moves the marks. In a transaction. */
  flushUserRows(): void;
  /**
   * Writes the user rows of every stored order and trade and moves both marks to the highest ids:
   * only right after a start, when nothing is in flight, so every stored order is settled. In a
   * transaction.
   */
  catchUp(): void;
}

/**
 * Prepares the statements on `db` and reads the user-row marks from `meta`. `userRowsFlushAt`: see
 * WriterOptions.userRowsFlushAt.
 */
export function createBatchApplier(db: Db, userRowsFlushAt: number): BatchApplier {
  /** One statement per record kind, from its field table (writer-batch.ts). */
  const st: Statement[] = KINDS.map((k) => db.prepare(k.sql));

  // ---- per-user rows, written in bulk (migration 002) -------------------------------------------
  // Invariants: every order with id <= `ordersThrough` has its user_orders row, and every trade
  // with id <= `tradesThrough` its two user_trades rows (readers scan the tails above the marks).
  // New rows wait and are written together, sorted by user, in the transaction of the batch that
  // brings the orders or the trades waiting to `userRowsFlushAt`: a user's page is then written
  // once per flush instead of once per batch. A mark moves only in the transaction that wrote every
  // row below it. Trades reach the writer in id order (the core numbers them as it records them),
  // so the trades waiting are exactly those above the mark, and their rows come from the
  // `trade_sides` view. An order's id is given when its command enters a pair worker and the pairs
  // answer out of order, so a flush writes the rows of every stored order above the orders' mark
  // (those it wrote before are skipped), and that mark moves only up to what the main side reports
  // as settled (`settledBelow`): an order still in a pair worker is above it.
  const setMark = db.prepare("UPDATE meta SET value = ? WHERE key = ?");
  const markOf = db.prepare<[string], number>("SELECT value FROM meta WHERE key = ?").pluck();
  const maxId = (table: "orders" | "trades") =>
    db.prepare<[], number>(`SELECT COALESCE(MAX(id), 0) FROM ${table}`).pluck().get()!;
  // The rows of every stored order above the mark, in key order (one statement instead of a bound
  // run per order; orders that already have theirs are skipped).
  const userOrdersAbove = db.prepare(
    "INSERT OR IGNORE INTO user_orders (user_id, order_id) SELECT user_id, id FROM orders WHERE id > ? ORDER BY user_id, id",
  );
  // Keys only (migration 008): the rest of a user's row is read from the trade.
  const userTradesAbove = db.prepare(
    "INSERT INTO user_trades (user_id, trade_id) SELECT user_id, trade_id FROM trade_sides WHERE trade_id > ? ORDER BY user_id, trade_id",
  );
  let ordersThrough = markOf.get("user_orders_through")!;
  let tradesThrough = markOf.get("user_trades_through")!;
  /**
   * Orders above `ordersThrough` written since the last flush. Every stored order above the mark
   * that was written before that flush has its user_orders row (the flush writes the rows of all
   * of them), so none waits when this is 0.
   */
  let heldOrders = 0;
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

  function flushUserRows(): void {
    if (heldOrders > 0) {
      userOrdersAbove.run(ordersThrough);
      heldOrders = 0;
    }
    if (settled > ordersThrough) {
      ordersThrough = settled;
      setMark.run(ordersThrough, "user_orders_through");
    }
    flushUserTrades(lastTrade);
  }

  function catchUp(): void {
    userOrdersAbove.run(ordersThrough);
    heldOrders = 0;
    // A follower's orders below its newest may still come in its leader's later batches: its mark
    // goes no further than what its leader said is settled (docs/OPERATIONS.md, "A second box:
    // follower"). Elsewhere nothing is in flight at a start: every stored order is settled.
    const cap = markOf.get(REPLICATION_SETTLED);
    const maxOrder = Math.min(maxId("orders"), cap ?? Number.POSITIVE_INFINITY);
    if (maxOrder > ordersThrough) {
      ordersThrough = settled = maxOrder;
      setMark.run(ordersThrough, "user_orders_through");
    }
    lastTrade = Math.max(lastTrade, maxId("trades"));
    flushUserTrades(lastTrade);
  }

  const syms: string[] = [];
  // Keys already written, for last-wins coalescing of repeated upserts.
  const seenNum = new Set<number>();
  const seen = new Set<number | string>();

  /** Per kind, its statement's runner, compiled from the field table. */
  const runners = KINDS.map(compileRunner);
  /** ORDER and TRADE: their statement for ROWS_PER_INSERT records, and its runner. */
  const rows: ({ st: Statement; run: RowsRunner } | null)[] = KINDS.map((k) =>
    (k === ORDER || k === TRADE) && k.rowsSql !== null
      ? { st: db.prepare(k.rowsSql(ROWS_PER_INSERT)), run: compileRowsRunner(k, ROWS_PER_INSERT) }
      : null,
  );
  /** Offsets of the records to write (putRows). */
  let at = new Int32Array(256);

  /** Runs kind `k`'s statement for the record at `o`. */
  function put(k: RecordKind, b: Float64Array, o: number, s: readonly string[]): void {
    runners[k.id](st[k.id], b, o, s, syms);
  }

  /** Makes room for `n` offsets in `at`. */
  function offsets(n: number): Int32Array {
    if (at.length < n) at = new Int32Array(Math.max(n, at.length * 2));
    return at;
  }

  /** Writes the records at `at[0..n)`, in that order: ROWS_PER_INSERT per statement where it can. */
  function putRows(k: RecordKind, b: Float64Array, n: number, s: readonly string[]): void {
    let i = 0;
    const r = rows[k.id];
    if (r !== null) for (; i + ROWS_PER_INSERT <= n; i += ROWS_PER_INSERT) r.run(r.st, b, at, i, s, syms);
    for (; i < n; i++) put(k, b, at[i], s);
  }

  /** Every record of the kind, in order. */
  function putAll(k: RecordKind, b: Float64Array, s: readonly string[]): void {
    const n = b.length / k.stride;
    const offs = offsets(n);
    for (let i = 0; i < n; i++) offs[i] = i * k.stride;
    putRows(k, b, n, s);
  }

  type Apply = (b: Float64Array, s: readonly string[]) => void;

  /** Per kind, how its records are written. `b` holds whole records; `s` is the batch's strings. */
  const apply: Apply[] = KINDS.map((k) => (b: Float64Array, s: readonly string[]) => putAll(k, b, s));

  /**
   * Writes the last record of each order in `b` (walking backwards, an id already seen has its
   * final state taken), in the order of those records; returns how many of those orders are above
   * the orders' mark.
   */
  function putLastOfEachOrder(k: typeof ORDER | typeof ORDER_UPDATE, b: Float64Array, s: readonly string[]) {
    seenNum.clear();
    let above = 0;
    const offs = offsets(b.length / k.stride);
    let n = 0;
    for (let o = b.length - k.stride; o >= 0; o -= k.stride) {
      const id = b[o + k.at.id];
      if (id === FOLDED || seenNum.has(id)) continue;
      seenNum.add(id);
      if (id > ordersThrough) above++;
      offs[n++] = o;
    }
    offs.subarray(0, n).reverse();
    putRows(k, b, n, s);
    return above;
  }

  // Journal only: a follower reads them from the journal row (src/replication/follower-apply.ts).
  for (const k of JOURNAL_ONLY) apply[k.id] = () => undefined;

  apply[ORDER.id] = (b, s) => {
    heldOrders += putLastOfEachOrder(ORDER, b, s);
  };

  // After ORDER (kinds apply in id order), so an order inserted and changed in one batch ends as changed.
  apply[ORDER_UPDATE.id] = (b, s) => {
    putLastOfEachOrder(ORDER_UPDATE, b, s);
  };

  // ---- execution numbers, one block per user per call (migration 012) ---------------------------
  // A user's numbers arrive in number order with no gap (given and committed in that order), so
  // those of one call make one block; a gap (none is expected) starts another.
  const putBlock = db.prepare<[number, number, number, string]>(
    "INSERT INTO execution_blocks (user_id, first_seq, last_seq, refs) VALUES (?, ?, ?, ?)",
  );
  /** Per user, the block of this call so far: its first and last number, its refs (`,` joined). */
  const blocks = new Map<number, { first: number; last: number; refs: string }>();

  apply[EXECUTION.id] = (b) => {
    const { user_id, exec_seq, kind, ref_id } = EXECUTION.at;
    for (let o = 0; o < b.length; o += EXECUTION.stride) {
      const user = b[o + user_id];
      const seq = b[o + exec_seq];
      const ref = b[o + kind] === EXEC_TRADE ? -b[o + ref_id] : b[o + ref_id];
      const block = blocks.get(user);
      if (block !== undefined && seq === block.last + 1) {
        block.last = seq;
        block.refs += `,${ref}`;
        continue;
      }
      if (block !== undefined) putBlock.run(user, block.first, block.last, block.refs);
      blocks.set(user, { first: seq, last: seq, refs: String(ref) });
    }
  };

  /** Writes the blocks of this call. */
  function putBlocks(): void {
    for (const [user, block] of blocks) putBlock.run(user, block.first, block.last, block.refs);
    blocks.clear();
  }

  apply[TRADE.id] = (b, s) => {
    putAll(TRADE, b, s);
    // The user_trades rows follow in bulk (flushUserTrades); trades come in id order.
    if (b.length > 0) lastTrade = b[b.length - TRADE.stride + TRADE.at.id];
  };

  /** Order id -> the place of its last ORDER record so far in the call (foldUpdates). */
  const insertedAt = new Map<number, number>();

  /**
   * Folds each ORDER_UPDATE whose order has an ORDER record before it in the call (an earlier
   * batch, or the same one: kinds apply in kind order) into that record, which then carries the
   * order's last state, and marks the update FOLDED. The rows end the same, in one transaction:
   * the insert (an upsert) writes every column the update would, and nothing applied in between
   * reads them. A maker filled soon after it rested (most of them, in bench:load's workload: 73%
   * of the updates) then costs no UPDATE, and a closed one never enters the open-orders index.
   */
  function foldUpdates(batches: readonly BatchRecords[]): void {
    insertedAt.clear();
    for (let bi = 0; bi < batches.length; bi++) {
      const m = batches[bi];
      const b = m.slots;
      const nOrders = m.counts[ORDER.id];
      if (nOrders > 0) {
        const start = slotsOf(m.counts, ORDER.id);
        for (let r = 0, o = start; r < nOrders; r++, o += ORDER.stride) {
          const id = b[o + ORDER.at.id];
          // Only an order still open can change again; a later record of the order (an upsert of
          // a recovered one) is the one any update after it must reach.
          if (b[o + ORDER.at.is_cancelled] === 0 && b[o + ORDER.at.amount_used] < b[o + ORDER.at.amount])
            insertedAt.set(id, bi * BATCH_PLACE + o);
          else if (insertedAt.size > 0) insertedAt.delete(id);
        }
      }
      const nUpdates = m.counts[ORDER_UPDATE.id];
      if (nUpdates === 0 || insertedAt.size === 0) continue;
      const start = slotsOf(m.counts, ORDER_UPDATE.id);
      for (let r = 0, u = start; r < nUpdates; r++, u += ORDER_UPDATE.stride) {
        const place = insertedAt.get(b[u + ORDER_UPDATE.at.id]);
        if (place === undefined) continue;
        const into = batches[Math.floor(place / BATCH_PLACE)];
        const target = into.slots;
        const o = place % BATCH_PLACE;
        for (const [from, to, str] of FOLD_COLUMNS) {
          // A string indexes its own batch's strings: into another batch's record it goes as a copy.
          if (str && into !== m) target[o + to] = into.strs.push(m.strs[b[u + from]]) - 1;
          else target[o + to] = b[u + from];
        }
        b[u + ORDER_UPDATE.at.id] = FOLDED;
      }
    }
    insertedAt.clear();
  }

  /**
   * Writes the batches, in order. Each batch's kinds go in numeric order (see writer-batch.ts: a
   * key's creation precedes its revocation, an order's insert its update), except the LAST_WINS
   * upserts, which are written after all of them, once per key, with the last record of the key
   * over all the batches. That ends in the same rows as writing every record in turn: the caller's
   * transaction holds all the batches, so no other connection sees a state in between, and nothing
   * else written here reads or writes those tables.
   */
  function applyBatches(batches: readonly BatchRecords[]): void {
    foldUpdates(batches);
    for (const m of batches) {
      let at = 0;
      for (let k = 0; k < KIND_COUNT; k++) {
        const len = m.counts[k] * KINDS[k].stride;
        if (len > 0 && !LAST_WINS_KIND[k]) apply[k](m.slots.subarray(at, at + len), m.strs);
        at += len;
      }
      if (m.settledBelow - 1 > settled) settled = m.settledBelow - 1;
      if (heldOrders >= userRowsFlushAt || lastTrade - tradesThrough >= userRowsFlushAt) flushUserRows();
    }
    putBlocks();
    for (const [k, keyOf] of LAST_WINS) {
      seen.clear();
      // Walking backwards, a key seen once has had its final value written.
      for (let i = batches.length - 1; i >= 0; i--) {
        const m = batches[i];
        const n = m.counts[k.id];
        if (n === 0) continue;
        const start = slotsOf(m.counts, k.id);
        for (let o = start + (n - 1) * k.stride; o >= start; o -= k.stride) {
          const key = keyOf(m.slots, o, m.strs);
          if (seen.has(key)) continue;
          seen.add(key);
          put(k, m.slots, o, m.strs);
        }
      }
    }
  }

  return { syms, applyBatches, flushUserRows, catchUp };
}
