/**
 * Question: how many book commands per second, and at what per-command latency, does our matching
 * engine (workers/matching/order-book.ts) sustain, against the npm package nodejs-order-book on
 * the very same commands, and does it meet its targets?
 *   (a) mixed thin book: >= 5,000,000 ops/s and >= 10x the peer;
 *   (b) deep book:       >= 3,000,000 ops/s and p99.9 < 5 us.
 *
 * How:
 * - Workloads are generated once, seeded and deterministic, into typed arrays (./workload.ts), so
 *   generation is outside every timing. Deep-book prefill is replayed on each fresh book, untimed.
 * - Throughput: tinybench, one Bench per workload with tasks "ours" and "nodejs-order-book"; each
 *   iteration replays the whole workload on a fresh book (built and prefilled in `beforeEach`,
 *   after a forced GC when available), timed with process.hrtime.bigint (`hrtimeNow` provider).
 *   ops/s = ops / MEDIAN iteration time. The bench runs each task until it has at least
 *   `ITERATIONS` iterations and `TIME_MS` of samples, so the fast engine gets many iterations and
 *   the slow peer only a few.
 * - Latency: a separate pass per engine on a fresh book, one process.hrtime.bigint() per command
 *   (the stamp after command i starts command i+1), minus the timer overhead (the median of the
 *   same loop with nothing in it), sorted in a Float64Array for p50 / p99 / p99.9.
 * - Correctness: both engines' trades go through one checksum (./tape.ts); trade counts,
 *   checksums, cancel misses and the final aggregated book must match, and every iteration of a
 *   task must reproduce the same result. Any difference sets process.exitCode = 1.
 * Our engine's events go to a sink that copies them into a Float64Array ring (./tape.ts); the
 * peer's trades are recovered from its responses into the same kind of ring (./engines.ts).
 *
 * Env: BENCH_OPS (default 1,000,000 ops per workload) for quick runs.
 * Output: a table on stdout and bench/results/matching.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Bench, type Task } from "tinybench";
import { type Depth, type EngineRun, OursRun, PeerRun } from "./engines.ts";
import { checksumOf, type ReplayResult } from "./tape.ts";
import { deepBook, mixedThinBook, type Workload } from "./workload.ts";

const OPS = Number(process.env.BENCH_OPS ?? 1_000_000);
/** Minimum iterations and minimum sampled time per task (scaled down with BENCH_OPS). */
const ITERATIONS = 3;
const TIME_MS = Math.round(3_000 * Math.min(1, OPS / 1_000_000));
const WARMUP_ITERATIONS = 1;
const WARMUP_TIME_MS = Math.round(1_000 * Math.min(1, OPS / 1_000_000));

const RESULTS = join(dirname(fileURLToPath(import.meta.url)), "..", "results", "matching.json");

/** A forced full GC between iterations, so one engine's garbage is not collected on the other's clock. */
function exposeGc(): (() => void) | undefined {
  try {
    setFlagsFromString("--expose-gc");
    return runInNewContext("gc") as () => void;
  } catch {
    return undefined;
  }
}
const gc = exposeGc();

interface Row {
  workload: string;
  engine: string;
  opsPerSec: number;
  p50Ns: number;
  p99Ns: number;
  p999Ns: number;
  trades: number;
  checksum: string;
}

let failures = 0;
function fail(msg: string): void {
  failures++;
  process.exitCode = 1;
  console.error(`\n!!!!!!!! FAIL: ${msg}\n`);
}

// ---------------------------------------------------------------------------------------------
// Latency
// ---------------------------------------------------------------------------------------------

/**
 * Cost of one timestamp in the per-op loop (stamp, subtract, convert, store), in ns: the median is
 * subtracted from every sample; the p99.9 of the empty loop is the machine's noise floor.
 */
function timerOverheadNs(): { median: number; p999: number } {
  const n = 200_000;
  const lat = new Float64Array(n);
  for (let rep = 0; rep < 3; rep++) {
    let t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const t1 = process.hrtime.bigint();
      lat[i] = Number(t1 - t0);
      t0 = t1;
    }
  }
  lat.sort();
  return { median: lat[n >> 1], p999: percentile(lat, 0.999) };
}

