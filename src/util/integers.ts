/**
 * The one reading of an integer a client sends (docs/API.md 1), for every integer field of every call:
 * body fields (`orderId`, `orderIds[]`, `timeout`, `nonce`) and query parameters (`nonce`, `page`,
 * `pageSize`, `limit`, `from`, `to`).
 *
 * Accepted: a JSON number whose value is an integer, a long JSON number kept as its source text
 * (`LosslessNumber`, src/wire/json-body.ts) when that text is all digits, or a string of ASCII decimal
 * digits (`"30"`, leading zeros allowed). Refused: `""`, `" 30"`, `"3e1"`, `"1.5"`, `1.5`, `true`,
 * `null`, anything else, and every value outside `[min, max]` (a negative is refused by `min` = 0).
 * A JSON number cannot tell `30.0` or `3e1` from `30` once parsed, and is taken as that integer.
 */
import { LosslessNumber } from "lossless-json";

/** Longest digit text read at all: beyond it every field is out of range (keeps BigInt cheap). */
export const MAX_DIGITS = 40;
const DIGITS = /^-?[0-9]+$/;
const MINUS = 45;

/** The integer of `value` within `[min, max]`, or null (the caller answers 400 on its field). */
export function readInteger(value: unknown, min: bigint, max: bigint): bigint | null {
  let n: bigint;
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) return null;
    n = BigInt(value);
  } else {
    const text = typeof value === "string" ? value : value instanceof LosslessNumber ? value.value : null;
    if (text === null || text.length > MAX_DIGITS || !DIGITS.test(text)) return null;
    // A string of an unsigned field is digits only: "-0" is no more a digit string than "-1" (which
    // the range refuses anyway). A signed field takes the sign.
    if (min >= 0n && typeof value === "string" && text.charCodeAt(0) === MINUS) return null;
    n = BigInt(text);
  }
  return n < min || n > max ? null : n;
}

/** `readInteger` for a field whose range fits a double exactly (ids, seconds, pages): the number or -1. */
export function readSmallInteger(value: unknown, min: number, max: number): number {
  // The usual case, a JSON integer in range, without a BigInt.
  if (typeof value === "number")
    return Number.isSafeInteger(value) && value >= min && value <= max ? value : -1;
  const n = readInteger(value, BigInt(min), BigInt(max));
  return n === null ? -1 : Number(n);
}

/** Largest order id, timestamp or count a double holds exactly. */
export const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** A nonce is a non-negative integer of at most 64 bits (docs/API.md 1; stored as text). */
export const MAX_NONCE = 2n ** 64n - 1n;
