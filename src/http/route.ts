/**
 * What a REST route is, and the guarded steps every route runs before its handler (STYLE 7), in the
 * order CONTRACT 5 ranks the failures: 404 (path, pair) → 413 (body size) → 415 (media type) → 401
 * (auth, nonce) → 429 (rate) → 400. A request over a limit of the request head (414 request target,
 * 431 header) is answered before all of them: nothing of it is read.
 *
 * A route (one file each under routes/) is a plain object: its method and path, how it
 * authenticates, its request schema (the allowed body fields, the query parameters), its response
 * schema, its OpenAPI text (it IS its OpenAPI entry: route-table.ts collects the route list), and
 * `handler(ctx)`, called once at mount, which returns the function that answers each request. The
 * steps below are module functions over one `RouteContext` built at mount: nothing is allocated
 * per request here beyond the request record `readRequest` makes.
 */

import type { HttpRequest, HttpResponse, TemplatedApp } from "@trufflesuite/uws-js-unofficial";
import type { ApiKey, Users } from "../accounts/users.ts";
import type { ExchangeConfig, PairConfig } from "../config/exchange-config.ts";
import type { Exchange } from "../core/exchange.ts";
import type { DeadMansSwitch } from "../core/services/dead-man.ts";
import type { Metrics } from "../core/services/metrics.ts";
import { errorBody } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";
import type { OrderRow, TransferRow, UserTradeRow } from "../protocol/db/rows.ts";
import type { Admin } from "./admin.ts";
import type { Answers } from "./answers.ts";
import {
  authenticate,
  authenticateBound,
  consumeNonce,
  nonceFromBody,
  nonceFromQuery,
  unboundRefusal,
} from "./auth.ts";
import type { CorsPolicy } from "./cors.ts";
import { isJsonObject, parseJsonBody, unreadableBodyCode } from "./json-body.ts";
import type { ListenKeys } from "./listen-keys.ts";
import { RateLimiter } from "./rate-limit.ts";
import {
  type Finish,
  isJsonMediaType,
  MAX_BODY,
  type RequestInfo,
  readBody,
  readRequest,
  send,
  sendError,
} from "./request.ts";
import {
  nonceParam,
  PAGE_SIZE_DEFAULT,
  PAGE_SIZE_MAX,
  pageParam,
  pageSizeParam,
  type RequestSchemas,
} from "./request-schemas.ts";
import type { QueryParam, RouteSpec } from "./route-spec.ts";
import type { ValidOrder } from "./validate.ts";

/** The paged and by-id reads of src/db/reader.ts. */
export interface UserReads {
  userOrders(userId: number, page: number, pageSize: number): Promise<{ total: number; items: OrderRow[] }>;
  userTrades(
    userId: number,
    page: number,
    pageSize: number,
  ): Promise<{ total: number; items: UserTradeRow[] }>;
  userTransfers(
    userId: number,
    page: number,
    pageSize: number,
  ): Promise<{ total: number; items: TransferRow[] }>;
  recentForUser(userId: number, n: number): Promise<{ orders: OrderRow[]; trades: UserTradeRow[] }>;
  order(orderId: number): Promise<OrderRow | undefined>;
  orderByClientId(userId: number, clientOrderId: string): Promise<OrderRow | undefined>;
  openOrders(ids: number[]): Promise<OrderRow[]>;
}

export interface FrontEndDeps {
  config: ExchangeConfig;
  exchange: Exchange;
  /** The map from request id to the waiting response; the core reports results into it. */
  answers: Answers;
  users: Users;
  reader: UserReads;
  admin: Admin | null;
  metrics: Metrics;
  rateLimit: number;
  /** True once books are recovered and workers are up (CONTRACT 1: readiness). */
  ready: () => boolean;
  /** False while shutting down: new requests get 503. */
  accepting: () => boolean;
  /** Persists the last nonce of a token. */
  nonceUsed: (token: string, nonce: bigint) => void;
  /**
   * Runs `then` once every nonce persisted so far is committed (the database writer's afterCommit):
   * a signed GET with a nonce is answered only then (CONTRACT 15), so a replay after a crash is
   * refused too.
   */
  afterNonces: (then: () => void) => void;
  /** CONTRACT 8.7. */
  deadMan: DeadMansSwitch;
  /** Listen keys for browser streams (CONTRACT 10). */
  listenKeys: ListenKeys;
  /** Browser origins allowed on the REST base (CONTRACT 10). */
  cors: CorsPolicy;
}

