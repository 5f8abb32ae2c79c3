/**
 * What the main thread's reader pool (src/db/reader.ts) and its task file
 * (workers/db/reader-worker.ts) exchange: the task objects, the worker's start data and the
 * answers' shapes. Types only.
 */
import type { OrderRow, UserTradeRow } from "./rows.ts";

export interface Page<T> {
  /** All of the user's records that pass the filter (not only this page's). */
  total: number;
  /** Newest first (id descending); oldest first with `since` or `fromId` (ReadFilter). */
  items: T[];
}

/**
 * docs/API.md 20.3: which of a user's records a page reads. With `sinceMicro` or `fromId` the page
 * is oldest first (id ascending), else newest first.
 */
export interface ReadFilter {
  /** Only this pair's records; null: every pair. */
  pair: string | null;
  /** Only records created at or after this Unix time in µs; null: no bound. */
  sinceMicro: number | null;
  /** Only records with this id or above; null: no bound. */
  fromId: number | null;
}

/** docs/API.md 20.3: a pair's trades from a point (oldest first) or its newest (newest first). */
export interface PairTradesQuery {
  pair: string;
  sinceMicro: number | null;
  fromId: number | null;
  limit: number;
}

export interface RecentForUser {
  orders: OrderRow[];
  trades: UserTradeRow[];
}

export type ReaderTask =
  | { op: "userOrders"; userId: number; page: number; pageSize: number; filter?: ReadFilter }
  | { op: "userTrades"; userId: number; page: number; pageSize: number; filter?: ReadFilter }
  | ({ op: "pairTrades" } & PairTradesQuery)
  | { op: "userTransfers"; userId: number; page: number; pageSize: number }
  | { op: "recentForUser"; userId: number; n: number }
  | { op: "order"; orderId: number }
  | { op: "orderByClientId"; userId: number; clientOrderId: string }
  | { op: "openOrders"; ids: number[] }
  | { op: "executions"; userId: number; after: number; upTo: number; limit: number };

/**
 * One item of a user's executions (docs/API.md 16): an order at the number of its latest change,
 * or one side of a trade at its number.
 */
export type Execution =
  | { execSeq: number; event: "order"; order: OrderRow }
  | { execSeq: number; event: "trade"; trade: UserTradeRow; orderId: number; maker: boolean };

export interface ReaderWorkerData {
  /** URL of the task module, loaded by workers/ts-entry.mjs. */
  entry: string;
  path: string;
}
