/**
 * Piscina task file for `src/db/reader.ts`. Stateless apart from the read-only connection and its
 * prepared statements, opened on the thread's first task. Each task runs inside one read
 * transaction, so a page's `total` and `items` come from the same snapshot.
 */
import { workerData } from "node:worker_threads";
import { type Db, openDatabase } from "../../src/protocol/db/db-open.ts";
import type {
  Execution,
  Page,
  PairTradesQuery,
  ReaderTask,
  ReaderWorkerData,
  ReadFilter,
  RecentForUser,
} from "../../src/protocol/db/reader-tasks.ts";
import {
  ORDER_COLUMNS,
  type OrderRow,
  TRADE_COLUMNS,
  TRANSFER_COLUMNS,
  type TradeRow,
  type TransferRow,
  toOrderRow,
  USER_TRADE_COLUMNS,
  type UserTradeRow,
} from "../../src/protocol/db/rows.ts";

/** Bound values of a filtered read (docs/API.md 20.3): 0 bounds nothing, a null pair is every pair. */
interface FilterArgs {
  u: number;
  w: number;
  pair: string | null;
  since: number;
  from: number;
}

// A user's records from a point (docs/API.md 20.3), found as the unfiltered reads find them: the
// user-row keys up to the writer's mark (a range of their (user_id, id) key from `from`) and the
// tail above it (a rowid range); the pair and the time are checked on the rows so found.
const ORDERS_TAIL_F = `SELECT id FROM orders WHERE id > @w AND user_id = @u AND id >= @from
  AND create_micro >= @since AND (@pair IS NULL OR pair = @pair)`;
const ORDERS_KEYS_F = `SELECT k.order_id FROM user_orders k JOIN orders o ON o.id = k.order_id
  WHERE k.user_id = @u AND k.order_id <= @w AND k.order_id >= @from
  AND o.create_micro >= @since AND (@pair IS NULL OR o.pair = @pair)`;
const TRADES_WHERE_F = "trade_id >= @from AND time_micro >= @since AND (@pair IS NULL OR pair = @pair)";
const TRADES_TAIL_F = `FROM trade_sides WHERE trade_id > @w AND user_id = @u AND ${TRADES_WHERE_F}`;
const TRADES_KEYS_F = `FROM user_trade_rows WHERE user_id = @u AND trade_id <= @w AND ${TRADES_WHERE_F}`;

/** The SQL of the reads from a point, by statement (exported for the test of their query plans). */
export const POINT_READ_SQL = {
  countOrdersWhere: `SELECT (SELECT COUNT(*) FROM (${ORDERS_KEYS_F})) + (SELECT COUNT(*) FROM (${ORDERS_TAIL_F}))`,
  ordersWhereAsc: ordersWhere("ASC"),
  ordersWhereDesc: ordersWhere("DESC"),
  countTradesWhere: `SELECT (SELECT COUNT(*) ${TRADES_KEYS_F}) + (SELECT COUNT(*) ${TRADES_TAIL_F})`,
  tradesWhereAsc: tradesWhere("ASC"),
  tradesWhereDesc: tradesWhere("DESC"),
  // A pair's trades (docs/API.md 20.3) on its (pair, id) key.
  lastTradeId: "SELECT COALESCE(MAX(id), 0) FROM trades",
  pairTradeFrom: "SELECT id, time_micro FROM trades WHERE pair = ? AND id >= ? ORDER BY id LIMIT 1",
  pairTradesFrom: `SELECT ${TRADE_COLUMNS} FROM trades WHERE pair = ? AND id >= ? ORDER BY id LIMIT ?`,
  pairTradesNewest: `SELECT ${TRADE_COLUMNS} FROM trades WHERE pair = ? ORDER BY id DESC LIMIT ?`,
};

function ordersWhere(dir: "ASC" | "DESC"): string {
  return `SELECT ${ORDER_COLUMNS} FROM orders WHERE id IN
    (${ORDERS_TAIL_F} UNION ALL ${ORDERS_KEYS_F} ORDER BY 1 ${dir} LIMIT @limit OFFSET @offset)
    ORDER BY id ${dir}`;
}

function tradesWhere(dir: "ASC" | "DESC"): string {
  return `SELECT ${USER_TRADE_COLUMNS} ${TRADES_TAIL_F} UNION ALL SELECT ${USER_TRADE_COLUMNS} ${TRADES_KEYS_F}
    ORDER BY 1 ${dir} LIMIT @limit OFFSET @offset`;
}

