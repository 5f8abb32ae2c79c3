/**
 * The batch journal: one row per acknowledged batch whose rows may not be in their tables yet, in
 * a database file of its own next to the exchange's (`<database>.journal`, `journalPath`).
 *
 *   journal thread (workers/db/writer-worker.ts)   appends a batch here in the transaction that
 *                                                   makes it durable, then acknowledges it
 *   apply thread (workers/db/apply-worker.ts)      writes the rows of several batches at once with
 *                                                   `applyBatches` (batch-apply.ts) in the exchange
 *                                                   file, moving meta 'journal_applied_through' to
 *                                                   the last batch's key in the same transaction
 *   journal thread, later                          deletes the rows at or below that mark
 *
 * Two files have two write locks: a bulk apply never holds up the journal commits behind it. The
 * exchange file's tables plus the journal rows above its mark always hold every acknowledged
 * change; `replayJournal` applies those rows at start, before anything reads the tables. Keys go
 * on growing across runs: a run journals its batch `seq` under key mark + seq (the mark read at its
 * start), so a row above the mark is always one not applied yet.
 *
 * Migration 006 kept the journal in the exchange file itself; `replayJournal` still applies what a
 * server of that version left there.
 */
import fs from "node:fs";
import { type BatchRecords, createBatchApplier } from "./batch-apply.ts";
import { type Db, type OpenOptions, openDatabase } from "./db-open.ts";
import { decodeSlots, encodeSlots } from "./slot-codec.ts";
import {
  JOURNAL_LAYOUT,
  KIND_COUNT,
  KINDS,
  LAYOUT_BEFORE_EXEC_SEQ,
  LAYOUT_BEFORE_EXECUTED_QUOTE,
  LAYOUT_BEFORE_STOPS,
  LEGACY_COLUMNS,
  LEGACY_KIND_COUNT,
  ORDER,
  ORDER_UPDATE,
  slotsOf,
} from "./writer-batch.ts";

/** A batch as the journal keeps it: its records copied out of the sender's buffer. */
export interface JournalBatch extends BatchRecords {
  seq: number;
}

/** The journal file of the exchange database `dbFile`. */
export function journalPath(dbFile: string): string {
  return `${dbFile}.journal`;
}

/** The `meta` key of the applied mark in the exchange file (migration 007). */
const APPLIED_MARK = "journal_applied_through";

/**
 * The journal file's schema (the same tables migration 006 made in the exchange file): `counts`
 * per record kind (JSON array), `slots` the records' slots in a compact form (slot-codec.ts),
 * `strs` the batch's strings (JSON array), `settled_below`, `layout` the record layout of the
 * version that wrote it (writer-batch.ts JOURNAL_LAYOUT); `journal_syms` the symbol table of the
 * run that wrote the rows (writer-batch.ts SYM), emptied at start once the rows are applied, as a
 * new run numbers its symbols from 0 again; `journal_trim` the highest key whose row may be gone
 * (every delete moves it in its own transaction), so that a reader of the file (the replication
 * listener, DECISIONS.md "A second box: follower") knows whether the rows above a key are all there.
 */
const JOURNAL_SCHEMA = `
CREATE TABLE IF NOT EXISTS journal (
  seq           INTEGER PRIMARY KEY,
  counts        TEXT NOT NULL,
  slots         BLOB NOT NULL,
  strs          TEXT NOT NULL,
  settled_below INTEGER NOT NULL,
  layout        INTEGER NOT NULL DEFAULT ${LAYOUT_BEFORE_EXECUTED_QUOTE}
) STRICT;
CREATE TABLE IF NOT EXISTS journal_syms (
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS journal_trim (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  through INTEGER NOT NULL
) STRICT;`;

/** Opens (creating if needed) the journal file of the exchange database `dbFile`. */
export function openJournal(dbFile: string, opts: Omit<OpenOptions, "readonly"> = {}): Db {
  const j = openDatabase(journalPath(dbFile), { ...opts, schema: JOURNAL_SCHEMA });
  try {
    addLayoutColumn(j);
  } catch (err) {
    j.close();
    throw err;
  }
  return j;
}

/**
 * A journal file made before rows had a `layout` gets the column: its rows are then of
 * LAYOUT_BEFORE_EXECUTED_QUOTE, or older (fewer kinds). The start-up replay opens the file first,
 * before the threads that also open it exist; another connection adding it meanwhile is fine.
 */
