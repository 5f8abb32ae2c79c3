/**
 * bench:load's load generator processes (bench/load/loadgen.ts, driven over IPC) and the
 * measurements: one run against one server, rounds aggregated into a row's figures, server CPU
 * per request thread by thread.
 */

import { type ChildProcess, fork } from "node:child_process";
import { join } from "node:path";
import {
  type BenchUser,
  type ClientKind,
  type FromLoadgen,
  mergedPercentiles,
  type Percentiles,
  type RunResult,
  type RunSpec,
  type ToLoadgen,
  type Workload,
} from "./common.ts";
import {
  CANCEL_SHARE,
  CONNS,
  DRAIN_MS,
  DURATION_MS,
  HERE,
  MAX_REQUESTS,
  OPEN_RATE_PER_PROC,
  PACING,
  ROUNDS,
  WARMUP_MS,
} from "./flags.ts";
import { REPO_ROOT, type ServerProcess } from "./servers.ts";

// ---- load generator processes ------------------------------------------------------------------------

export class Loadgen {
  private readonly waiting = new Map<
    number,
    { resolve: (r: RunResult) => void; reject: (e: Error) => void }
  >();
  private nextId = 1;
  private ready: (() => void) | null = null;

  private constructor(private readonly child: ChildProcess) {
    child.on("message", (msg: FromLoadgen) => {
      if (msg.type === "ready") this.ready?.();
      else if (msg.type === "result") this.settle(msg.id)?.resolve(msg.result);
      else if (msg.type === "failed") this.settle(msg.id)?.reject(new Error(`load generator: ${msg.error}`));
    });
    child.on("exit", (code) => {
      for (const w of this.waiting.values()) w.reject(new Error(`load generator exited (code ${code})`));
      this.waiting.clear();
    });
  }

  private settle(id: number) {
    const w = this.waiting.get(id);
    this.waiting.delete(id);
    return w;
  }

  static start(): Loadgen {
    const child = fork(join(HERE, "loadgen.ts"), [], {
      cwd: REPO_ROOT,
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    return new Loadgen(child);
  }

  init(users: BenchUser[], index: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("load generator did not start in 30 s")), 30_000);
      this.ready = () => {
        clearTimeout(timer);
        this.ready = null;
        resolve();
      };
      this.send({ type: "init", users, index });
    });
  }

  run(spec: RunSpec): Promise<RunResult> {
    const id = this.nextId++;
    const limit = spec.warmupMs + spec.durationMs + spec.drainMs + 30_000;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`run ${spec.label}: no result within ${limit} ms`)),
        limit,
      );
      this.waiting.set(id, {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.send({ type: "run", id, spec });
    });
  }

  private send(msg: ToLoadgen): void {
    this.child.send(msg);
  }

  stop(): void {
    if (this.child.connected) this.send({ type: "exit" });
    setTimeout(() => this.child.kill("SIGKILL"), 2000).unref();
  }
}

// ---- measurements ------------------------------------------------------------------------------------

export interface KindMeasure {
  sent: number;
  statuses: Record<string, number>;
  verified: number;
  expectedErrors: number;
  throughput: number;
  latency: Percentiles;
  errorSamples: string[];
}

export interface Measure {
  label: string;
  windowMs: number;
  kinds: Map<string, KindMeasure>;
  sendLag: Percentiles;
  unsent: number;
  stream: {
    status: "ok" | "skipped";
    note: string;
    matched: number;
    streamFirst: number;
    missing: number;
    latency: Percentiles;
  } | null;
  /** RunSpec.readProbe's reads (closed loop): a read of an order right after its create ack. */
  readAfterAck: { count: number; failed: number; latency: Percentiles } | null;
  clientCpuPct: number;
  serverCpuPct: number | null;
  /** The exchange writer's group commits per second over the runs' wall time (null: not measured). */
  commitsPerSec: number | null;
  /** Throughput of each round (several when measured in alternating rounds). */
  rounds: number[];
  /**
   * Server CPU per answered request of each round (µs; null: not measured): the first round of a
   * fresh server also pays for most of its JIT compilation.
   */
  roundCpuUs: (number | null)[];
  /**
   * Server CPU per answered request of each thread that used any, largest first (µs; the main
   * thread first, whatever its share). Like serverCpuPct, from /proc over the runs' wall time.
   */
  threadUsPerRequest: { tid: number; main: boolean; name: string; us: number }[];
  /** Each round's threads as `threadSummary` gives them (several rounds only). */
  roundThreads: string[];
}