function prepareFiltered(db: Db) {
  type Paged = FilterArgs & { limit: number; offset: number };
  const sql = POINT_READ_SQL;
  return {
    countOrdersWhere: db.prepare<[FilterArgs], number>(sql.countOrdersWhere).pluck(),
    ordersWhereAsc: db.prepare<[Paged], OrderRow>(sql.ordersWhereAsc),
    ordersWhereDesc: db.prepare<[Paged], OrderRow>(sql.ordersWhereDesc),
    countTradesWhere: db.prepare<[FilterArgs], number>(sql.countTradesWhere).pluck(),
    tradesWhereAsc: db.prepare<[Paged], UserTradeRow>(sql.tradesWhereAsc),
    tradesWhereDesc: db.prepare<[Paged], UserTradeRow>(sql.tradesWhereDesc),
    lastTradeId: db.prepare<[], number>(sql.lastTradeId).pluck(),
    pairTradeFrom: db.prepare<[string, number], [number, number]>(sql.pairTradeFrom).raw(),
    pairTradesFrom: db.prepare<[string, number, number], TradeRow>(sql.pairTradesFrom),
    pairTradesNewest: db.prepare<[string, number], TradeRow>(sql.pairTradesNewest),
  };
}

function prepare(db: Db) {
  return {
    ...prepareFiltered(db),
    // A user's orders: user_orders up to the writer's mark, then the tail of orders above it,
    // whose rows the writer has not written to user_orders yet (migration 002).
    ordersThrough: db.prepare<[], number>("SELECT value FROM meta WHERE key = 'user_orders_through'").pluck(),
    countOrders: db.prepare<[{ u: number; w: number }], { n: number }>(
      `SELECT (SELECT COUNT(*) FROM user_orders WHERE user_id = @u AND order_id <= @w)
            + (SELECT COUNT(*) FROM orders WHERE id > @w AND user_id = @u) AS n`,
    ),
    // Both arms come in id order (the tail by rowid, the rest on the (user_id, order_id) key), so
    // SQLite merges them and stops at the page; only the page's rows are fetched.
    orders: db.prepare<[{ u: number; w: number; limit: number; offset: number }], OrderRow>(
      `SELECT ${ORDER_COLUMNS} FROM orders WHERE id IN
         (SELECT id FROM orders WHERE id > @w AND user_id = @u
          UNION ALL
          SELECT order_id FROM user_orders WHERE user_id = @u AND order_id <= @w
          ORDER BY 1 DESC LIMIT @limit OFFSET @offset)
       ORDER BY id DESC`,
    ),
    order: db.prepare<[number], OrderRow>(`SELECT ${ORDER_COLUMNS} FROM orders WHERE id = ?`),
    orderByClientId: db.prepare<[number, string], OrderRow>(
      `SELECT ${ORDER_COLUMNS} FROM orders INDEXED BY orders_client_id
       WHERE user_id = ? AND client_order_id = ?`,
    ),
    // The candidates come from the main thread (its open orders of the user); the rows say which
    // are open as committed.
    openOrders: db.prepare<[string], OrderRow>(
      `SELECT ${ORDER_COLUMNS} FROM orders WHERE id IN (SELECT value FROM json_each(?))
         AND is_cancelled = 0 AND amount_used < amount ORDER BY id DESC`,
    ),
    // A user's trades: user_trades up to the writer's mark (its keys, the rest from the trade:
    // user_trade_rows, migration 008), then the tail of trades above it as the user saw them (the
    // trade_sides view, which also defines the rows the writer adds).
    tradesThrough: db.prepare<[], number>("SELECT value FROM meta WHERE key = 'user_trades_through'").pluck(),
    countTrades: db.prepare<[{ u: number; w: number }], { n: number }>(
      `SELECT (SELECT COUNT(*) FROM user_trades WHERE user_id = @u AND trade_id <= @w)
            + (SELECT COUNT(*) FROM trade_sides WHERE trade_id > @w AND user_id = @u) AS n`,
    ),
    trades: db.prepare<[{ u: number; w: number; limit: number; offset: number }], UserTradeRow>(
      `SELECT ${USER_TRADE_COLUMNS} FROM trade_sides WHERE trade_id > @w AND user_id = @u
       UNION ALL
       SELECT ${USER_TRADE_COLUMNS} FROM user_trade_rows WHERE user_id = @u AND trade_id <= @w
       ORDER BY 1 DESC LIMIT @limit OFFSET @offset`,
    ),
    // A user's deposits and withdrawals on the (user_id, id) key (migration 009).
    countTransfers: db.prepare<[number], number>("SELECT COUNT(*) FROM transfers WHERE user_id = ?").pluck(),
    // The user's blocks of numbers (migration 012) from the one holding `n` on (or from the first
    // above it): the block holding `n` starts at the greatest first number at or below `n`.
    blockStart: db
      .prepare<[{ u: number; n: number }], number>(
        "SELECT first_seq FROM execution_blocks WHERE user_id = @u AND first_seq <= @n ORDER BY first_seq DESC LIMIT 1",
      )
      .pluck(),
    blocks: db
      .prepare<[{ u: number; from: number; upTo: number }], [number, string]>(
        "SELECT first_seq, refs FROM execution_blocks WHERE user_id = @u AND first_seq >= @from AND first_seq <= @upTo ORDER BY first_seq",
      )
      .raw(),
    tradeSide: db.prepare<[number, number], UserTradeRow>(
      `SELECT ${USER_TRADE_COLUMNS} FROM trade_sides WHERE trade_id = ? AND user_id = ?`,
    ),
    // The user's order in a trade (docs/API.md 17 reports a replayed fill on it).
    tradeOrder: db
      .prepare<[{ u: number; t: number }], [number, number]>(
        "SELECT taker_user_id = @u, CASE WHEN taker_user_id = @u THEN taker_order_id ELSE maker_order_id END FROM trades WHERE id = @t",
      )
      .raw(),
    transfers: db.prepare<[{ u: number; limit: number; offset: number }], TransferRow>(
      `SELECT ${TRANSFER_COLUMNS} FROM transfers INDEXED BY transfers_user WHERE user_id = @u
       ORDER BY id DESC LIMIT @limit OFFSET @offset`,
    ),
  };
}

