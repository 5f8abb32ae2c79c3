/**
 * One question: what does counting a request cost on the hot path, prom-client's labelled children
 * (looked up in a Map per route and status, as the server did) against the plain arrays of
 * src/core/services/metrics.ts? Both count the same requests over the same routes and statuses; the checksum at
 * the end reads both back so neither loop is dead code.
 *
 *   npx tsx bench/http/metrics.bench.ts
 */
import { Counter, Histogram, Registry } from "prom-client";
import { Bench } from "tinybench";
import { Metrics } from "../../src/core/services/metrics.ts";
import { taskNs } from "./task-time.ts";

const ROUTES = [
  "/trade/create-order",
  "/trade/cancel-order",
  "/trade/pairs/:pairName/orders",
  "/trade/pairs",
];
const STATUSES = [200, 200, 200, 400];

const registry = new Registry();
const requests = new Counter({
  name: "r",
  help: "r",
  labelNames: ["route", "status"],
  registers: [registry],
});
const latency = new Histogram({
  name: "l",
  help: "l",
  labelNames: ["route"],
  buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1],
  registers: [registry],
});
const counters = new Map<string, { inc(): void }>();
const timers = new Map<string, { observe(v: number): void }>();
function promClient(route: string, status: number, seconds: number): void {
  const key = `${route} ${status}`;
  let counter = counters.get(key);
  if (counter === undefined) {
    counter = requests.labels(route, String(status));
    counters.set(key, counter);
  }
  counter.inc();
  let timer = timers.get(route);
  if (timer === undefined) {
    timer = latency.labels(route);
    timers.set(route, timer);
  }
  timer.observe(seconds);
}

const metrics = new Metrics();
let i = 0;
const bench = new Bench({ time: 1000, warmupTime: 200 });
bench
  .add("prom-client labelled children (baseline)", () => {
    i++;
    promClient(ROUTES[i & 3], STATUSES[(i >> 2) & 3], (i & 1023) * 1e-6);
  })
  .add("plain arrays (src/core/services/metrics.ts)", () => {
    i++;
    metrics.request(ROUTES[i & 3], STATUSES[(i >> 2) & 3], (i & 1023) * 1e-6);
  });
await bench.run();
const rows = bench.tasks.map((t) => ({ task: t.name, "ns/request": Math.round(taskNs(t).mean) }));
console.table(rows);
console.log(`ratio baseline / arrays: ${(rows[0]["ns/request"] / rows[1]["ns/request"]).toFixed(1)}x`);
const ours = (await metrics.render()).match(/exchange_http_requests_total\{[^}]*\} \d+/g)?.length ?? 0;
const theirs = (await registry.metrics()).match(/^r\{/gm)?.length ?? 0;
console.log(`checksum: ${ours} series (arrays), ${theirs} series (prom-client)`);
if (ours !== theirs || ours === 0) throw new Error("the two counted different series");
