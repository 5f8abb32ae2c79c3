/**
 * Wire layout of one writer batch, shared by the main side (`src/db/batch-builder.ts`), the writer
 * thread (`workers/db/writer-worker.ts`) and the apply thread (`workers/db/apply-worker.ts`).
 *
 * A batch is one postMessage: one buffer of fixed-stride float64 records, those of each kind side
 * by side and the kinds one after the other in kind order (`counts` records of each), plus one
 * string array. Each record kind is
 * defined once, by its field table below: a column name of its SQL table and the slot's type.
 *   INT  an integer value (ids, ticks, lots, micros: all below 2^53, so exact in a double);
 *   STR  an index into the batch's `strs` (uids, tokens, secrets, bigint texts), -1 for SQL NULL;
 *   SYM  a symbol id (pair, currency, period and meta key names, transfer kinds), interned once
 *        per writer so repeated names are not resent.
 * From the table come the stride, each column's slot offset (`K.at.column`, a number fixed at
 * load), the writer's statement (an INSERT of every column, followed by the kind's conflict
 * clause) and its binding (slot i binds parameter i). Adding a column: add it to the table (and to
 * the SQL table by a migration), write it in the producer (`src/db/batch-builder.ts`), and name it in the
 * conflict clause if an upsert must update it.
 *
 * Kinds are applied in their numeric order inside one transaction, records of one kind in the
 * order they were added (batch-apply.ts, which also coalesces the upserts of which only the last
 * value counts). The order across kinds matters twice: a key created and revoked in the same batch
 * (API_KEY before REVOKE_KEY), an order inserted and changed in the same batch (ORDER before
 * ORDER_UPDATE).
 */
import { EXEC_TRADE } from "./rows.ts";

/** Slot types. */
export const INT = 0;
export const STR = 1;
export const SYM = 2;
export type Slot = typeof INT | typeof STR | typeof SYM;

export interface RecordKind<C extends string = string> {
  /** Kind number: index into a batch's `counts`, and the order its records come and are applied in. */
  readonly id: number;
  readonly table: string;
  /** Column names, in slot order. */
  readonly columns: readonly C[];
  /** Slot type of each column, in slot order. */
  readonly slots: readonly Slot[];
  /** Slots per record. */
  readonly stride: number;
  /** Slot offset of each column inside a record. */
  readonly at: { readonly [K in C]: number };
  /** The statement the writer runs once per record, binding slot i to parameter i. */
  readonly sql: string;
  /**
   * For a kind whose statement is the derived INSERT: the same statement for `n` records at once
   * (n rows of VALUES, record j's slot i binding parameter j × stride + i); null otherwise.
   */
  readonly rowsSql: ((n: number) => string) | null;
}

const kinds: RecordKind[] = [];

/**
 * Defines the next record kind. `fields` maps column names to slot types in slot order; `sql` is
 * either the clause appended to the derived INSERT (conflict handling) or, for a kind that is not
 * an insert, a function of the column list giving the whole statement.
 */
function kind<const F extends Record<string, Slot>>(
  table: string,
  fields: F,
  sql: string | ((columns: readonly string[]) => string) = "",
): RecordKind<keyof F & string> {
  const columns = Object.keys(fields) as (keyof F & string)[];
  const at = {} as Record<keyof F & string, number>;
  columns.forEach((c, i) => {
    at[c] = i;
  });
  const row = `(${columns.map(() => "?").join(", ")})`;
  const insert = (n: number) =>
    `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${Array.from({ length: n }, () => row).join(", ")}${sql === "" ? "" : ` ${sql}`}`;
  const k: RecordKind<keyof F & string> = Object.freeze({
    id: kinds.length,
    table,
    columns,
    slots: columns.map((c) => fields[c]),
    stride: columns.length,
    at: Object.freeze(at),
    sql: typeof sql === "function" ? sql(columns) : insert(1),
    rowsSql: typeof sql === "function" ? null : insert,
  });
  kinds.push(k);
  return k;
}

