/**
 * Group fix (issue 43): create-order over the FIX gateway (docs/API.md 17; fix-clients.ts) against
 * the same server, users, book and order workload as the trading sessions.
 *
 * - closed loop: SESSIONS FIX sessions (one user each, split over the load generator processes),
 *   each keeping up to SESSION_DEPTH NewOrderSingle in flight, in rounds alternating with the
 *   session group's closed loop (same sessions, depth and orders), so that both rows come from the
 *   same spells of a shared machine and their throughput and server CPU per order compare. The
 *   sessions beside FIX do the FIX sessions' work: they receive the reports of their orders'
 *   changes and give each order a clientOrderId, as a FIX session always does (ClOrdID is
 *   required; every change is reported): DECISIONS.md "FIX gateway: the like-for-like session";
 * - open loop at FIX_RATE, latency from the scheduled send.
 * The exchange runs with `--fix-port 0` when this group is asked for (run.ts); the FIX port is read
 * from its readiness line.
 */
import { measure, measurePair, type RunParams, totalThroughput } from "../measure.ts";
import { addRow, command } from "../rows.ts";
import type { GroupContext } from "../setup.ts";
import { SESSION_DEPTH, SESSIONS } from "./session.ts";

export const FIX_RATE = 5000;
export const FIX_MAX = "FIX create-order max (closed loop)";
export const SESSION_BESIDE_FIX =
  "session create-order max (closed loop, reports and clientOrderId, alternating with FIX)";
export const FIX_OPEN = `FIX create-order open loop ${FIX_RATE}/s`;

export async function runFix({ base, ex }: GroupContext): Promise<void> {
  console.log(
    `FIX: ${SESSIONS} sessions x ${SESSION_DEPTH} orders in flight (closed loop, alternating with trading sessions), open loop ${FIX_RATE}/s:`,
  );
  const closed = (label: string, fix: boolean): RunParams => ({
    sessionReports: !fix,
    ...base,
    label,
    server: ex.server,
    realServer: true,
    workload: "create",
    mode: "closed",
    sessions: SESSIONS,
    sessionDepth: SESSION_DEPTH,
    fix,
    seed: 7,
  });
  const [s, f] = await measurePair(
    closed("exchange session create-order (beside FIX)", false),
    closed("exchange FIX create-order", true),
  );
  addRow(SESSION_BESIDE_FIX, s, "create", { target: "exchange", mode: "closed", command: command("fix") });
  addRow(FIX_MAX, f, "create", {
    target: "exchange",
    mode: "closed",
    ceiling: totalThroughput(s),
    command: command("fix"),
  });
  const o = await measure({
    ...base,
    label: `exchange FIX create-order @${FIX_RATE}/s`,
    server: ex.server,
    realServer: true,
    workload: "create",
    mode: "open",
    rate: FIX_RATE,
    sessions: SESSIONS,
    sessionDepth: SESSION_DEPTH,
    fix: true,
    seed: 8,
  });
  addRow(FIX_OPEN, o, "create", {
    target: "exchange",
    mode: "open",
    offered: FIX_RATE,
    command: command("fix"),
  });
}
