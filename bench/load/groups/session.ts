/**
 * Group session (issue 29): create-order over trading sessions (docs/API.md 13) against the same
 * server, users, book and order workload as the REST rows.
 *
 * - closed loop: SESSIONS sessions (one user each, split over the load generator processes), each
 *   keeping up to SESSION_DEPTH calls in flight, alternating in rounds with the bare uWS WebSocket
 *   ceiling (bare-server.ts `/session`: a constant ack to the same frames);
 * - open loops at SESSION_RATES, latency from the scheduled send; at 5,000/s REST create-order is
 *   measured with the same settings (no user streams), in rounds alternating with the session's,
 *   for the p50/p99 target;
 * - cancel-on-disconnect: a session logged on with `cancelOnDisconnect` places 100 resting orders,
 *   then the client closes; the row is the time from the close to the last of the 100 level
 *   removals on an `orders:{pair}` stream, COD_REPS repetitions, no other load.
 * Session logons ask for `"reports": false`: REST create-order has no user stream either.
 */
import { createHmac } from "node:crypto";
import WebSocket from "ws";
import {
  amountOf,
  type BenchUser,
  encodeHistogram,
  LEVELS,
  mergedPercentiles,
  newHistogram,
  PAIR_PLANS,
  priceAt,
} from "../common.ts";
import { QUICK } from "../flags.ts";
import { type Measure, measure, measurePair, type RunParams, totalThroughput } from "../measure.ts";
import type { Row } from "../report.ts";
import { addRow, command, latencyRow, notes } from "../rows.ts";
import type { GroupContext } from "../setup.ts";

export const SESSIONS = 8;
export const SESSION_DEPTH = 64;
export const SESSION_RATES = QUICK ? [1000, 5000] : [1000, 5000, 10000];
export const COD_REPS = QUICK ? 5 : 20;
export const COD_ORDERS = 100;

export const SESSION_MAX = "session create-order max (closed loop)";
export const SESSION_CEILING = "bare uWS ceiling: WebSocket (same session frames, constant ack)";
export const REST_AT_5K = "REST create-order open loop 5000/s (beside the session rows)";
export const sessionOpen = (rate: number) => `session create-order open loop ${rate}/s`;
export const COD_ROW = `session cancel-on-disconnect: close -> last of ${COD_ORDERS} cancels on orders:{pair}`;

export async function runSession({ base, bare, ex, ceilings }: GroupContext): Promise<void> {
  console.log(
    `trading sessions: ${SESSIONS} sessions x ${SESSION_DEPTH} calls in flight (closed loop), open loops, cancel-on-disconnect:`,
  );
  const session = { sessions: SESSIONS, sessionDepth: SESSION_DEPTH };
  const bareParams: RunParams = {
    ...base,
    ...session,
    label: "bare WebSocket",
    server: bare,
    realServer: false,
    workload: "create",
    mode: "closed",
  };
  const realParams: RunParams = {
    ...base,
    ...session,
    label: "exchange session create-order",
    server: ex.server,
    realServer: true,
    workload: "create",
    mode: "closed",
    seed: 2,
  };
  const [c, e] = await measurePair(bareParams, realParams);
  ceilings.ws = totalThroughput(c);
  addRow(SESSION_CEILING, c, null, { target: "bare-uws", mode: "closed", command: command("session") });
  addRow(SESSION_MAX, e, "create", {
    target: "exchange",
    mode: "closed",
    ceiling: ceilings.ws,
    command: command("session"),
  });

  const open = (rate: number, label: string, withSessions: boolean): RunParams => ({
    ...base,
    ...(withSessions ? session : {}),
    label,
    server: ex.server,
    realServer: true,
    workload: "create",
    mode: "open",
    rate,
    seed: 3,
  });
  const addSessionRow = (rate: number, m: Measure) =>
    addRow(sessionOpen(rate), m, "create", {
      target: "exchange",
      mode: "open",
      offered: rate,
      ceiling: ceilings.ws ?? null,
      command: command("session"),
    });
  for (const rate of SESSION_RATES) {
    if (rate !== 5000) {
      addSessionRow(rate, await measure(open(rate, `exchange session create-order @${rate}/s`, true)));
      continue;
    }
    // REST and session at 5,000/s in alternating rounds: each meets the other's after-effects (a
    // WAL checkpoint, the writer's backlog) alike, so their latencies compare.
    const [r, m] = await measurePair(
      open(rate, "exchange REST create-order @5000/s", false),
      open(rate, "exchange session create-order @5000/s", true),
    );
    addRow(REST_AT_5K, r, "create", {
      target: "exchange",
      mode: "open",
      offered: rate,
      ceiling: ceilings.post ?? null,
      command: command("session"),
    });
    addSessionRow(rate, m);
  }

  try {
    await cancelOnDisconnect(ex.server.port, ex.users[ex.users.length - 1]);
  } catch (err) {
    notes.push(`cancel-on-disconnect row failed: ${(err as Error).message}`);
  }
}

