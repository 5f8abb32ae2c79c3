/**
 * Exact decimals. Every price, amount and balance inside the server is a bigint (or, in the matching
 * workers, an integer JS number below 2^53) holding the value scaled by 10^decimals. This module is
 * the only place where text or JSON numbers become scaled integers and back (docs/API.md 1, "Money is exact").
 *
 * Nothing here rounds silently: `parseDecimal` refuses what it cannot represent exactly, and
 * `mulDivRoundHalfUp` is the one explicit rounding (the average price of a market order, docs/API.md 5.1).
 */

import { LosslessNumber } from "lossless-json";

/**
 * Why `parseDecimal` refused its input. Small numbers, not exceptions, so the validator can map
 * them to the field's error code without allocating. 0 is never used.
 */
export const ParseError = {
  /** Neither a JSON number nor a string (null, boolean, object, array, undefined). */
  NotNumber: 1,
  /** A string that is not `^\d+(\.\d+)?$`, or a JS number that is NaN or infinite. */
  Malformed: 2,
  /** The value is zero (`0`, `"0.000"`). */
  Zero: 3,
  /** The value is below zero (`-1`, `"-0.5"`). */
  Negative: 4,
  /** More non-zero decimals than allowed (trailing zeros beyond the limit are fine). */
  TooManyDecimals: 5,
  /** More than MAX_INTEGER_DIGITS digits before the point. */
  TooLarge: 6,
} as const;
export type ParseError = (typeof ParseError)[keyof typeof ParseError];

/**
 * Digits allowed before the decimal point (leading zeros not counted). 21 is exactly the range in
 * which JavaScript prints numbers without an exponent (`String(1e21)` is `"1e+21"`), so a JSON
 * number is too large exactly when its text has a positive exponent. Every configured maximum has
 * at most 15 digits (see src/config/config-file.ts), so nothing accepted by the exchange comes near this bound; it
 * only keeps BigInt conversion of hostile input cheap.
 */
export const MAX_INTEGER_DIGITS = 21;

const POW10_CACHE: bigint[] = [];
for (let i = 0, p = 1n; i <= 64; i++, p *= 10n) POW10_CACHE.push(p);

/** 10^n as a bigint, cached for 0..64. Throws RangeError for a negative or fractional `n`. */
export function pow10(n: number): bigint {
  const cached = POW10_CACHE[n];
  if (cached !== undefined) return cached;
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`pow10: bad exponent ${n}`);
  return 10n ** BigInt(n);
}

/** 10^0 .. 10^22 as doubles: every one of them is exactly representable. */
export const POW10_NUMBER: number[] = [1];
for (let i = 1; i <= 22; i++) POW10_NUMBER.push(POW10_NUMBER[i - 1] * 10); // each step exact

const CODE_0 = 48;
const CODE_9 = 57;
const CODE_DOT = 46;
const CODE_MINUS = 45;

/**
 * Parse a request value (JSON number or decimal string) into an integer scaled by 10^decimals.
 *
 * Strings must match `^\d+(\.\d+)?$` (a leading `-` is recognised only to answer Negative rather
 * than Malformed). No exponent, sign, spaces, `.5` or `5.`. A JS number is read as its shortest
 * round-trip text `String(n)` (what the client's JSON said, as far as JSON.parse kept it), with an
 * exponent form such as `1e-7` expanded exactly. So `0.1 + 0.2` is refused with TooManyDecimals,
 * never rounded to `0.3`.
 *
 * Checks, first failure wins: NotNumber, Malformed, Negative (non-zero values only), Zero, TooLarge,
 * TooManyDecimals.
 */
export function parseDecimal(input: unknown, decimals: number): bigint | ParseError {
  if (input instanceof LosslessNumber) return parseLosslessNumber(input.value, decimals);
  if (typeof input === "number") {
    if (input > 0 && decimals <= 22) {
      // Fast path, without building the text. `scaled / 10^decimals` is the double nearest to the
      // decimal scaled·10^-decimals (an exact quotient of two exact doubles, correctly rounded). If
      // that double is `input`, the decimal (at most 15 significant digits) is the one String(input)
      // prints: two different decimals of at most 15 digits never share a double. Otherwise fall
      // through to the exact text path, which decides (TooManyDecimals, or a larger value).
      const unit = POW10_NUMBER[decimals];
      const scaled = Math.round(input * unit);
      if (scaled < 1e15 && scaled / unit === input) return BigInt(scaled);
    }
    if (Number.isSafeInteger(input) && input > 0) return BigInt(input) * pow10(decimals);
    if (!Number.isFinite(input)) return ParseError.Malformed;
    if (input === 0) return ParseError.Zero;
    let text = String(input);
    if (text.includes("e")) {
      if (input >= 1e21 || input <= -1e21) return input < 0 ? ParseError.Negative : ParseError.TooLarge;
      text = expandExponent(text);
    }
    return parseDecimalText(text, decimals);
  }
  if (typeof input === "string") return parseDecimalText(input, decimals);
  return ParseError.NotNumber;
}