export interface RunParams {
  label: string;
  server: ServerProcess;
  realServer: boolean;
  workload: Workload;
  mode: "closed" | "open";
  rate?: number;
  client: ClientKind;
  durationMs?: number;
  warmupMs?: number;
  streamUsers?: number;
  /** See RunSpec.readProbe. */
  readProbe?: boolean;
  seed?: number;
  /** HTTP connections over the processes (CONNS unless given). */
  conns?: number;
  /** Trading sessions instead of HTTP: this many sessions over the processes (RunSpec.sessionDepth). */
  sessions?: number;
  sessionDepth?: number;
  /** With `sessions`: FIX sessions on the exchange's FIX port instead of WebSocket sessions. */
  fix?: boolean;
  /** With `sessions` (WebSocket): RunSpec.sessionReports. */
  sessionReports?: boolean;
}

export const gens: Loadgen[] = [];

export interface OneRun {
  results: RunResult[];
  wallMs: number;
  serverCpuMs: number | null;
  durationMs: number;
  /** Group commits of the exchange's writer during the run (null: not the exchange). */
  commits: number | null;
  /** CPU ms of each server thread (by tid) during the run, and its name (see ServerProcess). */
  threadCpuMs: Map<number, { name: string; ms: number }>;
  pid: number;
}

/** The exchange's `exchange_db_transactions_total` from `/metrics`, or null if unreadable. */
export async function dbCommits(port: number): Promise<number | null> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const m = /^exchange_db_transactions_total (\d+)$/m.exec(text);
    return m === null ? null : Number(m[1]);
  } catch {
    return null;
  }
}

/** One run of the spec on the load generators (split over them), untouched results. */
export async function runOnce(p: RunParams): Promise<OneRun> {
  const durationMs = p.durationMs ?? DURATION_MS;
  const warmupMs = p.warmupMs ?? WARMUP_MS;
  const active =
    p.mode === "open"
      ? gens.slice(0, Math.min(gens.length, Math.ceil((p.rate ?? 0) / OPEN_RATE_PER_PROC)))
      : gens;
  const connsPer = Math.max(1, Math.ceil((p.sessions ?? p.conns ?? CONNS) / active.length));
  const commits0 = p.realServer ? await dbCommits(p.server.port) : null;
  const threads0 = p.server.threadCpuMs();
  const cpu0 = p.server.cpuMs();
  const wall0 = performance.now();
  const results = await Promise.all(
    active.map((g, i) =>
      g.run({
        label: p.label,
        target: { host: "127.0.0.1", port: p.server.port },
        workload: p.workload,
        client: p.client,
        connections: connsPer,
        mode: p.mode,
        rate: (p.rate ?? 0) / active.length,
        warmupMs,
        durationMs,
        drainMs: DRAIN_MS,
        maxRequests: MAX_REQUESTS,
        pacing: PACING,
        cancelShare: CANCEL_SHARE,
        seed: (p.seed ?? 1) * 1000 + i,
        streamUsers: p.streamUsers ?? 0,
        realServer: p.realServer,
        readProbe: p.readProbe ?? false,
        sessionDepth: p.sessions === undefined ? 0 : (p.sessionDepth ?? 1),
        fixPort: p.fix === true ? fixPort(p.server) : 0,
        sessionReports: p.sessionReports === true,
      }),
    ),
  );
  const wallMs = performance.now() - wall0;
  const cpu1 = p.server.cpuMs();
  const threadCpuMs = new Map<number, { name: string; ms: number }>();
  for (const [tid, t] of p.server.threadCpuMs())
    threadCpuMs.set(tid, { name: t.name, ms: t.ms - (threads0.get(tid)?.ms ?? 0) });
  const commits1 = commits0 === null ? null : await dbCommits(p.server.port);
  return {
    results,
    wallMs,
    serverCpuMs: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0,
    durationMs,
    commits: commits0 === null || commits1 === null ? null : commits1 - commits0,
    threadCpuMs,
    pid: p.server.pid,
  };
}

function fixPort(server: ServerProcess): number {
  if (server.fixPort === 0) throw new Error(`${server.name}: no FIX port (started without --fix-port)`);
  return server.fixPort;
}

/** Requests of every kind answered inside a run's measured window. */
export function completed(r: OneRun): number {
  let n = 0;
  for (const res of r.results) for (const k of Object.values(res.kinds)) n += k.completedInWindow;
  return n;
}

