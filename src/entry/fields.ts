/**
 * The readers of the fields several calls share, one reader per field: the pair a call names, an
 * order id, the deadline `expiresAt`, and the fields a call does not take. Each reports a failing
 * field as an `ErrorEntry` (or a negative code) and answers nothing itself; the order fields of
 * create-order are read in validate.ts, a quote's ladder in validate-quote.ts.
 */
import type { ExchangeConfig, PairConfig } from "../config/exchange-config.ts";
import type { ErrorEntry } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";
import { MAX_SAFE, readSmallInteger } from "../util/integers.ts";
import { MAX_ORDER_ID } from "./limits.ts";

/**
 * docs/API.md 8.1: an UNKNOWN_FIELD error under each field of `body` that `allowed` does not hold (an
 * ignored `postOnly` would be a silent taker fill).
 */
export function unknownFields(body: Record<string, unknown>, allowed: ReadonlySet<string>): ErrorEntry[] {
  const out: ErrorEntry[] = [];
  for (const k in body) if (!allowed.has(k)) out.push([Code.UNKNOWN_FIELD, undefined, k]);
  return out;
}

/**
 * How a call reads `pairName`: which values count as not given (and the code they answer), and the
 * code of a name that is no pair. A value given that is not a string is PAIR_NOT_STRING everywhere.
 */
export interface PairRead {
  readonly missing: (value: unknown) => boolean;
  readonly absent: number;
  readonly unknown: number;
}

/** An order's or a quote's pair (docs/API.md 7.1): absent or null is required. */
export const ORDER_PAIR: PairRead = {
  missing: (v) => v === undefined || v === null,
  absent: Code.PAIR_REQUIRED,
  unknown: Code.PAIR_UNKNOWN,
};

/** The pair of an MMP call's body (docs/API.md 8.10): absent, null or "" is required. */
export const MMP_BODY_PAIR: PairRead = {
  missing: (v) => v === undefined || v === null || v === "",
  absent: Code.PAIR_REQUIRED,
  unknown: Code.PAIR_UNKNOWN,
};

/**
 * The pair of `GET /trade/mmp?pairName=` and the session's `mmp.get` (docs/API.md 8.10): a query
 * parameter absent or empty is required; a session's null is a value that is not a string.
 */
export const MMP_QUERY_PAIR: PairRead = {
  missing: (v) => v === undefined || v === "",
  absent: Code.PAIR_REQUIRED,
  unknown: Code.PAIR_UNKNOWN,
};

/** cancel-all-orders' optional pair (docs/API.md 8.4): the caller reads an absent one as every pair. */
export const FILTER_PAIR: PairRead = {
  missing: () => false,
  absent: Code.PAIR_REQUIRED,
  unknown: Code.PAIR_UNKNOWN,
};

/** The session's `orders.open` (docs/API.md 13): as the REST path reads it, an unknown pair is 404. */
export const OPEN_ORDERS_PAIR: PairRead = {
  missing: (v) => v === undefined,
  absent: Code.SESSION_PAIR_REQUIRED,
  unknown: Code.PAIR_UNKNOWN_IN_PATH,
};

/** The pair `value` names under `how`, or undefined with its error pushed. */
export function readPair(
  value: unknown,
  config: ExchangeConfig,
  errors: ErrorEntry[],
  how: PairRead = ORDER_PAIR,
): PairConfig | undefined {
  if (how.missing(value)) errors.push([how.absent]);
  else if (typeof value !== "string") errors.push([Code.PAIR_NOT_STRING]);
  else {
    const pair = config.pairsByName.get(value);
    if (pair === undefined) errors.push([how.unknown]);
    return pair;
  }
  return undefined;
}

/**
 * docs/API.md 8.8: the `expiresAt` of a body (Unix ms, a positive integer as docs/API.md 1 reads
 * integers): 0 when absent, -1 when invalid (400 EXPIRES_AT_INVALID; `null` is not a deadline).
 */
export function expiresAtOf(body: Record<string, unknown>): number {
  const v = body.expiresAt;
  if (v === undefined) return 0;
  return readSmallInteger(v, 1, MAX_SAFE);
}

/** An order id as a body gives it (a positive integer, docs/API.md 1), or -(error code). */
export function orderIdOf(id: unknown): number {
  if (id === undefined || id === null) return -Code.ORDER_ID_REQUIRED;
  const n = readSmallInteger(id, 1, MAX_ORDER_ID);
  return n < 0 ? -Code.ORDER_ID_INVALID : n;
}
