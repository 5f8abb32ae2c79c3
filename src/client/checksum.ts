/**
 * The book checksum of docs/API.md 12.5, as a client computes it from its local book: CRC-32 (IEEE
 * 802.3, the polynomial zlib uses) of `asks|bids`, the best CHECKSUM_LEVELS asks ascending and the
 * best CHECKSUM_LEVELS bids descending, each level `price:amount` in the API's canonical decimal
 * text, joined by `,`.
 *
 * No Node and no DOM: the client library (local-book.ts, book.ts), the web page and the server's
 * market data share one table-driven CRC-32 (src/util/crc32.ts).
 *
 * The local book holds prices and amounts as the JSON numbers the server sent. A JSON number of at
 * most 15 significant digits parses to the double whose shortest round-trip text (`String`) is
 * those digits again, so `decimalText` gives back the server's text; it only expands the exponent
 * JavaScript writes below 1e-6 (`1e-7` → `0.0000001`). Sums (the L2 levels an L3 book derives) are
 * added exactly as scaled bigints, never as floats.
 */

import { crc32 } from "../util/crc32.ts";

export { crc32 };

/** Levels of each side the checksum covers. */
export const CHECKSUM_LEVELS = 25;

/**
 * The canonical decimal text of a JSON number as the API writes it (docs/API.md 1, 12.5): no
 * exponent, no trailing zeros, no trailing point. `decimalText(1e-7)` is `"0.0000001"`.
 */
export function decimalText(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`decimalText: ${value} is not finite`);
  if (value === 0) return "0"; // also -0
  const s = String(value);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (m === null) return s;
  const digits = m[2] + (m[3] ?? "");
  const point = 1 + Number(m[4]); // digits before the decimal point
  let text: string;
  if (point <= 0) text = `0.${"0".repeat(-point)}${digits}`;
  else if (point >= digits.length) text = digits + "0".repeat(point - digits.length);
  else text = `${digits.slice(0, point)}.${digits.slice(point)}`;
  return m[1] + text;
}

/** A level as `[price, amount]`, best first (the local books' `levels()` form). */
export type LevelPair = readonly [number, number];

/** The text docs/API.md 12.5 takes the CRC of: `price:amount,...|price:amount,...`. */
export function checksumText(asks: readonly LevelPair[], bids: readonly LevelPair[]): string {
  const side = (levels: readonly LevelPair[]) => {
    const parts: string[] = [];
    const n = Math.min(levels.length, CHECKSUM_LEVELS);
    for (let i = 0; i < n; i++) parts.push(`${decimalText(levels[i][0])}:${decimalText(levels[i][1])}`);
    return parts.join(",");
  };
  return `${side(asks)}|${side(bids)}`;
}

/**
 * The checksum of a book: `asks` ascending and `bids` descending (best first), the whole book or at
 * least its best CHECKSUM_LEVELS levels a side.
 */
export function bookChecksum(asks: readonly LevelPair[], bids: readonly LevelPair[]): number {
  return crc32(checksumText(asks, bids));
}

/** Adds decimal numbers exactly (as scaled bigints); the result is the number of the exact sum's text. */
export function sumExact(values: readonly number[]): number {
  if (values.length === 1) return values[0];
  let scale = 0;
  const parts: [bigint, number][] = [];
  for (const v of values) {
    const text = decimalText(v);
    const dot = text.indexOf(".");
    const decimals = dot === -1 ? 0 : text.length - dot - 1;
    parts.push([BigInt(dot === -1 ? text : text.slice(0, dot) + text.slice(dot + 1)), decimals]);
    if (decimals > scale) scale = decimals;
  }
  let total = 0n;
  for (const [digits, decimals] of parts) total += digits * 10n ** BigInt(scale - decimals);
  const negative = total < 0n;
  const abs = (negative ? -total : total).toString().padStart(scale + 1, "0");
  const text = scale === 0 ? abs : `${abs.slice(0, -scale)}.${abs.slice(-scale)}`;
  return Number(negative ? `-${text}` : text);
}
