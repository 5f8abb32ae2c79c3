/**
 * What every REST route may use, built once per server (`routeContext`): the order entry context
 * (src/entry/context.ts) and what only the REST front end needs beside it: users and nonces, the
 * paged reads, admin, readiness, listen keys, CORS, the request metrics, the served documents.
 */
import type { Users } from "../accounts/users.ts";
import type { EntryContext, OrderReads } from "../entry/context.ts";
import type { PairTradesQuery, ReadFilter } from "../protocol/db/reader-tasks.ts";
import type { OrderRow, TradeRow, TransferRow, UserTradeRow } from "../protocol/db/rows.ts";
import type { Finish } from "../wire/request.ts";
import type { Admin } from "./admin.ts";
import type { CorsPolicy } from "./cors.ts";
import type { ListenKeys } from "./listen-keys.ts";

/** The paged and by-id reads of src/db/reader.ts. */
export interface UserReads extends OrderReads {
  userOrders(
    userId: number,
    page: number,
    pageSize: number,
    filter?: ReadFilter,
  ): Promise<{ total: number; items: OrderRow[] }>;
  userTrades(
    userId: number,
    page: number,
    pageSize: number,
    filter?: ReadFilter,
  ): Promise<{ total: number; items: UserTradeRow[] }>;
  pairTrades(query: PairTradesQuery): Promise<TradeRow[]>;
  userTransfers(
    userId: number,
    page: number,
    pageSize: number,
  ): Promise<{ total: number; items: TransferRow[] }>;
  recentForUser(userId: number, n: number): Promise<{ orders: OrderRow[]; trades: UserTradeRow[] }>;
}

export interface FrontEndDeps {
  users: Users;
  reader: UserReads;
  admin: Admin | null;
  /** True once books are recovered and workers are up (docs/API.md 1: readiness). */
  ready: () => boolean;
  /** False while shutting down: new requests get 503. */
  accepting: () => boolean;
  /** Persists the last nonce of a token. */
  nonceUsed: (token: string, nonce: bigint) => void;
  /**
   * Runs `then` once every nonce persisted so far is committed (the database writer's afterCommit):
   * a signed GET with a nonce is answered only then (docs/API.md 3), so a replay after a crash is
   * refused too.
   */
  afterNonces: (then: () => void) => void;
  /** Listen keys for browser streams (docs/API.md 10). */
  listenKeys: ListenKeys;
  /** Browser origins allowed on the REST base (docs/API.md 10). */
  cors: CorsPolicy;
  /**
   * A follower (docs/OPERATIONS.md, "A second box: follower"): every call that would change state
   * is refused with FOLLOWER_READ_ONLY after 401 and 429 (docs/API.md 4).
   */
  readOnly?: boolean;
  /** `GET /health`'s fields beside `status` when replication is configured (docs/API.md 1); null otherwise. */
  replicationHealth?: (() => Record<string, unknown>) | null;
}

/** The OpenAPI and AsyncAPI documents as served (built by boot.ts from src/documents/). */
export interface ServedDocuments {
  readonly openApiJson: string;
  readonly asyncApiJson: string;
}

/** Everything a route may use, built once per server by `routeContext`. */
export interface RouteContext extends EntryContext, ServedDocuments {
  readonly deps: FrontEndDeps;
  readonly reader: UserReads;
  /** Records a finished request in the metrics (every `send` ends with it). */
  readonly finish: Finish;
}

export function routeContext(entry: EntryContext, deps: FrontEndDeps, docs: ServedDocuments): RouteContext {
  const metrics = entry.metrics;
  return {
    ...entry,
    deps,
    reader: deps.reader,
    finish: (info, status) => metrics.request(info.route, status, (performance.now() - info.startMs) / 1e3),
    openApiJson: docs.openApiJson,
    asyncApiJson: docs.asyncApiJson,
  };
}
