/**
 * What the main thread's reader pool (src/db/reader.ts) and its task file
 * (workers/db/reader-worker.ts) exchange: the task objects, the worker's start data and the
 * answers' shapes. Types only.
 */
import type { OrderRow, UserTradeRow } from "./rows.ts";

export interface Page<T> {
  /** All of the user's records (not only this page's). */
  total: number;
  /** Newest first (id descending). */
  items: T[];
}

export interface RecentForUser {
  orders: OrderRow[];
  trades: UserTradeRow[];
}

export type ReaderTask =
  | { op: "userOrders"; userId: number; page: number; pageSize: number }
  | { op: "userTrades"; userId: number; page: number; pageSize: number }
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
