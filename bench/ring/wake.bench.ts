/**
 * Question: how should the main thread and a pair worker wait for each other, and what does the
 * ring cost against running the book in-process?
 *
 *   main thread                                      pair worker
 *   send*() ──command ring (SpscRing)──▶  poll the ring `workerSpin` times, then Atomics.wait
 *   onEvent ◀──event ring (SpscRing)──   publish events every `publishEvery` commands
 *   (re-checks on `mainPollTurns` setImmediate turns, then sleeps in Atomics.waitAsync)
 *
 * (A) Round trip, one command in flight: send a command, await its END record. Limits and cancels
 *     of the order just placed alternate, so the book stays small and every command answers
 *     3 events (rested|done, level, END). Per config: a fresh PairChannel, WARMUP round trips, then
 *     ROUND_TRIPS timed ones (performance.now before send, after the END handler resolved).
 *     A grid: worker = Atomics.wait at once | spin ~2 / ~20 / ~50 µs then wait | busy spin (spin
 *     polls converted from a calibration of one poll's cost) × main = Atomics.waitAsync at once |
 *     re-check on 16 / 64 setImmediate turns, then waitAsync | setImmediate polling only. CPU time
 *     of the whole process per round trip is reported too: spinning and polling are not free.
 * (B) Throughput: OPS pipelined limit orders (seeded; prices around 1000 so about half trade),
 *     sent as fast as the command ring allows (`await writable()` when full), until the last END;
 *     publishEvery swept, then worker spin and main wake varied around it.
 *     Baseline: the same orders on an OrderBook in this thread with a counting sink.
 *
 * Check: every run's events are folded into a checksum (event count per kind, traded lots,
 * traded notional, level totals, result codes); each worker run must equal the in-process
 * baseline, and each round-trip run must see exactly 3 events per command, or exitCode = 1.
 *
 * Every config runs BENCH_REPS times (fresh worker each time, order rotated between runs); the
 * machine has 2 cores, so anything else running shows up as noise: the load average is printed.
 *
 * Env: BENCH_OPS (default 1,000,000), BENCH_ROUND_TRIPS (default 5,000), BENCH_REPS (default 3),
 * BENCH_PARTS ("AB", "A" or "B").
 */
import { availableParallelism, loadavg } from "node:os";
import { PairChannel, type PairChannelOptions } from "../../src/pair/pair-client.ts";
import { type BookEvents, BUY, type DoneReason, type Side } from "../../src/protocol/pair/engine.ts";
import {
  END,
  EV_DONE,
  EV_END,
  EV_KIND,
  EV_LEVEL,
  EV_RESTED,
  EV_TRADE,
  LEVEL,
  TRADE,
} from "../../src/protocol/pair/records.ts";
import { SpscRing } from "../../src/protocol/pair/ring.ts";
import { mulberry32 } from "../../test/support/prng.ts";
import { OrderBook } from "../../workers/matching/order-book.ts";

const OPS = Number(process.env.BENCH_OPS ?? 1_000_000);
const ROUND_TRIPS = Number(process.env.BENCH_ROUND_TRIPS ?? 5_000);
const WARMUP = Math.min(2_000, ROUND_TRIPS);
const REPS = Number(process.env.BENCH_REPS ?? 3);
/** "AB" runs both parts; "A" or "B" one of them. */
const PARTS = process.env.BENCH_PARTS ?? "AB";

let failures = 0;
function failIfNot(ok: boolean, what: string): void {
  if (!ok) {
    failures++;
    console.error(`CHECK FAILED: ${what}`);
  }
}

// ------------------------------------------------------------------------------------ checksum

/** Folds events into a few exact sums; two runs of the same orders must agree. */
class Checksum {
  trades = 0;
  rested = 0;
  done = 0;
  levels = 0;
  ends = 0;
  lots = 0;
  notional = 0;
  levelTotals = 0;
  results = 0;