/** Everything a route may use, built once per server by `routeContext`. */
export interface RouteContext {
  readonly deps: FrontEndDeps;
  readonly config: ExchangeConfig;
  readonly exchange: Exchange;
  readonly answers: Answers;
  readonly reader: UserReads;
  readonly metrics: Metrics;
  readonly limiter: RateLimiter;
  /** Records a finished request in the metrics (every `send` ends with it). */
  readonly finish: Finish;
  /** The OpenAPI document's JSON (openapi.ts), built once at start. */
  readonly openApiJson: string;
  /** The AsyncAPI document's JSON (asyncapi.ts), built once at start. */
  readonly asyncApiJson: string;
}

export function routeContext(deps: FrontEndDeps, openApiJson: string, asyncApiJson: string): RouteContext {
  const metrics = deps.metrics;
  return {
    deps,
    config: deps.config,
    exchange: deps.exchange,
    answers: deps.answers,
    reader: deps.reader,
    metrics,
    limiter: new RateLimiter(deps.rateLimit),
    finish: (info, status) => metrics.request(info.route, status, (performance.now() - info.startMs) / 1e3),
    openApiJson,
    asyncApiJson,
  };
}

// ---------------------------------------------------------------- what a route is

/** The OpenAPI text of a route: its entry in the document minus what the route object names itself. */
type Doc = Omit<RouteSpec, "method" | "path" | "auth">;

/** Answers a signed POST whose body is a JSON object, after every step passed. */
export type PostHandler = (
  res: HttpResponse,
  info: RequestInfo,
  key: ApiKey,
  body: Record<string, unknown>,
) => void;

/** Answers a GET after its steps passed. */
export type GetHandler = (
  res: HttpResponse,
  info: RequestInfo,
  /** The pair of a `{pairName}` path (checked: 404 otherwise), else undefined. */
  pair: PairConfig | undefined,
  /** The caller, for a signed GET (and an optionally signed one that carried headers), else null. */
  key: ApiKey | null,
  /**
   * The path parameter after the pair (the chart period), or the first one of a route without a
   * pair (an order id), read while the request lives.
   */
  param: string,
) => void;

/** A signed POST: 413 → 415 → 401 → nonce → 429 → JSON object, then the handler. */
export interface PostRoute extends Doc {
  readonly kind: "signedPost";
  readonly method: "post";
  readonly path: string;
  readonly auth: "signedBody";
  /** The request schema: the fields the body may carry (CONTRACT 8.1); `body` documents them. */
  readonly fields: ReadonlySet<string>;
  readonly body: (schemas: RequestSchemas) => object;
  readonly handler: (ctx: RouteContext) => PostHandler;
  /**
   * A shortcut for the common shape of the body (create-order: src/http/fast-order.ts), tried
   * after the signature: a body it takes carries no nonce and is a valid object, so the rate limit
   * is the only step left before its handler. Any other body takes the general path.
   */
  readonly fast?: (ctx: RouteContext) => FastPost;
}

/** See PostRoute.fast: the order a body of the shortcut's shape validates to, else null. */
export interface FastPost {
  parse(raw: Buffer): ValidOrder | null;
  handle(res: HttpResponse, info: RequestInfo, key: ApiKey, order: ValidOrder): void;
}

/** A GET under the REST base: pair (404) → auth as `auth` says (401, nonce) → 429, then the handler. */
export interface GetRoute extends Doc {
  readonly kind: "get";
  readonly method: "get";
  readonly path: string;
  readonly auth: "none" | "signedQuery" | "optionalSignedQuery";
  readonly handler: (ctx: RouteContext) => GetHandler;
}

/** A service path answered without the steps (readiness, metrics): no auth, no limit, no CORS. */
export interface PlainRoute extends Doc {
  readonly kind: "plain";
  readonly method: "get";
  readonly path: string;
  readonly auth: "none";
  readonly handler: (ctx: RouteContext) => (res: HttpResponse, req: HttpRequest) => void;
}

export type Route = PostRoute | GetRoute | PlainRoute;

export const PREFIX = "/1.0";

/** The route's uWS pattern: `{name}` path parameters become `:name`. */
export function pattern(route: Route): string {
  return route.path.replace(/\{([A-Za-z]+)\}/g, ":$1");
}

/** The metrics label of a route: its pattern without the REST base (`/trade/pairs/:pairName`). */
export function routeLabel(route: Route): string {
  const p = pattern(route);
  return p.startsWith(`${PREFIX}/`) ? p.slice(PREFIX.length) : p;
}