/** The bound values of `filter` for user `u` below mark `w`. */
function filterArgs(u: number, w: number, filter: ReadFilter): FilterArgs {
  return { u, w, pair: filter.pair, since: filter.sinceMicro ?? 0, from: filter.fromId ?? 0 };
}

/** With `since` or `fromId` a page is oldest first (docs/API.md 20.3). */
function ascending(filter: ReadFilter): boolean {
  return filter.sinceMicro !== null || filter.fromId !== null;
}

/**
 * The first id from which pair `pair` has only trades at or after `sinceMicro`, searched from
 * `from`. Within a pair trade ids and times grow together (each trade's time is strictly above the
 * one before it, src/core/read-models/pair-market.ts `nextMicro`), so the answer is found by
 * bisecting the id range, one (pair, id) key seek per step, without reading the trades before it.
 */
function firstTradeIdSince(pair: string, sinceMicro: number, from: number): number {
  // Invariant: the pair's first trade from `lo` is before `sinceMicro`; from `hi` there is none
  // before it (or none at all).
  const atOrAfter = (id: number): boolean => {
    const t = st.pairTradeFrom.get(pair, id);
    return t === undefined || t[1] >= sinceMicro;
  };
  let lo = Math.max(from, 1);
  if (atOrAfter(lo)) return lo;
  let hi = st.lastTradeId.get()! + 1;
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (atOrAfter(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** docs/API.md 20.3: the pair's trades from a point, oldest first, or its newest, newest first. */
function pairTrades(q: PairTradesQuery): TradeRow[] {
  if (q.sinceMicro === null && q.fromId === null) return st.pairTradesNewest.all(q.pair, q.limit);
  const from = q.fromId ?? 1;
  const start = q.sinceMicro === null ? from : firstTradeIdSince(q.pair, q.sinceMicro, from);
  return st.pairTradesFrom.all(q.pair, start, q.limit);
}

let db: Db | null = null;
let st: ReturnType<typeof prepare>;
let inSnapshot: <T>(fn: () => T) => T;

function connect(): void {
  const conn = openDatabase((workerData as ReaderWorkerData).path, { readonly: true });
  st = prepare(conn);
  inSnapshot = (fn) => conn.transaction(fn)();
  db = conn;
}

/** Offset of a page; throws on a page or size that is not a positive integer. */
function checkPage(page: number, pageSize: number): number {
  if (!Number.isInteger(page) || page < 1) throw new RangeError(`page must be an integer >= 1, not ${page}`);
  if (!Number.isInteger(pageSize) || pageSize < 1) {
    throw new RangeError(`pageSize must be an integer >= 1, not ${pageSize}`);
  }
  return (page - 1) * pageSize;
}

/** The user's executions in (after, upTo], at most `limit` (DbReader.executions). */
function executions(userId: number, after: number, upTo: number, limit: number): Execution[] {
  const out: Execution[] = [];
  if (limit <= 0 || upTo <= after) return out;
  const from = st.blockStart.get({ u: userId, n: after + 1 }) ?? 0;
  for (const [first, refs] of st.blocks.iterate({ u: userId, from, upTo })) {
    let execSeq = first;
    for (const entry of refs.split(",")) {
      const seq = execSeq++;
      if (seq <= after) continue;
      if (seq > upTo) return out;
      const ref = Number(entry);
      if (ref < 0) {
        const trade = st.tradeSide.get(-ref, userId);
        const side = st.tradeOrder.get({ u: userId, t: -ref });
        if (trade !== undefined && side !== undefined)
          out.push({ execSeq: seq, event: "trade", trade, orderId: side[1], maker: side[0] === 0 });
      } else {
        // An order once, at its latest change: an earlier change of it is skipped, and so is a
        // row changed above `upTo` (that change is reported above it).
        const row = st.order.get(ref);
        if (row !== undefined && row.execSeq === seq)
          out.push({ execSeq: seq, event: "order", order: toOrderRow(row) });
      }
      if (out.length >= limit) return out;
    }
  }
  return out;
}

export default function run(
  task: ReaderTask,
):
  | Page<OrderRow>
  | Page<UserTradeRow>
  | Page<TransferRow>
  | TradeRow[]
  | RecentForUser
  | OrderRow
  | OrderRow[]
  | Execution[]
  | undefined {
  if (db === null) connect();
  switch (task.op) {
    case "userOrders": {
      const offset = checkPage(task.page, task.pageSize);
      const filter = task.filter;
      if (filter !== undefined)
        return inSnapshot(() => {
          const args = filterArgs(task.userId, st.ordersThrough.get()!, filter);
          const list = ascending(filter) ? st.ordersWhereAsc : st.ordersWhereDesc;
          return {
            total: st.countOrdersWhere.get(args)!,
            items: list.all({ ...args, limit: task.pageSize, offset }).map(toOrderRow),
          };
        });
      return inSnapshot(() => {
        const w = st.ordersThrough.get()!;
        return {
          total: st.countOrders.get({ u: task.userId, w })!.n,
          items: st.orders.all({ u: task.userId, w, limit: task.pageSize, offset }).map(toOrderRow),
        };
      });
    }
    case "userTrades": {
      const offset = checkPage(task.page, task.pageSize);
      const filter = task.filter;
      if (filter !== undefined)
        return inSnapshot(() => {
          const args = filterArgs(task.userId, st.tradesThrough.get()!, filter);
          const list = ascending(filter) ? st.tradesWhereAsc : st.tradesWhereDesc;
          return {
            total: st.countTradesWhere.get(args)!,
            items: list.all({ ...args, limit: task.pageSize, offset }),
          };
        });
      return inSnapshot(() => {
        const w = st.tradesThrough.get()!;
        return {
          total: st.countTrades.get({ u: task.userId, w })!.n,
          items: st.trades.all({ u: task.userId, w, limit: task.pageSize, offset }),
        };
      });
    }
    case "pairTrades":
      return inSnapshot(() => pairTrades(task));
    case "userTransfers": {
      const offset = checkPage(task.page, task.pageSize);
      return inSnapshot(() => ({
        total: st.countTransfers.get(task.userId)!,
        items: st.transfers.all({ u: task.userId, limit: task.pageSize, offset }),
      }));
    }
    case "order": {
      const row = st.order.get(task.orderId);
      return row === undefined ? undefined : toOrderRow(row);
    }
    case "orderByClientId": {
      const row = st.orderByClientId.get(task.userId, task.clientOrderId);
      return row === undefined ? undefined : toOrderRow(row);
    }
    case "openOrders":
      return st.openOrders.all(JSON.stringify(task.ids)).map(toOrderRow);
    case "executions":
      return inSnapshot(() => executions(task.userId, task.after, task.upTo, task.limit));
    case "recentForUser": {
      checkPage(1, task.n);
      return inSnapshot(() => ({
        orders: st.orders
          .all({ u: task.userId, w: st.ordersThrough.get()!, limit: task.n, offset: 0 })
          .map(toOrderRow),
        trades: st.trades.all({ u: task.userId, w: st.tradesThrough.get()!, limit: task.n, offset: 0 }),
      }));
    }
  }
}
