/** Prometheus metrics (CONTRACT 1: `GET /metrics`), with prom-client. */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { WriterStats } from "./db/writer.ts";

export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<"route" | "status">;
  readonly latency: Histogram<"route">;
  readonly orders: Counter<"pair" | "type">;
  readonly trades: Counter<"pair">;
  readonly streamConnections: Gauge;
  /** `dbStats`: the database writer's committed totals, read at scrape time. */
  constructor(dbStats: () => WriterStats = () => ({ batches: 0, records: 0 })) {
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: "exchange_http_requests_total",
      help: "HTTP requests by route and status",
      labelNames: ["route", "status"],
      registers: [this.registry],
    });
    this.latency = new Histogram({
      name: "exchange_http_request_duration_seconds",
      help: "HTTP request latency by route, from the first byte read to the answer written",
      labelNames: ["route"],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1],
      registers: [this.registry],
    });
    this.orders = new Counter({
      name: "exchange_orders_total",
      help: "Orders accepted, by pair and type",
      labelNames: ["pair", "type"],
      registers: [this.registry],
    });
    this.trades = new Counter({
      name: "exchange_trades_total",
      help: "Trades executed, by pair",
      labelNames: ["pair"],
      registers: [this.registry],
    });
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
}
