/**
 * The order entry calls every front end shares (docs/ARCHITECTURE.md "Order entry"): each one reads
 * and checks its params into the core's command, runs it through the core (trade.ts) and answers
 * through a `Reply` (reply.ts) with a record, an error code or a validation's errors. The REST
 * routes (src/http/routes/) and the trading sessions (src/session/methods.ts) are adapters over
 * these: they frame, authenticate and render; one validation, one command record and one result per
 * call, whichever way it came in.
 */
import { LosslessNumber } from "lossless-json";
import type { PairConfig } from "../config/exchange-config.ts";
import type { QuoteResult } from "../core/command.ts";
import type { OrderView, UserTradeView } from "../core/exchange.ts";
import type { MmpSettings } from "../core/mmp-settings.ts";
import { CLIENT_ORDER_ID_RE } from "../core/order-options.ts";
import type { ErrorEntry } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";
import type { Execution } from "../protocol/db/reader-tasks.ts";
import type { OrderRow } from "../protocol/db/rows.ts";
import { MAX_SAFE, readSmallInteger } from "../util/integers.ts";
import { formatDecimal, ParseError, parseDecimal } from "../util/numbers.ts";
import type { EntryContext } from "./context.ts";
import {
  expiresAtOf,
  FILTER_PAIR,
  MMP_BODY_PAIR,
  MMP_QUERY_PAIR,
  orderIdOf,
  type PairRead,
  readPair,
  unknownFields,
} from "./fields.ts";
import { MAX_BATCH_CANCELS, MAX_BATCH_ORDERS, MAX_DEAD_MAN_SECONDS, MAX_MMP_SECONDS } from "./limits.ts";
import type { Reply } from "./reply.ts";
import { orderRowView, tradeRowView } from "./row-views.ts";
import {
  amendOne,
  batchAnswer,
  cancelAll,
  cancelOne,
  type OcoView,
  placeOco,
  placeOrder,
  quoteOne,
} from "./trade.ts";
import { type ValidOrder, validateOco, validateOrder } from "./validate.ts";
import { validateQuote } from "./validate-quote.ts";

/** An element of create-orders' answer: the order placed, or the errors of that element. */
export type BatchItem = OrderView | readonly ErrorEntry[];

/**
 * An element of cancel-orders' answer: the id as the client gave it (JSON text), and 0 when its
 * order was cancelled or the code that refused it.
 */
export interface CancelItem {
  readonly orderId: string;
  readonly code: number;
}

/** A balance as docs/API.md 5.6 gives it. */
export interface BalanceView {
  currency: string;
  balance: string;
  reserved: string;
}

/** The caller's MMP settings and state on a pair (docs/API.md 8.10). */
export interface MmpView {
  pairName: string;
  intervalSeconds: number;
  qtyLimit: string;
  frozenSeconds: number;
  frozen: boolean;
  frozenUntil: number;
}

// ---------------------------------------------------------------- the fields each call takes

/** The body fields of amend-order (docs/API.md 8.3). */
export const AMEND_ORDER_FIELDS: ReadonlySet<string> = new Set([
  "orderId",
  "amount",
  "price",
  "stopPrice",
  "trailingDelta",
  "nonce",
  "expiresAt",
]);
/** The body fields of create-orders (docs/API.md 8.5); each element takes ORDER_FIELDS (validate.ts). */
export const CREATE_ORDERS_FIELDS: ReadonlySet<string> = new Set(["orders", "nonce", "expiresAt"]);
/** The body fields of cancel-orders (docs/API.md 8.5). */
export const CANCEL_ORDERS_FIELDS: ReadonlySet<string> = new Set(["orderIds", "nonce", "expiresAt"]);
/** The body fields of cancel-all-after (docs/API.md 8.7). */
export const CANCEL_ALL_AFTER_FIELDS: ReadonlySet<string> = new Set(["timeout", "nonce"]);
/** The body fields of cancel-all-orders (docs/API.md 8.4). */
export const CANCEL_ALL_ORDERS_FIELDS: ReadonlySet<string> = new Set(["pairName", "nonce", "expiresAt"]);
/** The body fields of cancel-order (docs/API.md 7.2). */
export const CANCEL_ORDER_FIELDS: ReadonlySet<string> = new Set(["orderId", "nonce", "expiresAt"]);