// ---------------------------------------------------------------- OpenAPI parts routes share

/** The statuses of each kind of call, in the order CONTRACT 5 ranks them. */
export const SIGNED_POST = [400, 401, 413, 415, 429, 500, 503] as const;
export const SIGNED_GET = [400, 401, 429, 500, 503] as const;
export const SIGNED_GET_PAIR = [400, 401, 404, 429, 500, 503] as const;
export const PUBLIC_GET = [429, 500, 503] as const;
export const PUBLIC_GET_PAIR = [404, 429, 500, 503] as const;

export const pageQuery: QueryParam[] = [
  { name: "page", description: "From 1 (default 1)", schema: pageParam },
  {
    name: "pageSize",
    description: `1..${PAGE_SIZE_MAX} (default ${PAGE_SIZE_DEFAULT})`,
    schema: pageSizeParam,
  },
];

export const nonceQuery: QueryParam = {
  name: "nonce",
  description: "Optional replay guard: an integer strictly greater than the last nonce of this token",
  schema: nonceParam,
};

// ---------------------------------------------------------------- the steps

/** 200 with a serialised body. */
export function ok(ctx: RouteContext, res: HttpResponse, info: RequestInfo, body: string): void {
  send(res, info, 200, body, ctx.finish);
}

/** 429 step: true when it answered. */
export function rateLimited(ctx: RouteContext, res: HttpResponse, info: RequestInfo, key: string): boolean {
  const limiter = ctx.limiter;
  if (!limiter.enabled) return false;
  const now = Date.now();
  const remaining = limiter.take(key, now);
  // Every answer from here on counted against the limit: it says how much is left (CONTRACT 9).
  info.rateLimit = limiter.limit;
  info.rateRemaining = remaining < 0 ? 0 : remaining;
  if (remaining >= 0) return false;
  send(res, info, 429, errorBody(Code.RATE_LIMITED, info.lang), ctx.finish, limiter.retryAfter(key, now));
  return true;
}

/** 503 while starting or shutting down: true when it answered. */
export function notReady(ctx: RouteContext, res: HttpResponse, info: RequestInfo): boolean {
  const deps = ctx.deps;
  if (deps.accepting() && deps.ready()) return false;
  sendError(res, info, deps.accepting() ? Code.NOT_READY : Code.SHUTTING_DOWN, ctx.finish);
  return true;
}

export function pairFromPath(ctx: RouteContext, req: HttpRequest): PairConfig | undefined {
  return ctx.config.pairsByName.get(req.getParameter(0) ?? "");
}

/** Mounts a signed POST: 413 → 415 → 401 → nonce → 429 → JSON object, then the route's handler. */
export function mountSignedPost(app: TemplatedApp, ctx: RouteContext, route: PostRoute): void {
  const { users, cors, nonceUsed } = ctx.deps;
  const label = routeLabel(route);
  const handle = route.handler(ctx);
  const fast = route.fast?.(ctx);
  const finish = ctx.finish;
  app.post(pattern(route), (res, req) => {
    const info = readRequest(res, req, label, false, false);
    if (cors.enabled) info.cors = cors.allowed(req);
    if (info.overLimit !== 0) return sendError(res, info, info.overLimit, finish);
    if (info.contentLength > MAX_BODY) return sendError(res, info, Code.BODY_TOO_LARGE, finish);
    if (!isJsonMediaType(info.contentType)) {
      sendError(res, info, Code.UNSUPPORTED_MEDIA_TYPE, finish);
      return;
    }
    readBody(res, info, (raw) => {
      if (raw === null) return sendError(res, info, Code.BODY_TOO_LARGE, finish);
      if (notReady(ctx, res, info)) return;
      // 401 step (src/http/auth.ts, shared with the stream upgrade), bound to the time, the method and
      // the path when X-Timestamp came (CONTRACT 15).
      const key =
        info.timestamp === ""
          ? authenticate(users, info.authorization, info.signature, raw)
          : authenticateBound(users, info.authorization, info.signature, raw, "POST", info, Date.now());
      if (typeof key === "number") {
        const code =
          key === Code.AUTH_SIGNATURE_INVALID && info.timestamp === ""
            ? unboundRefusal(users, info.authorization, info.signature, raw, "POST", route.path)
            : key;
        return sendError(res, info, code, finish);
      }
      if (fast !== undefined) {
        const order = fast.parse(raw);
        if (order !== null) {
          if (rateLimited(ctx, res, info, key.token)) return;
          return fast.handle(res, info, key, order);
        }
      }
      let body: unknown;
      let unreadable = 0;
      try {
        body = parseJsonBody(raw.toString("utf8"));
      } catch (err) {
        unreadable = unreadableBodyCode(err);
      }
      const isObject = isJsonObject(body);
      // Nonce step (401 on replay); a malformed nonce is a 400 reported after the rate limit.
      const nonceErr = isObject ? consumeNonce(users, key, nonceFromBody(body), nonceUsed) : 0;
      if (nonceErr === Code.AUTH_NONCE_REPLAY) return sendError(res, info, nonceErr, finish);
      if (rateLimited(ctx, res, info, key.token)) return;
      if (unreadable !== 0) return sendError(res, info, unreadable, finish);
      if (!isObject) return sendError(res, info, Code.BODY_NOT_OBJECT, finish);
      if (nonceErr !== 0) return sendError(res, info, nonceErr, finish);
      handle(res, info, key, body as Record<string, unknown>);
    });
  });
}

