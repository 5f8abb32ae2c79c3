/**
 * The JSON of each order entry result (src/entry/calls.ts), as the REST routes and the trading
 * sessions answer it: the REST body, and a session answer's `result` (docs/API.md 13). The records
 * come from the order entry layer; only their rendering is JSON's, so another front end renders the
 * same records its own way. Errors inside a result (a batch element, a quote level) are rendered in
 * the caller's language.
 */
import type { QuoteResult } from "../core/command.ts";
import type { OrderView } from "../core/exchange.ts";
import type {
  BalanceView,
  BatchItem,
  CancelItem,
  ExecutionsView,
  ExecutionView,
  MmpView,
} from "../entry/calls.ts";
import type { OcoView } from "../entry/trade.ts";
import { errorBody, multiErrorBody } from "../errors/bodies.ts";
import type { Lang } from "../errors/language.ts";
import { serialize } from "./schemas.ts";

/** A result's JSON text in `lang`. */
export type Render<T> = (result: T, lang: Lang) => string;

/** An order (docs/API.md 5.1, with `update`). */
export const renderOrder: Render<OrderView> = (order) => serialize.order(order);

/** create-oco (docs/API.md 18): `{"ocoId", "orders": [limit leg, stop leg]}`. */
export const renderOco: Render<OcoView> = (oco) =>
  `{"ocoId":${oco.ocoId},"orders":[${serialize.order(oco.orders[0])},${serialize.order(oco.orders[1])}]}`;

/** Orders (docs/API.md 8.6 open orders). */
export const renderOrders: Render<OrderView[]> = (orders) => serialize.orders(orders);

/** cancel-order's answer: `[]`. */
export const renderEmpty: Render<null> = () => "[]";

/** create-orders (docs/API.md 8.5): in place i, the order or the error body of element i. */
export const renderBatch: Render<BatchItem[]> = (items, lang) => {
  let out = "[";
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (i > 0) out += ",";
    out += isErrors(item) ? multiErrorBody(item, lang) : serialize.order(item);
  }
  return `${out}]`;
};

function isErrors(item: BatchItem): item is readonly [number, string?, string?][] {
  return Array.isArray(item);
}

/** cancel-orders (docs/API.md 8.5): `{"orderId"}`, or the error body with the id put in front. */
export const renderCancels: Render<CancelItem[]> = (items, lang) =>
  `[${items
    .map(({ orderId, code }) =>
      code === 0 ? `{"orderId":${orderId}}` : `{"orderId":${orderId},${errorBody(code, lang).slice(1)}`,
    )
    .join(",")}]`;

/** cancel-all-orders (docs/API.md 8.4): `{"cancelled": [...]}`. */
export const renderCancelled: Render<number[]> = (ids) => serialize.cancelled({ cancelled: ids });

/** A mass quote (docs/API.md 8.12): `placed[i]` the order, or the error body of level i. */
export const renderQuote: Render<QuoteResult> = (result, lang) => {
  const placed = result.placed.map((x) => (typeof x === "number" ? errorBody(x, lang) : serialize.order(x)));
  return `{"cancelled":[${result.cancelled.join(",")}],"placed":[${placed.join(",")}]}`;
};

/** cancel-all-after (docs/API.md 8.7). */
export const renderTriggerTime: Render<number> = (triggerTime) => serialize.triggerTime({ triggerTime });

/** Balances (docs/API.md 5.6). */
export const renderBalances: Render<BalanceView[]> = (balances) => serialize.balances(balances);

/** MMP settings and state (docs/API.md 8.10). */
export const renderMmp: Render<MmpView> = (mmp) => serialize.mmp(mmp);

/** The server's time: `{"serverTime"}` (docs/API.md 9). */
export const renderTime: Render<number> = (serverTime) => serialize.time({ serverTime });

/** An execution's record: the order without updateTime (as user_orders), or the user trade. */
function executionData(e: ExecutionView): string {
  return e.event === "order" ? serialize.orderItem(e.data) : serialize.userTrade(e.data);
}

/** One item of the executions: `{"execSeq","event","data"}`. */
function executionItem(e: ExecutionView): string {
  return `{"execSeq":${e.execSeq},"event":"${e.event}","data":${executionData(e)}}`;
}

/** The executions (docs/API.md 16): `{"items", "lastExecSeq", "execEpoch"}`. */
export const renderExecutions: Render<ExecutionsView> = (v) =>
  `{"items":[${v.items.map(executionItem).join(",")}],"lastExecSeq":${v.lastExecSeq},"execEpoch":${v.execEpoch}}`;

/**
 * A report frame of a trading session (docs/API.md 13, 14): `{"event","data","execSeq"}`, as a
 * live report and a resume's replay send it.
 */
export function reportFrame(e: ExecutionView): string {
  return `{"event":"${e.event}","data":${executionData(e)},"execSeq":${e.execSeq}}`;
}
