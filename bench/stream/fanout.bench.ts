/**
 * Question: does the exchange's stream fan-out (StreamHub: commit → serialise once → uWS publish,
 * slow-consumer sweep) deliver messages to 1,000 subscribers nearly as fast as a bare uWS publish
 * loop, with nothing lost? Target: at least 80% of the bare loop's delivered rate.
 *
 *   this process                                          fanout-clients.ts (own process)
 *   ┌───────────────────────────────────────────┐         ┌──────────────────────────────┐
 *   │ candidate  startExchange(): orders go into │  1,000  │ 1,000 WebSocket clients on    │
 *   │            the core (createOrder), commit  │ sockets │ bare TCP: frames and bytes    │
 *   │            → StreamHub → app.publish       │ ──────▶ │ counted per client, latency   │
 *   │ baseline   a bare uWS app publishing the   │         │ sampled from eventTimeMicro   │
 *   │            same number of same-size msgs   │ ◀────── │ progress (slowest client) and │
 *   │            to the same clients             │   IPC   │ the final report              │
 *   └───────────────────────────────────────────┘         └──────────────────────────────┘
 *
 * Both producers keep at most WINDOW messages ahead of the slowest client (progress over IPC), so
 * neither overruns a client: the delivered rate is what the whole pipeline sustains. The baseline
 * publishes BARE_BATCH messages per event-loop turn (uWS's best batch on this workload, see
 * DELIVERIES_PER_TURN in src/stream/hub.ts); the candidate keeps up to --in-flight orders in the
 * core (random limit orders of two users around 100.00, a third crossing) and adds none while the
 * hub holds more than two batches for later turns. Every client subscribes to `orders:btc_usdt` and
 * `history:btc_usdt`. Latency: a client's receive clock minus the eventTimeMicro the publisher
 * stamped (for book deltas: the hub's clock when it built the message). Rounds alternate
 * candidate and baseline; the machine may be shared, so the best of each decides (noise only
 * slows a run) and the medians are shown beside it.
 * Check at the end: every client received every message and exactly the bytes published.
 *
 * Maker channels (docs/API.md 12.5): each round also runs the exchange with every client on
 * `orders:`, `history:`, `bbo:` and `orders_l3:` of the pair (same producer, same --messages in all),
 * and a second table gives, per channel, the messages published, the deliveries per second and,
 * for `orders:` and `bbo:`, the time from the book change to the subscriber (p50/p99): receive
 * clock minus the message's eventTimeMicro (a BBO message's is the time of the change it follows,
 * stamped at its commit). `orders_l3:` messages carry no time. A server without these channels
 * (404 on GET .../bbo) skips this part and says so.
 *
 * Run: npx tsx bench/stream/fanout.bench.ts [--clients 1000] [--messages 12000] [--rounds 5]
 *      quick look: --clients 200 --messages 2000 --rounds 1
 */
import { fork } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import uws from "@trufflesuite/uws-js-unofficial";
import { startExchange } from "../../src/boot.ts";
import { parseSettings } from "../../src/config/settings.ts";
import { Code } from "../../src/errors/catalogue.ts";
import { silentLog } from "../../src/util/log.ts";
import { nowMicro } from "../../src/util/time.ts";
import { mulberry32 as random } from "../../test/support/prng.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const RESULTS = join(HERE, "..", "results", "stream.json");
const TARGET = 0.8;
const WINDOW = 1500;
/** Messages the baseline publishes per event-loop turn before letting uWS write them. */
const BARE_BATCH = 32;
/** Messages the candidate lets wait in the hub before it stops adding orders (two batches). */
const BACKLOG = 64;
const PAIR = "btc_usdt";
const TOPICS = [`orders:${PAIR}`, `history:${PAIR}`];
const SAMPLED_CLIENTS = 20;
const MAKER_TOPICS = [`orders:${PAIR}`, `history:${PAIR}`, `bbo:${PAIR}`, `orders_l3:${PAIR}`];
const HUB_NAME = "exchange stream (StreamHub)";
const MAKER_NAME = "exchange, maker channels";
const BARE_NAME = "bare uWS publish loop";

