/**
 * Question: what does the sliding-window rate limiter (src/entry/rate-limit.ts) cost per request
 * against the fixed one-second window it replaced (kept below as the baseline, verbatim in
 * behaviour)?
 *
 * Workload: the rate-limit step of the HTTP path, `take(key, now)` once per request, with keys
 * drawn from a pool (API tokens or client addresses) and a clock that advances 50 µs per request,
 * so both limiters cross second boundaries and rebuild their maps as they do under load. Two key
 * pools: 64 keys (a few busy bots) and 10,000 (many clients). Baseline and candidate run in one
 * tinybench run, alternating.
 *
 * Checksum: the number of allowed requests of each contender is printed; with a limit far above
 * the per-key rate, both must allow everything (a limiter that refuses here is broken).
 *
 * Run: npx tsx bench/http/rate-limit.bench.ts
 */
import { Bench } from "tinybench";
import { RateLimiter } from "../../src/entry/rate-limit.ts";
import { mulberry32 } from "../../test/support/prng.ts";
import { taskNs } from "./task-time.ts";

/** The limiter before the rate-limit headers (docs/API.md 3): a fixed one-second window per key. */
class FixedWindowLimiter {
  private window = 0;
  private counts = new Map<string, number>();
  constructor(private readonly limit: number) {}
  allow(key: string, nowMs: number): boolean {
    const second = Math.floor(nowMs / 1000);
    if (second !== this.window) {
      this.window = second;
      this.counts = new Map();
    }
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    return n <= this.limit;
  }
}

const OPS = 200_000;
const LIMIT = 1_000_000;

function workload(keys: number, seed: number): { keys: string[]; at: Float64Array } {
  const rnd = mulberry32(seed);
  const pool = Array.from({ length: keys }, (_, i) => `token-${i.toString(16).padStart(32, "0")}`);
  const out: string[] = new Array(OPS);
  const at = new Float64Array(OPS);
  for (let i = 0; i < OPS; i++) {
    out[i] = pool[Math.floor(rnd() * keys)];
    at[i] = 1_700_000_000_000 + Math.floor(i / 20); // 20 requests per ms
  }
  return { keys: out, at };
}

const checks = new Map<string, number>();
const bench = new Bench({ time: 1500, warmupTime: 300 });
for (const keys of [64, 10_000]) {
  const w = workload(keys, keys);
  bench.add(`fixed window (baseline), ${keys} keys`, () => {
    const l = new FixedWindowLimiter(LIMIT);
    let allowed = 0;
    for (let i = 0; i < OPS; i++) if (l.allow(w.keys[i], w.at[i])) allowed++;
    checks.set(`fixed ${keys}`, allowed);
  });
  bench.add(`sliding window (candidate), ${keys} keys`, () => {
    const l = new RateLimiter(LIMIT);
    let allowed = 0;
    for (let i = 0; i < OPS; i++) if (l.take(w.keys[i], w.at[i]) >= 0) allowed++;
    checks.set(`sliding ${keys}`, allowed);
  });
}
await bench.run();
console.table(
  bench.tasks.map((t) => ({ task: t.name, "ns per request": (taskNs(t).mean / OPS).toFixed(1) })),
);
for (const [name, allowed] of checks) {
  if (allowed !== OPS) throw new Error(`${name}: allowed ${allowed} of ${OPS}`);
}
console.log(`checksum: every contender allowed ${OPS} of ${OPS} requests`);
