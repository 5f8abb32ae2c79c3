/**
 * Validation of a mass quote (docs/API.md 8.12): `{"pairName", "bids": [[price, amount], ...], "asks":
 * [...]}`, 0 to 20 levels a side, bid prices strictly decreasing, ask prices strictly increasing,
 * each level valid as a limit order of the pair (src/entry/validate.ts), and the best bid below the
 * best ask. A malformed side is one error on `bids` or `asks` whose text names the first bad level
 * (`bids[2]: PRICE_TOO_MANY_DECIMALS at most 2`); nothing here answers or changes state.
 */
import type { ExchangeConfig, PairConfig } from "../config/exchange-config.ts";
import type { QuoteLevel } from "../core/quotes.ts";
import { type ErrorEntry, errorDetail, errorName } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";
import { BUY, MAX_QUOTE_LEVELS, SELL } from "../protocol/pair/engine.ts";
import { expiresAtOf, readPair, unknownFields } from "./fields.ts";
import { parseAmount, parsePrice } from "./validate.ts";

/** A quote body's fields (the REST body; a session's params have no `nonce`). */
export const QUOTE_FIELDS: ReadonlySet<string> = new Set(["pairName", "bids", "asks", "nonce", "expiresAt"]);

export interface ValidQuote {
  errors: ErrorEntry[];
  pair: PairConfig | undefined;
  /** Bids then asks, in book units. */
  levels: QuoteLevel[];
  /** The call's deadline, Unix ms (0: none; docs/API.md 11.2). */
  expiresAt: number;
}

/** Validates a quote body whose fields must be in `allowed`; every failing field is reported. */
export function validateQuote(
  body: Record<string, unknown>,
  config: ExchangeConfig,
  allowed: ReadonlySet<string> = QUOTE_FIELDS,
): ValidQuote {
  const errors: ErrorEntry[] = [];
  const out: ValidQuote = { errors, pair: undefined, levels: [], expiresAt: 0 };
  out.pair = readPair(body.pairName, config, errors);
  const p = out.pair;
  const bids = side(body.bids, "bids", BUY, p, errors);
  const asks = side(body.asks, "asks", SELL, p, errors);
  if (bids !== null && asks !== null) {
    // The best bid must stay below the best ask of the same quote.
    if (bids.length > 0 && asks.length > 0 && bids[0].price >= asks[0].price)
      errors.push([Code.QUOTE_ASKS_INVALID, "asks[0]: at or below the best bid"]);
    else out.levels = bids.concat(asks);
  }
  if (allowed.has("expiresAt")) {
    const at = expiresAtOf(body);
    if (at < 0) errors.push([Code.EXPIRES_AT_INVALID]);
    else out.expiresAt = at;
  }
  for (const e of unknownFields(body, allowed)) errors.push(e);
  return out;
}

/**
 * One side's levels in book units, or null with its error pushed (on `bids` or `asks`). With no
 * pair to read them against, the levels' form is still checked.
 */
function side(
  value: unknown,
  name: "bids" | "asks",
  s: 0 | 1,
  p: PairConfig | undefined,
  errors: ErrorEntry[],
): QuoteLevel[] | null {
  const code = s === BUY ? Code.QUOTE_BIDS_INVALID : Code.QUOTE_ASKS_INVALID;
  if (value === undefined || value === null) {
    errors.push([code, `${name}: required`]);
    return null;
  }
  if (!Array.isArray(value)) {
    errors.push([code, `${name}: not an array`]);
    return null;
  }
  if (value.length > MAX_QUOTE_LEVELS) {
    errors.push([code, `${name}[${MAX_QUOTE_LEVELS}]: more than ${MAX_QUOTE_LEVELS} levels`]);
    return null;
  }
  const out: QuoteLevel[] = [];
  for (let i = 0; i < value.length; i++) {
    const level: unknown = value[i];
    const at = `${name}[${i}]`;
    if (!Array.isArray(level) || level.length !== 2) {
      errors.push([code, `${at}: not a [price, amount] pair`]);
      return null;
    }
    if (p === undefined) continue;
    const bad: ErrorEntry[] = [];
    const price = parsePrice(level[0], p, bad);
    const amount = parseAmount(level[1], p, bad);
    if (bad.length > 0) {
      const [c, extra] = bad[0];
      // The detail of a level is in English, as the rest of this text.
      const detail = extra === undefined ? "" : ` ${errorDetail(c, "en", extra)}`;
      errors.push([code, `${at}: ${errorName(c)}${detail}`]);
      return null;
    }
    if (i > 0) {
      const prev = out[i - 1].price;
      if (s === BUY ? price >= prev : price <= prev) {
        errors.push([code, `${at}: price not strictly ${s === BUY ? "below" : "above"} ${name}[${i - 1}]`]);
        return null;
      }
    }
    out.push({ side: s, price, amount });
  }
  return p === undefined ? null : out;
}
