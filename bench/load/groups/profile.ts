/**
 * Group profile: a fresh exchange under `node --cpu-prof`, closed-loop create-order (or open loop at
 * --profile-rate); self time per function inside the measured window (profile.ts), and each
 * thread's real CPU during the run.
 */

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DURATION_MS, flags, PROFILE_RATE, PROFILE_WORKLOAD, WARMUP_MS } from "../flags.ts";
import { measure } from "../measure.ts";
import { type ProfileSummary, summariseProfiles } from "../profile.ts";
import { addRow, command, notes } from "../rows.ts";
import { FIX_ARGS, type GroupContext, initGens, startExchange } from "../setup.ts";
import { SESSION_DEPTH, SESSIONS } from "./session.ts";

const WHAT: Record<string, string> = {
  create: "create-order",
  mix: "create+cancel",
  session: "session create-order",
  "session-reports": "session create-order (reports, clientOrderIds)",
  fix: "FIX create-order",
};

export interface ProfileOutcome {
  profile: ProfileSummary;
  /** Real CPU per OS thread of the profiled exchange during its run (% of one core). */
  threadCpu: { tid: number; name: string; cpuPct: number }[];
}

export async function runProfile({ base, ceilings, cleanups }: GroupContext): Promise<ProfileOutcome> {
  console.log(
    `profile (node --cpu-prof, ${PROFILE_RATE === null ? "closed loop" : `open loop at ${PROFILE_RATE}/s`}):`,
  );
  const keep = flags["profile-dir"];
  const profDir = keep ?? mkdtempSync(join(tmpdir(), "bench-load-prof-"));
  if (keep === undefined) cleanups.push(() => rmSync(profDir, { recursive: true, force: true }));
  else mkdirSync(profDir, { recursive: true });
  const px = await startExchange("exchange (--cpu-prof)", {
    nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${profDir}`, "--cpu-prof-interval=1000"],
    args: PROFILE_WORKLOAD === "fix" ? FIX_ARGS : [],
  });
  cleanups.push(
    () => px.server.stop(),
    () => rmSync(px.dir, { recursive: true, force: true }),
  );
  await initGens(px.users);
  const fromUs = Number(process.hrtime.bigint() / 1000n) + 50_000 + WARMUP_MS * 1000;
  const threads0 = px.server.threadCpuMs();
  const wall0 = performance.now();
  const e = await measure({
    ...base,
    label: `exchange ${PROFILE_WORKLOAD} (profiled)`,
    server: px.server,
    realServer: true,
    workload: PROFILE_WORKLOAD === "mix" ? "mix" : "create",
    ...(PROFILE_WORKLOAD === "session" || PROFILE_WORKLOAD === "session-reports" || PROFILE_WORKLOAD === "fix"
      ? {
          sessions: SESSIONS,
          sessionDepth: SESSION_DEPTH,
          fix: PROFILE_WORKLOAD === "fix",
          sessionReports: PROFILE_WORKLOAD === "session-reports",
        }
      : {}),
    ...(PROFILE_RATE === null ? { mode: "closed" } : { mode: "open", rate: PROFILE_RATE }),
    seed: 6,
  });
  addRow(
    `${WHAT[PROFILE_WORKLOAD]} ${PROFILE_RATE === null ? "max" : `${PROFILE_RATE}/s`} under --cpu-prof (not comparable)`,
    e,
    "create",
    {
      target: "exchange",
      mode: PROFILE_RATE === null ? "closed" : "open",
      ceiling: ceilings.post ?? null,
      command: command("profile", PROFILE_RATE === null ? "" : ` --profile-rate ${PROFILE_RATE}`),
    },
  );
  const wall = performance.now() - wall0;
  const threadCpu = [...px.server.threadCpuMs()]
    .map(([tid, t]) => ({
      tid,
      name: t.name,
      cpuPct: Math.round(((t.ms - (threads0.get(tid)?.ms ?? 0)) / wall) * 100),
    }))
    .filter((t) => t.cpuPct > 0)
    .sort((a, b) => b.cpuPct - a.cpuPct);
  const pcode = await px.server.stop(20_000);
  if (pcode !== 0) notes.push(`profiled exchange exited with code ${pcode}; profiles may be missing`);
  const profile = await summariseProfiles(profDir, 15, { fromUs, toUs: fromUs + DURATION_MS * 1000 });
  if (!profile.windowed)
    notes.push("profile: the sample clock did not match the run window; all samples were used");
  return { profile, threadCpu };
}