/** `ON CONFLICT (key) DO UPDATE SET` every column not in the key. */
function upsert(key: readonly string[], columns: readonly string[]): string {
  const set = columns.filter((c) => !key.includes(c)).map((c) => `${c} = excluded.${c}`);
  return `ON CONFLICT (${key.join(", ")}) DO UPDATE SET ${set.join(", ")}`;
}

const PAIR_FIELDS = { name: SYM, price_decimals: INT, amount_decimals: INT } as const;
export const PAIR = kind("pairs", PAIR_FIELDS, upsert(["name"], Object.keys(PAIR_FIELDS)));

const CURRENCY_FIELDS = { name: SYM, scale: INT } as const;
export const CURRENCY = kind("currencies", CURRENCY_FIELDS, upsert(["name"], Object.keys(CURRENCY_FIELDS)));

// Users, keys, transfers and trades are facts recorded once: a duplicate is a bug upstream and
// fails the writer instead of being silently merged.
export const USER = kind("users", { id: INT, uid: STR, created_micro: INT });

/** `revoked` starts at its column default (0). */
export const API_KEY = kind("api_keys", { token: STR, user_id: INT, secret: STR, created_micro: INT });

export const REVOKE_KEY = kind(
  "api_keys",
  { token: STR },
  () => "UPDATE api_keys SET revoked = 1 WHERE token = ?",
);

/** Last accepted nonce of a token (last wins); the value is a bigint's text. */
export const NONCE = kind(
  "nonces",
  { token: STR, last_nonce: STR },
  upsert(["token"], ["token", "last_nonce"]),
);

/**
 * Latest balance of (user, currency) (last wins); bigint texts at the currency's ledger scale, as
 * of every trade up to `through_trade` (migration 005).
 */
const BALANCE_FIELDS = {
  user_id: INT,
  currency: SYM,
  available: STR,
  reserved: STR,
  through_trade: INT,
} as const;
export const BALANCE = kind(
  "balances",
  BALANCE_FIELDS,
  upsert(["user_id", "currency"], Object.keys(BALANCE_FIELDS)),
);

/** amount: signed bigint text (deposits positive); kind: the symbol `deposit` or `withdraw`. */
export const TRANSFER = kind("transfers", {
  user_id: INT,
  currency: SYM,
  amount: STR,
  kind: SYM,
  time_micro: INT,
});

/**
 * A new order (an INSERT of every column). The main side sends it once per order, in the batch of
 * the command that created it (with its state after its own matching); later changes are ORDER_UPDATE.
 */
const ORDER_FIELDS = {
  id: INT,
  user_id: INT,
  pair: SYM,
  side: INT,
  type: INT,
  price: INT,
  amount: INT,
  amount_used: INT,
  is_cancelled: INT,
  create_micro: INT,
  update_micro: INT,
  /** The order's options (src/core/order-options.ts). */
  flags: INT,
  /** STR, -1 (NULL) when the order has no client order id. */
  client_order_id: STR,
  /** The user's execution number of the order's latest change (migration 011). */
  exec_seq: INT,
  /**
   * docs/API.md 5.1 `executedQuote`: ticks × lots its fills executed, a bigint's text (migration
   * 013), as the ledger's amounts travel.
   */
  executed_quote: STR,
  /** docs/API.md 18 (migration 015): the stop price in ticks and its direction, 0 for no stop. */
  stop_price: INT,
  stop_direction: INT,
  /** When the stop triggered (µs), 0 while it waits; why a triggered order ended cancelled whole. */
  trigger_micro: INT,
  cancel_reason: INT,
  /** A trailing stop's delta in ticks, 0 for any other order (migration 016). */
  trailing_delta: INT,
  /** docs/API.md 18 (migration 017): both legs of an OCO carry the limit leg's id, 0 for any other order. */
  oco_id: INT,
} as const;
/**
 * The columns a later change may touch (an amend changes price and amount in place). `stop_price`
 * and `trailing_delta` change only while the stop waits (docs/API.md 18), and only through an
 * ORDER record (the upsert below): ORDER_UPDATE keeps its layout (DECISIONS.md "Amend of a
 * waiting stop order").
 */
