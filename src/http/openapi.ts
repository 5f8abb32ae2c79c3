/**
 * The OpenAPI 3.1 document of the REST interface, served at `GET /1.0/openapi.json`, generated from
 * ONE declarative route table (ROUTES below): method, path, authentication, request body, query
 * parameters and one response schema per status. The REST routes are their own entries (each file
 * of routes/ names its path, schemas and text); the admin calls and the stream are written here.
 *
 * Response bodies the server already writes come from schemas.ts, the very objects
 * fast-json-stringify compiles, so the document cannot drift from the wire. Routes marked
 * `fromContractText` (CONTRACT 8-10) are described from the contract's text with the schemas of
 * schemas-contract.ts until the routes land with their own serialisers.
 *
 * Paths are written from the server root (`/1.0/...`, `/admin/...`, `/health`), so the one server
 * entry is `/`.
 */
import type { ExchangeConfig } from "../config.ts";
import {
  LISTEN_KEY_RE,
  nonceSchema,
  orderIdSchema,
  type RequestSchemas,
  requestSchemas,
} from "./request-schemas.ts";
import { REST_ROUTES } from "./routes/index.ts";
import {
  balanceSchema,
  bookSchema,
  chartSchema,
  exchangeSchema,
  exchangeStreamSchema,
  feesSchema,
  newKeySchema,
  newUserSchema,
  orderListSchema,
  orderSchema,
  ordersPageSchema,
  orderWithUpdateSchema,
  pairInfoSchema,
  pairPageSchema,
  pairRecordSchema,
  publicTradeSchema,
  streamSchemas,
  tradesPageSchema,
  transferSchema,
  userTradeSchema,
} from "./schemas.ts";
import { emptyArraySchema, errorBodySchema, healthSchema } from "./schemas-contract.ts";

/** How a call authenticates (CONTRACT 5, 1.2). */
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
  required?: boolean;
}

export interface RouteSpec {
  method: "get" | "post";
  /** From the server root, `{name}` for path parameters. */
  path: string;
  operationId: string;
  summary: string;
  /** Where the call is defined: "seed 4.1", "CONTRACT 8.3", ... */
  source: string;
  /** Described from the contract text; the server of this build may not serve it yet. */
  fromContractText?: boolean;
  auth: Auth;
  /** The request body's schema, built from the config's request schemas (request-schemas.ts). */
  body?: (schemas: RequestSchemas) => object;
  query?: QueryParam[];
  /** 200 body: a JSON schema, or "text" for a non-JSON answer (metrics). */
  ok: object | "text";
  /** Other statuses whose body is a JSON schema (not an error body), e.g. 503 of /health. */
  other?: Record<number, { description: string; schema: object }>;
  /** Statuses answered with the error body of CONTRACT 5. */
  errors: readonly number[];
  description?: string;
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Validation failed: the key names the field (`body` when the body is not a JSON object)",
  401: "Missing, unknown or revoked token, wrong signature, a replayed nonce, or an X-Timestamp outside X-Recv-Window (key `auth`)",
  403: "A stream channel of another user (key `auth`)",
  404: "Unknown pair in the path (key `pairName`), unknown path (key `path`) or id",
  405: "Method not allowed on this path (key `path`); `Allow` lists the path's methods",
  413: "Body over 64 KiB (key `body`)",
  414: "Request target (path and query) over 8 KiB (key `path`)",
  415: "POST media type missing or not application/json (key `body`)",
  426: "A plain GET of the stream endpoint (key `path`)",
  431: "A header the server reads (Authorization, X-Signature, Content-Type, Accept-Language) over 8 KiB (key `headers`)",
  429: "Rate limited (key `rate`); `Retry-After` gives the seconds to wait",
  500: "Internal error (key `server`; no internals)",
  503: "Starting, shutting down, or a pair worker too far behind (key `server`); nothing changed",
};

const ADMIN_POST = [400, 401, 404, 413, 415, 500, 503] as const;

