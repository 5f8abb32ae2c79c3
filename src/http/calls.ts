/**
 * The trade calls shared by the REST routes (src/http/routes/*.ts) and the trading sessions
 * (src/session/): each one validates its body, sends its command to the core through trade.ts and
 * answers through a `Reply`, the only part that knows the transport. A REST route builds its Reply
 * over the uWS response (`httpReply`); a session builds one over its socket. One validation, one
 * command record, one answer view per call, whichever way it came in.
 */
export { httpReply, type Reply } from "./reply.ts";

import type { PairConfig } from "../config/exchange-config.ts";
import type { MmpSettings } from "../core/mmp-settings.ts";
import { CLIENT_ORDER_ID_RE } from "../core/order-options.ts";
import { type ErrorEntry, errorBody, multiErrorBody } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";
import type { OrderRow } from "../protocol/db/rows.ts";
import { MAX_SAFE, readSmallInteger } from "../util/integers.ts";
import { formatDecimal, ParseError, parseDecimal } from "../util/numbers.ts";
import { LosslessNumber, unknownFields } from "./json-body.ts";
import type { Reply } from "./reply.ts";
import {
  MAX_BATCH_CANCELS,
  MAX_BATCH_ORDERS,
  MAX_DEAD_MAN_SECONDS,
  MAX_MMP_SECONDS,
} from "./request-schemas.ts";
import type { RouteContext } from "./route.ts";
import { orderRowView } from "./row-views.ts";
import { serialize } from "./schemas.ts";
import { amendOne, batchAnswer, cancelAll, cancelOne, placeOrder, quoteOne } from "./trade.ts";
import { expiresAtOf, orderIdOf, type ValidOrder, validateOrder } from "./validate.ts";
import { validateQuote } from "./validate-quote.ts";

/**
 * Who calls: the user, and the session tag its created orders carry (0: none; a session logged on
 * with cancelOnDisconnect, CONTRACT 11.4). `tag` puts the tag on a validated order.
 */
export interface Caller {
  readonly userId: number;
  readonly tag?: (v: ValidOrder) => void;
}

/**
 * A call on a body (HTTP route or session call): `fields` are the body fields it takes, and it
 * answers through `reply`.
 */
export type BodyCall = (
  ctx: RouteContext,
  caller: Caller,
  body: Record<string, unknown>,
  fields: ReadonlySet<string>,
  reply: Reply,
) => void;

/** A copy of `fields` without `nonce`: a session call's params (CONTRACT 11.2). */
export function withoutNonce(fields: ReadonlySet<string>): ReadonlySet<string> {
  const out = new Set(fields);
  out.delete("nonce");
  return out;
}

/** seed 4.1 create-order (CONTRACT 3, 8.2). */
export const createOrderCall: BodyCall = (ctx, caller, body, fields, reply) => {
  const v = validateOrder(body, ctx.config, fields);
  if (v.errors.length > 0) return reply.invalid(v.errors);
  placeValid(ctx, caller, v, reply);
};

/** A validated order to the core (the create-order fast path joins here). */
export function placeValid(ctx: RouteContext, caller: Caller, v: ValidOrder, reply: Reply) {
  caller.tag?.(v);
  placeOrder(ctx, caller.userId, v, (err, json) => (err === 0 ? reply.ok(json) : reply.error(err)));
}

/** seed 4.2 cancel-order. */
export const cancelOrderCall: BodyCall = (ctx, caller, body, fields, reply) => {
  const bad = unknownFields(body, fields);
  if (bad.length > 0) return reply.invalid(bad);
  const orderId = orderIdOf(body.orderId);
  const expiresAt = expiresAtOf(body);
  if (orderId < 0 && expiresAt < 0) return reply.invalid([[-orderId], [Code.EXPIRES_AT_INVALID]]);
  if (orderId < 0) return reply.error(-orderId);
  if (expiresAt < 0) return reply.error(Code.EXPIRES_AT_INVALID);
  cancelOne(ctx, caller.userId, orderId, (err) => (err === 0 ? reply.ok("[]") : reply.error(err)), expiresAt);
};

