/**
 * Request bodies as JSON, with every number exactly as the client wrote it (CONTRACT 2.1: nothing is
 * rounded silently). JSON.parse turns `1.0000000000000001` into the double 1, so a price with more
 * decimals than the pair allows would pass as a valid one. A number of at most 15 significant digits
 * without an exponent survives the double exactly (`parseDecimal` reads it back by its shortest
 * text), so the fast path keeps JSON.parse for bodies that hold no longer run of digits and no
 * exponent; any other body is parsed by lossless-json, which hands over each number whose double
 * would lose information as a `LosslessNumber` carrying its source text.
 *
 * The two paths differ in one respect only: lossless-json refuses a key given twice with different
 * values (JSON.parse keeps the last), and such a body answers 400 `body` like any malformed JSON.
 */
import { isSafeNumber, LosslessNumber, parse } from "lossless-json";
import type { ErrorEntry } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";

/**
 * A run of 16 digits (or digits and a point), or a digit followed by an exponent. A JSON number
 * starts with a digit (after its sign), so a run within one starts with a digit: the pattern opens
 * with `[0-9]`, which irregexp finds by a quick scan (about 100 ns less per order body than
 * `[0-9.]{16}|[0-9][eE]`, which it tried at every position).
 */
const MAY_LOSE_PRECISION = /[0-9](?:[0-9.]{15}|[eE])/;

function parseNumber(text: string): number | LosslessNumber {
  return isSafeNumber(text) ? Number(text) : new LosslessNumber(text);
}

/** Parses a request body; throws SyntaxError on malformed JSON. */
export function parseJsonBody(text: string): unknown {
  if (!MAY_LOSE_PRECISION.test(text)) return JSON.parse(text);
  return parse(text, null, parseNumber);
}

export { LosslessNumber };

/**
 * True for a JSON object (what a body or a session frame must be): not null, an array, or a number
 * that lossless-json kept as a `LosslessNumber` object (`1e400`), which is a JSON value that is not
 * an object (docs/API.md 11.2).
 */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof LosslessNumber)
  );
}

/**
 * CONTRACT 8.1: an UNKNOWN_FIELD error under each field of `body` that `allowed` does not hold (an
 * ignored `postOnly` would be a silent taker fill).
 */
export function unknownFields(body: Record<string, unknown>, allowed: ReadonlySet<string>): ErrorEntry[] {
  const out: ErrorEntry[] = [];
  for (const k in body) if (!allowed.has(k)) out.push([Code.UNKNOWN_FIELD, undefined, k]);
  return out;
}