function addLayoutColumn(j: Db): void {
  const has = j.prepare("SELECT 1 FROM pragma_table_info('journal') WHERE name = 'layout'").get();
  if (has !== undefined) return;
  try {
    j.exec(`ALTER TABLE journal ADD COLUMN layout INTEGER NOT NULL DEFAULT ${LAYOUT_BEFORE_EXECUTED_QUOTE}`);
  } catch (err) {
    if (!/duplicate column/.test((err as Error).message)) throw err;
  }
}

/** The key of the last batch whose rows are in the exchange file's tables. */
export function appliedMark(db: Db): number {
  return appliedMarkOf(db).get();
}

/**
 * The applied mark's statements on `db`: `get` reads it, `set` moves it to `key` (in the
 * transaction that wrote the rows through `key`).
 */
export function appliedMarkOf(db: Db): { get(): number; set(key: number): void } {
  const read = db.prepare<[string], number>("SELECT value FROM meta WHERE key = ?").pluck();
  const write = db.prepare("UPDATE meta SET value = ? WHERE key = ?");
  return {
    get: () => read.get(APPLIED_MARK) ?? 0,
    set: (key) => {
      write.run(key, APPLIED_MARK);
    },
  };
}

/** The journal thread's statements. */
export interface JournalWriter {
  /**
   * Appends the batch's row under `key` and returns it as stored (its `slots` a view that the next
   * append writes over). In a transaction.
   */
  append(key: number, b: JournalBatch): JournalRow;
  /** Appends symbol `id` (the next one) of the run's table. In a transaction. */
  appendSym(id: number, name: string): void;
  /** Deletes the rows up to `key`. In a transaction. */
  deleteThrough(key: number): void;
}

export function journalWriter(j: Db): JournalWriter {
  const insert = j.prepare(
    `INSERT INTO journal (seq, counts, slots, strs, settled_below, layout) VALUES (?, ?, ?, ?, ?, ${JOURNAL_LAYOUT})`,
  );
  const insertSym = j.prepare("INSERT INTO journal_syms (id, name) VALUES (?, ?)");
  const del = j.prepare("DELETE FROM journal WHERE seq <= ?");
  const trim = trimOf(j);
  return {
    append(key, b) {
      const bytes = encodeSlots(b.slots, b.counts);
      const row: JournalRow = {
        seq: key,
        counts: JSON.stringify(b.counts),
        slots: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length),
        strs: JSON.stringify(b.strs),
        settled_below: b.settledBelow,
        layout: JOURNAL_LAYOUT,
      };
      insert.run(row.seq, row.counts, row.slots, row.strs, row.settled_below);
      return row;
    },
    appendSym(id, name) {
      insertSym.run(id, name);
    },
    deleteThrough(key) {
      del.run(key);
      trim.set(key);
    },
  };
}

/** The trim mark's statements on the journal file `j`: `get` reads it (0 when never set), `set` raises it. */
export function trimOf(j: Db): { get(): number; set(key: number): void } {
  const read = j.prepare<[], number>("SELECT through FROM journal_trim WHERE id = 1").pluck();
  const write = j.prepare(
    "INSERT INTO journal_trim (id, through) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET through = MAX(through, excluded.through)",
  );
  return {
    get: () => read.get() ?? 0,
    set: (key) => {
      write.run(key);
    },
  };
}

/** A journal row as stored. */
export interface JournalRow {
  seq: number;
  counts: string;
  slots: Buffer;
  strs: string;
  settled_below: number;
  /** The version's record layout (writer-batch.ts JOURNAL_LAYOUT); older rows have the default. */
  layout?: number;
}

/** A stored row decoded; `legacy`: written in an older layout (its orders' executed_quote unknown). */
export interface DecodedRow extends JournalBatch {
  legacy: boolean;
}

