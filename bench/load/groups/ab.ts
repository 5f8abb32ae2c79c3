/**
 * Group ab: two fresh exchanges, A as `npm start` runs it and B with `--ab-flags` (node flags)
 * and/or `--ab-env` (KEY=VALUE,...), closed-loop create-order (over REST, or with `--ab-session`
 * over trading sessions as the session group sends them): one uncounted round each, then
 * 2 × ROUNDS counted rounds, alternating which side goes first (measure.ts alternatingRounds), so
 * that a slow spell of the machine, and the other server's background work, hit both. Server CPU
 * per order is the steadier figure.
 */
import { rmSync } from "node:fs";
import type { ClientKind } from "../common.ts";
import { flags } from "../flags.ts";
import { alternatingRounds, runOnce, totalThroughput } from "../measure.ts";
import { addRow } from "../rows.ts";
import { type Exchange, initGens, startExchange } from "../setup.ts";
import { SESSION_DEPTH, SESSIONS } from "./session.ts";

export async function abTest(base: { client: ClientKind }): Promise<void> {
  const flagsB = (flags["ab-flags"] ?? "").split(" ").filter(Boolean);
  const envB: Record<string, string> = {};
  for (const kv of (flags["ab-env"] ?? "").split(",").filter(Boolean)) {
    const eq = kv.indexOf("=");
    if (eq <= 0) throw new Error(`--ab-env: expected KEY=VALUE, got ${kv}`);
    envB[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  // --ab-script runs B from another checkout's entry (e.g. ../main/src/main.ts): A/B of two versions.
  const scriptB = flags["ab-script"] ?? "src/main.ts";
  // --ab-session: the calls go over trading sessions (the session group's closed loop), not REST.
  const overSessions = flags["ab-session"] === true;
  const via = overSessions ? { sessions: SESSIONS, sessionDepth: SESSION_DEPTH } : { readProbe: true };
  const what = overSessions ? "session create-order max" : "create-order max";
  const labelB = `exchange B (${[...flagsB, ...Object.entries(envB).map(([k, v]) => `${k}=${v}`), ...(flags["ab-script"] ? [scriptB] : [])].join(" ") || "same"})`;
  console.log(`A/B (closed-loop ${what}): exchange A as npm start runs it, ${labelB}:`);
  const a = await startExchange("exchange A");
  const b = await startExchange(labelB, { nodeFlags: flagsB, env: envB, script: scriptB });
  try {
    const run = (ex: Exchange, label: string) => async (warmupMs: number, durationMs: number) => {
      await initGens(ex.users);
      return runOnce({
        ...base,
        label,
        server: ex.server,
        realServer: true,
        workload: "create",
        mode: "closed",
        ...via,
        seed: 2,
        durationMs,
        warmupMs,
      });
    };
    const [ma, mb] = await alternatingRounds([
      { label: "exchange A", run: run(a, "exchange A") },
      { label: labelB, run: run(b, labelB) },
    ]);
    const cmd = `npm run bench:load -- --only ab${flags["ab-flags"] ? ` --ab-flags=${flags["ab-flags"]}` : ""}${flags["ab-env"] ? ` --ab-env ${flags["ab-env"]}` : ""}${overSessions ? " --ab-session" : ""}`;
    const ra = addRow(`A/B: exchange A, ${what} (closed loop)`, ma, "create", {
      target: "exchange",
      mode: "closed",
      command: cmd,
    });
    const rb = addRow(`A/B: ${labelB}, ${what} (closed loop)`, mb, "create", {
      target: "exchange",
      mode: "closed",
      ceiling: totalThroughput(ma),
      command: cmd,
    });
    console.log(
      `  B/A: throughput ${rb.ratio}, server CPU per order ${ra.serverCpuUsPerRequest} -> ${rb.serverCpuUsPerRequest} µs`,
    );
  } finally {
    await a.server.stop();
    await b.server.stop();
    rmSync(a.dir, { recursive: true, force: true });
    rmSync(b.dir, { recursive: true, force: true });
  }
}
