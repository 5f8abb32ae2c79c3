/**
 * Request validation shared by the order routes: an order body (create-order and each element of
 * create-orders), an order id, an amount and a price within the pair's bounds (docs/API.md 1, 7.1,
 * 8.2). Every failing field is reported as an `ErrorEntry`; nothing here answers or changes state.
 */

import type { ExchangeConfig, PairConfig } from "../config/exchange-config.ts";
import { type OcoInputs, type OrderInputs, STOP_DIRECTION_DOWN, STOP_DIRECTION_UP } from "../core/command.ts";
import { LIMIT, MARKET } from "../core/exchange.ts";
import {
  CLIENT_ORDER_ID_RE,
  FLAG_POST_ONLY,
  ORDER_MMP,
  selfTradePreventionFlags,
  TIF_GTC,
  TIF_MASK,
  timeInForceFlags,
} from "../core/order-options.ts";
import type { ErrorEntry } from "../errors/bodies.ts";
import { amountParseError, Code, priceParseError } from "../errors/catalogue.ts";
import type { ReadFilter } from "../protocol/db/reader-tasks.ts";
import { BUY, SELL } from "../protocol/pair/engine.ts";
import { readSmallInteger } from "../util/integers.ts";
import { formatDecimal, ParseError, parseDecimal } from "../util/numbers.ts";
import { expiresAtOf, readPair, unknownFields } from "./fields.ts";
import {
  HISTORY_LIMIT_DEFAULT,
  HISTORY_LIMIT_MAX,
  MAX_QUERY_INTEGER,
  MAX_SINCE_MS,
  PAGE_SIZE_DEFAULT,
  PAGE_SIZE_MAX,
} from "./limits.ts";

/** The fields an order carries (docs/API.md 7.1, 8.2, 8.10, 8.11): an element of create-orders. */
export const ORDER_FIELDS: ReadonlySet<string> = new Set([
  "pairName",
  "tradeType",
  "directionType",
  "price",
  "amount",
  "clientOrderId",
  "timeInForce",
  "postOnly",
  "mmp",
  "selfTradePrevention",
  "stopPrice",
  "stopDirection",
  "trailingDelta",
]);
/**
 * A create-order body: an order, the `nonce` every authenticated call may carry, and the deadline
 * `expiresAt` (docs/API.md 8.8; create-orders takes it once for the whole batch).
 */
export const CREATE_FIELDS: ReadonlySet<string> = new Set([...ORDER_FIELDS, "nonce", "expiresAt"]);

/**
 * The error of a parse failure; too many decimals says how many the field takes ("at most 6",
 * docs/API.md section 4), so that the client knows what to round to.
 */
export function decimalsSaid(code: number, error: ParseError, decimals: number): ErrorEntry {
  return error === ParseError.TooManyDecimals ? [code, String(decimals)] : [code];
}

/** An order amount of pair `p` in lots (docs/API.md 7.1 bounds), or 0 with its error pushed. */
export function parseAmount(value: unknown, p: PairConfig, errors: ErrorEntry[]): number {
  const a = parseDecimal(value, p.amountDecimals);
  if (typeof a !== "bigint") errors.push(decimalsSaid(amountParseError(a), a, p.amountDecimals));
  else if (a < p.minAmount)
    errors.push([Code.AMOUNT_BELOW_MIN, formatDecimal(p.minAmount, p.amountDecimals)]);
  else if (a > p.maxAmount)
    errors.push([Code.AMOUNT_ABOVE_MAX, formatDecimal(p.maxAmount, p.amountDecimals)]);
  else return Number(a);
  return 0;
}

/** docs/API.md 20.5: whether `price` ticks × `amount` lots is below the pair's minimum order value. */
export function belowMinNotional(p: PairConfig, price: number, amount: number): boolean {
  return p.minNotional > 0n && BigInt(price) * BigInt(amount) < p.minNotional;
}

/** A limit price of pair `p` in ticks (docs/API.md 7.1 bounds), or 0 with its error pushed. */
export function parsePrice(value: unknown, p: PairConfig, errors: ErrorEntry[]): number {
  const pr = parseDecimal(value, p.priceDecimals);
  if (typeof pr !== "bigint") errors.push(decimalsSaid(priceParseError(pr), pr, p.priceDecimals));
  else if (pr > p.maxPrice) errors.push([Code.PRICE_ABOVE_MAX, formatDecimal(p.maxPrice, p.priceDecimals)]);
  else return Number(pr);
  return 0;
}

export interface ValidOrder extends OrderInputs {
  errors: ErrorEntry[];
  pair: PairConfig | undefined;
}

/**
 * Validates a create-order body (docs/API.md 7.1, 8.2) whose fields must be in `allowed`; every
 * failing field is reported, unknown fields last.
 */