/** Decodes a stored row (the replication listener ships rows as stored, and its followers decode them). */
export function decode(r: JournalRow): DecodedRow {
  const counts = JSON.parse(r.counts) as number[];
  if (!Array.isArray(counts) || counts.length > KIND_COUNT)
    throw new Error(`journal row ${r.seq}: ${counts.length} record kinds, expected at most ${KIND_COUNT}`);
  // A row of a version with fewer kinds (they are only ever appended): none of the newer ones.
  const layout =
    counts.length <= LEGACY_KIND_COUNT ? LAYOUT_BEFORE_EXEC_SEQ : (r.layout ?? LAYOUT_BEFORE_EXECUTED_QUOTE);
  if (layout > JOURNAL_LAYOUT)
    throw new Error(`journal row ${r.seq}: layout ${layout} is newer than this server`);
  while (counts.length < KIND_COUNT) counts.push(0);
  const strs = JSON.parse(r.strs) as string[];
  const slots =
    layout !== JOURNAL_LAYOUT
      ? fromLegacyLayout(decodeSlots(r.slots, counts, LEGACY_STRIDES[layout]), counts, layout, strs)
      : decodeSlots(r.slots, counts);
  // Rows of LAYOUT_BEFORE_STOPS have executed_quote; only the stop columns are 0 (no stop).
  const legacy = layout < LAYOUT_BEFORE_STOPS;
  return { seq: r.seq, counts, slots, strs, settledBelow: r.settled_below, legacy };
}

/** Slots per record of each kind in a row of each older layout. */
const LEGACY_STRIDES: readonly (readonly number[])[] = LEGACY_COLUMNS.map((columns) =>
  KINDS.map((k) => columns.get(k.id)?.length ?? k.stride),
);

/**
 * The records of a row of an older `layout`, in today's: the columns each kind had then, by
 * name; 0 for the execution numbers a row before EXECUTION did not have and for the stop columns
 * (migration 015), and `"0"` (appended to `strs`) for `executed_quote` in a row without it, which
 * `executedQuotesFromTrades` sets once the rows are in.
 */
function fromLegacyLayout(
  old: Float64Array,
  counts: readonly number[],
  layout: number,
  strs: string[],
): Float64Array {
  const out = new Float64Array(slotsOf(counts));
  const legacyColumns = LEGACY_COLUMNS[layout];
  const zero = strs.length;
  strs.push("0");
  let from = 0;
  let to = 0;
  for (let k = 0; k < KIND_COUNT; k++) {
    const kind = KINDS[k];
    const columns = legacyColumns.get(k) ?? kind.columns;
    const at = kind.at as Record<string, number>;
    const quoteAt =
      layout < LAYOUT_BEFORE_STOPS && (kind === ORDER || kind === ORDER_UPDATE) ? at.executed_quote : -1;
    for (let r = 0; r < counts[k]; r++) {
      for (let c = 0; c < columns.length; c++) out[to + at[columns[c]]] = old[from + c];
      if (quoteAt !== -1) out[to + quoteAt] = zero;
      from += columns.length;
      to += kind.stride;
    }
  }
  return out;
}

/** Ids of the orders the ORDER and ORDER_UPDATE records of `b` write. */
function orderIdsOf(b: JournalBatch, into: Set<number>): void {
  for (const k of [ORDER, ORDER_UPDATE]) {
    const start = slotsOf(b.counts, k.id);
    for (let r = 0; r < b.counts[k.id]; r++) {
      const id = b.slots[start + r * k.stride + k.at.id];
      // An update folded into its order's insert has lost its id (batch-apply.ts foldUpdates).
      if (id > 0) into.add(id);
    }
  }
}

/**
 * Sets `executed_quote` (docs/API.md 5.1) of the orders `ids` to the sum of price × amount over
 * their trades, in bigint: for orders whose rows a journal row of an older layout wrote without
 * it. The trades table has no index by order, so this reads every trade once; it runs only when
 * a start replays rows an older version left.
 */
export function executedQuotesFromTrades(db: Db, ids: ReadonlySet<number>): void {
  if (ids.size === 0) return;
  const sums = new Map<number, bigint>();
  for (const id of ids) sums.set(id, 0n);
  const rows = db
    .prepare<[{ ids: string }], [number, number, number, number]>(
      `SELECT taker_order_id, maker_order_id, price, amount FROM trades
        WHERE taker_order_id IN (SELECT value FROM json_each(@ids))
           OR maker_order_id IN (SELECT value FROM json_each(@ids))`,
    )
    .raw()
    .all({ ids: JSON.stringify([...ids]) });
  for (const [taker, maker, price, amount] of rows) {
    const value = BigInt(price) * BigInt(amount);
    const t = sums.get(taker);
    if (t !== undefined) sums.set(taker, t + value);
    const m = sums.get(maker);
    if (m !== undefined) sums.set(maker, m + value);
  }
  const set = db.prepare("UPDATE orders SET executed_quote = ? WHERE id = ?");
  for (const [id, sum] of sums) set.run(sum.toString(), id);
}