const { values: args } = parseArgs({
  options: {
    clients: { type: "string", default: "1000" },
    messages: { type: "string", default: "12000" },
    rounds: { type: "string", default: "5" },
    "in-flight": { type: "string", default: "128" },
  },
});
const CLIENTS = Number(args.clients);
const MESSAGES = Number(args.messages);
const ROUNDS = Number(args.rounds);
/** Orders the candidate's producer keeps in the core (many clients placing orders at once). */
const MAX_IN_FLIGHT = Number(args["in-flight"]);

// ---------------------------------------------------------------------- the client process

interface Report {
  counts: number[];
  bytes: number[];
  lastMs: number;
  closed: number;
  samples: number[];
  /** Deliveries per channel kind, and latency samples (µs) per kind. */
  kinds: Record<string, number>;
  kindSamples: Record<string, number[]>;
  cpu: NodeJS.CpuUsage;
}

const child = fork(join(HERE, "fanout-clients.ts"), [], { execArgv: ["--import", "tsx"] });
let progressMin = 0;
/** Wakes a producer waiting for room (a client progressed, or an order was answered). */
let wake: (() => void) | null = null;
const nudge = () => {
  const w = wake;
  wake = null;
  w?.();
};
const blocked = () =>
  new Promise<void>((resolve) => {
    wake = resolve;
  });
const waiting = new Map<string, (msg: Record<string, unknown>) => void>();
child.on("message", (msg: { type: string; min?: number } & Record<string, unknown>) => {
  if (msg.type === "progress") {
    progressMin = msg.min!;
    nudge();
    return;
  }
  const w = waiting.get(msg.type);
  if (w !== undefined) {
    waiting.delete(msg.type);
    w(msg);
  }
});
function ask<T>(msg: object, answer: string): Promise<T> {
  return new Promise((resolve) => {
    waiting.set(answer, resolve as (m: Record<string, unknown>) => void);
    child.send(msg);
  });
}
await new Promise<void>((resolve) => waiting.set("ready", () => resolve()));

/** Connects the clients and waits for the `snapshots` messages each gets on connect. */
async function connectClients(port: number, path: string, snapshots: number): Promise<void> {
  await ask(
    { type: "connect", port, path, count: CLIENTS, sampled: SAMPLED_CLIENTS, snapshots },
    "connected",
  );
  await ask({ type: "reset" }, "reset");
  progressMin = 0;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

// ---------------------------------------------------------------------- one measured run

interface RunResult {
  name: string;
  published: number;
  publishedBytes: number;
  perTopic: Record<string, { messages: number; bytes: number }>;
  delivered: number;
  lost: number;
  bytesOk: boolean;
  closed: number;
  seconds: number;
  deliveredPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencySamples: number;
  serverCpuSeconds: number;
  clientCpuSeconds: number;
  /** Per channel kind: deliveries counted by the clients and latency percentiles (ms; NaN: none). */
  kinds: Record<string, { delivered: number; p50Ms: number; p99Ms: number; samples: number }>;
}

/** The value at fraction `p` of sorted microsecond samples, in ms; NaN without samples. */
function percentileMs(sorted: Float64Array, p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor((sorted.length - 1) * p)] / 1000;
}

