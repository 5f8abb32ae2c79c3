/**
 * Group replication (only when named, `--only replication`; docs/OPERATIONS.md, "A second box:
 * follower"): what a follower costs its leader, and what followers deliver.
 *
 *   closed loop  create-order max on three fresh leaders in alternating rounds (measure.ts
 *                alternatingRounds): alone, with an `async` follower, with a `sync` follower
 *                (`--replication sync`), each with REPLICATION_CONNS connections (512: enough to
 *                saturate the leader alone). Server CPU is the leader's process only; its follower
 *                runs on the same cores and takes its share of them.
 *   lag          a fresh async leader and follower (the closed loops' boxes are gone) at 5,000
 *                orders/s offered (open loop) while a probe user places a buy every PROBE_MS at a
 *                price of its own far below the book: the time from its ack at the leader to its
 *                level in the follower's `orders:` stream. Beside it the lag the follower reports
 *                itself (`/health` lagMs), sampled.
 *   fan-out      FANOUT_CLIENTS subscribers to `orders:btc_usdt` spread over the async leader and
 *                two followers (each box's clients in a process of their own,
 *                bench/stream/fanout-clients.ts); one book change at a time on the leader, the time
 *                from its create-order's send to the last of the deliveries on all three boxes.
 */
import { type ChildProcess, fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";
import { ExchangeClient, ok } from "../../../src/client/index.ts";
import { encodeHistogram, mergedPercentiles, newHistogram } from "../common.ts";
import {
  CONNS,
  DURATION_MS,
  QUICK,
  REPLICATION_CLOSED,
  REPLICATION_CONNS,
  SERVER_FLAGS,
  SERVER_LOG,
  USERS,
  WARMUP_MS,
} from "../flags.ts";
import { alternatingRounds, type Measure, runOnce, totalThroughput } from "../measure.ts";
import { addRow, command, latencyRow, notes } from "../rows.ts";
import { REPO_ROOT, type ServerProcess, spawnServer, waitHealthy } from "../servers.ts";
import { benchServerArgs, type Exchange, initGens, startExchange } from "../setup.ts";

export const REPLICATION_ALONE = "create-order max (closed loop), leader alone";
export const REPLICATION_ASYNC = "create-order max (closed loop), async follower";
export const REPLICATION_SYNC = "create-order max (closed loop), sync follower";
export const LAG_RATE = 5000;
export const LAG_ROW = `follower lag at ${LAG_RATE} orders/s: leader ack -> the order on the follower's orders: stream`;
export const FANOUT_CLIENTS = QUICK ? 1500 : 10_000;
export const FANOUT_ROW = `one book change -> ${FANOUT_CLIENTS} subscribers over the leader and two followers`;
const FANOUT_CHANGES = QUICK ? 10 : 50;
const PROBE_MS = 5;
const PAIR = "btc_usdt";
/** Probe prices: whole numbers from here up, far below the prepared book (30,000 ± 25). */
const PROBE_BASE = 20_000;
const TOKEN = randomBytes(16).toString("hex");

interface Box {
  leader: Exchange;
  followers: ServerProcess[];
}

export async function runReplication(base: { client: "raw" | "agent" }): Promise<void> {
  console.log(
    `replication: a leader alone, with an async and with a sync follower (closed loops of ${REPLICATION_CONNS} connections):`,
  );
  notes.push(
    `replication: the closed loops hold ${REPLICATION_CONNS} connections (--replication-conns; the other groups ${CONNS})`,
  );
  const env = { REPLICATION_TOKEN: TOKEN };
  const port = ["--replication-port", "0"];
  const boxes: Box[] = [];
  try {
    // Every leader funds a user per connection of the closed loops (REPLICATION_CONNS).
    const users = Math.max(USERS, REPLICATION_CONNS);
    const alone = await startExchange("leader alone", { users });
    boxes.push({ leader: alone, followers: [] });
    const asyncBox = await withFollowers(await startExchange("leader, async", { env, args: port, users }), 1);
    boxes.push(asyncBox);
    let syncBox: Box | null = null;
    try {
      const leader = await startExchange("leader, sync", {
        env,
        args: [...port, "--replication", "sync"],
        users,
      });
      syncBox = await withFollowers(leader, 1);
      boxes.push(syncBox);
    } catch (err) {
      notes.push(
        `replication: no sync leader (${(err as Error).message.split("\n")[0]}): its row is not measured`,
      );
    }

    const sides = [
      { label: REPLICATION_ALONE, ex: alone },
      { label: REPLICATION_ASYNC, ex: asyncBox.leader },
      ...(syncBox === null ? [] : [{ label: REPLICATION_SYNC, ex: syncBox.leader }]),
    ];
    // Each follower's CPU per order its leader accepted, over that leader's rounds (the rest of
    // the time it idles).
    const followerCost = sides.map(() => ({ cpuMs: 0, orders: 0, threads: new Map<string, number>() }));
    const followerOf = (ex: Exchange) => boxes.find((b) => b.leader === ex)?.followers[0];
    const measured = await alternatingRounds(
      sides.map(({ label, ex }, k) => ({
        label,
        run: async (warmupMs: number, durationMs: number) => {
          await initGens(ex.users);
          const f = followerOf(ex);
          const orders0 = await ordersAccepted(ex.server.port);
          const cpu0 = f?.cpuMs() ?? null;
          const threads0 = f?.threadCpuMs();
          const r = await runOnce({
            ...base,
            label,
            server: ex.server,
            realServer: true,
            workload: "create",
            mode: "closed",
            conns: REPLICATION_CONNS,
            seed: 2,
            durationMs,
            warmupMs,
          });
          const cpu1 = f?.cpuMs() ?? null;
          if (f !== undefined && cpu0 !== null && cpu1 !== null) {
            const cost = followerCost[k];
            cost.cpuMs += cpu1 - cpu0;
            cost.orders += (await ordersAccepted(ex.server.port)) - orders0;
            for (const [tid, t] of f.threadCpuMs()) {
              const ms = t.ms - (threads0?.get(tid)?.ms ?? 0);
              cost.threads.set(t.name, (cost.threads.get(t.name) ?? 0) + ms);
            }
          }
          return r;
        },
      })),
    );
    sides.forEach(({ label }, k) => {
      const { cpuMs, orders, threads } = followerCost[k];
      if (orders === 0) return;
      const us = (ms: number) => Math.round(((ms * 1000) / orders) * 10) / 10;
      const byThread = [...threads.entries()]
        .filter(([, ms]) => us(ms) >= 0.5)
        .sort((a, b) => b[1] - a[1])
        .map(([name, ms]) => `${name} ${us(ms)}`);
      notes.push(
        `${label}: the follower's CPU ${us(cpuMs)} µs per order its leader accepted (${orders} orders; by thread: ${byThread.join(", ")})`,
      );
    });
    const aloneRate = totalThroughput(measured[0]);
    sides.forEach(({ label }, k) => {
      addRow(label, measured[k] as Measure, "create", {
        target: "exchange",
        mode: "closed",
        ceiling: k === 0 ? null : aloneRate,
        command: command("replication"),
      });
    });
    if (syncBox !== null)
      notes.push(
        `replication: the sync leader's /health after its rounds: ${await health(syncBox.leader.server.port)}`,
      );

    if (REPLICATION_CLOSED) return;
    // The lag and the fan-out run on a fresh async pair, on the prepared book alone: what the
    // closed loops left behind (hundreds of thousands of orders) would make their figures depend
    // on the connection count of the rounds before them.
    for (const box of boxes.splice(0)) await stopBox(box);
    const fresh = await withFollowers(await startExchange("leader, async, fresh", { env, args: port }), 1);
    boxes.push(fresh);
    await followerLag(base, fresh);
    fresh.followers.push(await startFollower(fresh.leader, "follower 2"));
    await fanOut(fresh);
  } finally {
    for (const box of boxes) await stopBox(box);
  }
}

async function withFollowers(leader: Exchange, n: number): Promise<Box> {
  const box: Box = { leader, followers: [] };
  for (let i = 1; i <= n; i++) box.followers.push(await startFollower(leader, `follower ${i}`));
  return box;
}

/** A follower of `leader` on a database of its own; resolves once it serves (`/health` 200). */
async function startFollower(leader: Exchange, name: string): Promise<ServerProcess> {
  if (leader.server.replicationPort === 0) throw new Error(`${leader.server.name}: no replication port`);
  const f = await spawnServer({
    name: `${leader.server.name}, ${name}`,
    script: "src/main.ts",
    nodeFlags: SERVER_FLAGS,
    logDir: SERVER_LOG,
    args: [
      ...benchServerArgs(leader.dir, `${name.replace(/\W+/g, "-")}.db`),
      "--follow",
      `127.0.0.1:${leader.server.replicationPort}`,
    ],
    env: { REPLICATION_TOKEN: TOKEN, ADMIN_TOKEN: leader.adminToken, RATE_LIMIT: "0" },
    startTimeoutMs: 60_000,
  });
  await waitHealthy(f.port, 60_000);
  return f;
}

async function stopBox(box: Box): Promise<void> {
  for (const f of box.followers) await f.stop();
  await box.leader.server.stop();
  rmSync(box.leader.dir, { recursive: true, force: true });
}

/** Orders the server accepted, from its `/metrics` (`exchange_orders_total`, every pair and type). */
async function ordersAccepted(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^exchange_orders_total\{[^}]*\} (\d+)$/gm)) n += Number(m[1]);
  return n;
}