const ORDER_MUTABLE = [
  "price",
  "amount",
  "amount_used",
  "is_cancelled",
  "update_micro",
  "exec_seq",
  "executed_quote",
  "stop_price",
  "trailing_delta",
  "trigger_micro",
  "cancel_reason",
] as const;
/**
 * Kept an upsert: should an order's first record ever come as an update of an order the writer
 * has not seen (a caller that does not say which it is), the row is still written whole.
 */
export const ORDER = kind(
  "orders",
  ORDER_FIELDS,
  `ON CONFLICT (id) DO UPDATE SET ${ORDER_MUTABLE.map((c) => `${c} = excluded.${c}`).join(", ")}`,
);

/** A change of an order already sent (fills, cancel, amend): its mutable columns, by id. */
export const ORDER_UPDATE = kind(
  "orders",
  {
    price: INT,
    amount: INT,
    amount_used: INT,
    is_cancelled: INT,
    update_micro: INT,
    exec_seq: INT,
    executed_quote: STR,
    trigger_micro: INT,
    cancel_reason: INT,
    id: INT,
  },
  (columns) => {
    // Parameters bind in slot order, so the key of the WHERE clause must be the last slot.
    if (columns[columns.length - 1] !== "id") throw new Error("ORDER_UPDATE: id must be the last field");
    const set = columns.slice(0, -1).map((c) => `${c} = ?`);
    return `UPDATE orders SET ${set.join(", ")} WHERE id = ?`;
  },
);

/** A trade; its two user_trades rows follow in bulk (the maker's side is the opposite of the taker's). */
export const TRADE = kind("trades", {
  id: INT,
  pair: SYM,
  price: INT,
  amount: INT,
  taker_order_id: INT,
  maker_order_id: INT,
  taker_user_id: INT,
  maker_user_id: INT,
  taker_side: INT,
  taker_type: INT,
  maker_type: INT,
  time_micro: INT,
  /** Fee rates of the two sides, in units of 10^-6 (src/core/risk.ts FEE_DECIMALS). */
  taker_fee_rate: INT,
  maker_fee_rate: INT,
  /** The trade's number in each side's execution sequence (migration 011). */
  taker_exec_seq: INT,
  maker_exec_seq: INT,
});

/** One candle (prices in ticks, volume in lots; last wins per key). */
const CANDLE_FIELDS = {
  pair: SYM,
  period: SYM,
  start_ms: INT,
  open: INT,
  high: INT,
  low: INT,
  close: INT,
  volume: INT,
} as const;
export const CANDLE = kind(
  "candles",
  CANDLE_FIELDS,
  upsert(["pair", "period", "start_ms"], Object.keys(CANDLE_FIELDS)),
);

/** An upsert into `meta` (the book sequence of a pair, migration 003; last wins per key). */
export const META = kind("meta", { key: SYM, value: INT }, upsert(["key"], ["key", "value"]));

/**
 * MMP settings of a user on a pair (docs/API.md 8.10, migration 010; last wins per key). Kinds added
 * later come after this one: a journal row written before a kind existed has fewer counts, which
 * journal.ts reads as 0 records of the new kinds.
 */
const MMP_SETTING_FIELDS = {
  user_id: INT,
  pair: SYM,
  interval_seconds: INT,
  qty_limit: INT,
  frozen_seconds: INT,
} as const;
export const MMP_SETTING = kind(
  "mmp_settings",
  MMP_SETTING_FIELDS,
  upsert(["user_id", "pair"], Object.keys(MMP_SETTING_FIELDS)),
);

/**
 * One number of a user's execution sequence (docs/API.md 16): the order change or the trade side
 * it numbers. Facts, as trades: a number is given once. batch-apply.ts joins a user's numbers of
 * one bulk apply into one block (migration 012); the statement here writes a block of one number.
 */
export const EXECUTION = kind(
  "execution_blocks",
  { user_id: INT, exec_seq: INT, kind: INT, ref_id: INT },
  () =>
    `INSERT INTO execution_blocks (user_id, first_seq, last_seq, refs)
     SELECT u, s, s, CAST(CASE k WHEN ${EXEC_TRADE} THEN -r ELSE r END AS TEXT) FROM (SELECT ? AS u, ? AS s, ? AS k, ? AS r)`,
);