/**
 * Who calls: the user, and the session tag its created orders carry (0: none; a session logged on
 * with cancelOnDisconnect, docs/API.md 8.9). `tag` puts the tag on a validated order.
 */
export interface Caller {
  readonly userId: number;
  readonly tag?: (v: ValidOrder) => void;
}

/**
 * A call on a body (a REST body or a session call's params): `fields` are the fields it takes, and
 * it answers through `reply` with a `T`.
 */
export type BodyCall<T> = (
  ctx: EntryContext,
  caller: Caller,
  body: Record<string, unknown>,
  fields: ReadonlySet<string>,
  reply: Reply<T>,
) => void;

/** A copy of `fields` without `nonce`: a session call's params (docs/API.md 13). */
export function withoutNonce(fields: ReadonlySet<string>): ReadonlySet<string> {
  const out = new Set(fields);
  out.delete("nonce");
  return out;
}

/** create-order (docs/API.md 7.1, 8.2). */
export const createOrderCall: BodyCall<OrderView> = (ctx, caller, body, fields, reply) => {
  const v = validateOrder(body, ctx.config, fields);
  if (v.errors.length > 0) return reply.invalid(v.errors);
  placeValid(ctx, caller, v, reply);
};

/** A validated order to the core (the create-order fast path joins here). */
export function placeValid(ctx: EntryContext, caller: Caller, v: ValidOrder, reply: Reply<OrderView>) {
  caller.tag?.(v);
  placeOrder(ctx, caller.userId, v, (err, order) => (err === 0 ? reply.ok(order!) : reply.error(err)));
}

/**
 * create-oco (docs/API.md 18): both legs in one step; a session's OCO legs carry its tag
 * (cancel-on-disconnect) as its orders do.
 */
export const createOcoCall: BodyCall<OcoView> = (ctx, caller, body, fields, reply) => {
  const v = validateOco(body, ctx.config, fields);
  if (v.errors.length > 0) return reply.invalid(v.errors);
  const probe = { session: 0 } as ValidOrder;
  caller.tag?.(probe);
  v.session = probe.session;
  placeOco(ctx, caller.userId, v, (err, oco) => (err === 0 ? reply.ok(oco!) : reply.error(err)));
};

/** cancel-order (docs/API.md 7.2): answers null once the cancel committed. */
export const cancelOrderCall: BodyCall<null> = (ctx, caller, body, fields, reply) => {
  const bad = unknownFields(body, fields);
  if (bad.length > 0) return reply.invalid(bad);
  const orderId = orderIdOf(body.orderId);
  const expiresAt = expiresAtOf(body);
  if (orderId < 0 && expiresAt < 0) return reply.invalid([[-orderId], [Code.EXPIRES_AT_INVALID]]);
  if (orderId < 0) return reply.error(-orderId);
  if (expiresAt < 0) return reply.error(Code.EXPIRES_AT_INVALID);
  cancelOne(ctx, caller.userId, orderId, (err) => (err === 0 ? reply.ok(null) : reply.error(err)), expiresAt);
};

/** amend-order (docs/API.md 8.3). */
export const amendOrderCall: BodyCall<OrderView> = (ctx, caller, body, fields, reply) => {
  const errors = unknownFields(body, fields);
  const orderId = orderIdOf(body.orderId);
  if (orderId < 0) errors.unshift([-orderId]);
  // null is not an amount or a price, and not "unchanged" either (docs/API.md 8.3): 400 on it.
  if (body.amount === null) errors.push([Code.AMOUNT_NOT_NUMBER]);
  if (body.price === null) errors.push([Code.PRICE_NOT_NUMBER]);
  if (body.stopPrice === null) errors.push([Code.STOP_PRICE_INVALID]);
  if (body.trailingDelta === null) errors.push([Code.TRAILING_DELTA_INVALID]);
  if (
    body.amount === undefined &&
    body.price === undefined &&
    body.stopPrice === undefined &&
    body.trailingDelta === undefined
  )
    errors.push([Code.AMEND_NOTHING]);
  const expiresAt = expiresAtOf(body);
  if (expiresAt < 0) errors.push([Code.EXPIRES_AT_INVALID]);
  if (errors.length > 0) return reply.invalid(errors);
  // The amount and price are read against the order's pair, known once the order is found.
  amendOne(ctx, reply, caller.userId, orderId, body, errors, expiresAt);
};

