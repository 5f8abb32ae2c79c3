/**
 * `npm run bench:load`: the real server under load, the way a market maker feels it.
 *
 * Question: how many signed orders per second does the exchange acknowledge (with durability on:
 * SQLite `synchronous=FULL`, the default), at what latency at fixed offered rates, and how close do
 * create-order and the public reads come to what uWebSockets.js itself can do on this machine?
 * Targets named by the issue: create-order max >= 50% of the bare POST ceiling; at 5,000 orders/s
 * offered ack p50 < 0.5 ms and p99 < 2 ms; GET book (50 + 50 levels) >= 70% of the bare GET ceiling.
 *
 * Processes (nothing runs in a server's process):
 *   this orchestrator  starts everything, prepares users and the book, collects and reports;
 *   exchange           `node --import tsx src/main.ts --port 0 --db <tmp> --config <tmp> --rate-limit 0`;
 *   bare uWS           bench/load/bare-server.ts, constant bodies captured from the exchange;
 *   design floor       bench/load/floor-server.ts (group floor): the exchange's shape on its real
 *                      components (pair worker rings, writer thread, group commit) with no business
 *                      logic: what the fixed design costs before any work of our own;
 *   load generators    bench/load/loadgen.ts (`--procs`, default 2), keep-alive HTTP/1.1 clients.
 *
 * Steps: start the exchange; create `--users` users and fund them (admin API); a maker user places
 * 50 buy + 50 sell levels on each of btc_usdt, eth_usdt, eth_btc; capture bodies; start the bare
 * server; then, each run with the same client against both servers:
 *   select         closed loop on the bare POST with the raw-socket client and with http.Agent; the
 *                  faster drives everything else (override: --client raw|agent);
 *   reads          GET book and GET pairs, bare then exchange (book still exactly 50 + 50);
 *   create-closed  bare POST ceiling, then create-order closed loop on the exchange (max);
 *   create-open    create-order open loop at --rates (1k, 5k, 10k, 20k and "max" = the closed-loop
 *                  result), with the ack → `user_orders` stream latency of a few subscribed users;
 *   mix            create + cancel (25% cancels) open loop at 5k/s and closed loop;
 *   session        create-order over trading sessions (docs/API.md 13; groups/session.ts): 8 sessions
 *                  x 64 calls in flight against the bare uWS WebSocket ceiling, open loops at 1k,
 *                  5k (beside REST at 5k) and 10k/s, and cancel-on-disconnect (close → 100 cancels
 *                  on an `orders:` stream, 20 repetitions);
 *   fix            create-order over the FIX gateway (docs/API.md 17; groups/fix.ts): 8 FIX sessions
 *                  x 64 orders in flight in rounds alternating with the session group's closed
 *                  loop, and an open loop at 5k/s (the exchange then runs with `--fix-port 0`);
 *   floor          the design floor: closed loop alternating with the bare POST, open loop at 1k
 *                  and 5k/s (the exchange is stopped first);
 *   profile        a fresh exchange under `node --cpu-prof`, closed-loop create-order (or open
 *                  loop at --profile-rate); self time per function inside the measured window
 *                  (bench/load/profile.ts);
 *   ab             (only when named) two fresh exchanges, B with --ab-flags=<node flags> and/or
 *                  --ab-env K=V,... and/or --ab-script <another checkout's src/main.ts>,
 *                  closed-loop create-order (over trading sessions with --ab-session): one
 *                  uncounted round each, then alternating rounds (A B, B A, ...);
 *   replication    (only when named) a leader alone, with an async and with a sync follower in
 *                  alternating rounds of 512 connections (enough to saturate the leader alone); the follower's lag at 5,000 orders/s; one book change to
 *                  10,000 subscribers over the leader and two followers (groups/replication.ts).
 * Every loop is bounded in time and count and targets 127.0.0.1. A row whose unexpected answers
 * (anything but 200, or an expected cancel race) exceed 1% of its requests is marked invalid.
 *
 * Flags: --quick (≈30 s smoke run), --only a,b (select, reads, create-closed, create-open, mix,
 * session, fix, floor, profile, ab, replication), --rates 1000,5000,max, --conns N (64), --procs N (closed loops; 2..4 by cores; open
 * loops use one process per 25k/s offered), --users N (128), --duration ms,
 * --warmup ms, --server-flags="<node flags>" (exchange and floor, e.g. --server-flags=--trace-gc), --server-log dir
 * (each server's output in dir/<name>-<pid>.log), --replication-closed (the replication group's
 * closed-loop rounds only), --replication-conns N (their connections; 512), --client raw|agent, --pacing spin|timer|thread (open loop; spin), --profile-workload
 * create|mix|session|session-reports|fix, --profile-rate N (profile an open loop at N/s), --profile-dir dir (keep the
 * .cpuprofile files there), --floor-rates 1000,5000,10000 (the design floor's open loops), --out path.
 * Output: a table on stdout, bench/results/load.json (with the commit and the machine of the run;
 * `npx tsx bench/load/report.ts --write` puts its table into BENCHMARKS.md).
 *
 * Files: this orchestrator; flags.ts (the flags and their defaults); setup.ts (the exchange, users,
 * book, captured bodies); measure.ts (load generator processes, runs, aggregation); groups/ (one
 * file per group); rows.ts (result rows and notes); targets.ts (the targets).
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, release, totalmem } from "node:os";
import { dirname, join } from "node:path";
import type { ClientKind } from "./common.ts";
import {
  CANCEL_SHARE,
  CONNS,
  DURATION_MS,
  flags,
  ONLY,
  OPEN_RATE_PER_PROC,
  OUT,
  PACING,
  PROCS,
  PROFILE_WORKLOAD,
  QUICK,
  SERVER_FLAGS,
  SERVER_LOG,
  STREAM_USERS,
  USERS,
  WARMUP_MS,
} from "./flags.ts";
import { abTest } from "./groups/ab.ts";
import { runCreateClosed } from "./groups/create-closed.ts";
import { runCreateOpen } from "./groups/create-open.ts";
import { runFix } from "./groups/fix.ts";
import { runFloor } from "./groups/floor.ts";
import { runMix } from "./groups/mix.ts";
import { type ProfileOutcome, runProfile } from "./groups/profile.ts";
import { runReads } from "./groups/reads.ts";
import { runReplication } from "./groups/replication.ts";
import { type ClientChoice, selectClient } from "./groups/select.ts";
import { runSession } from "./groups/session.ts";
import { gens, Loadgen } from "./measure.ts";
import { type LoadResults, recordCommit, renderReport } from "./report.ts";
import { notes, rows } from "./rows.ts";
import { REPO_ROOT, spawnServer, waitHealthy } from "./servers.ts";
import { FIX_ARGS, type GroupContext, initGens, startExchange } from "./setup.ts";
import { evaluateTargets } from "./targets.ts";

async function main(): Promise<void> {
  const started = new Date();
  const commit = recordCommit(REPO_ROOT);
  const load0 = loadavg();
  const t0 = performance.now();
  console.log(
    `bench:load ${QUICK ? "(quick) " : ""}groups ${[...ONLY].join(", ")}; ${CONNS} connections, ${PROCS} load generator process(es), ` +
      `${USERS} users; warm-up ${WARMUP_MS} ms + ${DURATION_MS} ms per run; load average ${load0.map((l) => l.toFixed(2)).join(" ")}`,
  );
  const cleanups: (() => unknown)[] = [];
  let profiled: ProfileOutcome | null = null;
  let clientChoice: ClientChoice = {
    chosen: (flags.client as ClientKind | undefined) ?? "raw",
    raw: null,
    agent: null,
  };
  const ceilings: Record<string, number> = {};
  let exitCode = 0;
  try {
    // The FIX gateway only when asked: the ab group's other checkouts may not know the flag.
    const ex = await startExchange("exchange", { args: ONLY.has("fix") ? FIX_ARGS : [] });
    cleanups.push(
      () => ex.server.stop(),
      () => rmSync(ex.dir, { recursive: true, force: true }),
    );
    const bodiesFile = join(ex.dir, "bare-bodies.json");
    writeFileSync(bodiesFile, JSON.stringify(ex.bodies));
    const bare = await spawnServer({
      name: "bare-uws",
      script: "bench/load/bare-server.ts",
      args: [bodiesFile],
    });
    cleanups.push(() => bare.stop());
    await waitHealthy(bare.port);
    const floor = ONLY.has("floor")
      ? await spawnServer({
          name: "design-floor",
          script: "bench/load/floor-server.ts",
          nodeFlags: SERVER_FLAGS,
          logDir: SERVER_LOG,
          args: [bodiesFile, join(ex.dir, "floor.db")],
        })
      : null;
    if (floor !== null) {
      cleanups.push(() => floor.stop());
      await waitHealthy(floor.port);
    }
    gens.push(...Array.from({ length: PROCS }, () => Loadgen.start()));
    cleanups.push(() => {
      for (const g of gens) g.stop();
    });
    await initGens(ex.users);

    // select: the faster client on the bare POST drives everything.
    if (ONLY.has("select") && flags.client === undefined) clientChoice = await selectClient(bare);
    const ctx: GroupContext = { base: { client: clientChoice.chosen }, ex, bare, ceilings, cleanups };

    if (ONLY.has("reads")) await runReads(ctx);
    // The POST ceiling (and the maximum when asked for) is what create-open and mix compare with.
    const maxRate =
      ONLY.has("create-closed") || ONLY.has("create-open") || ONLY.has("mix")
        ? await runCreateClosed(ctx)
        : null;
    if (ONLY.has("create-open")) await runCreateOpen(ctx, maxRate);
    if (ONLY.has("mix")) await runMix(ctx);
    if (ONLY.has("session")) await runSession(ctx);
    if (ONLY.has("fix")) await runFix(ctx);

    // Stop the measured exchange before profiling a fresh one under --cpu-prof.
    const code = await ex.server.stop();
    if (code !== 0) notes.push(`exchange exited with code ${code} on SIGTERM`);

    if (floor !== null) await runFloor(ctx, floor);
    if (ONLY.has("ab")) await abTest(ctx.base);
    if (ONLY.has("replication")) await runReplication(ctx.base);
    if (ONLY.has("profile")) profiled = await runProfile(ctx);
  } catch (err) {
    exitCode = 1;
    console.error(err);
    notes.push(`run failed: ${(err as Error).message.split("\n")[0]}`);
  } finally {
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch {
        // best effort
      }
    }
  }

  const load1 = loadavg();
  const targets = evaluateTargets();
  const invalid = rows.filter((r) => !r.valid);
  if (invalid.length > 0) exitCode = 1;
  const results: LoadResults = {
    date: started.toISOString(),
    quick: QUICK,
    commit,
    machine: {
      cpu: cpus()[0]?.model ?? "?",
      cores: cpus().length,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      kernel: release(),
      node: process.version,
      loadAverageStart: load0.map((l) => Math.round(l * 100) / 100),
      loadAverageEnd: load1.map((l) => Math.round(l * 100) / 100),
    },
    settings: {
      server:
        "node --import tsx src/main.ts --rate-limit 0 (synchronous=FULL, the default), fresh temp database",
      connections: CONNS,
      loadGenerators: PROCS,
      users: USERS,
      pacing: PACING,
      profileWorkload: PROFILE_WORKLOAD,
      warmupMs: WARMUP_MS,
      durationMs: DURATION_MS,
      cancelShare: CANCEL_SHARE,
      streamUsers: STREAM_USERS,
      openLoopRatePerProcess: OPEN_RATE_PER_PROC,
    },
    client: clientChoice,
    valid: invalid.length === 0 && exitCode === 0,
    targets,
    rows,
    profile: profiled?.profile ?? null,
    profileThreadCpu: profiled?.threadCpu ?? [],
    notes,
    elapsedS: Math.round((performance.now() - t0) / 1000),
  };
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\n${renderReport(results)}`);
  console.log(
    `\nload average ${load0.map((l) => l.toFixed(2)).join(" ")} -> ${load1.map((l) => l.toFixed(2)).join(" ")}; ` +
      `${results.elapsedS} s; client ${clientChoice.chosen}; results ${OUT}${results.valid ? "" : " (INVALID rows present)"}`,
  );
  if (flags.out === undefined && !QUICK && flags.only === undefined)
    console.log("BENCHMARKS.md's table of this run: npx tsx bench/load/report.ts --write");
  process.exitCode = exitCode;
  setTimeout(() => process.exit(), 3000).unref();
}

void main();