async function finish(
  name: string,
  startMs: number,
  published: () => number,
  perTopic: Record<string, { messages: number; bytes: number }>,
  cpuBefore: NodeJS.CpuUsage,
  clientCpuBefore: NodeJS.CpuUsage,
): Promise<RunResult> {
  const expected = published();
  const deadline = Date.now() + 60_000;
  while (progressMin < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 50));
  const cpu = process.cpuUsage(cpuBefore);
  const report = await ask<Report>({ type: "report" }, "report");
  const publishedBytes = Object.values(perTopic).reduce((s, t) => s + t.bytes, 0);
  const delivered = report.counts.reduce((s, n) => s + n, 0);
  const lost = report.counts.reduce((s, n) => s + Math.max(0, expected - n), 0);
  const seconds = (report.lastMs - startMs) / 1000;
  const sorted = Float64Array.from(report.samples).sort();
  const pct = (p: number) => percentileMs(sorted, p);
  const kinds: RunResult["kinds"] = {};
  for (const [kind, delivered] of Object.entries(report.kinds)) {
    const k = Float64Array.from(report.kindSamples[kind] ?? []).sort();
    kinds[kind] = { delivered, p50Ms: percentileMs(k, 0.5), p99Ms: percentileMs(k, 0.99), samples: k.length };
  }
  return {
    name,
    published: expected,
    publishedBytes,
    perTopic,
    delivered,
    lost,
    bytesOk: report.bytes.every((b) => b === publishedBytes),
    closed: report.closed,
    seconds,
    deliveredPerSecond: delivered / seconds,
    latencyP50Ms: pct(0.5),
    latencyP99Ms: pct(0.99),
    latencySamples: sorted.length,
    serverCpuSeconds: (cpu.user + cpu.system) / 1e6,
    clientCpuSeconds:
      (report.cpu.user + report.cpu.system - clientCpuBefore.user - clientCpuBefore.system) / 1e6,
    kinds,
  };
}

async function clientCpu(): Promise<NodeJS.CpuUsage> {
  return (await ask<Report>({ type: "report" }, "report")).cpu;
}

// ---------------------------------------------------------------------- candidate: the exchange

const dir = await mkdtemp(join(tmpdir(), "stream-bench-"));
// A fresh database with two funded users; the producer passes their ids to createOrder.
const users = [0, 1].map((i) => ({
  uid: `00000000-0000-4000-8000-00000000000${i}`,
  apiToken: `bench-token-${i}-0123456789`,
  secretKey: `bench-secret-${i}-0123456789`,
  balances: { btc: "1000000", usdt: "1000000000" },
}));
await writeFile(
  join(dir, "config.json"),
  JSON.stringify({
    pairs: [
      {
        name: PAIR,
        priceDecimals: 2,
        amountDecimals: 6,
        minAmount: "0.000001",
        maxAmount: "10000",
        maxPrice: "10000000",
      },
    ],
    users,
  }),
);
const exchange = await startExchange(
  parseSettings(
    [
      "--port",
      "0",
      "--db",
      join(dir, "exchange.db"),
      "--config",
      join(dir, "config.json"),
      "--rate-limit",
      "0",
      "--synchronous",
      "NORMAL",
    ],
    {},
  ),
  silentLog,
);
const hub = exchange.streamHub;
const core = exchange.exchange;
// The producer drives the core directly and takes the results from the edge's map (no HTTP
// request is made here).
const answers = exchange.answers;
/** The two users' ids (the fee account is made first, so they are not 0 and 1). */
const userIds = users.map((u) => {
  const id = exchange.accounts.idOf(u.uid);
  if (id === undefined) throw new Error(`user ${u.uid} was not created`);
  return id;
});

function topicCounts(topics: readonly string[]): Record<string, { messages: number; bytes: number }> {
  return Object.fromEntries(topics.map((t) => [t, { ...(hub.stats.get(t) ?? { messages: 0, bytes: 0 }) }]));
}

/** Does this server have the channels of docs/API.md 12.5 (GET .../bbo answers)? */
const makerChannels =
  (await fetch(`http://127.0.0.1:${exchange.port}/1.0/trade/pairs/${PAIR}/bbo`)).status === 200;

