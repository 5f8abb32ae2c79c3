/**
 * Process settings (flags and environment, CONTRACT 1) and the exchange config file (CONTRACT 1.1).
 * Both are read once at start; every problem is a ConfigError whose message names the bad entry,
 * so the operator can fix it without reading code.
 */

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { parse as parseLossless } from "lossless-json";
import { DEFAULT_CLIENT_ID_FILTER_MB, DEFAULT_CLIENT_ID_WINDOW } from "./core/client-ids.ts";
import { FEE_DECIMALS } from "./core/risk.ts";
import { LOG_LEVELS, type LogLevel } from "./util/log.ts";
import { nearest, unknownOptionOf } from "./util/nearest.ts";
import { formatDecimal, ParseError, parseDecimal, pow10 } from "./util/numbers.ts";

export class ConfigError extends Error {
  override name = "ConfigError";
}

// ---- settings -------------------------------------------------------------------------------------

export type SqliteSynchronous = "FULL" | "NORMAL";

export interface Settings {
  readonly host: string;
  /** 0 asks the OS for a free port (tests). */
  readonly port: number;
  readonly dbPath: string;
  /** Folder of the copies `POST /admin/backup` makes (CONTRACT 14); created on the first backup. */
  readonly backupDir: string;
  readonly configPath: string;
  /** Requests per second per API token and per client address; 0 turns limiting off. */
  readonly rateLimit: number;
  /** Enables `/admin/...` (CONTRACT 1.2); undefined keeps it off. Environment only, never a flag. */
  readonly adminToken: string | undefined;
  readonly synchronous: SqliteSynchronous;
  /** Allow the pure-JS uWebSockets fallback (slow); main.ts prints a loud warning when it is used. */
  readonly allowSlowUws: boolean;
  /** Seconds of silence after which a stream connection is closed; 0 turns it off. */
  readonly idleTimeoutSeconds: number;
  /** Unsent bytes per stream connection above which it is closed with 1008 (CONTRACT 7). */
  readonly maxBackpressureBytes: number;
  /** How pair workers wait for commands (src/pair/pair-client.ts `chooseWaitStrategy`). */
  readonly waitStrategy: WaitStrategyChoice;
  /**
   * Origins allowed to call the REST base from a browser (CONTRACT 10): `Access-Control-Allow-Origin`
   * and preflight answers for these only; `*` allows any. Empty (default): no CORS headers at all.
   */
  readonly corsOrigins: readonly string[];
  /**
   * Client order ids kept in memory after their create committed (src/core/client-ids.ts); older ones
   * are judged by the database when the filter cannot rule them out.
   */
  readonly clientIdWindow: number;
  /** The most memory (MiB) the filter over every client order id ever may take. */
  readonly clientIdFilterMb: number;
  /** Lifetime of a listen key (CONTRACT 10: 60 minutes); not a flag, tests shorten it. */
  readonly listenKeyTtlMs?: number;
  /**
   * TLS (CONTRACT 14): the certificate (PEM, chain allowed) and its private key; both or neither.
   * Checked at start by src/http/tls.ts. Unset: plain http and ws.
   */
  readonly tlsCert?: string;
  readonly tlsKey?: string;
  /** The lowest level written to the log (src/util/log.ts); `info` when unset. */
  readonly logLevel?: LogLevel;
  /** Things worth printing at start that are not errors (e.g. a short admin token). */
  readonly warnings: readonly string[];
}

export const DEFAULT_SETTINGS = {
  host: "127.0.0.1",
  port: 8080,
  dbPath: "data/exchange.db",
  backupDir: "data/backups/",
  configPath: "data/config.json",
  rateLimit: 1000,
  synchronous: "FULL",
  idleTimeoutSeconds: 120,
  maxBackpressureBytes: 1024 * 1024,
  waitStrategy: "auto",
  clientIdWindow: DEFAULT_CLIENT_ID_WINDOW,
  clientIdFilterMb: DEFAULT_CLIENT_ID_FILTER_MB,
} as const;

/** `auto` picks by core count at start; see src/pair/pair-client.ts. */
export type WaitStrategyChoice = "auto" | "blocking" | "busy-spin";

