/**
 * The exchange config file (README.md, "Running it"; `data/config.json`): its pairs, with their
 * decimals, bounds and fee rates, and its optional users. Read and validated once at start; every
 * problem is a ConfigError whose message names the bad entry, so the operator can fix it without
 * reading code.
 */

import { readFileSync } from "node:fs";
import { parse as parseLossless } from "lossless-json";
import { FEE_DECIMALS } from "../core/risk.ts";
import { formatDecimal, ParseError, parseDecimal, pow10 } from "../util/numbers.ts";
import { ConfigError } from "./config-error.ts";
import type { CurrencyConfig, ExchangeConfig, PairConfig, UserConfig } from "./exchange-config.ts";
import { FEE_ACCOUNT_UID, ledgerScale, MAX_LEDGER_VALUE, rateDecimals } from "./ledger-bounds.ts";

/**
 * Prices in ticks and amounts in lots stay below 10^15: at most 15 significant digits, so every one
 * of them is an exact JS number (< 2^53, as the matching worker needs) and prints back exactly
 * (numbers.ts `toJsonNumber`).
 */
export const MAX_EXACT_UNITS = 10n ** 15n;
export const MAX_DECIMALS = 8;
/** The largest fee rate, 0.1, in units of 10^-FEE_DECIMALS. */
export const MAX_FEE = 100_000n;

const PAIR_NAME = /^[a-z0-9]+_[a-z0-9]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PRINTABLE_KEY = /^[\x20-\x7e]{8,128}$/;

const TOP_KEYS = new Set(["pairs", "users"]);
const PAIR_KEYS = new Set([
  "name",
  "priceDecimals",
  "amountDecimals",
  "minAmount",
  "maxAmount",
  "maxPrice",
  "minNotional",
  "makerFee",
  "takerFee",
]);
const USER_KEYS = new Set(["uid", "apiToken", "secretKey", "balances"]);