/**
 * The head of a batch call (docs/API.md 8.5): no unknown field, a list of 1 to `max` elements
 * (`listCode` otherwise) and the whole batch's deadline (docs/API.md 8.8: past it, no element runs).
 * Answers the refusal itself and gives undefined then.
 */
function batchHead<T>(
  body: Record<string, unknown>,
  fields: ReadonlySet<string>,
  list: unknown,
  max: number,
  listCode: number,
  reply: Reply<T>,
): { list: unknown[]; expiresAt: number } | undefined {
  const bad = unknownFields(body, fields);
  if (bad.length > 0) return void reply.invalid(bad);
  const listBad = !Array.isArray(list) || list.length < 1 || list.length > max;
  const expiresAt = expiresAtOf(body);
  if (listBad && expiresAt < 0) return void reply.invalid([[listCode], [Code.EXPIRES_AT_INVALID]]);
  if (listBad) return void reply.error(listCode);
  if (expiresAt < 0) return void reply.error(Code.EXPIRES_AT_INVALID);
  if (expiresAt !== 0 && Date.now() > expiresAt) return void reply.error(Code.REQUEST_EXPIRED);
  return { list: list as unknown[], expiresAt };
}

/** create-orders (docs/API.md 8.5): each element with `itemFields` (create-order's, without nonce). */
export function createOrdersCall(
  ctx: EntryContext,
  caller: Caller,
  body: Record<string, unknown>,
  fields: ReadonlySet<string>,
  itemFields: ReadonlySet<string>,
  reply: Reply<BatchItem[]>,
) {
  const head = batchHead(body, fields, body.orders, MAX_BATCH_ORDERS, Code.ORDERS_INVALID, reply);
  if (head === undefined) return;
  const { list, expiresAt } = head;
  const put = batchAnswer<BatchItem>(list.length, (items) => reply.ok(items));
  for (let i = 0; i < list.length; i++) {
    const item: unknown = list[i];
    if (typeof item !== "object" || item === null || Array.isArray(item)) {
      put(i, [[Code.ORDER_NOT_OBJECT]]);
      continue;
    }
    const v = validateOrder(item as Record<string, unknown>, ctx.config, itemFields);
    v.expiresAt = expiresAt;
    if (v.errors.length > 0) {
      put(i, v.errors);
      continue;
    }
    caller.tag?.(v);
    placeOrder(ctx, caller.userId, v, (err, order) => put(i, err === 0 ? order! : [[err]]));
  }
}

/** cancel-orders (docs/API.md 8.5). */
export const cancelOrdersCall: BodyCall<CancelItem[]> = (ctx, caller, body, fields, reply) => {
  const head = batchHead(body, fields, body.orderIds, MAX_BATCH_CANCELS, Code.ORDER_IDS_INVALID, reply);
  if (head === undefined) return;
  const { list, expiresAt } = head;
  const answer = batchAnswer<CancelItem>(list.length, (items) => reply.ok(items));
  list.forEach((item, i) => {
    const orderId = orderIdOf(item);
    // The id as the client gave it, for an element that is not a valid id (a number a double
    // cannot hold, such as 1e400, by its source text: a JSON number literal).
    const echo =
      orderId > 0
        ? String(orderId)
        : item instanceof LosslessNumber
          ? item.value
          : (JSON.stringify(item) ?? "null");
    const put = (code: number): void => answer(i, { orderId: echo, code });
    if (orderId < 0) put(-orderId);
    else cancelOne(ctx, caller.userId, orderId, put, expiresAt);
  });
};