  add(kind: number, f: Float64Array, o: number): void {
    switch (kind) {
      case EV_TRADE:
        this.trades++;
        this.lots += f[o + TRADE.qty];
        this.notional += f[o + TRADE.qty] * f[o + TRADE.price];
        break;
      case EV_RESTED:
        this.rested++;
        break;
      case EV_DONE:
        this.done++;
        break;
      case EV_LEVEL:
        this.levels++;
        this.levelTotals += f[o + LEVEL.total];
        break;
      case EV_END:
        this.ends++;
        this.results += f[o + END.result];
        break;
    }
  }

  events(): number {
    return this.trades + this.rested + this.done + this.levels + this.ends;
  }

  key(): string {
    return [
      this.trades,
      this.rested,
      this.done,
      this.levels,
      this.ends,
      this.lots,
      this.notional,
      this.levelTotals,
      this.results,
    ].join("/");
  }
}

/** The in-process baseline's sink: same sums, straight from the BookEvents calls. */
class ChecksumEvents implements BookEvents {
  constructor(readonly sum: Checksum) {}
  trade(_ti: number, _tu: number, _ts: Side, _mi: number, _mu: number, price: number, qty: number): void {
    this.sum.trades++;
    this.sum.lots += qty;
    this.sum.notional += qty * price;
  }
  rested(): void {
    this.sum.rested++;
  }
  done(_id: number, _u: number, _s: Side, _r: DoneReason, _left: number): void {
    this.sum.done++;
  }
  level(_side: Side, _price: number, total: number): void {
    this.sum.levels++;
    this.sum.levelTotals += total;
  }
  amended(): void {
    // The benchmark sends no reduce or move.
  }
  mmp(): void {
    // Nor MMP settings.
  }
  quoted(): void {
    // Nor quotes.
  }
}

// ------------------------------------------------------------------------------------ spin calibration

/** Nanoseconds one empty-ring poll of waitForData's spin loop costs on this machine. */
function nsPerSpin(): number {
  const ring = SpscRing.create(2, 1);
  const n = 20_000_000;
  ring.waitForData(n / 10, 0); // warm up; the bench thread may block 0 ms here
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    ring.waitForData(n, 0);
    best = Math.min(best, ((performance.now() - t0) * 1e6) / n);
  }
  return best;
}

// ------------------------------------------------------------------------------------ (A) round trips

interface RoundTripRow {
  config: string;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  /** CPU time (user + system, all threads of the process) per timed round trip, µs. */
  cpu: number;
}

async function roundTrips(config: string, options: Partial<PairChannelOptions>): Promise<RoundTripRow> {
  const sum = new Checksum();
  let resolveEnd: () => void = () => {};
  const ch = new PairChannel({
    pairName: "BENCH/RT",
    ...options,
    onEvent: (f, o) => {
      const kind = f[o + EV_KIND];
      sum.add(kind, f, o);
      if (kind === EV_END) resolveEnd();
    },
  });
  await ch.ready;
  const samples = new Float64Array(ROUND_TRIPS);
  const total = WARMUP + ROUND_TRIPS;
  let cpu0 = process.cpuUsage();
  for (let i = 0; i < total; i++) {
    if (i === WARMUP) cpu0 = process.cpuUsage();
    const ended = new Promise<void>((r) => {
      resolveEnd = r;
    });
    const t0 = performance.now();
    const id = (i >> 1) + 1;
    const sent = i % 2 === 0 ? ch.sendLimit(id, 1, BUY, 1000, 1) : ch.sendCancel(id);
    if (!sent) throw new Error("command ring full with one command in flight");
    await ended;
    if (i >= WARMUP) samples[i - WARMUP] = (performance.now() - t0) * 1000;
  }
  const cpuUsed = process.cpuUsage(cpu0);
  await ch.close();
  // Every limit rests (rested, level, END) and every cancel finds it (done, level, END); +1 END for SHUTDOWN.
  failIfNot(sum.events() === 3 * total + 1 && sum.results === 0, `${config}: events ${sum.key()}`);
  samples.sort();
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))];
  let mean = 0;
  for (const s of samples) mean += s;
  const cpu = (cpuUsed.user + cpuUsed.system) / ROUND_TRIPS;
  return { config, p50: at(0.5), p90: at(0.9), p99: at(0.99), mean: mean / samples.length, cpu };
}

// ------------------------------------------------------------------------------------ (B) throughput

