/**
 * What a REST route is. A route (one file each under routes/, listed in route-list.ts) is a plain
 * object: its method and path, how it authenticates, its request schema (the allowed body fields,
 * the query parameters), its response schema, its OpenAPI text (it IS its OpenAPI entry:
 * src/documents/openapi-routes.ts collects the route list), and `handler(ctx)`, called once at
 * mount, which returns the function that answers each request (route-steps.ts runs the steps
 * before it). `RouteSpec` is the description of one HTTP call the OpenAPI document is built from.
 */
import type { HttpRequest, HttpResponse } from "@trufflesuite/uws-js-unofficial";
import type { ApiKey } from "../accounts/users.ts";
import type { PairConfig } from "../config/exchange-config.ts";
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from "../entry/limits.ts";
import type { ValidOrder } from "../entry/validate.ts";
import type { RequestInfo } from "../wire/request.ts";
import {
  fromIdParam,
  nonceParam,
  pageParam,
  pageSizeParam,
  type RequestSchemas,
  sinceParam,
} from "../wire/request-schemas.ts";
import type { RouteContext } from "./route-context.ts";

/** How a call authenticates (docs/API.md 3, 11). */
export type Auth =
  /** No credentials. */
  | "none"
  /** Authorization + X-Signature over the raw body bytes. */
  | "signedBody"
  /** Authorization + X-Signature over the raw query string ("" when there is none). */
  | "signedQuery"
  /** As signedQuery when the headers are sent; without them the call is public (pair page). */
  | "optionalSignedQuery"
  /** `Authorization: Bearer <ADMIN_TOKEN>`. */
  | "admin";

export interface QueryParam {
  name: string;
  description: string;
  schema: object;
  /** The schema is the config's path parameter of this name instead (RequestSchemas.params). */
  configParam?: string;
  required?: boolean;
}

export interface RouteSpec {
  method: "get" | "post";
  /** From the server root, `{name}` for path parameters. */
  path: string;
  operationId: string;
  summary: string;
  /** Where docs/API.md defines the call (the operation's `x-source`): "docs/API.md 7.1, 8.2", ... */
  source: string;
  auth: Auth;
  /** The request body's schema, built from the config's request schemas (request-schemas.ts). */
  body?: (schemas: RequestSchemas) => object;
  query?: QueryParam[];
  /** 200 body: a JSON schema, or "text" for a non-JSON answer (metrics). */
  ok: object | "text";
  /** Other statuses whose body is a JSON schema (not an error body), e.g. 503 of /health. */
  other?: Record<number, { description: string; schema: object }>;
  /** Statuses answered with the error body of docs/API.md 4. */
  errors: readonly number[];
  description?: string;
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
  /** The request schema: the fields the body may carry (docs/API.md 8.1); `body` documents them. */
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

/** The error statuses each kind of call may answer (docs/API.md 4). */
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

/** docs/API.md 20.3: the filters of a user page read from a point. */
export const pointQuery: QueryParam[] = [
  {
    name: "pairName",
    description: "Only this pair's records (an unknown pair: 400 `errors.pairName`)",
    schema: { type: "string" },
    configParam: "pairName",
  },
  {
    name: "since",
    description: "Unix ms: the records created at or after it, oldest first (docs/API.md 20.3)",
    schema: sinceParam,
  },
  {
    name: "fromId",
    description: "An id: the records with that id or above, oldest first (docs/API.md 20.3)",
    schema: fromIdParam,
  },
];

export const nonceQuery: QueryParam = {
  name: "nonce",
  description: "Optional replay guard: an integer strictly greater than the last nonce of this token",
  schema: nonceParam,
};