/** cancel-all-orders (docs/API.md 8.4): answers the ids cancelled. */
export const cancelAllOrdersCall: BodyCall<number[]> = (ctx, caller, body, fields, reply) => {
  const bad = unknownFields(body, fields);
  if (bad.length > 0) return reply.invalid(bad);
  // Only an absent pairName means every pair: null is not a pair name (docs/API.md 8.4).
  const pn = body.pairName;
  const errors: ErrorEntry[] = [];
  const pairIndex = pn === undefined ? -1 : (readPair(pn, ctx.config, errors, FILTER_PAIR)?.index ?? -1);
  const expiresAt = expiresAtOf(body);
  if (expiresAt < 0) errors.push([Code.EXPIRES_AT_INVALID]);
  if (errors.length === 1) return reply.error(errors[0][0]);
  if (errors.length > 1) return reply.invalid(errors);
  cancelAll(ctx, reply, caller.userId, pairIndex, expiresAt);
};

/**
 * Mass quote (docs/API.md 8.12): replaces the caller's quote on the pair; a malformed ladder is a
 * 400 of the whole call with nothing changed.
 */
export const quoteCall: BodyCall<QuoteResult> = (ctx, caller, body, fields, reply) => {
  const v = validateQuote(body, ctx.config, fields);
  if (v.errors.length > 0) return reply.invalid(v.errors);
  // The session tag a created order would carry is the one its quote orders carry.
  const probe = { session: 0 } as ValidOrder;
  caller.tag?.(probe);
  quoteOne(ctx, reply, caller.userId, v.pair!.index, v.levels, probe.session, v.expiresAt);
};

/** cancel-all-after (docs/API.md 8.7): answers the trigger time (Unix ms, 0: disarmed). */
export const cancelAllAfterCall: BodyCall<number> = (ctx, caller, body, fields, reply) => {
  const bad = unknownFields(body, fields);
  if (bad.length > 0) return reply.invalid(bad);
  const timeout = readSmallInteger(body.timeout, 0, MAX_DEAD_MAN_SECONDS);
  if (timeout < 0) return reply.error(Code.TIMEOUT_INVALID);
  reply.ok(ctx.deadMan.arm(caller.userId, timeout));
};

/** docs/API.md 8.6: the caller's order from its committed row; 404 when it is none of the caller's. */
export function answerOrder(
  ctx: EntryContext,
  userId: number,
  row: Promise<OrderRow | undefined>,
  reply: Reply<OrderView>,
) {
  row.then(
    (o) =>
      o === undefined || o.userId !== userId
        ? reply.error(Code.ORDER_NOT_FOUND_PATH)
        : reply.ok(orderRowView(o, ctx.config, true)),
    (err) => reply.error(Code.INTERNAL, undefined, err),
  );
}

/** docs/API.md 8.6: the caller's order by id (a positive integer, as a body or a query gives it). */
export function orderByIdCall(ctx: EntryContext, userId: number, id: unknown, reply: Reply<OrderView>) {
  const orderId = orderIdOf(id);
  if (orderId < 0) return reply.error(-orderId);
  answerOrder(ctx, userId, ctx.reader.order(orderId), reply);
}

/** docs/API.md 8.6 by client order id (the text as given; "" or null: required). */
export function orderByClientIdCall(
  ctx: EntryContext,
  userId: number,
  id: string | null,
  reply: Reply<OrderView>,
) {
  if (id === null || id === "") return reply.error(Code.CLIENT_ORDER_ID_REQUIRED);
  if (!CLIENT_ORDER_ID_RE.test(id)) return reply.error(Code.CLIENT_ORDER_ID_INVALID);
  answerOrder(ctx, userId, ctx.reader.orderByClientId(userId, id), reply);
}

/** docs/API.md 8.6: open orders of one pair, newest first. */
export function openOrdersCall(
  ctx: EntryContext,
  userId: number,
  pairIndex: number,
  reply: Reply<OrderView[]>,
) {
  ctx.reader.openOrders(ctx.exchange.openOrderIds(userId, pairIndex)).then(
    (rows) => reply.ok(rows.map((o) => orderRowView(o, ctx.config))),
    (err) => reply.error(Code.INTERNAL, undefined, err),
  );
}