/** Sums counts and merges histograms over the processes and the rounds of one measurement. */
export function aggregate(label: string, runs: readonly OneRun[]): Measure {
  const results = runs.flatMap((r) => r.results);
  const windowMs = sum(runs.map((r) => r.durationMs));
  const wall = sum(runs.map((r) => r.wallMs));
  const kinds = new Map<string, KindMeasure>();
  const names = new Set(results.flatMap((r) => Object.keys(r.kinds)));
  for (const name of names) {
    const parts = results.map((r) => r.kinds[name]).filter((k) => k !== undefined);
    const statuses: Record<string, number> = {};
    for (const k of parts)
      for (const [s, n] of Object.entries(k.statuses)) statuses[s] = (statuses[s] ?? 0) + n;
    kinds.set(name, {
      sent: sum(parts.map((k) => k.sent)),
      statuses,
      verified: sum(parts.map((k) => k.verified)),
      expectedErrors: sum(parts.map((k) => k.expectedErrors)),
      throughput: (sum(parts.map((k) => k.completedInWindow)) * 1000) / windowMs,
      latency: mergedPercentiles(parts.map((k) => k.histogram)),
      errorSamples: parts.flatMap((k) => k.errorSamples).slice(0, 5),
    });
  }
  const streams = results.map((r) => r.stream).filter((s) => s !== null);
  let stream: Measure["stream"] = null;
  if (streams.length > 0) {
    const skipped = streams.find((s) => s.status === "skipped");
    stream = {
      status: skipped === undefined ? "ok" : "skipped",
      note: skipped?.note ?? "",
      matched: sum(streams.map((s) => s.matched)),
      streamFirst: sum(streams.map((s) => s.streamFirst)),
      missing: sum(streams.map((s) => s.missing)),
      latency: mergedPercentiles(streams.map((s) => s.histogram)),
    };
  }
  const probes = results.map((r) => r.readAfterAck).filter((r) => r !== null);
  let readAfterAck: Measure["readAfterAck"] = null;
  if (probes.length > 0) {
    readAfterAck = {
      count: sum(probes.map((r) => r.count)),
      failed: sum(probes.map((r) => r.failed)),
      latency: mergedPercentiles(probes.map((r) => r.histogram)),
    };
  }
  const cpus = runs.map((r) => r.serverCpuMs);
  const m: Measure = {
    label,
    windowMs,
    kinds,
    sendLag: mergedPercentiles(results.map((r) => r.sendLag)),
    unsent: sum(results.map((r) => r.unsent)),
    stream,
    readAfterAck,
    clientCpuPct: Math.round((sum(results.map((r) => r.cpuMs)) / wall) * 100),
    serverCpuPct: cpus.some((c) => c === null) ? null : Math.round((sum(cpus as number[]) / wall) * 100),
    commitsPerSec: runs.some((r) => r.commits === null)
      ? null
      : Math.round((sum(runs.map((r) => r.commits as number)) / wall) * 1000),
    rounds: runs.map((r) => Math.round((completed(r) * 1000) / r.durationMs)),
    roundCpuUs: runs.map((r) => {
      const n = completed(r);
      return r.serverCpuMs === null || n === 0 ? null : roundUsPerRequest(r, r.serverCpuMs, n);
    }),
    threadUsPerRequest: [],
    roundThreads: [],
  };
  if (runs.length > 1)
    m.roundThreads = runs.map((r) => {
      const n = completed(r);
      const threads = [...r.threadCpuMs].map(([tid, t]) => ({
        tid,
        main: tid === r.pid,
        name: t.name,
        us: n === 0 ? 0 : roundUsPerRequest(r, t.ms, n),
      }));
      return threadSummary(threads.filter((t) => t.us > 0).sort(mainThenLargest));
    });
  const throughput = totalThroughput(m);
  const byTid = new Map<number, { name: string; ms: number }>();
  for (const r of runs)
    for (const [tid, t] of r.threadCpuMs)
      byTid.set(tid, { name: t.name, ms: (byTid.get(tid)?.ms ?? 0) + t.ms });
  if (throughput > 0)
    m.threadUsPerRequest = [...byTid]
      .map(([tid, t]) => ({
        tid,
        main: tid === runs[0]?.pid,
        name: t.name,
        us: Math.round((t.ms / wall / throughput) * 1e7) / 10,
      }))
      .filter((t) => t.us > 0)
      .sort(mainThenLargest);
  return m;
}

/**
 * CPU (ms) of one round over its wall time, per request of its window's rate, in µs (as
 * serverCpuUsPerRequest): `n` requests completed in the window.
 */
export function roundUsPerRequest(r: OneRun, cpuMs: number, n: number): number {
  return Math.round(((cpuMs / r.wallMs) * r.durationMs * 1e4) / n) / 10;
}

/** Threads in report order: the main thread first, then by CPU, largest first. */
export function mainThenLargest(a: { main: boolean; us: number }, b: { main: boolean; us: number }): number {
  return Number(b.main) - Number(a.main) || b.us - a.us;
}

/**
 * Threads by name: `main 45.1, writer 20.3, pair 4.4+4.3+4.1, checkpoint 0.2, node ×9 8.8` (the
 * unnamed ones, V8's platform threads and libuv's pool, summed with their count).
 */