/**
 * The route table: every REST call of the seed, CONTRACT 1.2 and 8-10, and the service paths. The
 * REST routes describe themselves (src/http/routes/, one file each); the admin calls (mounted by
 * admin.ts) and the stream upgrade (src/stream/) are described here.
 */
export const ROUTES: readonly RouteSpec[] = [
  ...REST_ROUTES,

  // ---------------------------------------------------------------- CONTRACT 1.2, 9 admin
  {
    method: "get",
    path: "/admin/fees",
    operationId: "adminFees",
    summary: "The fee account's balances",
    source: "CONTRACT 9",
    auth: "admin",
    ok: feesSchema,
    errors: [401, 404, 500],
  },
  {
    method: "post",
    path: "/admin/users",
    operationId: "adminCreateUser",
    summary: "A new user with a new API key (shown once)",
    source: "CONTRACT 1.2",
    auth: "admin",
    body: (s) => s.adminUser,
    ok: newUserSchema,
    errors: ADMIN_POST,
  },
  {
    method: "post",
    path: "/admin/api-keys",
    operationId: "adminCreateApiKey",
    summary: "Another API key for a user",
    source: "CONTRACT 1.2",
    auth: "admin",
    body: (s) => s.adminApiKey,
    ok: newKeySchema,
    errors: ADMIN_POST,
  },
  {
    method: "post",
    path: "/admin/api-keys/revoke",
    operationId: "adminRevokeApiKey",
    summary: "Revoke an API key",
    source: "CONTRACT 1.2",
    auth: "admin",
    body: (s) => s.adminRevoke,
    ok: emptyArraySchema,
    errors: ADMIN_POST,
  },
  {
    method: "post",
    path: "/admin/deposit",
    operationId: "adminDeposit",
    summary: "Credit a user's available balance",
    source: "CONTRACT 1.2",
    auth: "admin",
    body: (s) => s.adminDeposit,
    ok: transferSchema,
    errors: ADMIN_POST,
  },
  {
    method: "post",
    path: "/admin/withdraw",
    operationId: "adminWithdraw",
    summary: "Debit a user's available balance (more than available: 400 `errors.amount`)",
    source: "CONTRACT 1.2",
    auth: "admin",
    body: (s) => s.adminWithdraw,
    ok: transferSchema,
    errors: ADMIN_POST,
  },

  // ---------------------------------------------------------------- service
  {
    method: "get",
    path: "/stream",
    operationId: "stream",
    summary: "WebSocket stream (CONTRACT 7): upgrade with `?streams=<channel>,...`",
    source: "seed 6; CONTRACT 7, 10",
    auth: "optionalSignedQuery",
    query: [
      {
        name: "streams",
        description:
          "Comma-separated channels (1..100): `exchanges`, `orders:{pair}`, `history:{pair}`, " +
          "`user_orders:{uid}`, `user_history:{uid}` (user channels need a signed upgrade or a listenKey)",
        schema: { type: "string" },
        required: true,
      },
      {
        name: "listenKey",
        description: "CONTRACT 10: authenticates the upgrade as the key's user instead of the headers",
        schema: { type: "string", pattern: LISTEN_KEY_RE.source },
      },
    ],
    ok: "text",
    errors: [400, 401, 403, 426, 429, 500, 503],
    description:
      "Not a REST call: a WebSocket upgrade (101). Every message is `{stream, data}`; the message " +
      "schemas are in components.schemas (Stream*Message). A plain GET answers 426.",
  },
];

