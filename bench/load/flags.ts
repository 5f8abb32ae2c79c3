/**
 * bench:load's flags (parsed once, checked, with their defaults) and the constants they set; the
 * flags are listed in run.ts's header.
 */

import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { Workload } from "./common.ts";
import { REPO_ROOT } from "./servers.ts";

export const HERE = dirname(fileURLToPath(import.meta.url));
export const GROUPS = [
  "select",
  "reads",
  "create-closed",
  "create-open",
  "mix",
  "session",
  "fix",
  "floor",
  "profile",
  "ab",
  "replication",
] as const;
export type Group = (typeof GROUPS)[number];

// ---- options -----------------------------------------------------------------------------------------

export const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    rates: { type: "string" },
    conns: { type: "string" },
    procs: { type: "string" },
    users: { type: "string" },
    duration: { type: "string" },
    warmup: { type: "string" },
    client: { type: "string" },
    pacing: { type: "string" },
    "profile-workload": { type: "string" },
    "profile-dir": { type: "string" },
    "profile-rate": { type: "string" },
    "ab-flags": { type: "string" },
    "ab-env": { type: "string" },
    "ab-script": { type: "string" },
    "ab-session": { type: "boolean" },
    "server-flags": { type: "string" },
    "server-log": { type: "string" },
    "replication-closed": { type: "boolean", default: false },
    "replication-conns": { type: "string" },
    "floor-rates": { type: "string" },
    out: { type: "string" },
  },
  allowPositionals: false,
});

export const QUICK = flags.quick === true;
export const ONLY = new Set<Group>(
  flags.only === undefined
    ? GROUPS.filter((g) => g !== "ab" && g !== "replication" && !(QUICK && g === "profile"))
    : (flags.only.split(",").map((s) => s.trim()) as Group[]),
);
for (const g of ONLY)
  if (!GROUPS.includes(g)) throw new Error(`--only: unknown group ${g} (${GROUPS.join(", ")})`);
/** One offered rate of a `--rates`-like flag: requests per second, above 0 and at most 1,000,000. */
export function offeredRate(flag: string, text: string): number {
  const r = Number(text);
  if (!(r > 0 && r <= 1_000_000)) throw new Error(`${flag}: bad rate ${text}`);
  return r;
}
export const RATES: (number | "max")[] = (flags.rates ?? (QUICK ? "1000,5000" : "1000,5000,10000,20000,max"))
  .split(",")
  .map((r) => (r.trim() === "max" ? "max" : offeredRate("--rates", r)));
export const CONNS = Number(flags.conns ?? 64);
/** Node flags for every exchange and the design floor (e.g. `--trace-gc`), before their own. */
export const SERVER_FLAGS = (flags["server-flags"] ?? "").split(" ").filter((f) => f !== "");
/**
 * Group replication: the closed-loop rounds only (no lag, no fan-out), e.g. to profile the leaders
 * and followers with --server-flags="--cpu-prof --cpu-prof-dir=DIR" and --server-log (the log
 * files name each pid's role).
 */
export const REPLICATION_CLOSED = flags["replication-closed"] === true;
/**
 * Group replication: connections of its closed loops, over the load generators. Its rows are the
 * create-order maximum, so the loops hold enough requests in flight to saturate the leader alone:
 * at the suite's 64 (CONNS) it idles about a sixth of the time, waiting on its commits, and a
 * follower's longer answers then cost throughput that the box had to spare (BENCHMARKS.md,
 * "Replication (issue 46)", has the figures by count). Each group's leader funds this many users
 * at least (a connection needs a user of its own).
 */
export const REPLICATION_CONNS = Number(flags["replication-conns"] ?? (QUICK ? CONNS : 512));
/** A folder that receives each server's stdout and stderr, one file per process (`<name>-<pid>.log`). */
export const SERVER_LOG = flags["server-log"];
/**
 * Load generator processes for closed loops. One Node process tops out near 30k requests/s here, far
 * below what uWS serves (wrk: ~89k POST/s), so the default uses two, more on bigger machines.
 */
export const PROCS = Number(flags.procs ?? Math.max(2, Math.min(4, cpus().length - 2)));
/** Open loops use one process per this many offered requests/s (a pacing process spins a core). */
export const OPEN_RATE_PER_PROC = 25_000;
export const USERS = Number(flags.users ?? 128);
export const PACING = (flags.pacing ?? "spin") as "spin" | "timer" | "thread";
/**
 * `session` / `fix`: create-order over trading sessions / FIX, as those groups' closed loops;
 * `session-reports`: sessions as the fix group runs them beside FIX (reports and clientOrderIds).
 */
export const PROFILE_WORKLOAD = (flags["profile-workload"] ?? "create") as
  | Workload
  | "session"
  | "session-reports"
  | "fix";
/** Offered rate of the profiled run (open loop), or null: closed loop (maximum throughput). */
export const PROFILE_RATE = flags["profile-rate"] === undefined ? null : Number(flags["profile-rate"]);
if (PROFILE_RATE !== null && !(PROFILE_RATE > 0)) throw new Error("--profile-rate must be a positive rate");
export const DURATION_MS = Number(flags.duration ?? (QUICK ? 1500 : 6000));
export const WARMUP_MS = Number(flags.warmup ?? (QUICK ? 300 : 1000));
export const SELECT_MS = QUICK ? 800 : 2500;
export const DRAIN_MS = QUICK ? 1500 : 3000;
export const MIX_RATE = 5000;
/**
 * Offered rates of the design floor's open loops: 5,000/s for issue 12's p99 target; 1,000/s and
 * 10,000/s too, so the report can set the exchange's CPU per order beside the floor's at the same
 * offered rates (both servers then run in the same regime: batches and wake-ups per order alike).
 */
export const FLOOR_RATES = (flags["floor-rates"] ?? (QUICK ? "1000,5000" : "1000,5000,10000"))
  .split(",")
  .map((r) => offeredRate("--floor-rates", r));
/** A ceiling and its exchange measurement alternate in this many rounds (the window is split). */
export const ROUNDS = QUICK ? 1 : 3;
export const CANCEL_SHARE = 0.25;
export const STREAM_USERS = 8;
/** Bounded loops: no run sends more than this many requests per process. */
export const MAX_REQUESTS = 5_000_000;
/** A full run writes load.json; a quick or partial one writes beside it, so it never replaces a full result. */
export const OUT =
  flags.out ??
  join(
    REPO_ROOT,
    "bench",
    "results",
    QUICK ? "load-quick.json" : flags.only === undefined ? "load.json" : "load-partial.json",
  );
/** Above this share of unexpected answers a row is invalid. */
export const ERROR_LIMIT = 0.01;
if (
  ![CONNS, PROCS, USERS, DURATION_MS, WARMUP_MS, REPLICATION_CONNS].every((n) => Number.isInteger(n) && n > 0)
)
  throw new Error(
    "--conns, --procs, --users, --duration, --warmup, --replication-conns must be positive integers",
  );
if (flags.client !== undefined && flags.client !== "raw" && flags.client !== "agent")
  throw new Error("--client must be raw or agent");
if (PACING !== "spin" && PACING !== "timer" && PACING !== "thread")
  throw new Error("--pacing must be spin, timer or thread");
if (!["create", "mix", "session", "session-reports", "fix"].includes(PROFILE_WORKLOAD))
  throw new Error("--profile-workload must be create, mix, session, session-reports or fix");