/** CONTRACT 8.3 amend-order. */
export const amendOrderCall: BodyCall = (ctx, caller, body, fields, reply) => {
  const errors = unknownFields(body, fields);
  const orderId = orderIdOf(body.orderId);
  if (orderId < 0) errors.unshift([-orderId]);
  // null is not an amount or a price, and not "unchanged" either (CONTRACT 2.5): 400 on it.
  if (body.amount === null) errors.push([Code.AMOUNT_NOT_NUMBER]);
  if (body.price === null) errors.push([Code.PRICE_NOT_NUMBER]);
  if (body.amount === undefined && body.price === undefined) errors.push([Code.AMEND_NOTHING]);
  const expiresAt = expiresAtOf(body);
  if (expiresAt < 0) errors.push([Code.EXPIRES_AT_INVALID]);
  if (errors.length > 0) return reply.invalid(errors);
  // The amount and price are read against the order's pair, known once the order is found.
  amendOne(ctx, reply, caller.userId, orderId, body, errors, expiresAt);
};

/**
 * The head of a batch call (CONTRACT 8.5): no unknown field, a list of 1 to `max` elements
 * (`listCode` otherwise) and the whole batch's deadline (CONTRACT 11.2: past it, no element runs).
 * Answers the refusal itself and gives undefined then.
 */
function batchHead(
  body: Record<string, unknown>,
  fields: ReadonlySet<string>,
  list: unknown,
  max: number,
  listCode: number,
  reply: Reply,
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

/** CONTRACT 8.5 create-orders: each element with `itemFields` (create-order's, without nonce). */
export function createOrdersCall(
  ctx: RouteContext,
  caller: Caller,
  body: Record<string, unknown>,
  fields: ReadonlySet<string>,
  itemFields: ReadonlySet<string>,
  reply: Reply,
) {
  const head = batchHead(body, fields, body.orders, MAX_BATCH_ORDERS, Code.ORDERS_INVALID, reply);
  if (head === undefined) return;
  const { list, expiresAt } = head;
  const lang = reply.lang;
  const put = batchAnswer(list.length, (json) => reply.ok(json));
  for (let i = 0; i < list.length; i++) {
    const item: unknown = list[i];
    if (typeof item !== "object" || item === null || Array.isArray(item)) {
      put(i, errorBody(Code.ORDER_NOT_OBJECT, lang));
      continue;
    }
    const v = validateOrder(item as Record<string, unknown>, ctx.config, itemFields);
    v.expiresAt = expiresAt;
    if (v.errors.length > 0) {
      put(i, multiErrorBody(v.errors, lang));
      continue;
    }
    caller.tag?.(v);
    placeOrder(ctx, caller.userId, v, (err, json) => put(i, err === 0 ? json : errorBody(err, lang)));
  }
}

/** CONTRACT 8.5 cancel-orders. */
export const cancelOrdersCall: BodyCall = (ctx, caller, body, fields, reply) => {
  const head = batchHead(body, fields, body.orderIds, MAX_BATCH_CANCELS, Code.ORDER_IDS_INVALID, reply);
  if (head === undefined) return;
  const { list, expiresAt } = head;
  const lang = reply.lang;
  const answer = batchAnswer(list.length, (json) => reply.ok(json));
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
    // `{"orderId":id}`, or the error body with the id put in front of `errors`.
    const put = (err: number): void =>
      answer(i, err === 0 ? `{"orderId":${echo}}` : `{"orderId":${echo},${errorBody(err, lang).slice(1)}`);
    if (orderId < 0) put(-orderId);
    else cancelOne(ctx, caller.userId, orderId, put, expiresAt);
  });
};

