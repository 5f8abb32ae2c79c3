/**
 * Question: what do stop orders (docs/API.md 18) cost the matching engine, and how long does a long
 * cascade take?
 *   (1) the existing workloads (./workload.ts) run through the stops' step as the pair worker runs
 *       every command (workers/matching/stops.ts: `begin`, the command, `cascade`; a cancel through
 *       the stops), against the book alone: what the stops cost a pair where none waits. Bound: at
 *       most 5% slower (CPU time, median of paired alternating rounds).
 *   (2) the mixed thin book with one command in ten a stop order (buy stops `up` a few ticks above
 *       the last limit price, stop-limit; sell stops `down` below it, stop-limit or stop-market),
 *       through the same step: ops/s, and how many stops waited, triggered or were refused because
 *       the last trade already met them (STOP_WOULD_TRIGGER);
 *   (3) a cascade of 10,000 stops that one trade sets off: stop i buys the ask at P+i, and its trade
 *       there meets stop i+1, so the 10,000 trigger one after another inside one command's step;
 *       and a fan-out: 10,000 stops with one stop price, all met by one trade, each buying one ask.
 *       The time of that one command (wall clock, median of fresh books).
 * Events go to the benchmark's RingSink (./tape.ts), the pair worker's record writer, which also
 * notes the trade prices the stops read. The matching engine's own comparison with the checkout
 * before stops is order-book.bench.ts's `--baseline` mode (BENCHMARKS.md "Stop orders").
 *
 *   npx tsx bench/matching/stops.bench.ts          (BENCH_OPS, BENCH_ROUNDS as order-book.bench.ts)
 * Output: a table on stdout and bench/results/stops.json.
 */
import { writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  BUY,
  DONE_CANCELLED,
  ERR_ORDER_NOT_FOUND,
  ERR_STOP_WOULD_TRIGGER,
  OK,
  SELL,
  STOP_MARKET,
  STOP_SELL,
  STOP_UP,
} from "../../src/protocol/pair/engine.ts";
import { OrderBook } from "../../workers/matching/order-book.ts";
import { StopBook } from "../../workers/matching/stops.ts";
import { stepOurs } from "./engines.ts";
import { RingSink } from "./tape.ts";
import { gc, median, timeReplay } from "./timing.ts";
import { deepBook, mixedThinBook, OP_CANCEL, OP_LIMIT, type Ops, type Workload } from "./workload.ts";