/**
 * The stream's idle timeout: 0 (off) or 8 .. 900 seconds, the range uWebSockets' own idle timeout
 * took (a 4-second wheel of 240 slots; it refused 1 to 7 s). The stream now keeps its own timer
 * (src/stream/hub.ts KeepAlive, for the close frame uWS does not send) and the range stays.
 */
const IDLE_TIMEOUT_MIN = 8;
const IDLE_TIMEOUT_MAX = 900;
const BACKPRESSURE_MAX = 2 ** 31 - 1;
const ADMIN_TOKEN_SHORT = 16;

const FLAG_OPTIONS = {
  host: { type: "string" },
  port: { type: "string" },
  db: { type: "string" },
  "backup-dir": { type: "string" },
  config: { type: "string" },
  "rate-limit": { type: "string" },
  synchronous: { type: "string" },
  "allow-slow-uws": { type: "boolean" },
  "idle-timeout": { type: "string" },
  "max-backpressure": { type: "string" },
  "wait-strategy": { type: "string" },
  "cors-origin": { type: "string" },
  "client-id-window": { type: "string" },
  "client-id-filter-mb": { type: "string" },
  "tls-cert": { type: "string" },
  "tls-key": { type: "string" },
  "log-level": { type: "string" },
} as const;

/**
 * Settings from command-line flags (`argv` without the node and script entries, i.e.
 * `process.argv.slice(2)`) and the environment. A flag wins over its variable, a variable over the
 * default. Both `--port 9000` and `--port=9000` work. An empty environment variable counts as unset.
 *
 * | flag | env | default |
 * |---|---|---|
 * | --host | HOST | 127.0.0.1 |
 * | --port | PORT | 8080 (0..65535) |
 * | --db | DB_PATH | data/exchange.db |
 * | --backup-dir | BACKUP_DIR | data/backups/ |
 * | --config | EXCHANGE_CONFIG | data/config.json |
 * | --rate-limit | RATE_LIMIT | 1000 (0 = off) |
 * | --synchronous | SQLITE_SYNCHRONOUS | FULL (or NORMAL) |
 * | --allow-slow-uws | ALLOW_SLOW_UWS (1/true/yes, 0/false/no) | off |
 * | --idle-timeout | STREAM_IDLE_TIMEOUT (seconds) | 120 (0 = off, else 8..900) |
 * | --max-backpressure | STREAM_MAX_BACKPRESSURE (bytes) | 1048576 |
 * | --wait-strategy | WAIT_STRATEGY | auto (or blocking, busy-spin) |
 * | --cors-origin | CORS_ORIGIN (comma-separated origins, or `*`) | none |
 * | --client-id-window | EXCHANGE_CLIENT_ID_WINDOW (client order ids) | 65536 (0 = none) |
 * | --client-id-filter-mb | EXCHANGE_CLIENT_ID_FILTER_MB (MiB) | 64 (4..4096) |
 * | --tls-cert | TLS_CERT (PEM file) | none: http |
 * | --tls-key | TLS_KEY (PEM file) | none: http |
 * | --log-level | LOG_LEVEL | info (or error, warn, debug) |
 * | (none) | ADMIN_TOKEN | unset: admin interface off |
 */