/** Component names of the schema objects (identity), so the document refers instead of repeating. */
const NAMED: ReadonlyArray<readonly [string, object]> = [
  ["Order", orderSchema],
  ["OrderWithUpdate", orderWithUpdateSchema],
  ["UserTrade", userTradeSchema],
  ["ExchangeRecord", exchangeSchema],
  ["PairRecord", pairRecordSchema],
  ["OrderBook", bookSchema],
  ["PublicTrade", publicTradeSchema],
  ["Balance", balanceSchema],
  ["PairPage", pairPageSchema],
  ["OrdersPage", ordersPageSchema],
  ["UserTradesPage", tradesPageSchema],
  ["Candles", chartSchema],
  ["NewUser", newUserSchema],
  ["NewApiKey", newKeySchema],
  ["BalanceAnswer", transferSchema],
  ["ErrorBody", errorBodySchema],
  ["Health", healthSchema],
  ["ExchangeStreamRecord", exchangeStreamSchema],
  ["StreamExchangesMessage", streamSchemas.exchanges],
  ["StreamOrdersMessage", streamSchemas.orders],
  ["StreamHistoryMessage", streamSchemas.history],
  ["StreamUserOrdersMessage", streamSchemas.user_orders],
  ["StreamUserHistoryMessage", streamSchemas.user_history],
  ["OrderList", orderListSchema],
  ["PairInfo", pairInfoSchema],
];

/** A copy of `schema` where every named object below the root is a `$ref`. */
function refify(schema: unknown, names: Map<object, string>, root = true): unknown {
  if (Array.isArray(schema)) return schema.map((s) => refify(s, names, false));
  if (schema === null || typeof schema !== "object") return schema;
  const name = root ? undefined : names.get(schema);
  if (name !== undefined) return { $ref: `#/components/schemas/${name}` };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    // How the server writes a string (schemas.ts `word`) is not part of the interface.
    if (k === "format" && v === "unsafe") continue;
    out[k] = refify(v, names, false);
  }
  return out;
}

function security(auth: Auth): object[] {
  switch (auth) {
    case "none":
      return [];
    case "signedBody":
    case "signedQuery":
      return [{ apiToken: [], signature: [] }];
    case "optionalSignedQuery":
      return [{}, { apiToken: [], signature: [] }];
    case "admin":
      return [{ adminToken: [] }];
  }
}

const SIGNED_TEXT: Record<Auth, string> = {
  none: "",
  signedBody: "Signed: X-Signature is the HMAC-SHA256 hex of the raw body bytes.",
  signedQuery: 'Signed: X-Signature is the HMAC-SHA256 hex of the raw query string ("" when none).',
  optionalSignedQuery:
    'Optionally signed: X-Signature is the HMAC-SHA256 hex of the raw query string ("" when none).',
  admin: "Admin: `Authorization: Bearer <ADMIN_TOKEN>`; 404 when ADMIN_TOKEN is not set.",
};

/**
 * Builds the document of a config (call once at start; the result is not shared mutable state): the
 * request schemas hold its pair and currency names and each pair's decimals and bounds.
 */
