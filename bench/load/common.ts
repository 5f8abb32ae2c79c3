/**
 * Types and helpers shared by the orchestrator (run.ts), the load generator process (loadgen.ts)
 * and the bare ceiling server (bare-server.ts). Nothing here touches the network.
 */
import * as hdr from "hdr-histogram-js";

// ---- users, pairs and the order workload -----------------------------------------------------------

export interface BenchUser {
  uid: string;
  apiToken: string;
  secretKey: string;
}

/** Price band and order size per pair: every limit price is `mid ± k × step`, k in 1..LEVELS. */
export interface PairPlan {
  name: string;
  /** Decimals of `price` and `amount` as the config gives them (prices/amounts are sent as strings). */
  priceDecimals: number;
  amountDecimals: number;
  mid: number;
  step: number;
  amount: number;
}

/** Levels per side of the prepared book (the issue asks for 50 + 50). */
export const LEVELS = 50;

export const PAIR_PLANS: readonly PairPlan[] = [
  { name: "btc_usdt", priceDecimals: 2, amountDecimals: 6, mid: 30_000, step: 0.5, amount: 0.001 },
  { name: "eth_usdt", priceDecimals: 2, amountDecimals: 5, mid: 2_000, step: 0.1, amount: 0.01 },
  { name: "eth_btc", priceDecimals: 6, amountDecimals: 4, mid: 0.05, step: 0.00001, amount: 0.01 },
];

/**
 * Funding per user (deposited through the admin API). Generous: the worst case of a whole run is a
 * few thousand resting buys per user at ~30 usdt each, far below this.
 */
export const FUNDING: Readonly<Record<string, string>> = {
  usdt: "10000000",
  btc: "10000",
  eth: "100000",
};

/** `mid + k × step` as a decimal string with the pair's price decimals (no float noise). */
export function priceAt(plan: PairPlan, k: number): string {
  const scale = 10 ** plan.priceDecimals;
  const ticks = Math.round(plan.mid * scale) + Math.round(k * plan.step * scale);
  return formatScaled(ticks, plan.priceDecimals);
}

export function amountOf(plan: PairPlan, multiple = 1): string {
  const scale = 10 ** plan.amountDecimals;
  return formatScaled(Math.round(plan.amount * scale) * multiple, plan.amountDecimals);
}

function formatScaled(units: number, decimals: number): string {
  if (decimals === 0) return String(units);
  const s = String(units).padStart(decimals + 1, "0");
  const int = s.slice(0, s.length - decimals);
  const frac = s.slice(s.length - decimals).replace(/0+$/, "");
  return frac === "" ? int : `${int}.${frac}`;
}

// ---- scenarios ---------------------------------------------------------------------------------------

/**
 * What a request loop sends:
 * - `create`: signed create-order only (limit and market, buy and sell, about a third crossing);
 * - `mix`: create-order plus cancel-order of the user's own resting orders (`cancelShare` of the
 *   requests once there is something to cancel);
 * - `get-book`: `GET /1.0/trade/pairs/{pair}/orders` over the three pairs;
 * - `get-pairs`: `GET /1.0/trade/pairs`.
 */
export type Workload = "create" | "mix" | "get-book" | "get-pairs";

export type ClientKind = "raw" | "agent";

export interface RunSpec {
  /** A label for logs. */
  label: string;
  target: { host: "127.0.0.1"; port: number };
  workload: Workload;
  client: ClientKind;
  /** Connections opened by this load generator process. */
  connections: number;
  /** Closed loop: `connections` loops, each one request in flight. Open loop: `rate` requests/s. */
  mode: "closed" | "open";
  /** Offered rate of this process (open loop only), requests per second. */
  rate: number;
  warmupMs: number;
  durationMs: number;
  /** After the last scheduled send (open loop) or the deadline (closed loop): wait this long at most. */
  drainMs: number;
  /** Hard cap on requests sent by this process (bounded loops). */
  maxRequests: number;
  /** Open loop: how to wait for the next scheduled send (see loadgen.ts). */
  pacing: "spin" | "timer" | "thread";
  /** Share of cancels in the `mix` workload. */
  cancelShare: number;
  seed: number;
  /** Measure create-order ack → `user_orders` stream message for this many users (0: off). */
  streamUsers: number;
  /** The real server answers orders; the bare server answers constants (no ids to cancel). */
  realServer: boolean;
  /**
   * Closed loop only: every READ_PROBE_EVERY_MS, slot 0 reads the order it has just created back
   * (`GET /trade/orders/{id}`, from its committed row) before its next create: the latency of a
   * read right after its ack (docs/API.md 6), which waits for the batch's rows to be applied.
   */
  readProbe: boolean;
  /**
   * 0: HTTP (`client`). Above 0: trading sessions (session-clients.ts): `connections` sessions, one
   * per user, each with up to this many calls in flight (the closed loop runs connections x depth
   * loops, loop i on session i mod connections).
   */
  sessionDepth: number;
  /**
   * Above 0 (with sessionDepth): the sessions are FIX sessions (fix-clients.ts) on this port of the
   * exchange's FIX gateway (docs/API.md 17), the REST create-order bodies sent as NewOrderSingle.
   */
  fixPort: number;
  /**
   * WebSocket sessions only: log on with `"reports": true` and give every create-order a
   * `clientOrderId` unique over the run, so that each session receives the reports of its orders'
   * changes (docs/API.md 13) and the server keeps the ids as for a FIX session's ClOrdIDs: the same
   * work as the FIX group's sessions (BENCHMARKS.md "FIX gateway (issue 43)").
   */
  sessionReports: boolean;
}