/** Available and reserved of `currencies` for `userId` (docs/API.md 5.6). */
export function balancesOf(ctx: EntryContext, userId: number, currencies: readonly string[]): BalanceView[] {
  const ledger = ctx.exchange.ledger;
  const has = ledger.hasUser(userId);
  const out = currencies.map((currency) => {
    const c = ledger.currencyIndex(currency);
    const scale = ctx.config.currencies.get(currency)!.scale;
    return {
      currency,
      balance: formatDecimal(has ? ledger.available(userId, c) : 0n, scale),
      reserved: formatDecimal(has ? ledger.reserved(userId, c) : 0n, scale),
    };
  });
  return out;
}

// ---------------------------------------------------------------- MMP settings (docs/API.md 8.10)

/** POST /trade/mmp body fields. */
export const MMP_SET_FIELDS: ReadonlySet<string> = new Set([
  "pairName",
  "intervalSeconds",
  "qtyLimit",
  "frozenSeconds",
  "nonce",
]);
/** A zero `qtyLimit` as text (docs/API.md 8.10; the request schema's MMP_ZERO). */
const ZERO_TEXT = /^0+(?:\.0+)?$/;

/** POST /trade/mmp/reset body fields. */
export const MMP_RESET_FIELDS: ReadonlySet<string> = new Set(["pairName", "nonce"]);

/** The caller's MMP settings and state on `pair` as the three calls answer them. */
function mmpView(ctx: EntryContext, userId: number, pair: PairConfig): MmpView {
  const st = ctx.exchange.mmp.status(userId, pair.index, Date.now());
  return {
    pairName: pair.name,
    intervalSeconds: st.intervalSeconds,
    qtyLimit: formatDecimal(BigInt(st.qtyLimit), pair.amountDecimals),
    frozenSeconds: st.frozenSeconds,
    frozen: st.frozen,
    frozenUntil: st.frozenUntil,
  };
}

/** Answers `errors` (one or several) when there are any; true when it answered. */
function refused<T>(reply: Reply<T>, errors: ErrorEntry[]): boolean {
  if (errors.length === 0) return false;
  if (errors.length === 1 && errors[0].length === 1) reply.error(errors[0][0]);
  else reply.invalid(errors);
  return true;
}

/**
 * The caller's MMP state on the pair named by a query or a session's params (docs/API.md 8.10):
 * `pairName` as given, undefined when absent.
 */
export function mmpGetCall(ctx: EntryContext, userId: number, pairName: unknown, reply: Reply<MmpView>) {
  withPair(ctx, pairName, MMP_QUERY_PAIR, reply, (pair) => reply.ok(mmpView(ctx, userId, pair)));
}

/** A call that names one pair as `how` reads it: answers its error, or runs `then` on it. */
export function withPair<T>(
  ctx: EntryContext,
  value: unknown,
  how: PairRead,
  reply: Reply<T>,
  then: (pair: PairConfig) => void,
): void {
  const errors: ErrorEntry[] = [];
  const pair = readPair(value, ctx.config, errors, how);
  if (!refused(reply, errors)) then(pair!);
}

/**
 * The base lots of a `qtyLimit` (a decimal with the pair's decimals, docs/API.md 8.10; 0 allowed here),
 * or -1 when it is not one.
 */
function qtyLimitOf(value: unknown, pair: PairConfig): number {
  const q = parseDecimal(value, pair.amountDecimals);
  // Zero as the request schema writes it ("0", "0.00", or the number 0): a zero with a sign ("-0")
  // is no amount.
  if (q === ParseError.Zero) return typeof value === "string" && !ZERO_TEXT.test(value) ? -1 : 0;
  if (typeof q !== "bigint" || q > BigInt(MAX_SAFE)) return -1;
  return Number(q);
}