const NON_ZERO_DIGIT = /[1-9]/;

/**
 * A JSON number's source text (src/wire/json-body.ts keeps it when a double would lose digits):
 * a valid JSON number literal, so only its exponent needs expanding before the decimal check.
 */
function parseLosslessNumber(text: string, decimals: number): bigint | ParseError {
  const lower = text.toLowerCase();
  const e = lower.indexOf("e");
  if (e === -1) return parseDecimalText(text, decimals);
  const mantissa = lower.slice(0, e);
  const exponent = Number(lower.slice(e + 1));
  // A value of 10^21 or more, or a tiny one, is refused before its digits are ever written out,
  // with the error parseDecimalText would give (zero first, then the sign).
  if (!Number.isSafeInteger(exponent) || exponent > MAX_INTEGER_DIGITS || exponent < -64) {
    if (!NON_ZERO_DIGIT.test(mantissa)) return ParseError.Zero;
    if (mantissa.charCodeAt(0) === CODE_MINUS) return ParseError.Negative;
    return exponent > 0 ? ParseError.TooLarge : ParseError.TooManyDecimals;
  }
  return parseDecimalText(expandExponent(`${mantissa}e${exponent}`), decimals);
}

function parseDecimalText(text: string, decimals: number): bigint | ParseError {
  const negative = text.charCodeAt(0) === CODE_MINUS;
  const start = negative ? 1 : 0;
  const length = text.length;
  let dot = -1;
  let firstNonZero = -1; // first significant integer digit
  let lastNonZeroFrac = -1; // last non-zero digit after the point
  let anyNonZero = false;
  for (let i = start; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c >= CODE_0 && c <= CODE_9) {
      if (c !== CODE_0) {
        anyNonZero = true;
        if (dot === -1) {
          if (firstNonZero === -1) firstNonZero = i;
        } else {
          lastNonZeroFrac = i;
        }
      }
    } else if (c === CODE_DOT && dot === -1) {
      dot = i;
    } else {
      return ParseError.Malformed;
    }
  }
  const intEnd = dot === -1 ? length : dot;
  // At least one digit before the point, and at least one after it when there is a point.
  if (intEnd === start || dot === length - 1) return ParseError.Malformed;
  if (!anyNonZero) return ParseError.Zero;
  if (negative) return ParseError.Negative;
  const intDigits = firstNonZero === -1 ? 0 : intEnd - firstNonZero;
  if (intDigits > MAX_INTEGER_DIGITS) return ParseError.TooLarge;
  const fracDigits = lastNonZeroFrac === -1 ? 0 : lastNonZeroFrac - dot;
  if (fracDigits > decimals) return ParseError.TooManyDecimals;
  if (intDigits + decimals <= 15) {
    // Common case: the scaled value has at most 15 digits, so it is built exactly in a double
    // (< 2^53) and converted once, without BigInt string parsing or multiplication.
    let acc = 0;
    for (let i = firstNonZero === -1 ? intEnd : firstNonZero; i < intEnd; i++) {
      acc = acc * 10 + (text.charCodeAt(i) - CODE_0);
    }
    for (let i = dot + 1; i <= lastNonZeroFrac; i++) acc = acc * 10 + (text.charCodeAt(i) - CODE_0);
    return BigInt(acc * POW10_NUMBER[decimals - fracDigits]);
  }
  const intPart = firstNonZero === -1 ? "" : text.slice(firstNonZero, intEnd);
  const fracPart = fracDigits === 0 ? "" : text.slice(dot + 1, lastNonZeroFrac + 1);
  // Leading zeros of the fraction stay (they are significant positions); BigInt ignores the ones
  // that end up in front.
  return BigInt(intPart + fracPart) * pow10(decimals - fracDigits);
}

/**
 * Rewrite JavaScript's exponent notation (`1.5e-7`, `1e+21`) as a plain decimal string
 * (`0.00000015`, `1000000000000000000000`), exactly, digit by digit. Text without an exponent is
 * returned unchanged. Only for well-formed `String(number)` output.
 */
export function expandExponent(text: string): string {
  const e = text.indexOf("e");
  if (e === -1) return text;
  const negative = text.charCodeAt(0) === CODE_MINUS;
  const mantissa = text.slice(negative ? 1 : 0, e);
  const exponent = Number(text.slice(e + 1));
  const dot = mantissa.indexOf(".");
  const digits = dot === -1 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  const point = (dot === -1 ? mantissa.length : dot) + exponent; // position of the point in `digits`
  let plain: string;
  if (point <= 0) plain = `0.${"0".repeat(-point)}${digits}`;
  else if (point >= digits.length) plain = digits + "0".repeat(point - digits.length);
  else plain = `${digits.slice(0, point)}.${digits.slice(point)}`;
  return negative ? `-${plain}` : plain;
}