async function health(port: number): Promise<string> {
  try {
    return await (await fetch(`http://127.0.0.1:${port}/health`)).text();
  } catch (err) {
    return (err as Error).message;
  }
}

/** A user of the probe's own on `leader`, funded for its buys. */
async function probeClient(leader: Exchange): Promise<ExchangeClient> {
  const origin = `http://127.0.0.1:${leader.server.port}`;
  const admin = new ExchangeClient({ baseUrl: origin, adminToken: leader.adminToken, timeoutMs: 15_000 });
  const u = ok(await admin.createUser(), "probe user");
  ok(await admin.deposit(u.uid, "usdt", "100000000"), "probe deposit");
  return new ExchangeClient({
    baseUrl: origin,
    apiToken: u.apiToken,
    secretKey: u.secretKey,
    timeoutMs: 15_000,
  });
}

/** Levels of the pair's `orders:` messages, by price, as they arrive on `port`. */
function bookStream(port: number, onLevel: (price: number, at: number) => void): Promise<WebSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/stream?streams=orders:${PAIR}`, {
    perMessageDeflate: false,
  });
  ws.on("message", (data: Buffer) => {
    const at = performance.now();
    const msg = JSON.parse(data.toString("utf8")) as { data?: { buy?: { price: number }[] } };
    for (const l of msg.data?.buy ?? []) onLevel(Number(l.price), at);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("stream did not open in 5 s")), 5000);
    ws.once("open", () => {
      clearTimeout(timer);
      resolve(ws);
    });
    ws.once("error", reject);
  });
}

async function followerLag(base: { client: "raw" | "agent" }, box: Box): Promise<void> {
  console.log(`  follower lag at ${LAG_RATE} orders/s (probe every ${PROBE_MS} ms) ...`);
  const probe = await probeClient(box.leader);
  const acked = new Map<number, number>();
  /** Probe prices the follower showed before their ack reached the probe client. */
  const early = new Set<number>();
  const hist = newHistogram();
  let seen = 0;
  const stream = await bookStream(box.followers[0].port, (price, at) => {
    if (price <= PROBE_BASE) return;
    const ackAt = acked.get(price);
    if (ackAt === undefined) {
      early.add(price);
      return;
    }
    acked.delete(price);
    seen++;
    hist.recordValue(Math.max(0, Math.round((at - ackAt) * 1000)));
  });
  const reported: number[] = [];
  let probes = 0;
  let running = true;
  const probing = (async () => {
    let next = performance.now();
    let i = 0;
    while (running) {
      const price = PROBE_BASE + ++i;
      const res = await probe.createOrder({
        pairName: PAIR,
        tradeType: "limit",
        directionType: "buy",
        price: String(price),
        amount: "0.001",
      });
      if (res.status === 200) {
        probes++;
        // Shown on the follower before the leader's ack reached the client: no lag to count.
        if (early.delete(price)) {
          seen++;
          hist.recordValue(0);
        } else acked.set(price, performance.now());
      }
      next += PROBE_MS;
      await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
    }
  })();
  const sampling = setInterval(async () => {
    const h = JSON.parse(await health(box.followers[0].port)) as { lagMs?: number };
    if (typeof h.lagMs === "number") reported.push(h.lagMs);
  }, 100);
  try {
    await initGens(box.leader.users);
    await runOnce({
      ...base,
      label: "async leader",
      server: box.leader.server,
      realServer: true,
      workload: "create",
      mode: "open",
      rate: LAG_RATE,
      seed: 3,
      durationMs: DURATION_MS,
      warmupMs: WARMUP_MS,
    });
  } finally {
    running = false;
    clearInterval(sampling);
    await probing;
  }
  const until = Date.now() + 10_000;
  while (acked.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  stream.terminate();
  const lat = mergedPercentiles([encodeHistogram(hist)]);
  hist.destroy();
  reported.sort((a, b) => a - b);
  const p99 =
    reported.length === 0
      ? "none"
      : `${reported[Math.min(reported.length - 1, Math.floor(reported.length * 0.99))]} ms`;
  console.log(
    `  lag p50 ${lat.p50Ms} ms, p99 ${lat.p99Ms} ms, max ${lat.maxMs} ms (${seen} of ${probes} probes)`,
  );
  latencyRow(LAG_ROW, lat, probes, {
    connections: 1,
    offered: LAG_RATE,
    notes: [
      `${probes} probe orders, one every ${PROBE_MS} ms, beside the open loop; the follower's own /health lagMs sampled every 100 ms: p99 ${p99}, max ${reported.at(-1) ?? "none"} ms`,
    ],
    command: command("replication"),
  });
}