async function runExchange(round: number, topics: readonly string[] = TOPICS): Promise<RunResult> {
  // One snapshot on connect from each channel but history.
  const snapshots = topics.filter((t) => !t.startsWith("history:")).length;
  await connectClients(exchange.port, `/stream?streams=${topics.join(",")}`, snapshots);
  const before = topicCounts(topics);
  const publishedNow = () =>
    topics.reduce((s, t) => s + (hub.stats.get(t)?.messages ?? 0) - before[t].messages, 0);
  const rnd = random(1000 + round);
  let inFlight = 0;
  let submitted = 0;
  let refused = 0;
  const clientCpuBefore = await clientCpu();
  const cpuBefore = process.cpuUsage();
  const startMs = performance.timeOrigin + performance.now();
  // Random limit orders of two users around 100.00; a third of them cross the spread.
  while (publishedNow() < MESSAGES) {
    let sent = 0;
    // Like the baseline, offer what the stream takes: no new orders while the hub holds more
    // than two batches for later turns (they would only wait there).
    while (inFlight < MAX_IN_FLIGHT && hub.backlog < BACKLOG && publishedNow() - progressMin < WINDOW) {
      const side = rnd() < 0.5 ? 0 : 1;
      const cross = rnd() < 0.33;
      const offset = 1 + Math.floor(rnd() * 100);
      const price = 10_000 + (side === 0 ? (cross ? offset : -offset) : cross ? -offset : offset);
      const amount = 1000 + Math.floor(rnd() * 4000);
      const request = answers.order((err) => {
        inFlight--;
        if (err !== 0) refused++;
        nudge();
      });
      const code = core.createOrder(
        userIds[submitted % 2],
        0,
        { type: 0, side, price, amount, flags: 0, clientOrderId: undefined, expiresAt: 0, session: 0 },
        request,
      );
      if (code !== 0) {
        answers.drop(request);
        if (code !== Code.BUSY) refused++;
        break;
      }
      inFlight++;
      submitted++;
      sent++;
    }
    // Nothing could go: wait for room rather than spin the event loop.
    if (sent === 0) await blocked();
    else await turn();
  }
  while (inFlight > 0 || hub.backlog > 0) await (inFlight > 0 ? blocked() : turn());
  if (refused > 0) throw new Error(`${refused} orders refused`);
  const after = topicCounts(topics);
  const perTopic = Object.fromEntries(
    topics.map((t) => [
      t,
      { messages: after[t].messages - before[t].messages, bytes: after[t].bytes - before[t].bytes },
    ]),
  );
  const name = topics === TOPICS ? HUB_NAME : MAKER_NAME;
  const result = await finish(name, startMs, publishedNow, perTopic, cpuBefore, clientCpuBefore);
  await ask({ type: "disconnect" }, "disconnected");
  return result;
}

// ---------------------------------------------------------------------- baseline: bare uWS

const bare = uws.App();
bare.ws("/bare", {
  maxBackpressure: 0,
  idleTimeout: 120,
  sendPingsAutomatically: true,
  open: (ws) => {
    for (const t of TOPICS) ws.subscribe(t);
  },
});
const bareListen = await new Promise<uws.us_listen_socket>((resolve, reject) =>
  bare.listen("127.0.0.1", 0, (s) => (s === false ? reject(new Error("bare listen")) : resolve(s))),
);
const barePort = uws.us_socket_local_port(bareListen as unknown as uws.us_socket);

/** A message of `size` bytes on `topic`, stamped with the publish time like a book delta. */
function bareMessage(topic: string, size: number): string {
  const head = `{"stream":"${topic}","data":{"buy":[{"price":100.01,"amount":0.001234,"eventTimeMicro":"${Math.floor(nowMicro())}"}],"sell":[]},"pad":"`;
  return `${head}${"x".repeat(Math.max(0, size - head.length - 2))}"}`;
}