interface Orders {
  side: Uint8Array;
  price: Float64Array;
  qty: Float64Array;
  user: Uint8Array;
}

function makeOrders(n: number, seed: number): Orders {
  const rand = mulberry32(seed);
  const rnd = (k: number): number => Math.floor(rand() * k);
  const o: Orders = {
    side: new Uint8Array(n),
    price: new Float64Array(n),
    qty: new Float64Array(n),
    user: new Uint8Array(n),
  };
  for (let i = 0; i < n; i++) {
    o.side[i] = rnd(2);
    // Buys centred below sells, overlapping: about half the orders cross and trade.
    o.price[i] = o.side[i] === BUY ? 990 + rnd(16) : 995 + rnd(16);
    o.qty[i] = 1 + rnd(10);
    o.user[i] = 1 + rnd(16);
  }
  return o;
}

interface ThroughputRow {
  config: string;
  seconds: number;
  opsPerSec: number;
  checksum: string;
}

function inProcess(orders: Orders, n: number): ThroughputRow {
  const sum = new Checksum();
  const book = new OrderBook(new ChecksumEvents(sum), 1024);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    sum.results += book.limit(i + 1, orders.user[i], orders.side[i] as Side, orders.price[i], orders.qty[i]);
    sum.ends++;
  }
  const seconds = (performance.now() - t0) / 1000;
  return { config: "in-process OrderBook (baseline)", seconds, opsPerSec: n / seconds, checksum: sum.key() };
}

async function throughput(
  config: string,
  orders: Orders,
  n: number,
  options: Partial<PairChannelOptions>,
  corkEvery = 0,
): Promise<ThroughputRow> {
  const sum = new Checksum();
  let resolveLast: () => void = () => {};
  const last = new Promise<void>((r) => {
    resolveLast = r;
  });
  const ch = new PairChannel({
    pairName: "BENCH/TP",
    ...options,
    onEvent: (f, o) => {
      const kind = f[o + EV_KIND];
      sum.add(kind, f, o);
      if (kind === EV_END && sum.ends === n) resolveLast();
    },
  });
  await ch.ready;
  const t0 = performance.now();
  if (corkEvery > 0) ch.cork();
  for (let i = 0; i < n; i++) {
    while (!ch.sendLimit(i + 1, orders.user[i], orders.side[i] as Side, orders.price[i], orders.qty[i])) {
      if (corkEvery > 0) ch.uncork();
      await ch.writable();
      if (corkEvery > 0) ch.cork();
    }
    if (corkEvery > 0 && (i + 1) % corkEvery === 0) {
      ch.uncork();
      ch.cork();
    }
  }
  if (corkEvery > 0) ch.uncork();
  await last;
  const seconds = (performance.now() - t0) / 1000;
  await ch.close();
  sum.ends--; // SHUTDOWN's END
  return { config, seconds, opsPerSec: n / seconds, checksum: sum.key() };
}

// ------------------------------------------------------------------------------------ main

const INF = Number.POSITIVE_INFINITY;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function partA(spinsFor: (us: number) => number): Promise<void> {
  const workers: Array<[string, number]> = [
    ["wait at once", 0],
    ["spin 2 µs", spinsFor(2)],
    ["spin 20 µs", spinsFor(20)],
    ["spin 50 µs", spinsFor(50)],
    ["busy spin", INF],
  ];
  const mains: Array<[string, number]> = [
    ["waitAsync", 0],
    ["16 turns", 16],
    ["64 turns", 64],
    ["poll only", INF],
  ];
  const runs = workers.map(() => mains.map((): RoundTripRow[] => []));
  const cells = workers.length * mains.length;
  for (let rep = 0; rep < REPS; rep++) {
    for (let k = 0; k < cells; k++) {
      const c = (k + rep * 7) % cells; // rotate, so no config always runs first
      const w = Math.floor(c / mains.length);
      const m = c % mains.length;
      const config = `worker ${workers[w][0]}, main ${mains[m][0]}`;
      runs[w][m].push(await roundTrips(config, { workerSpin: workers[w][1], mainPollTurns: mains[m][1] }));
    }
  }
  console.log(`(A) round trip main → worker → main, one command in flight, ${ROUND_TRIPS} samples per run;`);
  console.log("    median over runs. Rows: how the worker waits for commands. Columns: how the main thread");
  console.log("    waits for events (setImmediate turns of re-checking before Atomics.waitAsync).");
  const matrix = (title: string, f: (r: RoundTripRow) => number) => {
    console.log(`\n${title.padEnd(16)}${mains.map(([name]) => name.padStart(13)).join("")}`);
    workers.forEach(([name], w) => {
      const row = mains.map((_, m) => median(runs[w][m].map(f)).toFixed(1).padStart(13)).join("");
      console.log(`${name.padEnd(16)}${row}`);
    });
  };
  matrix("p50 µs", (r) => r.p50);
  matrix("p99 µs", (r) => r.p99);
  matrix("mean µs", (r) => r.mean);
  matrix("cpu µs / trip", (r) => r.cpu);
}