export function validateOrder(
  body: Record<string, unknown>,
  config: ExchangeConfig,
  allowed: ReadonlySet<string> = CREATE_FIELDS,
): ValidOrder {
  const errors: ErrorEntry[] = [];
  const out: ValidOrder = {
    errors,
    pair: undefined,
    type: LIMIT,
    side: BUY,
    price: 0,
    amount: 0,
    flags: 0,
    clientOrderId: undefined,
    expiresAt: 0,
    session: 0,
  };
  out.pair = readPair(body.pairName, config, errors);
  const tt = body.tradeType;
  if (tt === undefined || tt === null) errors.push([Code.TRADE_TYPE_REQUIRED]);
  else if (tt === "limit") out.type = LIMIT;
  else if (tt === "market") out.type = MARKET;
  else errors.push([Code.TRADE_TYPE_INVALID]);
  const dt = body.directionType;
  if (dt === undefined || dt === null) errors.push([Code.DIRECTION_REQUIRED]);
  else if (dt === "buy") out.side = BUY;
  else if (dt === "sell") out.side = SELL;
  else errors.push([Code.DIRECTION_INVALID]);
  const p = out.pair;
  if (body.amount === undefined || body.amount === null) errors.push([Code.AMOUNT_REQUIRED]);
  else if (p !== undefined) out.amount = parseAmount(body.amount, p, errors);
  if (out.type === LIMIT && tt === "limit") {
    if (body.price === undefined || body.price === null) errors.push([Code.PRICE_REQUIRED]);
    else if (p !== undefined) out.price = parsePrice(body.price, p, errors);
    // docs/API.md 20.5: exact, in ticks × lots (a market order's value is the book's to judge).
    if (p !== undefined && out.price > 0 && out.amount > 0 && belowMinNotional(p, out.price, out.amount))
      errors.push([
        Code.NOTIONAL_BELOW_MIN,
        formatDecimal(p.minNotional, p.priceDecimals + p.amountDecimals),
      ]);
  }
  // Options: null counts as not given.
  const tif = body.timeInForce;
  if (tif !== undefined && tif !== null) {
    const flags = timeInForceFlags(tif);
    if (flags < 0) errors.push([Code.TIME_IN_FORCE_INVALID]);
    else if (tt === "market") errors.push([Code.TIME_IN_FORCE_NOT_LIMIT]);
    else out.flags |= flags;
  }
  const po = body.postOnly;
  if (po !== undefined && po !== null) {
    if (typeof po !== "boolean") errors.push([Code.POST_ONLY_INVALID]);
    else if (po && (tt === "market" || (out.flags & TIF_MASK) !== TIF_GTC))
      errors.push([Code.POST_ONLY_NOT_GTC]);
    else if (po) out.flags |= FLAG_POST_ONLY;
  }
  // docs/API.md 8.10: a protected order is a limit GTC order.
  const mmp = body.mmp;
  if (mmp !== undefined && mmp !== null) {
    if (typeof mmp !== "boolean") errors.push([Code.MMP_INVALID]);
    else if (mmp && (tt === "market" || (out.flags & TIF_MASK) !== TIF_GTC)) errors.push([Code.MMP_NOT_GTC]);
    else if (mmp) out.flags |= ORDER_MMP;
  }
  stopOf(body, p, out, errors);
  // docs/API.md 8.11: any order type.
  const stp = body.selfTradePrevention;
  if (stp !== undefined && stp !== null) {
    const flags = selfTradePreventionFlags(stp);
    if (flags < 0) errors.push([Code.SELF_TRADE_PREVENTION_INVALID]);
    else out.flags |= flags;
  }
  lastFields(body, allowed, out, errors);
  return out;
}

/**
 * docs/API.md 18: `stopPrice` and `stopDirection`, both or neither; a stop takes neither
 * `postOnly` nor `mmp` (reported on that field). The last trade price is the engine's to compare.
 */