export function parseSettings(argv: readonly string[], env: NodeJS.ProcessEnv): Settings {
  const flags = parseFlags(argv);
  const envValue = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value === "" ? undefined : value;
  };
  /** The raw text for a setting and where it came from (for messages). */
  const pick = (flag: keyof typeof FLAG_OPTIONS, envName: string): [string, string] | undefined => {
    const fromFlag = flags[flag];
    if (typeof fromFlag === "string") return [fromFlag, `--${flag}`];
    const fromEnv = envValue(envName);
    return fromEnv === undefined ? undefined : [fromEnv, envName];
  };
  const text = (flag: keyof typeof FLAG_OPTIONS, envName: string, fallback: string): string => {
    const raw = pick(flag, envName);
    if (raw === undefined) return fallback;
    if (raw[0].trim() === "") throw new ConfigError(`${raw[1]}: must not be empty`);
    return raw[0];
  };
  const integer = (
    flag: keyof typeof FLAG_OPTIONS,
    envName: string,
    fallback: number,
    min: number,
    max: number,
  ): number => {
    const raw = pick(flag, envName);
    if (raw === undefined) return fallback;
    const [value, source] = raw;
    const n = /^\d{1,16}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
    if (!(n >= min && n <= max)) {
      throw new ConfigError(`${source}: "${value}" is not an integer from ${min} to ${max}`);
    }
    return n;
  };

  const warnings: string[] = [];

  const synchronousRaw = pick("synchronous", "SQLITE_SYNCHRONOUS");
  let synchronous: SqliteSynchronous = DEFAULT_SETTINGS.synchronous;
  if (synchronousRaw !== undefined) {
    const upper = synchronousRaw[0].trim().toUpperCase();
    if (upper !== "FULL" && upper !== "NORMAL") {
      throw new ConfigError(`${synchronousRaw[1]}: "${synchronousRaw[0]}" must be FULL or NORMAL`);
    }
    synchronous = upper;
  }

  let allowSlowUws = flags["allow-slow-uws"] === true;
  if (!allowSlowUws) {
    const raw = envValue("ALLOW_SLOW_UWS");
    if (raw !== undefined) {
      const lower = raw.trim().toLowerCase();
      if (lower === "1" || lower === "true" || lower === "yes") allowSlowUws = true;
      else if (lower !== "0" && lower !== "false" && lower !== "no") {
        throw new ConfigError(`ALLOW_SLOW_UWS: "${raw}" must be 1/true/yes or 0/false/no`);
      }
    }
  }

  const idleTimeoutSeconds = integer(
    "idle-timeout",
    "STREAM_IDLE_TIMEOUT",
    DEFAULT_SETTINGS.idleTimeoutSeconds,
    0,
    IDLE_TIMEOUT_MAX,
  );
  if (idleTimeoutSeconds !== 0 && idleTimeoutSeconds < IDLE_TIMEOUT_MIN) {
    const source = pick("idle-timeout", "STREAM_IDLE_TIMEOUT")![1];
    throw new ConfigError(
      `${source}: ${idleTimeoutSeconds} is not 0 (off) or from ${IDLE_TIMEOUT_MIN} to ${IDLE_TIMEOUT_MAX} seconds`,
    );
  }

  const waitRaw = pick("wait-strategy", "WAIT_STRATEGY");
  let waitStrategy: WaitStrategyChoice = DEFAULT_SETTINGS.waitStrategy;
  if (waitRaw !== undefined) {
    const lower = waitRaw[0].trim().toLowerCase();
    if (lower !== "auto" && lower !== "blocking" && lower !== "busy-spin") {
      throw new ConfigError(`${waitRaw[1]}: "${waitRaw[0]}" must be auto, blocking or busy-spin`);
    }
    waitStrategy = lower;
  }

  const logRaw = pick("log-level", "LOG_LEVEL");
  let logLevel: LogLevel = "info";
  if (logRaw !== undefined) {
    const lower = logRaw[0].trim().toLowerCase();
    const level = LOG_LEVELS.find((l) => l === lower);
    if (level === undefined)
      throw new ConfigError(`${logRaw[1]}: "${logRaw[0]}" must be one of ${LOG_LEVELS.join(", ")}`);
    logLevel = level;
  }

  const tlsCert = pick("tls-cert", "TLS_CERT");
  const tlsKey = pick("tls-key", "TLS_KEY");
  if ((tlsCert === undefined) !== (tlsKey === undefined))
    throw new ConfigError(
      `${(tlsCert ?? tlsKey)![1]}: --tls-cert and --tls-key (TLS_CERT, TLS_KEY) go together: give both or neither`,
    );

  let adminToken = envValue("ADMIN_TOKEN");
  if (adminToken !== undefined) {
    adminToken = adminToken.trim();
    if (!/^[\x21-\x7e]{1,1024}$/.test(adminToken)) {
      throw new ConfigError("ADMIN_TOKEN: must be printable ASCII without spaces, at most 1024 characters");
    }
    if (adminToken.length < ADMIN_TOKEN_SHORT) {
      warnings.push(`ADMIN_TOKEN is shorter than ${ADMIN_TOKEN_SHORT} characters; use a long random token`);
    }
  }

  return {
    host: text("host", "HOST", DEFAULT_SETTINGS.host),
    port: integer("port", "PORT", DEFAULT_SETTINGS.port, 0, 65535),
    dbPath: text("db", "DB_PATH", DEFAULT_SETTINGS.dbPath),
    backupDir: text("backup-dir", "BACKUP_DIR", DEFAULT_SETTINGS.backupDir),
    configPath: text("config", "EXCHANGE_CONFIG", DEFAULT_SETTINGS.configPath),
    rateLimit: integer("rate-limit", "RATE_LIMIT", DEFAULT_SETTINGS.rateLimit, 0, 1_000_000_000),
    adminToken,
    synchronous,
    allowSlowUws,
    waitStrategy,
    idleTimeoutSeconds,
    maxBackpressureBytes: integer(
      "max-backpressure",
      "STREAM_MAX_BACKPRESSURE",
      DEFAULT_SETTINGS.maxBackpressureBytes,
      1,
      BACKPRESSURE_MAX,
    ),
    corsOrigins: corsOrigins(pick("cors-origin", "CORS_ORIGIN")),
    clientIdWindow: integer(
      "client-id-window",
      "EXCHANGE_CLIENT_ID_WINDOW",
      DEFAULT_SETTINGS.clientIdWindow,
      0,
      100_000_000,
    ),
    clientIdFilterMb: integer(
      "client-id-filter-mb",
      "EXCHANGE_CLIENT_ID_FILTER_MB",
      DEFAULT_SETTINGS.clientIdFilterMb,
      4,
      4096,
    ),
    tlsCert: tlsCert === undefined ? undefined : text("tls-cert", "TLS_CERT", ""),
    tlsKey: tlsKey === undefined ? undefined : text("tls-key", "TLS_KEY", ""),
    logLevel,
    warnings,
  };
}