/**
 * Kinds kept in the journal only, for a follower's live read models and streams (DECISIONS.md "A
 * second box: follower", "Live streams on a follower"): no table holds them (batch-apply.ts skips
 * them; the statement is never run). Written only by a leader with a replication port.
 */
const journalOnly = (columns: readonly string[]) => `SELECT ${columns.map(() => "?").join(", ")}`;

/**
 * One committed change of a pair's book (docs/API.md 12.3), in the order the changes were numbered:
 * its book `seq` and time (7.6.1 eventTimeMicro), how many of the pair's TRADE records of the batch
 * are its trades (the next ones of that pair) and how many L3_EVENT records follow from the step's
 * first (the step's L3 events lie together, the steps' in step order).
 */
export const BOOK_STEP = kind(
  "book_steps",
  { pair: SYM, seq: INT, micro: INT, trades: INT, l3_events: INT },
  journalOnly,
);

/** One L3 event of a book change (src/core/read-models/l3-view.ts): type, order id, side, price, remaining. */
export const L3_EVENT = kind(
  "l3_events",
  { type: INT, order_id: INT, side: INT, price: INT, amount: INT },
  journalOnly,
);

/** The journal-only kinds. */
export const JOURNAL_ONLY: readonly RecordKind[] = [BOOK_STEP, L3_EVENT];

/**
 * Journal rows keep the layout of the version that wrote them (journal.ts lays an older one out
 * anew). LAYOUT_BEFORE_EXEC_SEQ: before EXECUTION existed, ORDER, ORDER_UPDATE and TRADE had no
 * execution numbers (read as 0, as rows stored before migration 011 have them); such a row holds
 * fewer kinds, which is how it is known. LAYOUT_BEFORE_EXECUTED_QUOTE: the numbers, but ORDER and
 * ORDER_UPDATE without `executed_quote` (migration 013); the journal's `layout` column tells it
 * from the current one. LAYOUT_BEFORE_STOPS: ORDER and ORDER_UPDATE without the stop columns
 * (migration 015), read as 0 (no stop). JOURNAL_LAYOUT is what this version writes.
 */
export const LAYOUT_BEFORE_EXEC_SEQ = 0;
export const LAYOUT_BEFORE_EXECUTED_QUOTE = 1;
export const LAYOUT_BEFORE_STOPS = 2;
/** ORDER without `trailing_delta` (migration 016), read as 0 (no trailing stop). */
export const LAYOUT_BEFORE_TRAILING = 3;
/** ORDER without `oco_id` (migration 017), read as 0 (no OCO leg). */
export const LAYOUT_BEFORE_OCO = 4;
export const JOURNAL_LAYOUT = 5;
/** The columns of migration 015 (docs/API.md 18). */
const STOP_COLUMNS: ReadonlySet<string> = new Set([
  "stop_price",
  "stop_direction",
  "trigger_micro",
  "cancel_reason",
  "trailing_delta",
]);
/** The column of migration 017 (docs/API.md 18 OCO), which every layout before LAYOUT_BEFORE_OCO lacks too. */
const OCO_COLUMN = "oco_id";
/** The kinds a row of LAYOUT_BEFORE_EXEC_SEQ holds: those before EXECUTION. */
export const LEGACY_KIND_COUNT = EXECUTION.id;
const NUMBERS: ReadonlySet<string> = new Set(["exec_seq", "taker_exec_seq", "maker_exec_seq"]);
/**
 * Per older layout, the columns of the kinds whose records it laid out otherwise, in its slot order
 * (every column it had keeps its place relative to the others).
 */