// ---- cancel-on-disconnect ------------------------------------------------------------------------------

const plan = PAIR_PLANS[2]; // eth_btc
/** Price ticks of a level (the stream's text and ours may differ in trailing zeros). */
const ticks = (price: string) => Math.round(Number(price) * 10 ** plan.priceDecimals);
/** 100 buy levels below the prepared book, one order each. */
const PRICES = Array.from({ length: COD_ORDERS }, (_, i) => priceAt(plan, -(LEVELS + 1 + i)));

interface Level {
  price: string;
  amount: string;
}

async function cancelOnDisconnect(port: number, user: BenchUser): Promise<Row> {
  console.log(`  cancel-on-disconnect: ${COD_REPS} repetitions of ${COD_ORDERS} orders ...`);
  const book = new Map<number, boolean>(); // level ticks -> present (non-zero amount)
  let changed: () => void = () => {};
  const stream = new WebSocket(`ws://127.0.0.1:${port}/stream?streams=orders:${plan.name}`, {
    perMessageDeflate: false,
  });
  stream.on("message", (data: Buffer) => {
    const t = performance.now();
    const msg = JSON.parse(data.toString("utf8")) as { data?: { buy?: Level[] } };
    for (const l of msg.data?.buy ?? []) book.set(ticks(l.price), Number(l.amount) !== 0);
    lastChange = t;
    changed();
  });
  let lastChange = 0;
  await opened(stream);
  const wanted = PRICES.map(ticks);
  const until = (cond: () => boolean, what: string, ms = 10_000) =>
    new Promise<void>((resolve, reject) => {
      if (cond()) return resolve();
      const timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
      changed = () => {
        if (!cond()) return;
        clearTimeout(timer);
        changed = () => {};
        resolve();
      };
    });
  const hist = newHistogram();
  try {
    for (let rep = 0; rep < COD_REPS; rep++) {
      const s = await logon(port, user);
      const answers = await Promise.all(
        PRICES.map((price, i) =>
          s.call(
            i + 1,
            "order.create",
            `{"pairName":"${plan.name}","tradeType":"limit","directionType":"buy","price":"${price}","amount":"${amountOf(plan)}"}`,
          ),
        ),
      );
      const refused = answers.find((a) => !a.includes('"status":200'));
      if (refused !== undefined) throw new Error(`order.create refused: ${refused.slice(0, 200)}`);
      await until(() => wanted.every((p) => book.get(p) === true), "the 100 levels on the stream");
      const t0 = performance.now();
      s.ws.close();
      await until(() => wanted.every((p) => book.get(p) === false), "the 100 cancels on the stream");
      hist.recordValue(Math.max(0, Math.round((lastChange - t0) * 1000)));
    }
  } finally {
    stream.terminate();
  }
  const lat = mergedPercentiles([encodeHistogram(hist)]);
  hist.destroy();
  console.log(`  cancel-on-disconnect ... p50 ${lat.p50Ms} ms, p99 ${lat.p99Ms} ms, max ${lat.maxMs} ms`);
  return latencyRow(COD_ROW, lat, COD_REPS, {
    connections: 1,
    notes: [`${COD_REPS} repetitions; ${COD_ORDERS} resting orders of one session each; no other load`],
    command: command("session"),
  });
}

function opened(ws: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("WebSocket did not open in 5 s")), 5000);
    ws.once("open", () => {
      clearTimeout(timer);
      resolve();
    });
    ws.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** A session logged on with cancelOnDisconnect (no reports); `call` resolves with the answer's text. */
async function logon(
  port: number,
  user: BenchUser,
): Promise<{ ws: WebSocket; call: (id: number, method: string, params: string) => Promise<string> }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/session`, { perMessageDeflate: false });
  const waiting = new Map<number, (text: string) => void>();
  let hello: (challenge: string) => void = () => {};
  const challenge = new Promise<string>((r) => {
    hello = r;
  });
  ws.on("message", (data: Buffer) => {
    const text = data.toString("utf8");
    const f = JSON.parse(text) as { id?: number; event?: string; challenge?: string };
    if (f.event === "hello") hello(f.challenge ?? "");
    else if (typeof f.id === "number") {
      waiting.get(f.id)?.(text);
      waiting.delete(f.id);
    }
  });
  await opened(ws);
  const call = (id: number, method: string, params: string) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${method}: no answer in 10 s`)), 10_000);
      waiting.set(id, (text) => {
        clearTimeout(timer);
        resolve(text);
      });
      ws.send(`{"id":${id},"method":"${method}","params":${params}}`);
    });
  const signature = createHmac("sha256", user.secretKey)
    .update(await challenge)
    .digest("hex");
  const a = await call(
    0,
    "session.logon",
    JSON.stringify({ apiToken: user.apiToken, signature, cancelOnDisconnect: true, reports: false }),
  );
  if (!a.includes('"status":200')) throw new Error(`logon refused: ${a.slice(0, 200)}`);
  return { ws, call };
}