/** `https://app.example.com,http://localhost:5173` or `*`: each an origin as browsers send it. */
function corsOrigins(raw: [string, string] | undefined): string[] {
  if (raw === undefined) return [];
  const [value, source] = raw;
  const out: string[] = [];
  for (const entry of value.split(",")) {
    const origin = entry.trim();
    if (origin === "") continue;
    if (origin !== "*" && !/^[a-z][a-z0-9+.-]*:\/\/[^/?#\s]+$/i.test(origin)) {
      throw new ConfigError(`${source}: "${origin}" is not an origin (scheme://host[:port]) or *`);
    }
    out.push(origin === "*" ? origin : origin.toLowerCase());
  }
  return out;
}

function parseFlags(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options: FLAG_OPTIONS, strict: true, allowPositionals: false })
      .values;
  } catch (error) {
    const flag = unknownOptionOf(error);
    if (flag === undefined) throw new ConfigError(`command line: ${(error as Error).message}`);
    const near = nearest(flag.replace(/^-+/, ""), Object.keys(FLAG_OPTIONS));
    const hint = near === undefined ? "" : `: did you mean --${near}?`;
    throw new ConfigError(`command line: unknown flag ${flag}${hint} (README.md lists the flags)`);
  }
}

// ---- exchange config ------------------------------------------------------------------------------

export interface PairConfig {
  readonly name: string;
  readonly base: string;
  readonly quote: string;
  readonly priceDecimals: number;
  readonly amountDecimals: number;
  /** In lots (10^-amountDecimals of the base). */
  readonly minAmount: bigint;
  readonly maxAmount: bigint;
  /** In ticks (10^-priceDecimals of the quote). */
  readonly maxPrice: bigint;
  /** Position in the config file (CONTRACT 4: lists are in config order). */
  readonly index: number;
  /** Lots × baseLedgerFactor = base ledger units: 10^(scale of base − amountDecimals). */
  readonly baseLedgerFactor: bigint;
  /** Ticks × lots × quoteLedgerFactor = quote ledger units: 10^(scale of quote − priceDecimals − amountDecimals). */
  readonly quoteLedgerFactor: bigint;
  /** Fee rates (CONTRACT 9) in units of 10^-FEE_DECIMALS (`"0.001"` is 1000n); 0n when not set. */
  readonly makerFee: bigint;
  readonly takerFee: bigint;
  /** Decimals the two rates need (`"0.0015"`: 4); 0 when both are 0. Both currencies grow by it. */
  readonly feeDecimals: number;
}