export function threadSummary(threads: Measure["threadUsPerRequest"]): string {
  const byName = new Map<string, number[]>();
  for (const t of threads) {
    const list = byName.get(t.name);
    if (list === undefined) byName.set(t.name, [t.us]);
    else list.push(t.us);
  }
  const parts: string[] = [];
  for (const [name, us] of byName) {
    if (name === "node" || us.length > 4)
      parts.push(`${name} ×${us.length} ${Math.round(sum(us) * 10) / 10}`);
    else parts.push(`${name} ${us.join("+")}`);
  }
  return parts.join(", ");
}

export function report(m: Measure): void {
  const total = sum([...m.kinds.values()].map((k) => k.throughput));
  const first = [...m.kinds.values()][0];
  console.log(
    `  ${m.label} ... ${Math.round(total)} req/s${m.rounds.length > 1 ? ` (rounds ${m.rounds.join(", ")}; server CPU µs per request ${m.roundCpuUs.join(", ")})` : ""}` +
      `, p50 ${first?.latency.p50Ms ?? "-"} ms, p99 ${first?.latency.p99Ms ?? "-"} ms` +
      `, statuses ${JSON.stringify(Object.fromEntries([...m.kinds].map(([k, v]) => [k, v.statuses])))}` +
      ` (client CPU ${m.clientCpuPct}%, server CPU ${m.serverCpuPct ?? "?"}%)` +
      (m.sendLag.p50Ms > 0 ? `, generator lag p50 ${m.sendLag.p50Ms} ms p99 ${m.sendLag.p99Ms} ms` : "") +
      (m.commitsPerSec === null || m.commitsPerSec === 0
        ? ""
        : `, ${m.commitsPerSec} commits/s (≈ ${(total / m.commitsPerSec).toFixed(1)} requests per commit)`),
  );
  if (m.threadUsPerRequest.length > 0)
    console.log(`    server CPU µs per request by thread: ${threadSummary(m.threadUsPerRequest)}`);
  m.roundThreads.forEach((t, i) => {
    console.log(`      round ${i + 1}: ${t}`);
  });
  for (const [kind, k] of m.kinds)
    for (const e of k.errorSamples.slice(0, 3)) console.log(`    ${kind} e.g. ${e}`);
}

export async function measure(p: RunParams): Promise<Measure> {
  const m = aggregate(p.label, [await runOnce(p)]);
  report(m);
  return m;
}

/**
 * A ceiling and its measurement in alternating short rounds (bare, exchange, bare, exchange, ...),
 * so that a slow spell of a shared machine hits both; counts and histograms are summed over rounds.
 */
export async function measurePair(bare: RunParams, real: RunParams): Promise<[Measure, Measure]> {
  const a: OneRun[] = [];
  const b: OneRun[] = [];
  const durationMs = Math.max(500, Math.round(DURATION_MS / ROUNDS));
  for (let i = 0; i < ROUNDS; i++) {
    const warmupMs = i === 0 ? WARMUP_MS : Math.min(WARMUP_MS, 300);
    a.push(await runOnce({ ...bare, durationMs, warmupMs }));
    b.push(await runOnce({ ...real, durationMs, warmupMs }));
  }
  const ma = aggregate(bare.label, a);
  const mb = aggregate(real.label, b);
  report(ma);
  report(mb);
  return [ma, mb];
}

/** One side of alternatingRounds: a server and how one round of it runs. */
export interface RoundSide {
  label: string;
  run: (warmupMs: number, durationMs: number) => Promise<OneRun>;
}

/**
 * Servers measured in alternating rounds: a fresh server's first round pays for most of its JIT
 * compilation, and the server measured right after it shares the cores with that compilation too,
 * so each gets one round first that is not counted; the 2 × ROUNDS counted rounds then rotate which
 * side goes first (A B, B A, ... for two; A B C, B C A, ... for three), so that a slow spell of the
 * machine, and the other servers' background work, hit every side. One aggregate per side, in order.
 */
export async function alternatingRounds(sides: readonly RoundSide[]): Promise<Measure[]> {
  const runs: OneRun[][] = sides.map(() => []);
  const durationMs = Math.max(500, Math.round(DURATION_MS / ROUNDS));
  const warm: string[] = [];
  for (const side of sides) {
    const r = await side.run(WARMUP_MS, durationMs);
    warm.push(`${side.label} ${aggregate(side.label, [r]).roundCpuUs[0]} µs`);
  }
  console.log(`  warm-up rounds (not counted), server CPU per request: ${warm.join(", ")}`);
  for (let i = 0; i < 2 * ROUNDS; i++)
    for (let k = 0; k < sides.length; k++) {
      const at = (i + k) % sides.length;
      runs[at].push(await sides[at].run(Math.min(WARMUP_MS, 300), durationMs));
    }
  return sides.map((side, k) => {
    const m = aggregate(side.label, runs[k]);
    report(m);
    return m;
  });
}

export function sum(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s;
}

/** Throughput of all kinds of a measure. */
export function totalThroughput(m: Measure): number {
  return sum([...m.kinds.values()].map((k) => k.throughput));
}
