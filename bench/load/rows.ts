/** bench:load's result rows and notes, as the report (report.ts) prints them. */

import type { Percentiles } from "./common.ts";
import { CONNS, ERROR_LIMIT, type Group, QUICK } from "./flags.ts";
import { type Measure, sum, threadSummary, totalThroughput } from "./measure.ts";
import type { Row } from "./report.ts";

export const rows: Row[] = [];
export const notes: string[] = [];

export function command(group: Group, extra = ""): string {
  const base = `npm run bench:load -- --only ${group}${extra}`;
  return QUICK ? `${base} --quick` : base;
}

export function addRow(
  scenario: string,
  m: Measure,
  kind: string | null,
  opts: {
    target: Row["target"];
    mode: Row["mode"];
    offered?: number;
    ceiling?: number | null;
    command: string;
  },
): Row {
  const parts = kind === null ? [...m.kinds.values()] : [m.kinds.get(kind)].filter((k) => k !== undefined);
  const sent = sum(parts.map((k) => k.sent));
  const verified = sum(parts.map((k) => k.verified));
  const expected = sum(parts.map((k) => k.expectedErrors));
  const statuses: Record<string, number> = {};
  for (const k of parts)
    for (const [s, n] of Object.entries(k.statuses)) statuses[s] = (statuses[s] ?? 0) + n;
  const unsent = statuses.unsent ?? 0;
  const throughput = Math.round(sum(parts.map((k) => k.throughput)));
  // Latency: the kind's own; for a mixed total, the first kind (create-order) stands in.
  const lat = parts[0]?.latency ?? { count: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, p999Ms: 0, maxMs: 0 };
  const rowNotes: string[] = [];
  const unexpected = sent - verified - expected - unsent;
  let valid = sent > 0;
  if (sent === 0) rowNotes.push("no requests measured");
  if (sent > 0 && unexpected / sent > ERROR_LIMIT) {
    valid = false;
    rowNotes.push(`INVALID: ${unexpected} unexpected answers of ${sent} (${JSON.stringify(statuses)})`);
  }
  if (unsent > 0) rowNotes.push(`saturated: ${unsent} requests still queued in the client at the end`);
  if (opts.offered !== undefined && throughput < 0.95 * opts.offered)
    rowNotes.push(`saturated: answered ${throughput}/s of ${Math.round(opts.offered)}/s offered`);
  if (m.rounds.length > 1)
    rowNotes.push(
      `alternating rounds with its ceiling: ${m.rounds.join(", ")} req/s; server CPU µs per request ${m.roundCpuUs.join(", ")}`,
    );
  if (m.threadUsPerRequest.length > 0)
    rowNotes.push(`server CPU µs per request by thread: ${threadSummary(m.threadUsPerRequest)}`);
  if (expected > 0)
    rowNotes.push(`${expected} cancels answered 400 orderId (filled before the cancel: expected)`);
  if (opts.mode === "open" && m.sendLag.p99Ms > 1)
    rowNotes.push(`generator lag p99 ${m.sendLag.p99Ms} ms (counted in the latency)`);
  const ceiling = opts.ceiling ?? null;
  const row: Row = {
    scenario,
    target: opts.target,
    mode: opts.mode,
    offeredRate: opts.offered === undefined ? null : Math.round(opts.offered),
    connections: CONNS,
    throughput,
    ceiling: ceiling === null ? null : Math.round(ceiling),
    ratio: ceiling === null || ceiling === 0 ? null : Math.round((throughput / ceiling) * 1000) / 1000,
    p50Ms: lat.p50Ms,
    p90Ms: lat.p90Ms,
    p99Ms: lat.p99Ms,
    p999Ms: lat.p999Ms,
    maxMs: lat.maxMs,
    requests: sent,
    statuses,
    expectedErrors: expected,
    errorSamples: parts.flatMap((k) => k.errorSamples).slice(0, 5),
    valid,
    notes: rowNotes,
    clientCpuPct: m.clientCpuPct,
    serverCpuPct: m.serverCpuPct,
    serverCpuUsPerRequest:
      m.serverCpuPct === null || totalThroughput(m) === 0
        ? null
        : Math.round((m.serverCpuPct / 100 / totalThroughput(m)) * 1e7) / 10,
    rounds: m.rounds,
    roundCpuUs: m.roundCpuUs,
    sendLagP99Ms: opts.mode === "open" ? m.sendLag.p99Ms : null,
    streamAfterAck: null,
    readAfterAck:
      m.readAfterAck === null ? null : { ...m.readAfterAck.latency, failed: m.readAfterAck.failed },
    command: opts.command,
  };
  if (m.stream !== null && (kind === "create" || kind === null)) {
    if (m.stream.status === "ok") {
      row.streamAfterAck = {
        ...m.stream.latency,
        streamFirst: m.stream.streamFirst,
        missing: m.stream.missing,
      };
    } else rowNotes.push(m.stream.note);
  }
  rows.push(row);
  return row;
}

/**
 * A row of latencies only (no requests per second): `count` of `expected` measured, each the time
 * from a cause to its last effect (a session's close to its last cancel, an ack to a follower's
 * stream, ...), with the measurement's own notes.
 */
export function latencyRow(
  scenario: string,
  lat: Percentiles,
  expected: number,
  opts: { connections: number; offered?: number; notes: string[]; command: string },
): Row {
  const row: Row = {
    scenario,
    target: "exchange",
    mode: opts.offered === undefined ? "closed" : "open",
    offeredRate: opts.offered ?? null,
    connections: opts.connections,
    throughput: 0,
    ceiling: null,
    ratio: null,
    p50Ms: lat.p50Ms,
    p90Ms: lat.p90Ms,
    p99Ms: lat.p99Ms,
    p999Ms: lat.p999Ms,
    maxMs: lat.maxMs,
    requests: expected,
    statuses: {},
    expectedErrors: 0,
    errorSamples: [],
    valid: lat.count === expected,
    notes: lat.count === expected ? opts.notes : [...opts.notes, `measured ${lat.count} of ${expected}`],
    clientCpuPct: 0,
    serverCpuPct: null,
    serverCpuUsPerRequest: null,
    rounds: [],
    roundCpuUs: [],
    sendLagP99Ms: null,
    streamAfterAck: null,
    readAfterAck: null,
    command: opts.command,
  };
  rows.push(row);
  return row;
}