export interface CurrencyConfig {
  readonly name: string;
  /** Ledger scale: balances of this currency are integers in units of 10^-scale. */
  readonly scale: number;
}

export interface UserConfig {
  /** Lowercase UUID. */
  readonly uid: string;
  readonly apiToken: string;
  readonly secretKey: string;
  /** Currency -> amount in ledger units of that currency (zero allowed), in file order. */
  readonly balances: ReadonlyMap<string, bigint>;
}

export interface ExchangeConfig {
  readonly pairs: readonly PairConfig[];
  readonly pairsByName: ReadonlyMap<string, PairConfig>;
  /** Every currency of some pair, in order of first appearance in `pairs`. */
  readonly currencies: ReadonlyMap<string, CurrencyConfig>;
  readonly users: readonly UserConfig[];
}

/**
 * The ledger's bound: 2^127 − 1 ledger units, a signed 128-bit integer. The sum of every account's
 * balance of a currency (deposits − withdrawals) stays at or below it (a deposit that would pass it
 * is refused), so every balance, reservation, fee and total of the ledger fits a signed 128-bit
 * integer, whatever the trades between accounts. At the finest scale a currency can have (8 price
 * and 8 amount decimals, plus 6 fee decimals: 22) that is still 1.7 × 10^16 whole units, so every
 * currency holds at least MIN_LEDGER_CAPACITY whole units. Balances and transfers are stored as
 * decimal text (migration 001), which SQLite keeps whatever their size.
 */
export const MAX_LEDGER_VALUE = 2n ** 127n - 1n;
/** Whole units of every currency the ledger holds at any scale a config can give it (10^12). */
export const MIN_LEDGER_CAPACITY = 10n ** 12n;
/**
 * Prices in ticks and amounts in lots stay below 10^15: at most 15 significant digits, so every one
 * of them is an exact JS number (< 2^53, as the matching worker needs) and prints back exactly
 * (numbers.ts `toJsonNumber`).
 */
export const MAX_EXACT_UNITS = 10n ** 15n;
export const MAX_DECIMALS = 8;
/** The fee account (CONTRACT 9): a user with no API key that receives every fee. */
export const FEE_ACCOUNT_UID = "00000000-0000-0000-0000-000000000000";
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
  "makerFee",
  "takerFee",
]);
const USER_KEYS = new Set(["uid", "apiToken", "secretKey", "balances"]);

/**
 * The ledger scale of a currency: the largest `amountDecimals` of the pairs where it is the base
 * and `priceDecimals + amountDecimals` of the pairs where it is the quote, so that no amount and no
 * `price × amount` of any pair is ever rounded in the ledger (CONTRACT 2.1), plus the largest
 * `feeDecimals` of the pairs that use it, so that every fee (amount × rate) is exact too
 * (CONTRACT 9). 0 for an unknown one.
 */
export function ledgerScale(
  pairs: ReadonlyArray<
    Pick<PairConfig, "base" | "quote" | "priceDecimals" | "amountDecimals"> & { feeDecimals?: number }
  >,
  currency: string,
): number {
  let scale = 0;
  let fee = 0;
  for (const pair of pairs) {
    if (pair.base === currency) scale = Math.max(scale, pair.amountDecimals);
    if (pair.quote === currency) scale = Math.max(scale, pair.priceDecimals + pair.amountDecimals);
    if (pair.base === currency || pair.quote === currency) fee = Math.max(fee, pair.feeDecimals ?? 0);
  }
  return scale + fee;
}

/** Decimals a rate in units of 10^-FEE_DECIMALS needs (1000n, i.e. 0.001: 3; 0n: 0). */
export function rateDecimals(rate: bigint): number {
  if (rate === 0n) return 0;
  let d = FEE_DECIMALS;
  while (rate % 10n === 0n) {
    rate /= 10n;
    d--;
  }
  return d;
}

/** Read and validate the config file (CONTRACT 1.1). Throws ConfigError naming the bad entry. */
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
