// The Node flags the server runs with, chosen for the machine (scripts/start.mjs, which `npm start`
// and `npm run start:prod` run, and bench:load, which starts its servers the same way).
//
// V8's background pool: Node gives V8 four platform threads whatever the machine (concurrent and
// parallel garbage collection, concurrent compilation). On a machine of one or two cores those four
// compete with the main thread, the writer and the pair workers for the same cores; one thread does
// the same background work with less contention: server CPU per create-order -0.7% to -6.6% (about
// -3% typically) and 2-6% more orders per second, in four A/B runs on 2 vCPUs (BENCHMARKS.md,
// seventh session). On more cores Node's default stays, so the collector keeps its parallel
// helpers and the main thread's pauses stay short.
//
// EXCHANGE_V8_POOL_SIZE overrides the choice: a number of threads, or "default" for Node's own.
import { availableParallelism } from "node:os";

/** Threads of V8's background pool for a machine of `cores` cores, or null for Node's default. */
export function v8PoolSizeFor(cores) {
  return cores <= 2 ? 1 : null;
}

/**
 * The flags to give `node` before the server's entry: `--v8-pool-size=N` when the machine (or
 * EXCHANGE_V8_POOL_SIZE) calls for it, else none.
 */
export function serverNodeFlags(env = process.env, cores = availableParallelism()) {
  const override = env.EXCHANGE_V8_POOL_SIZE;
  let n;
  if (override === undefined || override === "") n = v8PoolSizeFor(cores);
  else if (override === "default") n = null;
  else {
    n = Number(override);
    if (!Number.isInteger(n) || n < 1 || n > 1024)
      throw new Error(
        `EXCHANGE_V8_POOL_SIZE must be a whole number of threads or "default", not ${override}`,
      );
  }
  return n === null ? [] : [`--v8-pool-size=${n}`];
}
