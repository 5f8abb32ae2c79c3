/**
 * Exact decimal arithmetic for what the page computes from money: the order total (price ×
 * amount), the spread and the 24 h change. Decimal texts become scaled BigInts (`units` × 10^-scale),
 * so nothing is rounded by floating point; the page only formats the results (docs/API.md 5: money
 * travels as exact decimal text).
 */

/** A decimal number: `units` × 10^-`scale`. */
export interface Decimal {
  units: bigint;
  scale: number;
}

const DECIMAL = /^(\d*)(?:\.(\d*))?$/;

/** A non-negative decimal text (`25000`, `0.3`, `.5`, `7.`), or null when it is none. */
export function parseDecimal(text: string): Decimal | null {
  const m = DECIMAL.exec(text.trim());
  if (m === null) return null;
  const int = m[1];
  const frac = m[2] ?? "";
  if (int === "" && frac === "") return null;
  return { units: BigInt(`${int}${frac}` || "0"), scale: frac.length };
}

/** The exact text of `d`, trailing zeros dropped down to `minDecimals` places. */
export function formatDecimal(d: Decimal, minDecimals = 0): string {
  const negative = d.units < 0n;
  const digits = (negative ? -d.units : d.units).toString().padStart(d.scale + 1, "0");
  let int = d.scale === 0 ? digits : digits.slice(0, -d.scale);
  let frac = d.scale === 0 ? "" : digits.slice(-d.scale);
  int = int.replace(/^0+(?=\d)/, "");
  let keep = frac.length;
  while (keep > Math.max(0, minDecimals) && frac[keep - 1] === "0") keep--;
  frac = frac.slice(0, keep).padEnd(Math.max(0, minDecimals), "0");
  return `${negative ? "-" : ""}${int}${frac === "" ? "" : `.${frac}`}`;
}

export function multiply(a: Decimal, b: Decimal): Decimal {
  return { units: a.units * b.units, scale: a.scale + b.scale };
}

/** Both at the larger of their scales. */
function aligned(a: Decimal, b: Decimal): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [a.units * 10n ** BigInt(scale - a.scale), b.units * 10n ** BigInt(scale - b.scale), scale];
}

export function subtract(a: Decimal, b: Decimal): Decimal {
  const [x, y, scale] = aligned(a, b);
  return { units: x - y, scale };
}

/**
 * The change from `from` to `to` in percent with two decimals, rounded half away from zero,
 * signed (`+1.25%`, `-0.40%`, `+0.00%`); null when `from` is 0.
 */
export function percentChange(from: Decimal, to: Decimal): string | null {
  const [x, y] = aligned(from, to);
  if (x === 0n) return null;
  // Hundredths of a percent: (to - from) / from × 10,000.
  const num = (y - x) * 10_000n;
  const abs = num < 0n ? -num : num;
  const rounded = (abs * 2n + x) / (2n * x);
  const text = formatDecimal({ units: rounded, scale: 2 }, 2);
  return `${num < 0n && rounded !== 0n ? "-" : "+"}${text}%`;
}
