/**
 * Renders bench/results/load.json: the full report (rows with the command that reproduces each,
 * the stream latency, the targets, the profile), which run.ts prints at the end of a run, and the
 * block BENCHMARKS.md holds between DOC_START and DOC_END (the run's commit and machine, one table
 * of its rows, its targets). test/docs/benchmarks-doc.test.ts checks that the document holds
 * exactly that block of the committed load.json.
 *
 *   npx tsx bench/load/report.ts [load.json]                      the full report
 *   npx tsx bench/load/report.ts --doc [load.json]                the block BENCHMARKS.md holds
 *   npx tsx bench/load/report.ts --write [load.json] [BENCHMARKS.md]   rewrite that block in place
 *
 * load.json defaults to bench/results/load.json and the document to the repository's BENCHMARKS.md.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
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

/** The checkout a run measured: HEAD, and whether tracked files differed from it. */
export interface RecordedCommit {
  sha: string;
  dirty: boolean;
}

/**
 * The commit the checkout at `root` runs, and whether its tracked files differ from it (results
 * files aside): a run's figures belong to that code. Null outside a git checkout.
 */
export function recordCommit(root: string): RecordedCommit | null {
  const git = (...args: string[]) =>
    execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  try {
    const sha = git("rev-parse", "HEAD");
    const changed = git(
      "status",
      "--porcelain",
      "--untracked-files=no",
      "--",
      ".",
      ":(exclude)bench/results",
    );
    return { sha, dirty: changed !== "" };
  } catch {
    return null;
  }
}

export interface LoadResults {
  date: string;
  quick: boolean;
  /** Absent in files written before run.ts recorded it; null outside a git checkout. */
  commit?: RecordedCommit | null;
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

export const DOC_START = "<!-- load-table:start -->";
export const DOC_END = "<!-- load-table:end -->";

const CREATE_MAX = "create-order max (closed loop)";
/** A row measured under a profiler says so; the full report keeps it, the document's table not. */
const NOT_COMPARABLE = "(not comparable)";
/** How run.ts opens a row's note of its CPU by thread. */
const BY_THREAD = "server CPU µs per request by thread:";

function commitText(c: RecordedCommit | null | undefined): string {
  if (c === undefined || c === null) return "commit not recorded";
  return `commit ${c.sha.slice(0, 7)}${c.dirty ? " with uncommitted changes" : ""}`;
}

/**
 * What BENCHMARKS.md holds between its markers: when, on which commit and machine the run was
 * made, one table of its rows (those under a profiler aside; the command of each group is in the
 * document's "Running it"), the CPU by thread of the closed loops, and the targets it was judged against.
 */
export function renderDocBlock(r: LoadResults): string {
  const m = r.machine;
  const lines = [
    `Run of ${r.date}${r.quick ? " (quick)" : ""}, ${commitText(r.commit)}; machine: ` +
      `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, Linux ${m.kernel}, Node ${m.node}; ` +
      `load average ${m.loadAverageStart[0]} at start, ${m.loadAverageEnd[0]} at end; ${r.elapsedS} s; ` +
      `client ${r.client.chosen}, ${r.settings.connections} connections.`,
    "",
    "| scenario | offered/s | throughput/s | ceiling/s | ratio | p50 ms | p90 ms | p99 ms | max ms | server CPU µs/req |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const row of r.rows) {
    if (row.scenario.includes(NOT_COMPARABLE)) continue;
    const ratio = row.ratio === null ? "–" : row.ratio.toFixed(2);
    lines.push(
      `| ${row.scenario}${row.valid ? "" : " (INVALID)"} | ${f(row.offeredRate)} | ${row.throughput} | ${f(row.ceiling)} | ${ratio} | ` +
        `${row.p50Ms} | ${row.p90Ms} | ${row.p99Ms} | ${row.maxMs} | ${f(row.serverCpuUsPerRequest)} |`,
    );
  }
  const byThread = r.rows.filter(
    (row) => row.mode === "closed" && (row.target === "floor" || row.scenario === CREATE_MAX),
  );
  if (byThread.length > 0) lines.push("", "Server CPU µs per request by thread, and of each round:", "");
  for (const row of byThread) {
    const threads = row.notes.find((n) => n.startsWith(BY_THREAD))?.slice(BY_THREAD.length) ?? "not recorded";
    const rounds = row.roundCpuUs.length > 0 ? row.roundCpuUs.map(f).join(", ") : "not recorded";
    lines.push(`- ${row.scenario}: ${threads.trim()}; rounds ${rounds}`);
  }
  for (const row of r.rows) {
    const a = row.readAfterAck;
    if (a === null) continue;
    lines.push(
      "",
      `A read of the order right after its ack (${row.scenario}): p50 ${a.p50Ms}, p90 ${a.p90Ms}, ` +
        `p99 ${a.p99Ms} ms (${a.count} reads, ${a.failed} failed).`,
    );
  }
  lines.push("", "| target | measured | verdict |", "|---|---|---|");
  for (const t of r.targets)
    lines.push(`| ${t.target} | ${t.value} | ${t.pass === null ? "n/a" : t.pass ? "PASS" : "FAIL"} |`);
  return lines.join("\n");
}

/** The document with the text between its one DOC_START and its one DOC_END replaced by `block`. */
export function replaceDocBlock(doc: string, block: string): string {
  const start = doc.indexOf(DOC_START);
  const end = doc.indexOf(DOC_END);
  if (
    start < 0 ||
    end < start ||
    doc.indexOf(DOC_START, start + 1) >= 0 ||
    doc.indexOf(DOC_END, end + 1) >= 0
  )
    throw new Error(`the document needs exactly one ${DOC_START} followed by one ${DOC_END}`);
  return `${doc.slice(0, start + DOC_START.length)}\n${block}\n${doc.slice(end)}`;
}

/** The text between the markers, as replaceDocBlock writes it (null: no block). */
export function docBlockOf(doc: string): string | null {
  const start = doc.indexOf(DOC_START);
  const end = doc.indexOf(DOC_END);
  if (start < 0 || end < start) return null;
  return doc.slice(start + DOC_START.length + 1, end - 1);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const args = process.argv.slice(2);
  const mode = args[0] === "--doc" || args[0] === "--write" ? args.shift() : "--report";
  const file = args[0] ?? join(REPO_ROOT, "bench", "results", "load.json");
  const results = JSON.parse(readFileSync(file, "utf8")) as LoadResults;
  if (mode === "--report") console.log(renderReport(results));
  else if (mode === "--doc") console.log(renderDocBlock(results));
  else {
    const docFile = args[1] ?? join(REPO_ROOT, "BENCHMARKS.md");
    writeFileSync(docFile, replaceDocBlock(readFileSync(docFile, "utf8"), renderDocBlock(results)));
    console.log(`${docFile}: the load table of ${file} (${results.date}, ${commitText(results.commit)})`);
  }
}