const OPS = Number(process.env.BENCH_OPS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
const MAX_SLOWDOWN = 0.05;
const CASCADE = 10_000;
const RESULTS = join(dirname(fileURLToPath(import.meta.url)), "..", "results", "stops.json");

/** A stop order in a command list (beside ./workload.ts's limit, market and cancel). */
const OP_STOP = 3;

/** The stop fields of a command list with stops: per op, 0 unless OP_STOP. */
interface StopOps extends Ops {
  readonly mode: Uint8Array;
  readonly stopPrice: Int32Array;
}

/** What a replay with stops counted beyond the trades. */
interface StopCounts {
  waited: number;
  refused: number;
  errors: number;
}

/**
 * One command through the stops' step, as the pair worker runs it (stops.ts `runWithStops`): a
 * stop waits; any other command is watched for the trades that meet waiting stops, which run
 * after it in the same step.
 */
function stepStops(stops: StopBook, book: OrderBook, sink: RingSink, o: Ops, i: number, c: StopCounts): void {
  const k = o.kind[i];
  if (k === OP_STOP) {
    const so = o as StopOps;
    const rc = stops.add(o.id[i], o.user[i], so.mode[i], o.price[i], o.qty[i], 0, so.stopPrice[i]);
    if (rc === OK) c.waited++;
    else if (rc === ERR_STOP_WOULD_TRIGGER) c.refused++;
    else c.errors++;
    return;
  }
  stops.begin(1);
  if (k === OP_CANCEL) {
    const rc = stops.cancel(o.id[i], DONE_CANCELLED);
    if (rc === ERR_ORDER_NOT_FOUND) sink.cancelMisses++;
    else if (rc !== OK) sink.errors++;
  } else stepOurs(book, sink, o, i);
  // The workload's stop-market orders are sells: no triggered market buy waits for a budget.
  if (!stops.cascade()) throw new Error("a triggered market buy in a workload without them");
}

interface Run {
  prepare(): void;
  replay(): void;
  readonly sink: RingSink;
}

class BookRun implements Run {
  sink = new RingSink();
  private book = new OrderBook(this.sink);
  constructor(private readonly wl: Workload) {}
  prepare(): void {
    this.sink = new RingSink();
    this.book = new OrderBook(this.sink);
    const p = this.wl.prefill;
    for (let i = 0; i < p.n; i++) stepOurs(this.book, this.sink, p, i);
  }
  replay(): void {
    const { book, sink } = this;
    const o = this.wl.ops;
    for (let i = 0; i < o.n; i++) stepOurs(book, sink, o, i);
  }
}

class StopsRun implements Run {
  sink = new RingSink();
  private book = new OrderBook(this.sink);
  private stops = new StopBook(this.book, this.sink);
  counts: StopCounts = { waited: 0, refused: 0, errors: 0 };
  constructor(
    private readonly wl: Workload,
    private readonly ops: Ops = wl.ops,
  ) {}
  prepare(): void {
    this.sink = new RingSink();
    this.book = new OrderBook(this.sink);
    this.stops = new StopBook(this.book, this.sink);
    this.counts = { waited: 0, refused: 0, errors: 0 };
    const p = this.wl.prefill;
    for (let i = 0; i < p.n; i++) stepStops(this.stops, this.book, this.sink, p, i, this.counts);
  }
  replay(): void {
    const { stops, book, sink, counts } = this;
    const o = this.ops;
    for (let i = 0; i < o.n; i++) stepStops(stops, book, sink, o, i, counts);
  }
  get waiting(): number {
    return this.stops.size;
  }
}

/**
 * `wl`'s commands with a stop order after every ninth (one command in ten a stop): a buy stop `up`
 * 1-20 ticks above the last limit price seen, a stop-limit 2 ticks above its stop; a sell stop
 * `down` as far below, a stop-limit 2 ticks below it or (one in four) a stop-market. Stops take the
 * quantity of the command before them and the users of their side (./workload.ts: one-sided users,
 * so no self-trade), and ids above the workload's.
 */
function withStops(wl: Workload): StopOps {
  const src = wl.ops;
  const n = src.n + Math.floor(src.n / 9);
  const out = {
    n,
    kind: new Uint8Array(n),
    id: new Int32Array(n),
    user: new Int32Array(n),
    side: new Uint8Array(n),
    price: new Int32Array(n),
    qty: new Int32Array(n),
    mode: new Uint8Array(n),
    stopPrice: new Int32Array(n),
  };
  let j = 0;
  let nextId = wl.maxId + 1;
  let last = 0;
  let seq = 0;
  for (let i = 0; i < src.n; i++) {
    out.kind[j] = src.kind[i];
    out.id[j] = src.id[i];
    out.user[j] = src.user[i];
    out.side[j] = src.side[i];
    out.price[j] = src.price[i];
    out.qty[j] = src.qty[i];
    if (src.kind[i] === OP_LIMIT) last = src.price[i];
    j++;
    if ((i + 1) % 9 !== 0 || last === 0 || j >= n) continue;
    const buy = seq++ % 2 === 0;
    const off = 1 + ((Math.imul(seq, 2654435761) >>> 0) % 20);
    const stopPrice = buy ? last + off : Math.max(3, last - off);
    const market = !buy && seq % 4 === 1;
    out.kind[j] = OP_STOP;
    out.id[j] = nextId++;
    // One-sided users (./workload.ts): even users buy, odd users sell.
    out.user[j] = 2 * (seq % 50) + (buy ? BUY : SELL);
    out.side[j] = buy ? BUY : SELL;
    out.mode[j] = (buy ? STOP_UP : STOP_SELL) | (market ? STOP_MARKET : 0);
    out.stopPrice[j] = stopPrice;
    out.price[j] = market ? 0 : buy ? stopPrice + 2 : stopPrice - 2;
    out.qty[j] = src.qty[i];
    j++;
  }
  return { ...out, n: j };
}

/**
 * (3): the time (ms) of the one command that sets off `CASCADE` stops, on a fresh book: `chain`,
 * each triggered stop's trade meeting the next; else a fan-out, every stop met by the first trade.
 */
function cascadeMs(chain: boolean): { ms: number; trades: number; triggered: number } {
  const sink = new RingSink();
  const book = new OrderBook(sink);
  const stops = new StopBook(book, sink);
  const P = 100_000;
  const SELLER = 1;
  const STOPPER = 2;
  const TAKER = 4;
  let id = 1;
  // Asks at P (the first trade) and one lot at each of P+1 .. P+CASCADE.
  for (let i = 0; i <= CASCADE; i++)
    if (book.limit(id++, SELLER, SELL, P + i, 1) !== OK) throw new Error("ask");
  for (let i = 1; i <= CASCADE; i++) {
    // Chain: stop i waits for a trade at P+i-1 and buys at P+i. Fan-out: all wait for P.
    const rc = stops.add(id++, STOPPER, STOP_UP, P + i, 1, 0, chain ? P + i - 1 : P);
    if (rc !== OK) throw new Error(`stop ${i}: ${rc}`);
  }
  const before = sink.trades;
  gc?.();
  const t0 = process.hrtime.bigint();
  stops.begin(1);
  if (book.limit(id++, TAKER, BUY, P, 1) !== OK) throw new Error("the first trade");
  if (!stops.cascade()) throw new Error("the cascade suspended");
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  return { ms, trades: sink.trades - before, triggered: CASCADE - stops.size };
}

function main(): void {
  const t0 = process.hrtime.bigint();
  console.log(
    `stops: ${OPS.toLocaleString("en-US")} ops per workload, ${ROUNDS} alternating rounds, CPU time; load average ${loadavg()[0].toFixed(2)} on ${availableParallelism()} cores`,
  );
  const workloads = [deepBook(OPS), mixedThinBook(OPS)];
  const machinery: Record<string, string | number>[] = [];
  for (const wl of workloads) {
    const a = new BookRun(wl);
    const b = new StopsRun(wl);
    timeReplay(a);
    timeReplay(b);
    const aMs: number[] = [];
    const bMs: number[] = [];
    const ratios: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const first = r % 2 === 0;
      const x = first ? timeReplay(a) : timeReplay(b);
      const y = first ? timeReplay(b) : timeReplay(a);
      const [am, bm] = first ? [x, y] : [y, x];
      aMs.push(am);
      bMs.push(bm);
      ratios.push(am / bm);
    }
    if (a.sink.trades !== b.sink.trades || a.sink.hash !== b.sink.hash || b.sink.errors !== 0)
      throw new Error(`${wl.name}: the book alone and through the stops differ`);
    const paired = median(ratios);
    machinery.push({
      workload: wl.name,
      "book alone ops/s": Math.round(wl.ops.n / (median(aMs) / 1000)).toLocaleString("en-US"),
      "through the stops ops/s": Math.round(wl.ops.n / (median(bMs) / 1000)).toLocaleString("en-US"),
      "stops/alone (median of paired)": Number(paired.toFixed(3)),
      target: paired >= 1 - MAX_SLOWDOWN ? `MET (>= ${1 - MAX_SLOWDOWN})` : `MISSED (< ${1 - MAX_SLOWDOWN})`,
    });
    if (paired < 1 - MAX_SLOWDOWN) process.exitCode = 1;
  }
  console.log("(1) the existing workloads through the stops' step, no stop waiting:");
  console.table(machinery);

  const mixed = workloads[1];
  const ops = withStops(mixed);
  const base = new StopsRun(mixed);
  const stopped = new StopsRun(mixed, ops);
  timeReplay(base);
  timeReplay(stopped);
  const baseMs: number[] = [];
  const stopMs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    baseMs.push(timeReplay(base));
    stopMs.push(timeReplay(stopped));
  }
  const stopCount = ops.kind.reduce((n, k) => n + (k === OP_STOP ? 1 : 0), 0);
  const c = stopped.counts;
  const tenth = {
    workload: `${mixed.name}, 10% stops`,
    commands: ops.n,
    stops: stopCount,
    "ops/s (median)": Math.round(ops.n / (median(stopMs) / 1000)).toLocaleString("en-US"),
    "without stops ops/s": Math.round(mixed.ops.n / (median(baseMs) / 1000)).toLocaleString("en-US"),
    "stops refused (would trigger)": c.refused,
    "stops triggered": c.waited - stopped.waiting,
    "still waiting at the end": stopped.waiting,
    trades: stopped.sink.trades,
  };
  if (c.errors !== 0 || stopped.sink.errors !== 0) throw new Error("the stop workload had errors");
  console.log("(2) one command in ten a stop order:");
  console.table([tenth]);

  const cascades: Record<string, string | number>[] = [];
  for (const chain of [true, false]) {
    const runs = Array.from({ length: 5 }, () => cascadeMs(chain));
    for (const r of runs)
      if (r.triggered !== CASCADE || r.trades !== CASCADE + 1)
        throw new Error(`cascade: ${r.triggered} triggered, ${r.trades} trades`);
    const ms = median(runs.map((r) => r.ms));
    cascades.push({
      cascade: chain ? "chain: each stop's trade meets the next" : "fan-out: one trade meets every stop",
      stops: CASCADE,
      "trades in the step": CASCADE + 1,
      "ms (median of 5)": Number(ms.toFixed(2)),
      "µs per stop": Number(((ms * 1000) / CASCADE).toFixed(2)),
    });
  }
  console.log(`(3) ${CASCADE.toLocaleString("en-US")} stops set off by one command, in its one step:`);
  console.table(cascades);
  writeFileSync(
    RESULTS,
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        ops: OPS,
        rounds: ROUNDS,
        loadAverage: loadavg()[0],
        machinery,
        tenth,
        cascades,
      },
      null,
      2,
    )}\n`,
  );
  console.log(
    `wrote ${RESULTS}; ${(Number(process.hrtime.bigint() - t0) / 1e9).toFixed(1)} s, load average ${loadavg()[0].toFixed(2)}`,
  );
}

main();
