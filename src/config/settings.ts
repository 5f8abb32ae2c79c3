/**
 * Process settings from command-line flags and the environment (README.md, "Running it", lists
 * them), read once at start. Every problem is a ConfigError whose message names the flag or
 * variable and the value, so the operator can fix it without reading code.
 */

import { parseArgs } from "node:util";
import { DEFAULT_CLIENT_ID_FILTER_MB, DEFAULT_CLIENT_ID_WINDOW } from "../core/client-ids.ts";
import { LOG_LEVELS, type LogLevel } from "../util/log.ts";
import { nearest, unknownOptionOf } from "../util/nearest.ts";
import { ConfigError } from "./config-error.ts";

export type SqliteSynchronous = "FULL" | "NORMAL";

export interface Settings {
  readonly host: string;
  /** 0 asks the OS for a free port (tests). */
  readonly port: number;
  readonly dbPath: string;
  /** Folder of the copies `POST /admin/backup` makes (docs/OPERATIONS.md, "Backup and restore"); created on the first backup. */
  readonly backupDir: string;
  readonly configPath: string;
  /** Requests per second per API token and per client address; 0 turns limiting off. */
  readonly rateLimit: number;
  /** Enables `/admin/...` (docs/API.md 11); undefined keeps it off. Environment only, never a flag. */
  readonly adminToken: string | undefined;
  readonly synchronous: SqliteSynchronous;
  /** Allow the pure-JS uWebSockets fallback (slow); main.ts prints a loud warning when it is used. */
  readonly allowSlowUws: boolean;
  /** Seconds of silence after which a stream connection is closed; 0 turns it off. */
  readonly idleTimeoutSeconds: number;
  /** Unsent bytes per stream connection above which it is closed with 1008 (docs/API.md 12.2). */
  readonly maxBackpressureBytes: number;
  /** How pair workers wait for commands (src/pair/pair-client.ts `chooseWaitStrategy`). */
  readonly waitStrategy: WaitStrategyChoice;
  /**
   * Origins allowed to call the REST base from a browser (docs/API.md 10): `Access-Control-Allow-Origin`
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
  /** Lifetime of a listen key (docs/API.md 10: 60 minutes); not a flag, tests shorten it. */
  readonly listenKeyTtlMs?: number;
  /**
   * TLS (docs/OPERATIONS.md, "TLS"): the certificate (PEM, chain allowed) and its private key; both or neither.
   * Checked at start by src/http/tls.ts. Unset: plain http and ws.
   */
  readonly tlsCert?: string;
  readonly tlsKey?: string;
  /** The FIX gateway's port (docs/API.md 17) on `host`; undefined: no FIX listener, 0: any free port. */
  readonly fixPort?: number;
  /** The server's FIX CompID (docs/API.md 17). */
  readonly fixCompId: string;
  /**
   * The replication listener's port on `host` (docs/OPERATIONS.md, "A second box: follower");
   * undefined: off, 0: any free port.
   */
  readonly replicationPort?: number;
  /**
   * `sync`: an answer, report or stream message leaves only once a follower has its change durable
   * too, or the leader goes on alone (docs/OPERATIONS.md, "A second box: follower").
   */
  readonly replication: "async" | "sync";
  /**
   * Journal keys a leader keeps for followers that were away (docs/OPERATIONS.md, "A second box:
   * follower"); one further behind takes a new copy.
   */
  readonly replicationKeep: number;
  /** The leader this server follows, `host:port`; undefined: it is a leader (or alone). */
  readonly follow?: { host: string; port: number; tls: boolean };
  /**
   * The token followers present to the replication port (environment only, at least 16 characters);
   * unset: the port refuses every follower, and `--follow` cannot start.
   */
  readonly replicationToken?: string;
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
  fixCompId: "EXCHANGE",
  replication: "async" as "async" | "sync",
  replicationKeep: 50_000,
} as const;

/** `auto` picks by core count at start; see src/pair/pair-client.ts. */
export type WaitStrategyChoice = "auto" | "blocking" | "busy-spin";

/**
 * The stream's idle timeout: 0 (off) or 8 .. 900 seconds, the range uWebSockets' own idle timeout
 * took (a 4-second wheel of 240 slots; it refused 1 to 7 s). The stream now keeps its own timer
 * (src/stream/keep-alive.ts, for the close frame uWS does not send) and the range stays.
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
  "fix-port": { type: "string" },
  "fix-comp-id": { type: "string" },
  "replication-port": { type: "string" },
  replication: { type: "string" },
  "replication-keep": { type: "string" },
  follow: { type: "string" },
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
 * | --fix-port | FIX_PORT | none: no FIX gateway (0..65535, 0 = any free port) |
 * | --fix-comp-id | FIX_COMP_ID | EXCHANGE |
 * | --replication-port | REPLICATION_PORT | none: no replication listener (0..65535, 0 = any free port) |
 * | --replication | REPLICATION | async (or sync) |
 * | --replication-keep | REPLICATION_KEEP | 50000 journal keys (1..100000000) |
 * | --follow | FOLLOW (host:port, tls://host:port for a TLS leader) | none: not a follower |
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

  const fixPortRaw = pick("fix-port", "FIX_PORT");
  const fixCompId = text("fix-comp-id", "FIX_COMP_ID", DEFAULT_SETTINGS.fixCompId);
  // A CompID is a FIX String: no SOH, no `=` trouble, printable ASCII.
  if (!/^[\x21-\x7e]{1,64}$/.test(fixCompId))
    throw new ConfigError(
      `${pick("fix-comp-id", "FIX_COMP_ID")![1]}: "${fixCompId}" must be 1 to 64 printable ASCII characters without spaces`,
    );

  const replicationPortRaw = pick("replication-port", "REPLICATION_PORT");
  const replication = text("replication", "REPLICATION", DEFAULT_SETTINGS.replication);
  if (replication !== "async" && replication !== "sync")
    throw new ConfigError(
      `${pick("replication", "REPLICATION")![1]}: "${replication}" is not a replication mode: async or sync`,
    );
  const replicationToken = envValue("REPLICATION_TOKEN");
  if (replicationToken !== undefined && !/^[\x21-\x7e]{16,1024}$/.test(replicationToken))
    throw new ConfigError("REPLICATION_TOKEN: must be 16 to 1024 printable ASCII characters without spaces");
  const followRaw = pick("follow", "FOLLOW");
  let follow: { host: string; port: number; tls: boolean } | undefined;
  if (followRaw !== undefined) {
    const [value, source] = followRaw;
    const m = /^(?:tls:\/\/)?(.+):(\d{1,5})$/.exec(value.trim());
    const port = m === null ? -1 : Number(m[2]);
    if (m === null || port < 1 || port > 65535)
      throw new ConfigError(`${source}: "${value}" is not HOST:PORT (the leader's replication port)`);
    if (replicationToken === undefined)
      throw new ConfigError(`${source}: a follower needs REPLICATION_TOKEN (the leader's, environment only)`);
    follow = { host: m[1].replace(/^\[(.*)\]$/, "$1"), port, tls: value.trim().startsWith("tls://") };
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
    fixPort: fixPortRaw === undefined ? undefined : integer("fix-port", "FIX_PORT", 0, 0, 65535),
    fixCompId,
    replicationPort:
      replicationPortRaw === undefined
        ? undefined
        : integer("replication-port", "REPLICATION_PORT", 0, 0, 65535),
    replication,
    replicationKeep: integer(
      "replication-keep",
      "REPLICATION_KEEP",
      DEFAULT_SETTINGS.replicationKeep,
      1,
      100_000_000,
    ),
    follow,
    replicationToken,
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