/** CONTRACT 8.4 cancel-all-orders. */
export const cancelAllOrdersCall: BodyCall = (ctx, caller, body, fields, reply) => {
  const bad = unknownFields(body, fields);
  if (bad.length > 0) return reply.invalid(bad);
  // Only an absent pairName means every pair: null is not a pair name (CONTRACT 2.5).
  const pn = body.pairName;
  const errors: ErrorEntry[] = [];
  let pairIndex = -1;
  if (pn !== undefined) {
    const pair = typeof pn === "string" ? ctx.config.pairsByName.get(pn) : undefined;
    if (typeof pn !== "string") errors.push([Code.PAIR_NOT_STRING]);
    else if (pair === undefined) errors.push([Code.PAIR_UNKNOWN]);
    else pairIndex = pair.index;
  }
  const expiresAt = expiresAtOf(body);
  if (expiresAt < 0) errors.push([Code.EXPIRES_AT_INVALID]);
  if (errors.length === 1) return reply.error(errors[0][0]);
  if (errors.length > 1) return reply.invalid(errors);
  cancelAll(ctx, reply, caller.userId, pairIndex, expiresAt);
};

/**
 * CONTRACT 12.1 mass quote: replaces the caller's quote on the pair; a malformed ladder is a 400 of
 * the whole call with nothing changed.
 */
export const quoteCall: BodyCall = (ctx, caller, body, fields, reply) => {
  const v = validateQuote(body, ctx.config, fields);
  if (v.errors.length > 0) return reply.invalid(v.errors);
  // The session tag a created order would carry is the one its quote orders carry.
  const probe = { session: 0 } as ValidOrder;
  caller.tag?.(probe);
  quoteOne(ctx, reply, caller.userId, v.pair!.index, v.levels, probe.session, v.expiresAt);
};

/** CONTRACT 8.7 cancel-all-after. */
export const cancelAllAfterCall: BodyCall = (ctx, caller, body, fields, reply) => {
  const bad = unknownFields(body, fields);
  if (bad.length > 0) return reply.invalid(bad);
  const timeout = readSmallInteger(body.timeout, 0, MAX_DEAD_MAN_SECONDS);
  if (timeout < 0) return reply.error(Code.TIMEOUT_INVALID);
  reply.ok(serialize.triggerTime({ triggerTime: ctx.deps.deadMan.arm(caller.userId, timeout) }));
};

/** CONTRACT 8.6: the caller's order from its committed row; 404 when it is none of the caller's. */
export function answerOrder(
  ctx: RouteContext,
  userId: number,
  row: Promise<OrderRow | undefined>,
  reply: Reply,
) {
  row.then(
    (o) =>
      o === undefined || o.userId !== userId
        ? reply.error(Code.ORDER_NOT_FOUND_PATH)
        : reply.ok(serialize.order(orderRowView(o, ctx.config, true))),
    (err) => reply.error(Code.INTERNAL, undefined, err),
  );
}

/** CONTRACT 8.6 by client order id (the text as given; "" or null: required). */
export function orderByClientIdCall(ctx: RouteContext, userId: number, id: string | null, reply: Reply) {
  if (id === null || id === "") return reply.error(Code.CLIENT_ORDER_ID_REQUIRED);
  if (!CLIENT_ORDER_ID_RE.test(id)) return reply.error(Code.CLIENT_ORDER_ID_INVALID);
  answerOrder(ctx, userId, ctx.reader.orderByClientId(userId, id), reply);
}

/** CONTRACT 8.6 open orders of one pair, newest first. */
export function openOrdersCall(ctx: RouteContext, userId: number, pairIndex: number, reply: Reply): void {
  ctx.reader.openOrders(ctx.exchange.openOrderIds(userId, pairIndex)).then(
    (rows) => reply.ok(serialize.orders(rows.map((o) => orderRowView(o, ctx.config)))),
    (err) => reply.error(Code.INTERNAL, undefined, err),
  );
}

/** Available and reserved of `currencies` for `userId` (CONTRACT 2.3), as `[{currency, balance, reserved}]`. */
export function balancesOf(ctx: RouteContext, userId: number, currencies: readonly string[]): string {
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
  return serialize.balances(out);
}

// ---------------------------------------------------------------- CONTRACT 12.2 MMP settings