/**
 * Applies the rows of `from` (the exchange connection `db` itself, or the journal file) with key
 * above `above`, in key order, with the writer's own apply code, then catches the per-user rows up
 * (nothing is in flight at a start). In the caller's transaction on `db`. Returns the rows applied
 * and the highest key in the journal.
 */
function applyRows(db: Db, from: Db, above: number): { applied: number; last: number } {
  // User rows are written once, by catchUp at the end, not every `userRowsFlushAt` batches.
  const applier = createBatchApplier(db, Number.POSITIVE_INFINITY);
  const syms = from
    .prepare<[], { id: number; name: string }>("SELECT id, name FROM journal_syms ORDER BY id")
    .all();
  syms.forEach((s, i) => {
    if (s.id !== i) throw new Error(`journal_syms: symbol ${i} is missing`);
    applier.syms.push(s.name);
  });
  // All at once: a connection runs no other statement while an iterator is open. The journal
  // holds about one bulk apply's batches (workers/db/apply-worker.ts).
  const rows = from
    .prepare<[number], JournalRow>("SELECT * FROM journal WHERE seq > ? ORDER BY seq")
    .all(above);
  const batches = rows.map(decode);
  applier.applyBatches(batches);
  const legacyOrders = new Set<number>();
  for (const b of batches) if (b.legacy) orderIdsOf(b, legacyOrders);
  executedQuotesFromTrades(db, legacyOrders);
  applier.catchUp();
  const last = from.prepare<[], number>("SELECT COALESCE(MAX(seq), 0) FROM journal").pluck().get()!;
  return { applied: rows.length, last };
}

const count = (db: Db, table: string) =>
  db.prepare<[], number>(`SELECT COUNT(*) FROM ${table}`).pluck().get()!;

/** Empties the journal tables of `conn` (the exchange file's of migration 006, or the journal file). */
function emptyJournal(conn: Db): void {
  conn.prepare("DELETE FROM journal").run();
  conn.prepare("DELETE FROM journal_syms").run();
}

/** The journal file of the exchange connection `db`, opened, or null when there is none. */
function journalOf(db: Db): Db | null {
  if (db.name === ":memory:" || !fs.existsSync(journalPath(db.name))) return null;
  return openJournal(db.name, { walAutocheckpointPages: 0 });
}

/**
 * Applies to `db`'s tables what a server of migration 006 left in the exchange file's own journal
 * tables (emptying them), then the rows of the journal file `j` above the applied mark, moving the
 * mark. In the caller's transaction on `db`. Returns the number of batches applied.
 */
function applyAll(db: Db, j: Db | null): number {
  let applied = 0;
  if (count(db, "journal") > 0 || count(db, "journal_syms") > 0) {
    applied += applyRows(db, db, 0).applied;
    emptyJournal(db);
  }
  if (j === null) return applied;
  const mark = appliedMarkOf(db);
  const above = mark.get();
  const r = applyRows(db, j, above);
  if (r.last > above) mark.set(r.last);
  return applied + r.applied;
}

/**
 * Applies the journal rows above the applied mark to the tables of `db` (a read-write connection
 * to the exchange file) and moves the mark, in the caller's transaction, leaving the journal file
 * as it is: the tables as a start would recover them. Returns the number of batches applied.
 */
export function applyJournal(db: Db): number {
  const j = journalOf(db);
  try {
    return applyAll(db, j);
  } finally {
    j?.close();
  }
}

/**
 * Applies every journal row an earlier run left above the applied mark (as `applyJournal`), then
 * empties the journal file. `db` is a read-write connection to the exchange file, and no writer
 * may be running on it (its batches would be written twice). Returns the number of batches
 * applied.
 *
 * Crash-safe at every step: the rows and the mark move in one IMMEDIATE transaction of the exchange
 * file (a crash before its commit leaves everything to replay again), and only then is the
 * journal file emptied (a crash before that leaves rows at or below the mark, which a replay skips).
 */
export function replayJournal(db: Db): number {
  const j = journalOf(db);
  try {
    const applied = db.transaction(() => applyAll(db, j)).immediate();
    if (j !== null && (count(j, "journal") > 0 || count(j, "journal_syms") > 0))
      j.transaction(() => emptyJournal(j)).immediate();
    // Every row through the applied mark is gone (or never was in this file).
    if (j !== null) j.transaction(() => trimOf(j).set(appliedMark(db))).immediate();
    return applied;
  } finally {
    j?.close();
  }
}