/** The subscriber processes' side (bench/stream/fanout-clients.ts), one per box. */
interface Subscribers {
  child: ChildProcess;
  min: number;
  ask: (msg: object, answer: string) => Promise<Record<string, unknown>>;
}

function subscribers(): Promise<Subscribers> {
  const child = fork(join(REPO_ROOT, "bench", "stream", "fanout-clients.ts"), [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const waiting = new Map<string, (m: Record<string, unknown>) => void>();
  const s: Subscribers = {
    child,
    min: 0,
    ask: (msg, answer) =>
      new Promise((resolve) => {
        waiting.set(answer, resolve);
        child.send(msg);
      }),
  };
  child.on("message", (m: Record<string, unknown>) => {
    if (m.type === "progress") s.min = m.min as number;
    const w = waiting.get(m.type as string);
    if (w !== undefined) {
      waiting.delete(m.type as string);
      w(m);
    }
  });
  return new Promise((resolve) => waiting.set("ready", () => resolve(s)));
}

async function fanOut(box: Box): Promise<void> {
  const ports = [box.leader.server.port, ...box.followers.map((f) => f.port)];
  console.log(
    `  fan-out: ${FANOUT_CLIENTS} subscribers over ${ports.length} boxes, ${FANOUT_CHANGES} book changes ...`,
  );
  const groups = await Promise.all(ports.map(() => subscribers()));
  const probe = await probeClient(box.leader);
  const hist = newHistogram();
  try {
    await Promise.all(
      groups.map((g, k) =>
        g.ask(
          {
            type: "connect",
            port: ports[k],
            path: `/stream?streams=orders:${PAIR}`,
            count: Math.floor(FANOUT_CLIENTS / ports.length) + (k < FANOUT_CLIENTS % ports.length ? 1 : 0),
            sampled: 0,
            snapshots: 1,
          },
          "connected",
        ),
      ),
    );
    for (const g of groups) await g.ask({ type: "reset" }, "reset");
    for (const g of groups) g.min = 0;
    for (let i = 1; i <= FANOUT_CHANGES; i++) {
      const t0 = performance.now();
      ok(
        await probe.createOrder({
          pairName: PAIR,
          tradeType: "limit",
          directionType: "buy",
          price: String(PROBE_BASE - i),
          amount: "0.001",
        }),
        "fan-out book change",
      );
      const until = Date.now() + 10_000;
      while (groups.some((g) => g.min < i) && Date.now() < until) await new Promise((r) => setImmediate(r));
      if (groups.some((g) => g.min < i)) break;
      hist.recordValue(Math.max(0, Math.round((performance.now() - t0) * 1000)));
    }
  } finally {
    for (const g of groups) {
      await g.ask({ type: "disconnect" }, "disconnected");
      g.child.send({ type: "exit" });
    }
  }
  const lat = mergedPercentiles([encodeHistogram(hist)]);
  hist.destroy();
  console.log(`  fan-out p50 ${lat.p50Ms} ms, p99 ${lat.p99Ms} ms, max ${lat.maxMs} ms`);
  latencyRow(FANOUT_ROW, lat, FANOUT_CHANGES, {
    connections: FANOUT_CLIENTS,
    notes: [
      `${FANOUT_CHANGES} book changes one at a time (a new level each), from the create-order's send to the last of ${FANOUT_CLIENTS} deliveries (subscriber processes report every 2 ms); ${ports.length} boxes`,
    ],
    command: command("replication"),
  });
}