export function buildOpenApi(config: ExchangeConfig, version = "1.0"): Record<string, unknown> {
  const req = requestSchemas(config);
  const named: ReadonlyArray<readonly [string, object]> = [
    ...NAMED,
    ["CreateOrderRequest", req.createOrder],
    ["BatchOrder", req.batchOrder],
    ["OrderIdInput", orderIdSchema],
    ["Nonce", nonceSchema],
  ];
  const names = new Map<object, string>(named.map(([n, s]) => [s, n]));
  const schemas: Record<string, unknown> = {};
  for (const [name, schema] of named) schemas[name] = refify(schema, names);
  const json = (schema: object) => ({ "application/json": { schema: refify(schema, names, false) } });

  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of ROUTES) {
    const parameters: object[] = [];
    for (const m of r.path.matchAll(/\{([A-Za-z]+)\}/g)) {
      parameters.push({
        name: m[1],
        in: "path",
        required: true,
        schema: req.params[m[1]] ?? { type: "string" },
      });
    }
    for (const q of r.query ?? []) {
      parameters.push({
        name: q.name,
        in: "query",
        required: q.required === true,
        description: q.description,
        schema: q.schema,
      });
    }
    const responses: Record<string, unknown> = {
      200:
        r.ok === "text"
          ? { description: "OK", content: { "text/plain": { schema: { type: "string" } } } }
          : { description: "OK", content: json(r.ok) },
    };
    for (const [status, o] of Object.entries(r.other ?? {})) {
      responses[status] = { description: o.description, content: json(o.schema) };
    }
    // A route not served by this build answers 404 `path` until it lands.
    const listed = r.fromContractText === true && !r.errors.includes(404) ? [404, ...r.errors] : r.errors;
    // Every call that reads its request head answers 414 / 431 over the limits (src/http/request.ts);
    // the service paths and the stream upgrade read nothing of it.
    const limited = !("kind" in r && r.kind === "plain") && r.path !== "/stream";
    const errors = limited ? [...listed, 414, 431].sort((a, b) => a - b) : listed;
    for (const status of errors) {
      responses[String(status)] = {
        description: ERROR_DESCRIPTIONS[status] ?? "Error",
        ...(status === 429
          ? { headers: { "Retry-After": { $ref: "#/components/headers/RetryAfter" } } }
          : {}),
        content: json(errorBodySchema),
      };
    }
    const op: Record<string, unknown> = {
      operationId: r.operationId,
      summary: r.summary,
      description: [r.description ?? "", SIGNED_TEXT[r.auth], `Defined in ${r.source}.`]
        .filter((s) => s !== "")
        .join("\n\n"),
      tags: [tagOf(r)],
      security: security(r.auth),
      "x-source": r.source,
      "x-auth": r.auth,
      responses,
    };
    if (r.fromContractText === true) op["x-from-contract-text"] = true;
    if (parameters.length > 0) op.parameters = parameters;
    if (r.body !== undefined) op.requestBody = { required: true, content: json(r.body(req)) };
    paths[r.path] ??= {};
    paths[r.path][r.method] = op;
  }

  return {
    openapi: "3.1.0",
    info: {
      title: "Exchange server",
      version,
      description:
        "REST interface of the exchange (interface document + CONTRACT). Money in answers is exact: JSON " +
        "numbers whose decimal text is the value, balances as decimal strings. Requests accept a JSON " +
        "number or a decimal string for price and amount. Errors are `{errors: {field: [message]}}` " +
        "(plus `codes`), English or Russian by Accept-Language. Request schemas follow the server's " +
        "config (pair and currency names, each pair's decimals and bounds); exact decimal bounds are " +
        "the annotations `x-decimals`, `x-minimum`, `x-exclusiveMinimum`, `x-maximum` (decimal text). " +
        "See docs/API.md 1.1.",
    },
    servers: [{ url: "/" }],
    tags: [
      { name: "orders", description: "Signed order entry (seed 4.1-4.2, CONTRACT 8)" },
      { name: "market", description: "Public market data (seed 4.3-4.7, CONTRACT 9)" },
      { name: "user", description: "Signed reads of the caller's data (seed 4.8-4.10, CONTRACT 8.6)" },
      { name: "admin", description: "Operator calls (CONTRACT 1.2, 9)" },
      { name: "service", description: "Readiness, metrics, this document, the stream" },
    ],
    paths,
    components: {
      schemas,
      headers: {
        RetryAfter: {
          description: "Seconds to wait before the next request",
          schema: { type: "integer", minimum: 0 },
        },
      },
      securitySchemes: {
        apiToken: {
          type: "apiKey",
          in: "header",
          name: "Authorization",
          description: "The API token, alone or as `Bearer <token>`",
        },
        signature: {
          type: "apiKey",
          in: "header",
          name: "X-Signature",
          description:
            "HMAC-SHA256 hex, keyed with the secret key, of the raw body (POST) or raw query string (GET); " +
            "with an `X-Timestamp: <Unix ms>` header, of `<X-Timestamp>\\n<METHOD>\\n<path>\\n<raw body or query>`, " +
            "refused (code AUTH_TIMESTAMP) when the timestamp is further than `X-Recv-Window` ms " +
            "(1 to 60000, default 5000) from the server time",
        },
        adminToken: { type: "http", scheme: "bearer", description: "ADMIN_TOKEN" },
      },
    },
  };
}

function tagOf(r: RouteSpec): string {
  if (r.path.startsWith("/admin")) return "admin";
  if (!r.path.startsWith("/1.0") || r.path === "/1.0/openapi.json") return "service";
  if (r.method === "post") return "orders";
  return r.auth === "none" ? "market" : "user";
}
