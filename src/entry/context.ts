/**
 * What the order-entry layer (src/entry/) needs of the server, whichever front end calls it: the
 * config, the core, the map of waiting answers, the committed rows it reads an order from, the
 * metrics, the dead-man's switch and the per-token rate limiter (one limiter for every front end:
 * a REST request and a session call of the same token count against the same limit, docs/API.md
 * 13). Built once by boot.ts; the REST routes' context (src/http/route-context.ts) extends it.
 */
import type { ExchangeConfig } from "../config/exchange-config.ts";
import type { Exchange } from "../core/exchange.ts";
import type { DeadMansSwitch } from "../core/services/dead-man.ts";
import type { Metrics } from "../core/services/metrics.ts";
import type { Execution } from "../protocol/db/reader-tasks.ts";
import type { OrderRow } from "../protocol/db/rows.ts";
import type { Answers } from "./answers.ts";
import { RateLimiter } from "./rate-limit.ts";

/** The committed rows an order call reads (src/db/reader.ts). */
export interface OrderReads {
  order(orderId: number): Promise<OrderRow | undefined>;
  orderByClientId(userId: number, clientOrderId: string): Promise<OrderRow | undefined>;
  openOrders(ids: number[]): Promise<OrderRow[]>;
  executions(userId: number, after: number, upTo: number, limit: number): Promise<Execution[]>;
}

export interface EntryContext {
  readonly config: ExchangeConfig;
  readonly exchange: Exchange;
  /** The map from request id to the waiting answer; the core reports results into it. */
  readonly answers: Answers;
  readonly reader: OrderReads;
  readonly metrics: Metrics;
  /** docs/API.md 8.7. */
  readonly deadMan: DeadMansSwitch;
  readonly limiter: RateLimiter;
  /** The epoch of the execution numbers (docs/API.md 16). */
  readonly execEpoch: number;
}

/** What `entryContext` is built from: the context, with the rate (requests per second per token, 0: no limit) in place of its limiter. */
export type EntryDeps = Omit<EntryContext, "limiter"> & { rateLimit: number };

export function entryContext(deps: EntryDeps): EntryContext {
  const { rateLimit, ...rest } = deps;
  return { ...rest, limiter: new RateLimiter(rateLimit) };
}