function percentile(sorted: Float64Array, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

interface Latency {
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

function latencyPass(run: EngineRun, n: number, overhead: number): Latency {
  gc?.();
  run.prepare();
  const lat = new Float64Array(n);
  run.replayTimed(lat);
  for (let i = 0; i < n; i++) lat[i] = Math.max(0, lat[i] - overhead);
  lat.sort();
  return {
    p50: percentile(lat, 0.5),
    p99: percentile(lat, 0.99),
    p999: percentile(lat, 0.999),
    max: lat[n - 1],
  };
}

// ---------------------------------------------------------------------------------------------
// Correctness
// ---------------------------------------------------------------------------------------------

function copyResult(r: ReplayResult): ReplayResult {
  const { trades, hash, notional, cancelMisses, errors } = r;
  return { trades, hash, notional, cancelMisses, errors };
}

function sameResult(a: ReplayResult, b: ReplayResult): boolean {
  return (
    a.trades === b.trades &&
    a.hash === b.hash &&
    a.notional === b.notional &&
    a.cancelMisses === b.cancelMisses &&
    a.errors === b.errors
  );
}

function describe(r: ReplayResult): string {
  return `trades=${r.trades} checksum=${checksumOf(r)} cancelMisses=${r.cancelMisses} errors=${r.errors}`;
}

function depthDiff(a: Depth, b: Depth): string | undefined {
  for (const side of ["bids", "asks"] as const) {
    const x = a[side];
    const y = b[side];
    if (x.length !== y.length) return `${side}: ${x.length} levels vs ${y.length}`;
    for (let i = 0; i < x.length; i++) {
      if (x[i][0] !== y[i][0] || x[i][1] !== y[i][1]) {
        return `${side}[${i}]: ${x[i][0]}x${x[i][1]} vs ${y[i][0]}x${y[i][1]}`;
      }
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// One workload
// ---------------------------------------------------------------------------------------------

interface EngineOutcome {
  run: EngineRun;
  result: ReplayResult;
  opsPerSec: number;
  bestOpsPerSec: number;
  iterations: number;
  latency: Latency;
}

function medianMs(task: Task): { median: number; min: number; samples: number } {
  const r = task.result;
  if (r.state !== "completed") {
    throw new Error(`tinybench task ${task.name}: ${r.state}${"error" in r ? ` ${r.error}` : ""}`);
  }
  return { median: r.latency.p50, min: r.latency.min, samples: r.latency.samplesCount };
}

/** Runs both engines on one workload; `valid` is false when they did not do the same work. */
function runWorkload(
  wl: Workload,
  overhead: number,
): { ours: EngineOutcome; peer: EngineOutcome; valid: boolean } {
  const failuresBefore = failures;
  const n = wl.ops.n;
  const s = wl.stats;
  console.log(
    `\n== ${wl.name}: ${n.toLocaleString("en-US")} ops (prefill ${wl.prefill.n.toLocaleString("en-US")})`,
  );
  console.log(
    `   generator: limits ${s.limits} (${s.crossingLimits} crossing, ${s.limitsThatTraded} traded), markets ${s.markets}` +
      ` (${s.marketsWithoutLiquidity} without liquidity), cancels ${s.cancels} (${s.cancelMisses} miss)` +
      (s.sweeps > 0
        ? `, sweeps ${s.sweeps} over ${(s.sweptLevels / s.sweeps).toFixed(1)} levels on average`
        : "") +
      `, resting mean ${s.meanResting.toFixed(0)} / end ${s.restingAtEnd}, expected trades ${s.expectedTrades}`,
  );

  const runs: EngineRun[] = [new OursRun(wl), new PeerRun(wl)];
  const perIteration = new Map<EngineRun, ReplayResult[]>();
  const bench = new Bench({
    name: wl.name,
    timestampProvider: "hrtimeNow",
    iterations: ITERATIONS,
    time: TIME_MS,
    warmupIterations: WARMUP_ITERATIONS,
    warmupTime: WARMUP_TIME_MS,
    throws: true,
  });
  for (const run of runs) {
    const seen: ReplayResult[] = [];
    perIteration.set(run, seen);
    bench.add(run.name, () => run.replay(), {
      beforeEach() {
        gc?.();
        run.prepare();
      },
      afterEach() {
        seen.push(copyResult(run.result()));
      },
    });
  }
  bench.runSync();

  const outcomes = runs.map((run, i): EngineOutcome => {
    const t = medianMs(bench.tasks[i]);
    const latency = latencyPass(run, n, overhead);
    const result = copyResult(run.result());
    for (const r of perIteration.get(run) ?? []) {
      if (!sameResult(r, result)) {
        fail(`${wl.name} / ${run.name}: not deterministic: ${describe(r)} vs ${describe(result)}`);
        break;
      }
    }
    return {
      run,
      result,
      opsPerSec: n / (t.median / 1000),
      bestOpsPerSec: n / (t.min / 1000),
      iterations: t.samples,
      latency,
    };
  }) as [EngineOutcome, EngineOutcome];

  const [ours, peer] = outcomes;
  console.log(`   ours:              ${describe(ours.result)}`);
  console.log(`   nodejs-order-book: ${describe(peer.result)}`);
  if (!sameResult(ours.result, peer.result))
    fail(`${wl.name}: ours and nodejs-order-book disagree (see above)`);
  const diff = depthDiff(ours.run.depth(), peer.run.depth());
  if (diff !== undefined) fail(`${wl.name}: final books differ: ${diff}`);
  if (ours.result.errors !== 0) fail(`${wl.name}: unexpected result codes from ours`);
  if (ours.result.trades !== s.expectedTrades || ours.result.cancelMisses !== s.cancelMisses) {
    console.warn(
      `   WARNING: the generator's model expected ${s.expectedTrades} trades / ${s.cancelMisses} cancel misses;` +
        " the workload is not the one described (the engines may still agree).",
    );
  }
  return { ours, peer, valid: failures === failuresBefore };
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

function main(): void {
  if (gc === undefined) console.warn("(no forced GC between iterations: --expose-gc could not be set)");
  const t0 = process.hrtime.bigint();
  const workloads = [mixedThinBook(OPS), deepBook(OPS)];
  console.log(`workloads generated in ${Number(process.hrtime.bigint() - t0) / 1e6} ms`);
  const timer = timerOverheadNs();
  const overhead = timer.median;
  console.log(
    `per-op timer overhead: median ${overhead} ns (subtracted), p99.9 ${timer.p999} ns (noise floor);` +
      ` load average ${loadavg()[0].toFixed(2)} on ${availableParallelism()} cores`,
  );

  const rows: Row[] = [];
  const table: Record<string, string | number>[] = [];
  const verdicts: string[] = [];
  for (const [w, wl] of workloads.entries()) {
    const { ours, peer, valid } = runWorkload(wl, overhead);
    const ratio = ours.opsPerSec / peer.opsPerSec;
    let target: string;
    if (!valid) {
      target = "INVALID (engines disagree)";
    } else if (w === 0) {
      const ok = ours.opsPerSec >= 5_000_000 && ratio >= 10;
      target = `${ok ? "MET" : "MISSED"} (>=5M ops/s, >=10x peer)`;
    } else {
      const ok = ours.opsPerSec >= 3_000_000 && ours.latency.p999 < 5_000;
      target = `${ok ? "MET" : "MISSED"} (>=3M ops/s, p99.9<5us)`;
    }
    verdicts.push(`${wl.name}: ${target}`);
    for (const o of [ours, peer]) {
      const checksum = checksumOf(o.result);
      rows.push({
        workload: wl.name,
        engine: o.run.name,
        opsPerSec: Math.round(o.opsPerSec),
        p50Ns: Math.round(o.latency.p50),
        p99Ns: Math.round(o.latency.p99),
        p999Ns: Math.round(o.latency.p999),
        trades: o.result.trades,
        checksum,
      });
      table.push({
        workload: wl.name,
        engine: o.run.name,
        "ops/s (median)": Math.round(o.opsPerSec).toLocaleString("en-US"),
        "ops/s (best)": Math.round(o.bestOpsPerSec).toLocaleString("en-US"),
        iters: o.iterations,
        "ours/peer": o === ours ? `${ratio.toFixed(1)}x` : "",
        "p50 ns": Math.round(o.latency.p50),
        "p99 ns": Math.round(o.latency.p99),
        "p99.9 ns": Math.round(o.latency.p999),
        "max ns": Math.round(o.latency.max),
        trades: o.result.trades,
        checksum,
        target: o === ours ? target : "",
      });
    }
  }

  console.log("");
  console.table(table);
  for (const v of verdicts) console.log(v);
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(rows, null, 2)}\n`);
  console.log(`wrote ${RESULTS}`);
  console.log(
    `total ${(Number(process.hrtime.bigint() - t0) / 1e9).toFixed(1)} s, load average ${loadavg()[0].toFixed(2)}`,
  );
  if (failures > 0)
    console.error("\n!!!!!!!! CHECKSUM / STATE MISMATCH: the numbers above compare different work. FAILED.");
  else console.log("checksums, trade counts, cancel misses and final books match.");
}

main();
