/**
 * The server's log (docs/OPERATIONS.md "Logs"): one JSON object per line on stdout, `{"level", "time" (Unix ms),
 * "msg", ...fields}`, written by pino. Levels `error`, `warn`, `info` (default), `debug`.
 *
 * One logger per process: src/main.ts makes it from `--log-level` and installs it with `useLog`
 * before anything else runs; until then (in-process tests, benchmarks) it is silent. Parts that are
 * not wired through boot.ts (the admin calls, the 500 answers) read it through `log()`.
 *
 * Nothing on the order path logs at `info` or above: a line there would cost a write per order.
 * No secret is ever given to the logger (an API token at most as its first 8 characters,
 * `tokenPrefix`); the redaction below is a second line of defence for fields named like secrets.
 */
import { type DestinationStream, type Logger, pino } from "pino";

export type { Logger } from "pino";

export const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Field names that must never carry a value into a log line, at the top level or one level down. */
const SECRET_FIELDS = [
  "secretKey",
  "secret",
  "apiToken",
  "token",
  "adminToken",
  "authorization",
  "signature",
  "password",
];

/** A logger writing JSON lines to `destination` (default: stdout, synchronously, so nothing is lost at exit). */
export function createLog(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      // The level as its name ("info"), not pino's number: what a reader of the line expects.
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.epochTime,
      redact: { paths: [...SECRET_FIELDS, ...SECRET_FIELDS.map((f) => `*.${f}`)], censor: "[redacted]" },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/** Writes nothing: the default until the process entry point installs its logger. */
export const silentLog: Logger = pino({ level: "silent" });

let current: Logger = silentLog;

/** The process's logger. */
export function log(): Logger {
  return current;
}

/** Installs the process's logger (src/main.ts, once at start). */
export function useLog(logger: Logger): void {
  current = logger;
}

/** What of an API token may be logged: its first 8 characters (docs/OPERATIONS.md "Logs"). */
export function tokenPrefix(token: string): string {
  return token.slice(0, 8);
}