async function runBare(shape: Record<string, { messages: number; bytes: number }>): Promise<RunResult> {
  await connectClients(barePort, "/bare", 0);
  // The same count per topic, at the candidate's average size, interleaved in proportion.
  const plan = TOPICS.map((t) => ({
    topic: t,
    left: shape[t].messages,
    size: Math.round(shape[t].bytes / Math.max(1, shape[t].messages)),
  }));
  const total = plan.reduce((s, p) => s + p.left, 0);
  const perTopic: Record<string, { messages: number; bytes: number }> = Object.fromEntries(
    TOPICS.map((t) => [t, { messages: 0, bytes: 0 }]),
  );
  let published = 0;
  const clientCpuBefore = await clientCpu();
  const cpuBefore = process.cpuUsage();
  const startMs = performance.timeOrigin + performance.now();
  while (published < total) {
    let batch = 0;
    while (published < total && published - progressMin < WINDOW && batch < BARE_BATCH) {
      // The topic furthest behind its share goes next.
      const p = plan.reduce((a, b) => (a.left / total < b.left / total ? b : a));
      const msg = bareMessage(p.topic, p.size);
      bare.publish(p.topic, msg, false, false);
      p.left--;
      perTopic[p.topic].messages++;
      perTopic[p.topic].bytes += msg.length;
      published++;
      batch++;
    }
    if (batch === 0) await blocked();
    else await turn();
  }
  const result = await finish(BARE_NAME, startMs, () => published, perTopic, cpuBefore, clientCpuBefore);
  await ask({ type: "disconnect" }, "disconnected");
  return result;
}

// ---------------------------------------------------------------------- rounds, table, check

const runs: RunResult[] = [];
const makerRuns: RunResult[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const candidate = await runExchange(round);
  runs.push(candidate);
  runs.push(await runBare(candidate.perTopic));
  if (makerChannels) makerRuns.push(await runExchange(round, MAKER_TOPICS));
}

const best = (name: string) =>
  runs
    .filter((r) => r.name === name)
    .reduce((a, b) => (a.deliveredPerSecond >= b.deliveredPerSecond ? a : b));
const median = (name: string) => {
  const rates = runs
    .filter((r) => r.name === name)
    .map((r) => r.deliveredPerSecond)
    .sort((a, b) => a - b);
  const m = rates.length >> 1;
  return rates.length % 2 === 1 ? rates[m] : (rates[m - 1] + rates[m]) / 2;
};
const baseline = best(BARE_NAME);
const candidate = best(HUB_NAME);
const ratio = candidate.deliveredPerSecond / baseline.deliveredPerSecond;
const medianRatio = median(HUB_NAME) / median(BARE_NAME);
const lostTotal = [...runs, ...makerRuns].reduce((s, r) => s + r.lost + (r.bytesOk ? 0 : 1) + r.closed, 0);