async function partB(spinsFor: (us: number) => number): Promise<void> {
  console.log(
    `\n(B) throughput, ${OPS.toLocaleString("en")} pipelined limit orders, best and median of ${REPS} runs`,
  );
  const orders = makeOrders(OPS, 12345);
  // Around the chosen defaults (spin 2 µs, main 16 turns, publish every 256), one knob at a time.
  const d = { workerSpin: spinsFor(2), mainPollTurns: 16, publishEvery: 256 };
  const configs: Array<[string, Partial<PairChannelOptions>, number]> = [
    ["publish every command", { ...d, publishEvery: 1 }, 0],
    ["publish every 16", { ...d, publishEvery: 16 }, 0],
    ["publish every 64", { ...d, publishEvery: 64 }, 0],
    ["publish every 256 (defaults)", d, 0],
    ["publish per drained batch", { ...d, publishEvery: INF }, 0],
    ["worker waits at once", { ...d, workerSpin: 0 }, 0],
    ["worker spins 20 µs", { ...d, workerSpin: spinsFor(20) }, 0],
    ["worker busy spins", { ...d, workerSpin: INF }, 0],
    ["main waitAsync at once", { ...d, mainPollTurns: 0 }, 0],
    ["main polls only", { ...d, mainPollTurns: INF }, 0],
    ["main corks 64 sends", d, 64],
  ];
  const baseRuns: ThroughputRow[] = [];
  const runs = configs.map((): ThroughputRow[] => []);
  for (let rep = 0; rep < REPS; rep++) {
    baseRuns.push(inProcess(orders, OPS));
    for (let k = 0; k < configs.length; k++) {
      const i = (k + rep) % configs.length;
      const [config, options, cork] = configs[i];
      const row = await throughput(config, orders, OPS, options, cork);
      failIfNot(row.checksum === baseRuns[0].checksum, `${config}: checksum ${row.checksum}`);
      runs[i].push(row);
    }
  }
  console.log(`${"config".padEnd(40)}  best orders/s  median orders/s`);
  const line = (config: string, rows: ThroughputRow[]) => {
    const rates = rows.map((r) => r.opsPerSec);
    const best = Math.max(...rates).toFixed(0);
    console.log(`${config.padEnd(40)} ${best.padStart(14)} ${median(rates).toFixed(0).padStart(16)}`);
  };
  line("in-process OrderBook (baseline)", baseRuns);
  for (let i = 0; i < configs.length; i++) line(configs[i][0], runs[i]);
  console.log(
    `\nchecksum (trades/rested/done/levels/ends/lots/notional/levelTotals/results): ${baseRuns[0].checksum}`,
  );
}

console.log(
  `cpus ${availableParallelism()}, load ${loadavg()[0].toFixed(2)}, node ${process.version}, ${REPS} runs per config`,
);
const nsPoll = nsPerSpin();
const spinsFor = (us: number) => Math.round((us * 1000) / nsPoll);
console.log(
  `one spin poll ≈ ${nsPoll.toFixed(2)} ns: 2 µs ≈ ${spinsFor(2)}, 20 µs ≈ ${spinsFor(20)} polls\n`,
);
if (PARTS.includes("A")) await partA(spinsFor);
if (PARTS.includes("B")) await partB(spinsFor);
if (failures > 0) process.exitCode = 1;
else console.log("all checks passed");