function stopOf(
  body: Record<string, unknown>,
  p: PairConfig | undefined,
  out: ValidOrder,
  errors: ErrorEntry[],
): void {
  const sp = body.stopPrice;
  const sd = body.stopDirection;
  const td = body.trailingDelta;
  const hasPrice = sp !== undefined && sp !== null;
  const hasDirection = sd !== undefined && sd !== null;
  const hasTrailing = td !== undefined && td !== null;
  if (!hasPrice && !hasDirection && !hasTrailing) return;
  if (hasTrailing) {
    // docs/API.md 18: a trailing stop takes `trailingDelta` in place of `stopPrice`.
    if (hasPrice) {
      errors.push([Code.TRAILING_DELTA_WITH_STOP_PRICE]);
      // Every failing field is reported: a stopPrice that is no price too.
      if (p !== undefined) {
        const pr = parseDecimal(sp, p.priceDecimals);
        if (typeof pr !== "bigint" || pr <= 0n || pr > p.maxPrice) errors.push([Code.STOP_PRICE_INVALID]);
      }
    } else if (p !== undefined) {
      const d = parseDecimal(td, p.priceDecimals);
      if (typeof d !== "bigint" || d <= 0n || d > p.maxPrice) errors.push([Code.TRAILING_DELTA_INVALID]);
      else out.trailingDelta = Number(d);
    }
  } else if (!hasPrice) errors.push([Code.STOP_PRICE_REQUIRED]);
  else if (p !== undefined) {
    const pr = parseDecimal(sp, p.priceDecimals);
    if (typeof pr !== "bigint" || pr <= 0n || pr > p.maxPrice) errors.push([Code.STOP_PRICE_INVALID]);
    else out.stopPrice = Number(pr);
  }
  if (!hasDirection) errors.push([Code.STOP_DIRECTION_REQUIRED]);
  else if (sd === "up") out.stopDirection = STOP_DIRECTION_UP;
  else if (sd === "down") out.stopDirection = STOP_DIRECTION_DOWN;
  else errors.push([Code.STOP_DIRECTION_INVALID]);
  if ((out.flags & FLAG_POST_ONLY) !== 0) errors.push([Code.POST_ONLY_WITH_STOP]);
  if ((out.flags & ORDER_MMP) !== 0) errors.push([Code.MMP_WITH_STOP]);
}

/** The body fields of create-oco (docs/API.md 18); a session's `oco.create` takes them without nonce. */
export const OCO_FIELDS: ReadonlySet<string> = new Set([
  "pairName",
  "directionType",
  "amount",
  "price",
  "stopPrice",
  "stopLimitPrice",
  "clientOrderId",
  "expiresAt",
  "nonce",
]);

export interface ValidOco extends OcoInputs {
  errors: ErrorEntry[];
  pair: PairConfig | undefined;
}

/** A stop price field of pair `p` (above 0, within its bounds) in ticks, or 0 with `code` pushed. */
function stopPriceOf(value: unknown, p: PairConfig, code: number, errors: ErrorEntry[]): number {
  const pr = parseDecimal(value, p.priceDecimals);
  if (typeof pr === "bigint" && pr > 0n && pr <= p.maxPrice) return Number(pr);
  errors.push([code]);
  return 0;
}

/**
 * Validates a create-oco body (docs/API.md 18) whose fields must be in `allowed`: every failing
 * field is reported, unknown fields last. The legs' sides of each other are checked here (a sell's
 * `stopPrice` below its `price`, a buy's above); their sides of the last trade price are the
 * engine's to judge.
 */
export function validateOco(
  body: Record<string, unknown>,
  config: ExchangeConfig,
  allowed: ReadonlySet<string> = OCO_FIELDS,
): ValidOco {
  const errors: ErrorEntry[] = [];
  const out: ValidOco = {
    errors,
    pair: undefined,
    side: BUY,
    price: 0,
    amount: 0,
    stopPrice: 0,
    stopLimitPrice: 0,
    clientOrderId: undefined,
    expiresAt: 0,
    session: 0,
  };
  const p = readPair(body.pairName, config, errors);
  out.pair = p;
  const dt = body.directionType;
  let sided = false;
  if (dt === undefined || dt === null) errors.push([Code.DIRECTION_REQUIRED]);
  else if (dt === "buy" || dt === "sell") {
    out.side = dt === "buy" ? BUY : SELL;
    sided = true;
  } else errors.push([Code.DIRECTION_INVALID]);
  if (body.amount === undefined || body.amount === null) errors.push([Code.AMOUNT_REQUIRED]);
  else if (p !== undefined) out.amount = parseAmount(body.amount, p, errors);
  if (body.price === undefined || body.price === null) errors.push([Code.PRICE_REQUIRED]);
  else if (p !== undefined) out.price = parsePrice(body.price, p, errors);
  if (body.stopPrice === undefined || body.stopPrice === null) errors.push([Code.OCO_STOP_PRICE_REQUIRED]);
  else if (p !== undefined) out.stopPrice = stopPriceOf(body.stopPrice, p, Code.STOP_PRICE_INVALID, errors);
  const slp = body.stopLimitPrice;
  if (slp !== undefined && slp !== null && p !== undefined)
    out.stopLimitPrice = stopPriceOf(slp, p, Code.STOP_LIMIT_PRICE_INVALID, errors);
  const { price, stopPrice } = out;
  if (sided && price > 0 && stopPrice > 0 && !(out.side === SELL ? stopPrice < price : stopPrice > price))
    errors.push([Code.OCO_STOP_PRICE_SIDE]);
  // docs/API.md 20.5: the limit leg, and a stop-limit leg, are limit orders like any other.
  if (
    p !== undefined &&
    out.amount > 0 &&
    ((out.price > 0 && belowMinNotional(p, out.price, out.amount)) ||
      (out.stopLimitPrice > 0 && belowMinNotional(p, out.stopLimitPrice, out.amount)))
  )
    errors.push([Code.NOTIONAL_BELOW_MIN, formatDecimal(p.minNotional, p.priceDecimals + p.amountDecimals)]);
  lastFields(body, allowed, out, errors);
  return out;
}

