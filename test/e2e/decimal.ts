/**
 * Exact decimal arithmetic for expected values in the end-to-end tests: every value is a bigint
 * scaled by 10^18, far more than any pair needs (price × amount has at most 10 decimals here), so
 * sums and products are exact and never touch floating point.
 *
 * Response numbers are JSON numbers; the contract promises that their shortest text is the exact
 * decimal (docs/API.md 1), so `dec(n)` reads a number through `String(n)`.
 */

export const SCALE = 18;
const ONE = 10n ** BigInt(SCALE);

/** Plain decimal text of a JS number (`1e-7` becomes `0.0000001`), exactly as it prints. */
export function numberText(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`not a finite number: ${n}`);
  const text = String(n);
  const e = text.indexOf("e");
  if (e === -1) return text;
  const negative = text.startsWith("-");
  const mantissa = text.slice(negative ? 1 : 0, e);
  const exponent = Number(text.slice(e + 1));
  const dot = mantissa.indexOf(".");
  const digits = dot === -1 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  const point = (dot === -1 ? mantissa.length : dot) + exponent;
  let plain: string;
  if (point <= 0) plain = `0.${"0".repeat(-point)}${digits}`;
  else if (point >= digits.length) plain = digits + "0".repeat(point - digits.length);
  else plain = `${digits.slice(0, point)}.${digits.slice(point)}`;
  return negative ? `-${plain}` : plain;
}

/** The scaled value of a decimal string, a JSON number, or an already scaled bigint. */
export function dec(x: string | number | bigint): bigint {
  if (typeof x === "bigint") return x;
  const text = typeof x === "number" ? numberText(x) : x;
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (m === null) throw new RangeError(`not a plain decimal: ${JSON.stringify(text)}`);
  const frac = m[3] ?? "";
  if (frac.length > SCALE) throw new RangeError(`more than ${SCALE} decimals: ${text}`);
  const value = BigInt(m[2]) * ONE + BigInt(frac.padEnd(SCALE, "0") || "0");
  return m[1] === "-" ? -value : value;
}

/** Decimal text of a scaled value: no exponent, trailing zeros trimmed, "0" for zero (docs/API.md 1). */
export function fmt(v: bigint): string {
  const negative = v < 0n;
  const abs = negative ? -v : v;
  const int = abs / ONE;
  const frac = (abs % ONE).toString().padStart(SCALE, "0").replace(/0+$/, "");
  const text = frac === "" ? int.toString() : `${int}.${frac}`;
  return negative ? `-${text}` : text;
}

/** Exact product of two scaled values; throws if the result needs more than SCALE decimals. */
export function mul(a: bigint, b: bigint): bigint {
  const product = a * b;
  if (product % ONE !== 0n) throw new RangeError(`inexact product ${fmt(a)} × ${fmt(b)}`);
  return product / ONE;
}

export function sum(values: Iterable<bigint>): bigint {
  let total = 0n;
  for (const v of values) total += v;
  return total;
}

/** `a / b` (both scaled, non-negative, b > 0) rounded half-up to `decimals` places, scaled. */
export function divRoundHalfUp(a: bigint, b: bigint, decimals: number): bigint {
  if (a < 0n || b <= 0n) throw new RangeError("divRoundHalfUp: needs a >= 0 and b > 0");
  const unit = 10n ** BigInt(decimals);
  const numerator = a * unit;
  let q = numerator / b;
  if ((numerator % b) * 2n >= b) q += 1n;
  return (q * ONE) / unit;
}

/** Convenience: `fmt(dec(x))`, the canonical text of a number or decimal string. */
export function canon(x: string | number | bigint): string {
  return fmt(dec(x));
}

/** The scaled value of an integer count of 10^-decimals units (ticks, lots). */
export function fromUnits(units: bigint | number, decimals: number): bigint {
  return BigInt(units) * 10n ** BigInt(SCALE - decimals);
}