const fmt = (n: number, d = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
const rows = runs.map((r, i) => [
  `${Math.floor(i / 2) + 1}`,
  r.name,
  fmt(r.published),
  fmt(r.publishedBytes / r.published, 0),
  fmt(r.delivered),
  fmt(r.lost),
  r.bytesOk ? "yes" : "NO",
  fmt(r.seconds, 2),
  fmt(r.deliveredPerSecond),
  fmt(r.latencyP50Ms, 2),
  fmt(r.latencyP99Ms, 2),
  fmt(r.serverCpuSeconds, 1),
  fmt(r.clientCpuSeconds, 1),
]);
const header = [
  "round",
  "producer",
  "messages",
  "avg B",
  "delivered",
  "lost",
  "bytes ok",
  "seconds",
  "delivered msg/s",
  "p50 ms",
  "p99 ms",
  "server cpu s",
  "client cpu s",
];
const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
const line = (cells: string[]) => `| ${cells.map((x, c) => x.padEnd(widths[c])).join(" | ")} |`;
console.log(
  `\n${CLIENTS} clients on ${TOPICS.join(" + ")}, ${cpus().length} cores, Node ${process.version}\n`,
);
console.log(line(header));
console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
for (const r of rows) console.log(line(r));
if (makerRuns.length === 0) {
  console.log(`\nmaker channels: skipped, this server has no bbo:/orders_l3: (GET .../bbo is not 200)`);
} else {
  // Per channel, all clients on the four channels: the round with the best total rate.
  const m = makerRuns.reduce((a, b) => (a.deliveredPerSecond >= b.deliveredPerSecond ? a : b));
  const mHeader = ["channel", "messages", "avg B", "delivered", "delivered msg/s", "p50 ms", "p99 ms"];
  const mRows = MAKER_TOPICS.map((topic) => {
    const kind = m.kinds[topic.slice(0, topic.indexOf(":"))];
    const shape = m.perTopic[topic];
    const timed = topic.startsWith("orders:") || topic.startsWith("bbo:");
    return [
      topic.slice(0, topic.indexOf(":") + 1),
      fmt(shape.messages),
      fmt(shape.bytes / Math.max(1, shape.messages)),
      fmt(kind?.delivered ?? 0),
      fmt((kind?.delivered ?? 0) / m.seconds),
      timed && kind !== undefined ? fmt(kind.p50Ms, 2) : "—",
      timed && kind !== undefined ? fmt(kind.p99Ms, 2) : "—",
    ];
  });
  mRows.push([
    "all",
    fmt(m.published),
    fmt(m.publishedBytes / m.published),
    fmt(m.delivered),
    fmt(m.deliveredPerSecond),
    "",
    "",
  ]);
  const mWidths = mHeader.map((h, c) => Math.max(h.length, ...mRows.map((r) => r[c].length)));
  const mLine = (cells: string[]) => `| ${cells.map((x, c) => x.padEnd(mWidths[c])).join(" | ")} |`;
  console.log(
    `\n${CLIENTS} clients on ${MAKER_TOPICS.join(" + ")} (best of ${makerRuns.length}: ` +
      `${fmt(m.seconds, 2)} s, lost ${fmt(m.lost)}); latency: book change → subscriber\n`,
  );
  console.log(mLine(mHeader));
  console.log(`|${mWidths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const r of mRows) console.log(mLine(r));
}
console.log(
  `\nbest exchange / best bare delivered rate: ${fmt(candidate.deliveredPerSecond)} / ` +
    `${fmt(baseline.deliveredPerSecond)} = ${(ratio * 100).toFixed(1)}% (target ≥ ${TARGET * 100}%); ` +
    `medians: ${(medianRatio * 100).toFixed(1)}%; lost messages: ${lostTotal}`,
);

await mkdir(dirname(RESULTS), { recursive: true });
await writeFile(
  RESULTS,
  `${JSON.stringify(
    {
      benchmark: "bench/stream/fanout.bench.ts",
      date: new Date().toISOString(),
      machine: { cores: cpus().length, cpu: cpus()[0]?.model, node: process.version },
      clients: CLIENTS,
      topics: TOPICS,
      window: WINDOW,
      runs,
      makerTopics: MAKER_TOPICS,
      makerRuns,
      best: { exchange: candidate, bare: baseline },
      ratio,
      medianRatio,
      target: TARGET,
      lost: lostTotal,
      pass: lostTotal === 0 && ratio >= TARGET,
    },
    (k, v) => (k === "samples" ? undefined : v),
    2,
  )}\n`,
);
console.log(`wrote ${RESULTS}`);

child.send({ type: "exit" });
uws.us_listen_socket_close(bareListen);
await exchange.close();
await rm(dir, { recursive: true, force: true });
// The check: nothing lost, every byte delivered, and the target met.
if (lostTotal !== 0) {
  console.error("FAIL: messages were lost or clients closed");
  process.exit(1);
}
if (ratio < TARGET) {
  console.error(`FAIL: exchange delivered ${(ratio * 100).toFixed(1)}% of the bare loop's rate`);
  process.exit(1);
}
console.log("PASS");