/**
 * Mounts a GET: optional pair (404) → auth as the route says (401, nonce) → 429, then its handler;
 * with a nonce, the handler runs once that nonce is committed (CONTRACT 15).
 */
export function mountGet(app: TemplatedApp, ctx: RouteContext, route: GetRoute): void {
  const { users, cors, nonceUsed, afterNonces } = ctx.deps;
  const label = routeLabel(route);
  const handle = route.handler(ctx);
  const finish = ctx.finish;
  const limiter = ctx.limiter;
  const withPair = route.path.includes("{pairName}");
  const auth = route.auth;
  app.get(pattern(route), (res, req) => {
    const info = readRequest(res, req, label, limiter.enabled);
    if (cors.enabled) info.cors = cors.allowed(req);
    if (info.overLimit !== 0) return sendError(res, info, info.overLimit, finish);
    let pair: PairConfig | undefined;
    if (withPair) {
      pair = pairFromPath(ctx, req);
      if (pair === undefined) return sendError(res, info, Code.PAIR_UNKNOWN_IN_PATH, finish);
    }
    const param = req.getParameter(withPair ? 1 : 0) ?? "";
    let key: ApiKey | null = null;
    const hasAuth = info.authorization !== undefined || info.signature !== undefined;
    if (auth === "signedQuery" || (auth === "optionalSignedQuery" && hasAuth)) {
      const k =
        info.timestamp === ""
          ? authenticate(users, info.authorization, info.signature, info.query)
          : authenticateBound(users, info.authorization, info.signature, info.query, "GET", info, Date.now());
      if (typeof k === "number") {
        const code =
          k === Code.AUTH_SIGNATURE_INVALID && info.timestamp === ""
            ? unboundRefusal(users, info.authorization, info.signature, info.query, "GET", req.getUrl())
            : k;
        return sendError(res, info, code, finish);
      }
      key = k;
      const nonce = nonceFromQuery(info.query);
      const nonceErr = consumeNonce(users, key, nonce, nonceUsed);
      if (nonceErr === Code.AUTH_NONCE_REPLAY) return sendError(res, info, nonceErr, finish);
      if (rateLimited(ctx, res, info, key.token)) return;
      if (nonceErr !== 0) return sendError(res, info, nonceErr, finish);
      if (typeof nonce === "bigint") {
        // Consumed: answered once it is durable, so the same request replayed after a crash is
        // refused (CONTRACT 15). Everything the handler needs was read above.
        const signedKey = key;
        afterNonces(() => {
          try {
            handle(res, info, pair, signedKey, param);
          } catch (err) {
            // Not uWS's handler any more: a failure here is answered, not left hanging.
            sendError(res, info, Code.INTERNAL, finish, undefined, err);
          }
        });
        return;
      }
    } else if (rateLimited(ctx, res, info, info.address ?? "")) return;
    handle(res, info, pair, key, param);
  });
}

/** Mounts any route by its kind. */
export function mountRoute(app: TemplatedApp, ctx: RouteContext, route: Route): void {
  switch (route.kind) {
    case "signedPost":
      mountSignedPost(app, ctx, route);
      break;
    case "get":
      mountGet(app, ctx, route);
      break;
    case "plain":
      app.get(pattern(route), route.handler(ctx));
      break;
  }
}
