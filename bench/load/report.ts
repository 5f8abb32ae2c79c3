/**
 * Renders bench/results/load.json as the markdown that BENCHMARKS.md holds: the rows with the
 * command that reproduces each, the stream latency, the targets, the profile. run.ts prints it at
 * the end of a run; after a re-measurement, regenerate the section with
 *
 *   npx tsx bench/load/report.ts [bench/results/load.json]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Percentiles } from "./common.ts";
import { type ProfileSummary, profileMarkdown } from "./profile.ts";
import { REPO_ROOT } from "./servers.ts";

export interface Row {
  scenario: string;
  target: "exchange" | "bare-uws" | "floor";
  mode: "closed" | "open";
  offeredRate: number | null;
  connections: number;
  throughput: number;
  ceiling: number | null;
  ratio: number | null;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  requests: number;
  statuses: Record<string, number>;
  /** Non-200 answers that are the expected cancel race (400 orderId on an order filled meanwhile). */
  expectedErrors: number;
  /** A few unexpected answers: `status body <- request body`. */
  errorSamples: string[];
  valid: boolean;
  notes: string[];
  clientCpuPct: number;
  serverCpuPct: number | null;
  /**
   * Server CPU (all threads) per answered request, µs: server CPU% / throughput. Much steadier than
   * throughput on a shared machine, and the budget that decides the ceiling ratio on a quiet one.
   */
  serverCpuUsPerRequest: number | null;
  /** Throughput of each round when measured in alternating rounds with its ceiling. */
  rounds: number[];
  /**
   * Server CPU per answered request of each round (µs; null: not measured). A fresh server's first
   * round also pays for most of its JIT compilation.
   */
  roundCpuUs: (number | null)[];
  /** Generator lag: write time − scheduled time (open loop). */
  sendLagP99Ms: number | null;
  /** create-order ack → first `user_orders` stream message of that order (open loop, subscribed users). */
  streamAfterAck: (Percentiles & { streamFirst: number; missing: number }) | null;
  /**
   * A read of an order from its committed row right after its create ack (closed loop, one
   * connection per load generator now and then: RunSpec.readProbe); `failed`: not 200 with the order.
   */
  readAfterAck: (Percentiles & { failed: number }) | null;
  command: string;
}

export interface Target {
  target: string;
  value: string;
  pass: boolean | null;
}

export interface ThreadCpu {
  tid: number;
  name: string;
  cpuPct: number;
}

export interface LoadResults {
  date: string;
  quick: boolean;
  machine: {
    cpu: string;
    cores: number;
    memoryGiB: number;
    kernel: string;
    node: string;
    loadAverageStart: number[];
    loadAverageEnd: number[];
  };
  settings: Record<string, unknown>;
  client: { chosen: string; raw: number | null; agent: number | null };
  valid: boolean;
  targets: Target[];
  rows: Row[];
  profile: ProfileSummary | null;
  /** Real CPU per OS thread of the profiled exchange during its run (% of one core). */
  profileThreadCpu: ThreadCpu[];
  notes: string[];
  elapsedS: number;
}

const f = (n: number | null) => (n === null ? "–" : String(n));

export function rowsTable(rows: readonly Row[]): string {
  const lines = [
    "| scenario | offered/s | throughput/s | ceiling/s | ratio | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | server CPU µs/req | valid | command |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.scenario} | ${f(r.offeredRate)} | ${r.throughput} | ${f(r.ceiling)} | ${r.ratio === null ? "–" : r.ratio.toFixed(2)} | ` +
        `${r.p50Ms} | ${r.p90Ms} | ${r.p99Ms} | ${r.p999Ms} | ${r.maxMs} | ${f(r.serverCpuUsPerRequest)} | ${r.valid ? "yes" : "NO"} | \`${r.command}\` |`,
    );
  }
  return lines.join("\n");
}

/**
 * One latency per row, for the rows that have it: `title`, then p50 to max, then the `extra`
 * columns (name and value).
 */
