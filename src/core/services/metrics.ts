/**
 * Prometheus metrics (docs/API.md 1: `GET /metrics`).
 *
 * The hot path only writes numbers into arrays fixed at first use: a request adds to its route's
 * status counter and latency bucket, an order or a trade to its pair's counter. No labels are
 * hashed, no object is allocated per request (prom-client's `labels()` and `inc({...})` did both,
 * 5-8 µs of an order's CPU under load). Those series are rendered to the text format at scrape
 * time, after what prom-client renders for the rest (process metrics, stream connections, the
 * writer's committed totals).
 */
import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { WriterStats } from "../record-sink.ts";

/** Latency bucket upper bounds in seconds (`le`), ascending. */
export const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1,
];

/** HTTP statuses are 100..599: one counter slot each. */
const FIRST_STATUS = 100;
const STATUS_SLOTS = 500;

/** One route's counters: requests per status and a latency histogram. */
class RouteSeries {
  readonly byStatus = new Float64Array(STATUS_SLOTS);
  /** Per bucket, requests at or below its bound and above the previous one; last: above all. */
  readonly buckets = new Float64Array(LATENCY_BUCKETS.length + 1);
  sum = 0;
  count = 0;

  constructor(readonly route: string) {}
}

export class Metrics {
  readonly registry = new Registry();
  readonly streamConnections: Gauge;
  private readonly routes = new Map<string, RouteSeries>();
  private readonly pairNames: readonly string[];
  /** Orders accepted per pair and type: `[pair * 2 + type]` (type 0 limit, 1 market). */
  private readonly orders: Float64Array;
  private readonly trades: Float64Array;