/** POST /trade/mmp body fields. */
export const MMP_SET_FIELDS: ReadonlySet<string> = new Set([
  "pairName",
  "intervalSeconds",
  "qtyLimit",
  "frozenSeconds",
  "nonce",
]);
/** POST /trade/mmp/reset body fields. */
export const MMP_RESET_FIELDS: ReadonlySet<string> = new Set(["pairName", "nonce"]);

/** The pair a body or a query names, or undefined with its error pushed (400 `errors.pairName`). */
function mmpPair(ctx: RouteContext, pn: unknown, errors: ErrorEntry[]): PairConfig | undefined {
  if (pn === undefined || pn === null || pn === "") errors.push([Code.PAIR_REQUIRED]);
  else if (typeof pn !== "string") errors.push([Code.PAIR_NOT_STRING]);
  else {
    const pair = ctx.config.pairsByName.get(pn);
    if (pair === undefined) errors.push([Code.PAIR_UNKNOWN]);
    return pair;
  }
  return undefined;
}

/** The caller's MMP settings and state on `pair` as the three calls answer them. */
function mmpBody(ctx: RouteContext, userId: number, pair: PairConfig): string {
  const st = ctx.exchange.mmp.status(userId, pair.index, Date.now());
  return serialize.mmp({
    pairName: pair.name,
    intervalSeconds: st.intervalSeconds,
    qtyLimit: formatDecimal(BigInt(st.qtyLimit), pair.amountDecimals),
    frozenSeconds: st.frozenSeconds,
    frozen: st.frozen,
    frozenUntil: st.frozenUntil,
  });
}

/** Answers `errors` (one or several) when there are any; true when it answered. */
function refused(reply: Reply, errors: ErrorEntry[]): boolean {
  if (errors.length === 0) return false;
  if (errors.length === 1 && errors[0].length === 1) reply.error(errors[0][0]);
  else reply.invalid(errors);
  return true;
}

/** CONTRACT 12.2 GET /trade/mmp?pairName=X (the query's text as given, null when absent). */
export function mmpGetCall(ctx: RouteContext, userId: number, pairName: string | null, reply: Reply): void {
  const errors: ErrorEntry[] = [];
  const pair = mmpPair(ctx, pairName ?? undefined, errors);
  if (refused(reply, errors)) return;
  reply.ok(mmpBody(ctx, userId, pair!));
}

/**
 * The base lots of a `qtyLimit` (a decimal with the pair's decimals, CONTRACT 2.1; 0 allowed here),
 * or -1 when it is not one.
 */
function qtyLimitOf(value: unknown, pair: PairConfig): number {
  const q = parseDecimal(value, pair.amountDecimals);
  if (q === ParseError.Zero) return 0;
  if (typeof q !== "bigint" || q > BigInt(MAX_SAFE)) return -1;
  return Number(q);
}

/** CONTRACT 12.2 POST /trade/mmp: validated, stored, sent to the pair worker; answered after commit. */
export const mmpSetCall: BodyCall = (ctx, caller, body, fields, reply) => {
  const errors: ErrorEntry[] = [];
  const pair = mmpPair(ctx, body.pairName, errors);
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
    () => reply.ok(mmpBody(ctx, user, p)),
    Code.BUSY,
  );
  if (code !== 0) reply.error(code);
};

/** CONTRACT 12.2 POST /trade/mmp/reset: unfreezes and empties the window; answered after commit. */
export const mmpResetCall: BodyCall = (ctx, caller, body, fields, reply) => {
  const errors: ErrorEntry[] = [];
  const pair = mmpPair(ctx, body.pairName, errors);
  for (const e of unknownFields(body, fields)) errors.push(e);
  if (refused(reply, errors)) return;
  const p = pair!;
  const user = caller.userId;
  const code = ctx.exchange.mmp.reset(user, p.index, () => reply.ok(mmpBody(ctx, user, p)), Code.BUSY);
  if (code !== 0) reply.error(code);
};