/**
 * The plain decimal text of `value / 10^scale`: no exponent, trailing zeros trimmed, `"0"` for zero,
 * a leading `-` for negatives (docs/API.md 1, "Money is exact"). The result is also a valid JSON number literal.
 */
export function formatDecimal(value: bigint, scale: number): string {
  const negative = value < 0n;
  const digits = formatDigits((negative ? -value : value).toString(), scale);
  return negative ? `-${digits}` : digits;
}

/**
 * `formatDecimal` of a non-negative integer given as its decimal digits (a bigint's text as the
 * database keeps it), without making the bigint.
 */
export function formatDigits(digits: string, scale: number): string {
  if (scale > 0) {
    if (digits.length <= scale) digits = "0".repeat(scale - digits.length + 1) + digits;
    const intEnd = digits.length - scale;
    let end = digits.length;
    while (end > intEnd && digits.charCodeAt(end - 1) === CODE_0) end--;
    digits =
      end === intEnd ? digits.slice(0, intEnd) : `${digits.slice(0, intEnd)}.${digits.slice(intEnd, end)}`;
  }
  return digits;
}

/** Scaled values below this (in absolute value) have at most 15 significant digits. */
const EXACT_DOUBLE_LIMIT = 10n ** 15n;

/**
 * The JS number whose shortest text (`String(n)`, which is also what JSON.stringify prints) is the
 * exact decimal `formatDecimal(value, scale)`, modulo exponent notation: `String(1e-8)` is `"1e-8"`,
 * a valid JSON number with exactly that value (docs/API.md 1 asks for the exact value, not a layout).
 *
 * Valid whenever the decimal has at most 15 significant digits, which every double represents and
 * prints back unchanged. The config loader bounds prices and amounts to 15 digits (integer digits of
 * the maximum + decimals), so those always take the fast path. Larger values (e.g. summed volumes)
 * are converted through their text and checked; if the double cannot print back the exact decimal,
 * this throws a RangeError instead of ever producing an inexact float.
 */
export function toJsonNumber(value: bigint, scale: number): number {
  if (value < EXACT_DOUBLE_LIMIT && value > -EXACT_DOUBLE_LIMIT && scale <= 22) {
    // Number(value) is exact (|value| < 2^53) and 10^scale is an exact double, so IEEE division
    // yields the double nearest to the exact quotient: the same double as Number(formatDecimal(...)),
    // without building the string.
    return Number(value) / POW10_NUMBER[scale];
  }
  const text = formatDecimal(value, scale);
  const n = Number(text);
  if (expandExponent(String(n)) !== text) {
    throw new RangeError(`toJsonNumber: ${text} has no exact double representation`);
  }
  return n;
}

/**
 * `a × b / d` rounded half-up, exactly. For non-negative `a`, `b` and positive `d` (throws a
 * RangeError otherwise). Used for the average execution price of a market order (docs/API.md 5.1).
 */
export function mulDivRoundHalfUp(a: bigint, b: bigint, d: bigint): bigint {
  if (a < 0n || b < 0n || d <= 0n) throw new RangeError("mulDivRoundHalfUp: needs a, b >= 0 and d > 0");
  const product = a * b;
  const quotient = product / d;
  const remainder = product - quotient * d;
  return remainder * 2n >= d ? quotient + 1n : quotient;
}

const bits = new Float64Array(1);
const bitsAsInt = new BigInt64Array(bits.buffer);

/**
 * The largest integer at most `value` (>= 0) that a double holds exactly: `value` itself below
 * 2^53, otherwise `value` rounded down to the nearest double (Number() rounds to the nearest,
 * which may be above).
 */
export function floorToDouble(value: bigint): bigint {
  const nearest = Number(value);
  if (BigInt(nearest) <= value) return value < 2n ** 53n ? value : BigInt(nearest);
  // Positive doubles order like their bit patterns: one less is the double just below.
  bits[0] = nearest;
  bitsAsInt[0] -= 1n;
  return BigInt(bits[0]);
}

/**
 * The JSON number of an integer `v` at `scale` decimals. IEEE division is correctly rounded, so
 * the result is the double nearest to the exact decimal: the same double that parsing the exact
 * decimal text gives, which prints back as that text (values keep at most 15 significant digits,
 * enforced by the config bounds). This is output formatting, never arithmetic on money.
 */
export function scaled(v: number, scale: number): number {
  return scale === 0 ? v : v / POW10_NUMBER[scale];
}