  /**
   * `dbStats`: the database writer's committed totals, read at scrape time. `pairs`: the configured
   * pair names, in config order (pair indices of `order` and `trade`).
   */
  constructor(
    dbStats: () => WriterStats = () => ({ batches: 0, records: 0 }),
    pairs: readonly string[] = [],
  ) {
    this.pairNames = pairs;
    this.orders = new Float64Array(pairs.length * 2);
    this.trades = new Float64Array(pairs.length);
    collectDefaultMetrics({ register: this.registry });
    const fromWriter = (name: string, help: string, pick: (s: WriterStats) => number): void => {
      new Counter({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.reset();
          this.inc(pick(dbStats()));
        },
      });
    };
    fromWriter(
      "exchange_db_transactions_total",
      "Transactions committed by the database writer (one per group commit)",
      (s) => s.batches,
    );
    fromWriter(
      "exchange_db_records_total",
      "Records committed by the database writer (orders, trades, balances, candles, ...; repeats of one balance, order or candle within a transaction are written once)",
      (s) => s.records,
    );
    this.streamConnections = new Gauge({
      name: "exchange_stream_connections",
      help: "Open stream (WebSocket) connections",
      registers: [this.registry],
    });
  }

  /**
   * Client order ids (src/core/client-ids.ts), read at scrape time: creates judged by the database and
   * how many of those were duplicates, keys held in memory, and the filter's size.
   */
  clientIds(read: () => { dbChecks: number; dbDuplicates: number; held: number; filterBytes: number }): void {
    const registers = [this.registry];
    new Counter({
      name: "exchange_client_id_db_checks_total",
      help: "Creates whose client order id the filter could not rule out, judged by the database",
      registers,
      collect() {
        this.reset();
        this.inc(read().dbChecks);
      },
    });
    new Counter({
      name: "exchange_client_id_db_duplicates_total",
      help: "Of those, creates refused because an order with that client order id was stored",
      registers,
      collect() {
        this.reset();
        this.inc(read().dbDuplicates);
      },
    });
    new Gauge({
      name: "exchange_client_ids_in_memory",
      help: "Client order ids held in memory (creates in flight and the recent window)",
      registers,
      collect() {
        this.set(read().held);
      },
    });
    new Gauge({
      name: "exchange_client_id_filter_bytes",
      help: "Bytes of the filter over every client order id ever",
      registers,
      collect() {
        this.set(read().filterBytes);
      },
    });
  }

  /**
   * Replication (docs/OPERATIONS.md, "A second box: follower"), read at scrape time: on a leader the
   * followers attached, on a follower its lag and the leader's journal key its reads show.
   */
  replication(
    read: () => { followers?: number; lagMs?: number; lastCommit?: number; synchronous?: boolean },
  ): void {
    const registers = [this.registry];
    const gauge = (name: string, help: string, pick: (r: ReturnType<typeof read>) => number | undefined) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          const v = pick(read());
          if (v !== undefined) this.set(v);
        },
      });
    gauge("exchange_replication_followers", "Followers attached to this leader", (r) => r.followers);
    gauge(
      "exchange_replication_synchronous",
      "--replication sync: 1 while answers wait for a follower's durable ack, 0 while the leader goes on alone (a follower: 1 while its leader's answers wait for it)",
      (r) => (r.synchronous === undefined ? undefined : r.synchronous ? 1 : 0),
    );
    gauge(
      "exchange_replication_lag_ms",
      "A follower: milliseconds its reads are behind the leader's last commit it was told of (0: caught up)",
      (r) => r.lagMs,
    );
    gauge(
      "exchange_replication_last_commit",
      "A follower: the leader's journal key its reads show",
      (r) => r.lastCommit,
    );
  }

  /** One request of `route` answered with `status` after `seconds` (omit for no latency sample). */
  request(route: string, status: number, seconds?: number): void {
    let r = this.routes.get(route);
    if (r === undefined) {
      r = new RouteSeries(route);
      this.routes.set(route, r);
    }
    const slot = status - FIRST_STATUS;
    if (slot >= 0 && slot < STATUS_SLOTS) r.byStatus[slot]++;
    if (seconds === undefined) return;
    let b = 0;
    while (b < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[b]) b++;
    r.buckets[b]++;
    r.sum += seconds;
    r.count++;
  }

  /** An accepted order of pair `pair` (index in config order), type 0 limit or 1 market. */
  order(pair: number, type: number): void {
    this.orders[pair * 2 + type]++;
  }

  /** A trade on pair `pair`. */
  trade(pair: number): void {
    this.trades[pair]++;
  }

  /** Content type of `render`'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every metric in the Prometheus text format. */
  async render(): Promise<string> {
    let text = await this.registry.metrics();
    const line = (name: string, labels: string, value: number) => {
      text += `${name}{${labels}} ${value}\n`;
    };
    text += head("exchange_http_requests_total", "counter", "HTTP requests by route and status");
    for (const r of this.routes.values()) {
      for (let s = 0; s < STATUS_SLOTS; s++) {
        if (r.byStatus[s] > 0)
          line(
            "exchange_http_requests_total",
            `route="${esc(r.route)}",status="${s + FIRST_STATUS}"`,
            r.byStatus[s],
          );
      }
    }
    text += head(
      "exchange_http_request_duration_seconds",
      "histogram",
      "HTTP request latency by route, from the first byte read to the answer written",
    );
    for (const r of this.routes.values()) {
      if (r.count === 0) continue;
      const route = `route="${esc(r.route)}"`;
      let cumulative = 0;
      for (let b = 0; b < LATENCY_BUCKETS.length; b++) {
        cumulative += r.buckets[b];
        line(
          "exchange_http_request_duration_seconds_bucket",
          `le="${LATENCY_BUCKETS[b]}",${route}`,
          cumulative,
        );
      }
      line("exchange_http_request_duration_seconds_bucket", `le="+Inf",${route}`, r.count);
      line("exchange_http_request_duration_seconds_sum", route, r.sum);
      line("exchange_http_request_duration_seconds_count", route, r.count);
    }
    text += head("exchange_orders_total", "counter", "Orders accepted, by pair and type");
    this.pairNames.forEach((pair, i) => {
      for (const [t, type] of ["limit", "market"].entries()) {
        if (this.orders[i * 2 + t] > 0)
          line("exchange_orders_total", `pair="${esc(pair)}",type="${type}"`, this.orders[i * 2 + t]);
      }
    });
    text += head("exchange_trades_total", "counter", "Trades executed, by pair");
    this.pairNames.forEach((pair, i) => {
      if (this.trades[i] > 0) line("exchange_trades_total", `pair="${esc(pair)}"`, this.trades[i]);
    });
    return text;
  }
}

function head(name: string, type: string, help: string): string {
  return `\n# HELP ${name} ${help}\n# TYPE ${name} ${type}\n`;
}

/** A label value in the text format: backslash, double quote and newline escaped. */
function esc(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}