/** POST /trade/mmp (docs/API.md 8.10): validated, stored, sent to the pair worker; answered after commit. */
export const mmpSetCall: BodyCall<MmpView> = (ctx, caller, body, fields, reply) => {
  const errors: ErrorEntry[] = [];
  const pair = readPair(body.pairName, ctx.config, errors, MMP_BODY_PAIR);
  const intervalSeconds = readSmallInteger(body.intervalSeconds, 0, MAX_MMP_SECONDS);
  if (intervalSeconds < 0) errors.push([Code.MMP_INTERVAL_INVALID]);
  let qtyLimit = -1;
  if (pair !== undefined) qtyLimit = qtyLimitOf(body.qtyLimit, pair);
  // "0" only with interval 0 (disabled); without a pair the amount cannot be read.
  if (pair !== undefined && (qtyLimit < 0 || (qtyLimit === 0 && intervalSeconds > 0)))
    errors.push([Code.MMP_QTY_LIMIT_INVALID]);
  const frozenSeconds = readSmallInteger(body.frozenSeconds, 0, MAX_MMP_SECONDS);
  if (frozenSeconds < 0) errors.push([Code.MMP_FROZEN_SECONDS_INVALID]);
  for (const e of unknownFields(body, fields)) errors.push(e);
  if (refused(reply, errors)) return;
  const p = pair!;
  const settings: MmpSettings = { intervalSeconds, qtyLimit, frozenSeconds };
  const user = caller.userId;
  const code = ctx.exchange.mmp.set(
    user,
    p.index,
    settings,
    () => reply.ok(mmpView(ctx, user, p)),
    Code.BUSY,
  );
  if (code !== 0) reply.error(code);
};

/** POST /trade/mmp/reset (docs/API.md 8.10): unfreezes and empties the window; answered after commit. */
export const mmpResetCall: BodyCall<MmpView> = (ctx, caller, body, fields, reply) => {
  const errors: ErrorEntry[] = [];
  const pair = readPair(body.pairName, ctx.config, errors, MMP_BODY_PAIR);
  for (const e of unknownFields(body, fields)) errors.push(e);
  if (refused(reply, errors)) return;
  const p = pair!;
  const user = caller.userId;
  const code = ctx.exchange.mmp.reset(user, p.index, () => reply.ok(mmpView(ctx, user, p)), Code.BUSY);
  if (code !== 0) reply.error(code);
};

// ---------------------------------------------------------------- executions (docs/API.md 16)

/** `limit` of an executions read: 1 to this, EXECUTIONS_LIMIT_DEFAULT when absent. */
export const EXECUTIONS_LIMIT_MAX = 1000;
export const EXECUTIONS_LIMIT_DEFAULT = 100;

/** An item of the user's executions as answered: its number, what it is, its record. */
export type ExecutionView =
  | { execSeq: number; event: "order"; data: OrderView }
  | { execSeq: number; event: "trade"; data: UserTradeView };

/** docs/API.md 16: the first items after `after`, the user's last committed number, the epoch. */
export interface ExecutionsView {
  items: ExecutionView[];
  lastExecSeq: number;
  execEpoch: number;
}

/** The views of stored executions (DbReader.executions). */
export function executionViews(ctx: EntryContext, rows: readonly Execution[]): ExecutionView[] {
  return rows.map((e) =>
    e.event === "order"
      ? { execSeq: e.execSeq, event: "order", data: orderRowView(e.order, ctx.config) }
      : { execSeq: e.execSeq, event: "trade", data: tradeRowView(e.trade, ctx.config) },
  );
}

/**
 * GET /trade/executions and the session call `executions` (docs/API.md 16): the caller's
 * executions numbered above `after` (an integer >= 0, 0 when absent), at most `limit` (1 to 1000,
 * 100 when absent), as a resume would replay them, cut at the caller's last committed number.
 */
export function executionsCall(
  ctx: EntryContext,
  userId: number,
  after: unknown,
  limit: unknown,
  reply: Reply<ExecutionsView>,
) {
  const errors: ErrorEntry[] = [];
  const from = after === undefined ? 0 : readSmallInteger(after, 0, MAX_SAFE);
  if (from < 0) errors.push([Code.EXECUTIONS_AFTER_INVALID]);
  const n = limit === undefined ? EXECUTIONS_LIMIT_DEFAULT : readSmallInteger(limit, 1, EXECUTIONS_LIMIT_MAX);
  if (n < 0) errors.push([Code.EXECUTIONS_LIMIT_INVALID]);
  if (refused(reply, errors)) return;
  const last = ctx.exchange.execSeqs.committed(userId);
  ctx.reader.executions(userId, from, last, n).then(
    (rows) => reply.ok({ items: executionViews(ctx, rows), lastExecSeq: last, execEpoch: ctx.execEpoch }),
    (err) => reply.error(Code.INTERNAL, undefined, err),
  );
}
