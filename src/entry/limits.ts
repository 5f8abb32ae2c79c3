/**
 * The bounds order entry checks on the fields of a call, whatever the front end; the request
 * schemas of the documents (src/wire/request-schemas.ts) state the same bounds.
 */
import { MAX_SAFE } from "../util/integers.ts";

/** Largest order id (docs/API.md 1): ids are JS numbers, exact up to 2^53 - 1. */
export const MAX_ORDER_ID = MAX_SAFE;
/** Elements of create-orders (docs/API.md 8.5). */
export const MAX_BATCH_ORDERS = 20;
/** Elements of cancel-orders (docs/API.md 8.5). */
export const MAX_BATCH_CANCELS = 100;
/** cancel-all-after `timeout` (docs/API.md 8.7), seconds. */
export const MAX_DEAD_MAN_SECONDS = 600;
/** MMP `intervalSeconds` and `frozenSeconds` (docs/API.md 8.10): 0..MAX_MMP_SECONDS. */
export const MAX_MMP_SECONDS = 3600;
/** Pages (docs/API.md 5.8): `pageSize` 1..PAGE_SIZE_MAX, default PAGE_SIZE_DEFAULT; `page` from 1. */
export const PAGE_SIZE_MAX = 100;
export const PAGE_SIZE_DEFAULT = 20;
/** Largest `page`, `limit`, `from`, `to` of a query: any integer a double holds exactly. */
export const MAX_QUERY_INTEGER = MAX_SAFE;
/** `limit` of the book (docs/API.md 7.6) and of the chart (7.5). */
export const BOOK_LIMIT_MAX = 1000;
export const CHART_LIMIT_MAX = 1000;
export const CHART_LIMIT_DEFAULT = 500;
/** `limit` of the pair history (docs/API.md 20.3): 1..HISTORY_LIMIT_MAX, default HISTORY_LIMIT_DEFAULT. */
export const HISTORY_LIMIT_MAX = 1000;
export const HISTORY_LIMIT_DEFAULT = 200;
/** Largest `since` (Unix ms, docs/API.md 20.3): its microseconds are still an exact double. */
export const MAX_SINCE_MS = Math.floor(MAX_SAFE / 1000);