function latencyTable<T extends Percentiles>(
  rows: readonly Row[],
  title: string,
  pick: (r: Row) => T | null,
  extra: readonly [string, (s: T) => number][],
): string {
  const lines: string[] = [];
  for (const r of rows) {
    const s = pick(r);
    if (s === null) continue;
    const cells = [r.scenario, s.p50Ms, s.p90Ms, s.p99Ms, s.p999Ms, s.maxMs, ...extra.map(([, v]) => v(s))];
    lines.push(`| ${cells.join(" | ")} |`);
  }
  if (lines.length === 0) return "";
  const heads = [title, "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms", ...extra.map(([name]) => name)];
  return [`| ${heads.join(" | ")} |`, `|---|${"---:|".repeat(heads.length - 1)}`, ...lines].join("\n");
}

export function streamTable(rows: readonly Row[]): string {
  return latencyTable(rows, "create-order ack → `user_orders` message", (r) => r.streamAfterAck, [
    ["orders matched", (s) => s.count],
    ["stream first", (s) => s.streamFirst],
    ["missing", (s) => s.missing],
  ]);
}

export function readTable(rows: readonly Row[]): string {
  return latencyTable(
    rows,
    "create-order ack → `GET /trade/orders/{id}` of that order answered",
    (r) => r.readAfterAck,
    [
      ["reads", (s) => s.count],
      ["failed", (s) => s.failed],
    ],
  );
}

/** The busiest threads of the profiled exchange; the V8 profiler's own threads summed apart. */
export function threadCpuLine(threads: readonly ThreadCpu[]): string {
  const profiler = threads.filter((t) => t.name.startsWith("v8:Prof"));
  const rest = threads.filter((t) => !t.name.startsWith("v8:Prof"));
  const top = rest.slice(0, 8).map((t) => `${t.name}[${t.tid}] ${t.cpuPct}%`);
  let others = 0;
  for (const t of rest.slice(8)) others += t.cpuPct;
  let profilerPct = 0;
  for (const t of profiler) profilerPct += t.cpuPct;
  return (
    `CPU per OS thread of the profiled exchange during its run (% of one core, from /proc): ${top.join(", ")}` +
    (others > 0 ? `, ${rest.length - 8} others ${others}%` : "") +
    (profiler.length > 0 ? `; V8 profiler threads ${profilerPct}%` : "")
  );
}

export function renderReport(r: LoadResults): string {
  const m = r.machine;
  const out: string[] = [
    `Run ${r.date}${r.quick ? " (quick)" : ""}: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, Linux ${m.kernel}, Node ${m.node}; ` +
      `load average ${m.loadAverageStart.join(" ")} at start, ${m.loadAverageEnd.join(" ")} at end; ${r.elapsedS} s. ` +
      `Client: ${r.client.chosen}${r.client.raw !== null ? ` (bare POST closed loop: raw ${r.client.raw}/s, http.Agent ${r.client.agent}/s)` : ""}. ` +
      `Settings: ${JSON.stringify(r.settings)}.`,
    "",
    rowsTable(r.rows),
  ];
  const stream = streamTable(r.rows);
  if (stream !== "") out.push("", stream);
  const reads = readTable(r.rows);
  if (reads !== "") out.push("", reads);
  out.push("", "| target | measured | verdict |", "|---|---|---|");
  for (const t of r.targets)
    out.push(`| ${t.target} | ${t.value} | ${t.pass === null ? "n/a" : t.pass ? "PASS" : "FAIL"} |`);
  const notes = [...r.notes, ...r.rows.flatMap((row) => row.notes.map((n) => `${row.scenario}: ${n}`))];
  if (notes.length > 0) out.push("", "Notes:", "", ...notes.map((n) => `- ${n}`));
  if (r.profile !== null) {
    out.push(
      "",
      "Where the time goes (profiled exchange, self time in the measured window):",
      "",
      profileMarkdown(r.profile, 15),
    );
    if (r.profileThreadCpu.length > 0) out.push("", threadCpuLine(r.profileThreadCpu));
  }
  return out.join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const file = process.argv[2] ?? join(REPO_ROOT, "bench", "results", "load.json");
  console.log(renderReport(JSON.parse(readFileSync(file, "utf8")) as LoadResults));
}