/**
 * A non-negative integer query parameter (`page`, `pageSize`, `limit`, `from`, `to`) as docs/API.md 1
 * reads integers (src/util/integers.ts), or -1 when it is not one; the caller checks the range.
 */
export function queryInteger(text: string): number {
  return readSmallInteger(text, 0, MAX_QUERY_INTEGER);
}

/**
 * docs/API.md 20.3: `since` (Unix ms, as µs), `fromId` and, when `withPair`, `pairName` (a
 * configured pair) of a read from a point, or the error code of the first bad one. Null: absent.
 */
export function pointParams(
  q: URLSearchParams,
  config: ExchangeConfig,
  withPair: boolean,
): ReadFilter | number {
  const filter: ReadFilter = { pair: null, sinceMicro: null, fromId: null };
  if (withPair) {
    const name = q.get("pairName");
    if (name !== null) {
      if (!config.pairsByName.has(name)) return Code.PAIR_UNKNOWN;
      filter.pair = name;
    }
  }
  const since = q.get("since");
  if (since !== null) {
    const ms = readSmallInteger(since, 0, MAX_SINCE_MS);
    if (ms < 0) return Code.SINCE_INVALID;
    filter.sinceMicro = ms * 1000;
  }
  const fromId = q.get("fromId");
  if (fromId !== null) {
    const id = readSmallInteger(fromId, 1, MAX_QUERY_INTEGER);
    if (id < 0) return Code.FROM_ID_INVALID;
    filter.fromId = id;
  }
  return filter;
}

/**
 * docs/API.md 20.3 on a user read (orders, history): the filter of a read from a point, undefined
 * when the query names no point (the page of 7.9 / 7.10 as before), or the error code.
 */
export function userPointFilter(query: string, config: ExchangeConfig): ReadFilter | undefined | number {
  if (query === "") return undefined;
  const point = pointParams(new URLSearchParams(query), config, true);
  if (typeof point === "number") return point;
  return point.pair === null && point.sinceMicro === null && point.fromId === null ? undefined : point;
}

/** `limit` of the pair history (docs/API.md 20.3): 1..1000, default 200; or its error code negated. */
export function historyLimit(q: URLSearchParams): number {
  const l = q.get("limit");
  if (l === null) return HISTORY_LIMIT_DEFAULT;
  const limit = queryInteger(l);
  if (limit < 0) return -Code.LIMIT_INVALID;
  if (limit < 1 || limit > HISTORY_LIMIT_MAX) return -Code.LIMIT_OUT_OF_RANGE;
  return limit;
}

/** `page` (default 1) and `pageSize` (1..100, default 20) of a query, or the error code. */
export function pageParams(query: string): [number, number] | number {
  const q = new URLSearchParams(query);
  let page = 1;
  let size = PAGE_SIZE_DEFAULT;
  const p = q.get("page");
  if (p !== null) {
    page = queryInteger(p);
    if (page < 0) return Code.PAGE_INVALID;
    if (page < 1) return Code.PAGE_OUT_OF_RANGE;
  }
  const s = q.get("pageSize");
  if (s !== null) {
    size = queryInteger(s);
    if (size < 0) return Code.PAGE_SIZE_INVALID;
    if (size < 1 || size > PAGE_SIZE_MAX) return Code.PAGE_SIZE_OUT_OF_RANGE;
  }
  return [page, size];
}

/**
 * The fields every order-creating body ends with (docs/API.md 8.1, 18.1): `clientOrderId`,
 * `expiresAt` where the call takes it, and the refusal of any field it does not take.
 */
function lastFields(
  body: Record<string, unknown>,
  allowed: ReadonlySet<string>,
  out: { clientOrderId?: string; expiresAt?: number },
  errors: ErrorEntry[],
): void {
  const cid = body.clientOrderId;
  if (cid !== undefined && cid !== null) {
    if (typeof cid !== "string" || !CLIENT_ORDER_ID_RE.test(cid)) errors.push([Code.CLIENT_ORDER_ID_INVALID]);
    else out.clientOrderId = cid;
  }
  if (allowed.has("expiresAt")) {
    const at = expiresAtOf(body);
    if (at < 0) errors.push([Code.EXPIRES_AT_INVALID]);
    else out.expiresAt = at;
  }
  for (const e of unknownFields(body, allowed)) errors.push(e);
}