/** See RunSpec.readProbe: at most one read-back per load generator process this often. */
export const READ_PROBE_EVERY_MS = 50;

/** RunSpec.readProbe's reads: how many, how many failed, and their latency (µs) from send to answer. */
export interface ReadProbeResult {
  count: number;
  failed: number;
  histogram: string;
}

/** Per request kind: counts and an HDR histogram (µs) of latency from the scheduled send time. */
export interface KindResult {
  sent: number;
  /** Answers by HTTP status ("200", "400", ...), plus "error" (network) and "timeout" (never answered). */
  statuses: Record<string, number>;
  /** Answers of the expected shape (create: a body with an order id; reads: a JSON array/object). */
  verified: number;
  /** Non-200 answers that are an expected race (a cancel of an order filled meanwhile: 400 orderId). */
  expectedErrors: number;
  /** Good answers (and expected cancel races) received inside the window (throughput = this / window). */
  completedInWindow: number;
  /** A few distinct unexpected answers (`status body`), for the report. */
  errorSamples: string[];
  /** Compressed base64 HDR histogram of latencies in µs (measurement window only). */
  histogram: string;
}

export interface StreamResult {
  status: "ok" | "skipped";
  note: string;
  connections: number;
  /** Orders whose ack and first `user_orders` message were both seen in the window. */
  matched: number;
  /** Of those, how many arrived on the stream before the HTTP ack (recorded as 0). */
  streamFirst: number;
  /** Acks of subscribed users whose stream message never came before the end of the run. */
  missing: number;
  histogram: string;
}

export interface RunResult {
  label: string;
  /** Wall time of the measurement window, ms. */
  windowMs: number;
  /** Requests answered (any status) whose scheduled send fell in the window. */
  kinds: Record<string, KindResult>;
  /** Lag of the actual write behind the scheduled send (open loop), µs histogram. */
  sendLag: string;
  /** Requests never sent because the backlog outlived the drain time (open loop, saturated). */
  unsent: number;
  stream: StreamResult | null;
  readAfterAck: ReadProbeResult | null;
  /** CPU time of the load generator process during the run, ms (user + system). */
  cpuMs: number;
}

// ---- messages between the orchestrator and a load generator process ---------------------------------

export type ToLoadgen =
  | { type: "init"; users: BenchUser[]; index: number }
  | { type: "run"; id: number; spec: RunSpec }
  | { type: "exit" };

export type FromLoadgen =
  | { type: "ready" }
  | { type: "result"; id: number; result: RunResult }
  | { type: "failed"; id: number; error: string };

// ---- histograms --------------------------------------------------------------------------------------

/** µs, 1 µs to 120 s, 3 significant digits. */
export function newHistogram(): hdr.Histogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 120_000_000,
    numberOfSignificantValueDigits: 3,
  });
}

export function encodeHistogram(h: hdr.Histogram): string {
  return hdr.encodeIntoCompressedBase64(h);
}

export function decodeHistogram(encoded: string): hdr.Histogram {
  return hdr.decodeFromCompressedBase64(encoded);
}

/** Sums encoded histograms (from several load generator processes). */
function mergeHistograms(encoded: readonly string[]): hdr.Histogram {
  const total = newHistogram();
  for (const e of encoded) {
    const h = decodeHistogram(e);
    total.add(h);
    h.destroy();
  }
  return total;
}

export interface Percentiles {
  count: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

const ms = (us: number) => Math.round(us) / 1000;

export function percentiles(h: hdr.Histogram): Percentiles {
  if (h.totalCount === 0) return { count: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, p999Ms: 0, maxMs: 0 };
  return {
    count: h.totalCount,
    p50Ms: ms(h.getValueAtPercentile(50)),
    p90Ms: ms(h.getValueAtPercentile(90)),
    p99Ms: ms(h.getValueAtPercentile(99)),
    p999Ms: ms(h.getValueAtPercentile(99.9)),
    maxMs: ms(h.maxValue),
  };
}

/** The percentiles of the sum of encoded histograms (from several load generator processes). */
export function mergedPercentiles(encoded: readonly string[]): Percentiles {
  const h = mergeHistograms(encoded);
  try {
    return percentiles(h);
  } finally {
    h.destroy();
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}