export const LEGACY_COLUMNS: readonly ReadonlyMap<number, readonly string[]>[] = [
  new Map(
    [ORDER, ORDER_UPDATE, TRADE].map((k): [number, readonly string[]] => [
      k.id,
      (k.columns as readonly string[]).filter(
        (c) => !NUMBERS.has(c) && c !== "executed_quote" && !STOP_COLUMNS.has(c) && c !== OCO_COLUMN,
      ),
    ]),
  ),
  new Map(
    [ORDER, ORDER_UPDATE].map((k): [number, readonly string[]] => [
      k.id,
      (k.columns as readonly string[]).filter(
        (c) => c !== "executed_quote" && !STOP_COLUMNS.has(c) && c !== OCO_COLUMN,
      ),
    ]),
  ),
  new Map(
    [ORDER, ORDER_UPDATE].map((k): [number, readonly string[]] => [
      k.id,
      (k.columns as readonly string[]).filter((c) => !STOP_COLUMNS.has(c) && c !== OCO_COLUMN),
    ]),
  ),
  new Map(
    [ORDER, ORDER_UPDATE].map((k): [number, readonly string[]] => [
      k.id,
      (k.columns as readonly string[]).filter((c) => c !== "trailing_delta" && c !== OCO_COLUMN),
    ]),
  ),
  new Map([[ORDER.id, (ORDER.columns as readonly string[]).filter((c) => c !== OCO_COLUMN)]]),
];

/** A prepared statement, as far as binding needs it (better-sqlite3's Statement). */
export interface Runnable {
  run(...params: unknown[]): unknown;
}

/**
 * Runs `st` for the record at slot `o` of `b`: parameter i is slot i, an INT as is, a SYM as its
 * name in `syms`, a STR as its string in `s` (-1: NULL).
 */
export type RecordRunner = (
  st: Runnable,
  b: Float64Array,
  o: number,
  s: readonly string[],
  syms: readonly string[],
) => unknown;

/**
 * Compiles kind `k`'s runner from its field table, once at start (as fast-json-stringify compiles
 * a schema): the arguments are written out positionally, which binds about 1 µs faster per 13-column
 * record than passing a reused array, and allocates nothing per record (bench/db/writer-mix.bench.ts).
 */
export function compileRunner(k: RecordKind): RecordRunner {
  const params = bindings(k, "o");
  return new Function("st", "b", "o", "s", "syms", `return st.run(${params.join(", ")});`) as RecordRunner;
}

/**
 * The parameter expressions of the record whose first slot is at `o` (a variable name): slot i
 * of `b` as is (INT), as its name in `syms` (SYM), as its string in `s` or null (STR).
 */
function bindings(k: RecordKind, o: string): string[] {
  return k.slots.map((t, i) => {
    const slot = `b[${o} + ${i}]`;
    return t === INT ? slot : t === SYM ? `syms[${slot}]` : `${slot} === -1 ? null : s[${slot}]`;
  });
}

/**
 * Runs `st` (kind `k`'s `rowsSql(n)`) for the `n` records whose first slots are `at[from]`,
 * `at[from + 1]`, ... of `b`, binding as RecordRunner does.
 */
export type RowsRunner = (
  st: Runnable,
  b: Float64Array,
  at: Int32Array,
  from: number,
  s: readonly string[],
  syms: readonly string[],
) => unknown;

/**
 * Compiles kind `k`'s runner of `n` records in one statement (`rowsSql(n)`): one call, one
 * statement step and one VDBE program for n rows instead of n of each.
 */
export function compileRowsRunner(k: RecordKind, n: number): RowsRunner {
  const params: string[] = [];
  const offsets: string[] = [];
  for (let j = 0; j < n; j++) {
    offsets.push(`const o${j} = at[from + ${j}];`);
    params.push(...bindings(k, `o${j}`));
  }
  return new Function(
    "st",
    "b",
    "at",
    "from",
    "s",
    "syms",
    `${offsets.join(" ")} return st.run(${params.join(", ")});`,
  ) as RowsRunner;
}

/** Every kind, indexed by its id. */
export const KINDS: readonly RecordKind[] = Object.freeze(kinds.slice());
export const KIND_COUNT = KINDS.length;

/**
 * Slots the records of a batch with these `counts` (per kind) take, kind after kind; with `upTo`,
 * only those of the kinds below it: where kind `upTo`'s records start.
 */
export function slotsOf(counts: readonly number[], upTo: number = KIND_COUNT): number {
  let n = 0;
  for (let k = 0; k < upTo; k++) n += counts[k] * KINDS[k].stride;
  return n;
}