/** Read and validate the config file. Throws ConfigError naming the bad entry. */
export function loadConfig(path: string): ExchangeConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(`config ${path}: cannot read: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`config ${path}: not valid JSON ${jsonSyntaxError(text, error as Error)}`);
  }
  return validateConfig(raw, path);
}

/**
 * Where and why `text` is not JSON: `at line 3, column 13: <reason>`. Node 20's JSON.parse names a
 * position for some faults only, so the text is read again by lossless-json, which names one for
 * every fault.
 */
function jsonSyntaxError(text: string, parseError: Error): string {
  let reason = parseError.message;
  let position: number | undefined;
  try {
    parseLossless(text);
  } catch (error) {
    const m = /^(.*) at position (\d+)$/s.exec((error as Error).message);
    if (m !== null) [reason, position] = [m[1], Number(m[2])];
  }
  if (position === undefined) {
    const m = /^(.*) in JSON at position (\d+)/s.exec(parseError.message);
    if (m === null) return `: ${reason}`;
    [reason, position] = [m[1], Number(m[2])];
  }
  const before = text.slice(0, position).split("\n");
  return `at line ${before.length}, column ${before[before.length - 1].length + 1}: ${reason}`;
}

/** Validate an already parsed config; `source` prefixes every message (usually the file path). */
export function validateConfig(raw: unknown, source = "<inline>"): ExchangeConfig {
  const fail = (where: string, message: string): never => {
    throw new ConfigError(`config ${source}: ${where}: ${message}`);
  };
  if (!isPlainObject(raw))
    return fail("top level", "must be a JSON object with `pairs` (and optional `users`)");
  checkKeys(raw, TOP_KEYS, "top level", fail);

  // Pairs, first pass: names and numbers in their own units.
  if (!Array.isArray(raw.pairs) || raw.pairs.length === 0) return fail("pairs", "must be a non-empty array");
  const drafts: Omit<PairConfig, "baseLedgerFactor" | "quoteLedgerFactor">[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of (raw.pairs as unknown[]).entries()) {
    let where = `pairs[${index}]`;
    if (!isPlainObject(entry)) return fail(where, "must be an object");
    const name = entry.name;
    if (typeof name !== "string" || !PAIR_NAME.test(name)) {
      return fail(where, `name must match ${PAIR_NAME.source} (lowercase <base>_<quote>)`);
    }
    where = `pairs[${index}] (${name})`;
    checkKeys(entry, PAIR_KEYS, where, fail);
    if (seen.has(name)) return fail(where, "duplicate pair name");
    seen.add(name);
    const [base, quote] = name.split("_");
    if (base === quote) return fail(where, "base and quote currency must differ");
    const decimals = (key: "priceDecimals" | "amountDecimals"): number => {
      const value = entry[key];
      if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > MAX_DECIMALS) {
        return fail(where, `${key} must be an integer from 0 to ${MAX_DECIMALS}`);
      }
      return value as number;
    };
    const priceDecimals = decimals("priceDecimals");
    const amountDecimals = decimals("amountDecimals");
    const positive = (key: "minAmount" | "maxAmount" | "maxPrice", scale: number): bigint => {
      const value = entry[key];
      if (typeof value !== "string") return fail(where, `${key} must be a decimal string such as "0.001"`);
      const parsed = parseDecimal(value, scale);
      if (typeof parsed !== "bigint") {
        return fail(where, `${key} "${value}" ${describeParseError(parsed, scale)}`);
      }
      return parsed;
    };
    const minAmount = positive("minAmount", amountDecimals);
    const maxAmount = positive("maxAmount", amountDecimals);
    const maxPrice = positive("maxPrice", priceDecimals);
    const fee = (key: "makerFee" | "takerFee"): bigint => {
      const value = entry[key];
      if (value === undefined) return 0n;
      if (typeof value !== "string") return fail(where, `${key} must be a decimal string such as "0.001"`);
      const parsed = parseDecimal(value, FEE_DECIMALS);
      if (parsed === ParseError.Zero) return 0n;
      if (typeof parsed !== "bigint") {
        return fail(where, `${key} "${value}" ${describeParseError(parsed, FEE_DECIMALS)}`);
      }
      if (parsed > MAX_FEE) return fail(where, `${key} "${value}" must be from 0 to 0.1`);
      return parsed;
    };
    // docs/API.md 20.5: a quote amount, exact at the scale of price × amount; "0" or absent: none.
    let minNotional = 0n;
    if (entry.minNotional !== undefined) {
      const value = entry.minNotional;
      const scale = priceDecimals + amountDecimals;
      if (typeof value !== "string") return fail(where, 'minNotional must be a decimal string such as "10"');
      const parsed = parseDecimal(value, scale);
      if (typeof parsed === "bigint") minNotional = parsed;
      else if (parsed !== ParseError.Zero) {
        return fail(where, `minNotional "${value}" ${describeParseError(parsed, scale)}`);
      }
    }
    const makerFee = fee("makerFee");
    const takerFee = fee("takerFee");
    const feeDecimals = Math.max(rateDecimals(makerFee), rateDecimals(takerFee));
    if (minAmount > maxAmount) return fail(where, "minAmount must not be greater than maxAmount");
    if (maxPrice >= MAX_EXACT_UNITS) {
      return fail(
        where,
        `maxPrice has ${digitsBeforePoint(maxPrice, priceDecimals)} integer digits and priceDecimals is ${priceDecimals}; ` +
          "together they must not exceed 15 so that every price is exact",
      );
    }
    if (maxAmount >= MAX_EXACT_UNITS) {
      return fail(
        where,
        `maxAmount has ${digitsBeforePoint(maxAmount, amountDecimals)} integer digits and amountDecimals is ${amountDecimals}; ` +
          "together they must not exceed 15 so that every amount is exact",
      );
    }
    drafts.push({
      name,
      base,
      quote,
      priceDecimals,
      amountDecimals,
      minAmount,
      maxAmount,
      maxPrice,
      minNotional,
      index,
      makerFee,
      takerFee,
      feeDecimals,
    });
  }

  // Currencies and their ledger scales.
  const currencies = new Map<string, CurrencyConfig>();
  for (const pair of drafts) {
    for (const name of [pair.base, pair.quote]) {
      if (!currencies.has(name)) currencies.set(name, { name, scale: ledgerScale(drafts, name) });
    }
  }
  const pairs: PairConfig[] = drafts.map((pair) => {
    const baseScale = currencies.get(pair.base)!.scale;
    const quoteScale = currencies.get(pair.quote)!.scale;
    const resolved: PairConfig = {
      ...pair,
      baseLedgerFactor: pow10(baseScale - pair.amountDecimals),
      quoteLedgerFactor: pow10(quoteScale - pair.priceDecimals - pair.amountDecimals),
    };
    // An order holds at most maxAmount (sell) or maxPrice × maxAmount (buy) in ledger units.
    if (pair.maxAmount * resolved.baseLedgerFactor > MAX_LEDGER_VALUE) {
      fail(
        `pairs[${pair.index}] (${pair.name})`,
        `maxAmount does not fit a 128-bit ledger value at the ${pair.base} scale of ${baseScale} decimals`,
      );
    }
    if (pair.maxPrice * pair.maxAmount * resolved.quoteLedgerFactor > MAX_LEDGER_VALUE) {
      fail(
        `pairs[${pair.index}] (${pair.name})`,
        `maxPrice × maxAmount does not fit a 128-bit ledger value at the ${pair.quote} scale of ${quoteScale} decimals`,
      );
    }
    return resolved;
  });
  const pairsByName = new Map(pairs.map((pair) => [pair.name, pair]));

  // Users.
  const users: UserConfig[] = [];
  // The config users' balances per currency: their sum is bounded like the ledger's total.
  const credited = new Map<string, bigint>();
  if (raw.users !== undefined) {
    if (!Array.isArray(raw.users)) return fail("users", "must be an array");
    const uids = new Set<string>();
    const tokens = new Set<string>();
    for (const [index, entry] of (raw.users as unknown[]).entries()) {
      let where = `users[${index}]`;
      if (!isPlainObject(entry)) return fail(where, "must be an object");
      if (typeof entry.uid !== "string" || !UUID.test(entry.uid)) {
        return fail(where, "uid must be a UUID such as 0b7e4c1e-6a51-4c0e-9b0a-6f3f2d1c9a10");
      }
      const uid = entry.uid.toLowerCase();
      where = `users[${index}] (${uid})`;
      checkKeys(entry, USER_KEYS, where, fail);
      if (uid === FEE_ACCOUNT_UID) return fail(where, "this uid is the fee account, which cannot log in");
      if (uids.has(uid)) return fail(where, "duplicate uid");
      uids.add(uid);
      const { apiToken, secretKey } = entry;
      if (typeof apiToken !== "string" || !PRINTABLE_KEY.test(apiToken)) {
        return fail(where, "apiToken must be printable ASCII, 8 to 128 characters");
      }
      // An Authorization header is trimmed and may carry a `Bearer ` prefix (auth.ts), so a token
      // that starts or ends with a space or starts with "Bearer " could never be presented intact.
      if (apiToken.trim() !== apiToken || /^bearer /i.test(apiToken)) {
        return fail(where, 'apiToken must not start or end with a space nor start with "Bearer "');
      }
      if (tokens.has(apiToken)) return fail(where, "apiToken is already used by another user");
      tokens.add(apiToken);
      if (typeof secretKey !== "string" || !PRINTABLE_KEY.test(secretKey)) {
        return fail(where, "secretKey must be printable ASCII, 8 to 128 characters");
      }
      const balances = new Map<string, bigint>();
      if (entry.balances !== undefined) {
        if (!isPlainObject(entry.balances))
          return fail(where, "balances must be an object {currency: amount}");
        for (const [currency, value] of Object.entries(entry.balances)) {
          const info = currencies.get(currency);
          if (info === undefined) {
            return fail(
              where,
              `balances: unknown currency "${currency}" (configured: ${[...currencies.keys()].join(", ")})`,
            );
          }
          if (typeof value !== "string") return fail(where, `balances.${currency} must be a decimal string`);
          const parsed = parseDecimal(value, info.scale);
          let amount: bigint;
          if (typeof parsed === "bigint") amount = parsed;
          else if (parsed === ParseError.Zero) amount = 0n;
          else
            return fail(where, `balances.${currency} "${value}" ${describeParseError(parsed, info.scale)}`);
          const total = (credited.get(currency) ?? 0n) + amount;
          if (total > MAX_LEDGER_VALUE) {
            return fail(
              where,
              `balances.${currency} is too large: the config users' balances of ${currency} may sum to at most ${formatDecimal(MAX_LEDGER_VALUE, info.scale)}`,
            );
          }
          credited.set(currency, total);
          balances.set(currency, amount);
        }
      }
      users.push({ uid, apiToken, secretKey, balances });
    }
  }

  return { pairs, pairsByName, currencies, users };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Unknown keys are refused: a typo such as `amountDecimal` must not silently fall back to nothing. */
function checkKeys(
  entry: Record<string, unknown>,
  allowed: ReadonlySet<string>,
  where: string,
  fail: (where: string, message: string) => never,
): void {
  for (const key of Object.keys(entry)) {
    if (!allowed.has(key)) fail(where, `unknown key "${key}" (allowed: ${[...allowed].join(", ")})`);
  }
}

function describeParseError(error: ParseError, decimals: number): string {
  switch (error) {
    case ParseError.NotNumber:
    case ParseError.Malformed:
      return 'is not a plain decimal string such as "10" or "0.001"';
    case ParseError.Zero:
      return "must be greater than zero";
    case ParseError.Negative:
      return "must not be negative";
    case ParseError.TooManyDecimals:
      return `has more than ${decimals} decimals`;
    case ParseError.TooLarge:
      return "is too large";
  }
}

function digitsBeforePoint(value: bigint, decimals: number): number {
  const integer = value / pow10(decimals);
  return integer === 0n ? 0 : integer.toString().length;
}
