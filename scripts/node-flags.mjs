// The Node flags the server runs with, chosen for the machine (scripts/start.mjs, which `npm start`
// and `npm run start:prod` run, and bench:load, which starts its servers the same way).
//
// V8's background pool: Node gives V8 four platform threads whatever the machine (concurrent and
// parallel garbage collection, concurrent compilation). On a machine of one or two cores those four
// compete with the main thread, the writer and the pair workers for the same cores; one thread does
// the same background work with less contention: server CPU per create-order -0.7% to -6.6% (about
// -3% typically) and 2-6% more orders per second, in four A/B runs on 2 vCPUs (BENCHMARKS.md,
// "Changes kept"). On more cores Node's default stays, so the collector keeps its parallel
// helpers and the main thread's pauses stay short.
//
// EXCHANGE_V8_POOL_SIZE overrides the choice: a number of threads, or "default" for Node's own.
//
// The main thread's old generation starts at OLD_SPACE_MB (`--initial-old-space-size`; less on a
// machine with less than 8 GiB: a sixteenth of its memory). V8 otherwise sets the next major
// collection a little above what survived the last one, so with about 30 MB live the main thread
// marks its whole heap every few MB promoted (resting orders, in-flight commands): with the larger
// floor it does so about five times less often. Measured: server CPU per create-order -10%,
// orders/s +8% (BENCHMARKS.md, "Changes kept"). The flag is process-wide; src/util/threads.ts resets it
// before the first worker starts, so worker isolates keep V8's defaults.
//
// EXCHANGE_OLD_SPACE_MB overrides the choice: megabytes, or "default" for V8's own.
//
// Allocation-site pretenuring is off (`--no-allocation-site-pretenuring`): V8 otherwise starts
// allocating the objects of a site straight in the old generation once most of them survived a
// scavenge, a choice made in one phase of the load and kept in the next. After a run of public
// GETs the order path's short-lived objects were pretenured, and the old generation filled with
// garbage only a major collection frees: server CPU per create-order 34.7 vs 36.9 and 35.1 vs
// 36.1 µs after a GET run, 32.7 vs 33.2 µs on a fresh server (BENCHMARKS.md, "Changes kept").
// EXCHANGE_PRETENURING=default gives V8 its own choice back.
//
// On one or two cores TurboFan inlines at most INLINING_BUDGET bytes of bytecode into a function
// (`--max-inlined-bytecode-size-cumulative`, V8's default 920): the request and commit handlers
// inline the whole order path, and each of their compilations took 50-70 ms of the background
// thread, again after every phase change (the order path recompiled after a run of GETs). With
// half the budget the compilations after the order path starts take 22% less (622 vs 799 ms), and
// the optimized code is no slower: server CPU per create-order -4% and -4.5%, orders/s +1.5% and
// +3.2% in two A/B runs (BENCHMARKS.md, "Changes kept"). It applies to every isolate (the workers
// gain too). On more cores spare cores absorb the compilations and V8's default stays.
// EXCHANGE_INLINING_BUDGET overrides the choice: bytes, or "default" for V8's own.
import { availableParallelism, totalmem } from "node:os";

/** The main thread's initial old generation, MB, on a machine of 8 GiB or more. */
export const OLD_SPACE_MB = 512;

/** TurboFan's cumulative inlining budget (bytes of bytecode) on a machine of one or two cores. */
export const INLINING_BUDGET = 460;

/** The cumulative inlining budget for a machine of `cores` cores, or null for V8's default. */
export function inliningBudgetFor(cores) {
  return cores <= 2 ? INLINING_BUDGET : null;
}

/** Threads of V8's background pool for a machine of `cores` cores, or null for Node's default. */
export function v8PoolSizeFor(cores) {
  return cores <= 2 ? 1 : null;
}

/** The main thread's initial old generation (MB) on a machine of `bytes` of memory, or null for V8's default. */
export function oldSpaceMbFor(bytes) {
  const mb = Math.min(OLD_SPACE_MB, Math.floor(bytes / 1048576 / 16));
  return mb >= 64 ? mb : null;
}

/**
 * `env[name]` as a whole number in [min, max], "default" (null), or `chosen` when unset; throws
 * on anything else.
 */
function fromEnv(env, name, chosen, min, max, unit) {
  const override = env[name];
  if (override === undefined || override === "") return chosen;
  if (override === "default") return null;
  const n = Number(override);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`${name} must be a whole number of ${unit} or "default", not ${override}`);
  return n;
}

/**
 * The flags to give `node` before the server's entry: `--v8-pool-size=N` and
 * `--initial-old-space-size=MB` and `--max-inlined-bytecode-size-cumulative=BYTES` when the machine
 * (or EXCHANGE_V8_POOL_SIZE, EXCHANGE_OLD_SPACE_MB, EXCHANGE_INLINING_BUDGET) calls for them, and
 * `--no-allocation-site-pretenuring` unless EXCHANGE_PRETENURING=default.
 */
export function serverNodeFlags(env = process.env, cores = availableParallelism(), memory = totalmem()) {
  const pool = fromEnv(env, "EXCHANGE_V8_POOL_SIZE", v8PoolSizeFor(cores), 1, 1024, "threads");
  const oldSpace = fromEnv(env, "EXCHANGE_OLD_SPACE_MB", oldSpaceMbFor(memory), 1, 1048576, "megabytes");
  const inlining = fromEnv(env, "EXCHANGE_INLINING_BUDGET", inliningBudgetFor(cores), 1, 1_000_000, "bytes");
  const pretenuring = env.EXCHANGE_PRETENURING;
  if (pretenuring !== undefined && pretenuring !== "" && pretenuring !== "default" && pretenuring !== "off")
    throw new Error(`EXCHANGE_PRETENURING must be "off" or "default", not ${pretenuring}`);
  const flags = [];
  if (pool !== null) flags.push(`--v8-pool-size=${pool}`);
  if (oldSpace !== null) flags.push(`--initial-old-space-size=${oldSpace}`);
  if (inlining !== null) flags.push(`--max-inlined-bytecode-size-cumulative=${inlining}`);
  if (pretenuring !== "default") flags.push("--no-allocation-site-pretenuring");
  return flags;
}
