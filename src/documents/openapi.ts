/**
 * The OpenAPI 3.1 document of the REST interface, served at `GET /1.0/openapi.json`, generated from
 * ONE declarative route table handed in by the caller (route-table.ts `ROUTES`): method, path,
 * authentication, request body, query parameters and one response schema per status
 * (src/http/route-types.ts). This builder imports no route: it only turns the table into the document.
 *
 * Response bodies the server already writes come from schemas.ts, the very objects
 * fast-json-stringify compiles, so the document cannot drift from the wire; the bodies the server
 * assembles from serialised parts (errors, batches) are in schemas-contract.ts.
 *
 * Paths are written from the server root (`/1.0/...`, `/admin/...`, `/health`), so the one server
 * entry is `/`.
 */
import type { ExchangeConfig } from "../config/exchange-config.ts";
import type { Auth, RouteSpec } from "../http/route-types.ts";
import { errorBodySchema, healthSchema } from "../wire/document-schemas.ts";
import { nonceSchema, orderIdSchema, requestSchemas } from "../wire/request-schemas.ts";
import {
  accountSchema,
  balanceSchema,
  bboSchema,
  bookSchema,
  chartSchema,
  exchangeSchema,
  exchangeStreamSchema,
  l3BookSchema,
  l3ChangeSchema,
  newKeySchema,
  newUserSchema,
  ocoResultSchema,
  orderListSchema,
  orderSchema,
  ordersPageSchema,
  orderWithUpdateSchema,
  pairInfoSchema,
  pairPageSchema,
  pairRecordSchema,
  pairStatusSchema,
  publicTradeSchema,
  quoteResultSchema,
  streamSchemas,
  tradesPageSchema,
  transferSchema,
  userTradeSchema,
} from "../wire/schemas.ts";

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Validation failed: the key names the field (`body` when the body is not a JSON object or an object in it repeats a key)",
  401: "Missing, unknown or revoked token, wrong signature, a replayed nonce, or an X-Timestamp outside X-Recv-Window (key `auth`)",
  403: "A stream channel of another user (key `auth`)",
  404: "Unknown pair in the path (key `pairName`), unknown path (key `path`) or id",
  405: "Method not allowed on this path (key `path`); `Allow` lists the path's methods",
  413: "Body over 64 KiB (key `body`)",
  414: "Request target (path and query) over 4 KiB (key `path`)",
  415: "POST media type missing or not application/json (key `body`)",
  426: "A plain GET of the stream endpoint (key `path`)",
  431: "Request head (request line and headers) over 4,096 bytes, counted from the target and the headers the server reads (key `headers`)",
  429: "Rate limited (key `rate`); `Retry-After` gives the seconds to wait",
  500: "Internal error (key `server`; no internals)",
  503: "Starting, shutting down, or a pair worker too far behind (key `server`); nothing changed",
};

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
  ["Account", accountSchema],
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
  ["Bbo", bboSchema],
  ["L3Book", l3BookSchema],
  ["L3Change", l3ChangeSchema],
  ["StreamBboMessage", streamSchemas.bbo],
  ["StreamOrdersL3Message", streamSchemas.orders_l3],
  ["PairStatus", pairStatusSchema],
  ["StreamStatusSnapshotMessage", streamSchemas.statusSnapshot],
  ["StreamStatusMessage", streamSchemas.status],
  ["OrderList", orderListSchema],
  ["PairInfo", pairInfoSchema],
  ["QuoteAnswer", quoteResultSchema],
  ["OcoAnswer", ocoResultSchema],
];

/**
 * The named schemas of a config's documents, OpenAPI and AsyncAPI (asyncapi.ts) alike: the response
 * bodies of schemas.ts and the request schemas of the config.
 */
export function namedSchemas(config: ExchangeConfig): ReadonlyArray<readonly [string, object]> {
  const req = requestSchemas(config);
  return [
    ...NAMED,
    ["CreateOrderRequest", req.createOrder],
    ["BatchOrder", req.batchOrder],
    ["CreateOcoRequest", req.createOco],
    ["OrderIdInput", orderIdSchema],
    ["Nonce", nonceSchema],
  ];
}

/** A copy of `schema` where every named object below the root is a `$ref`. */
export function refify(schema: unknown, names: Map<object, string>, root = true): unknown {
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
export function buildOpenApi(
  config: ExchangeConfig,
  routes: readonly RouteSpec[],
  version = "1.0",
): Record<string, unknown> {
  const req = requestSchemas(config);
  const named = namedSchemas(config);
  const names = new Map<object, string>(named.map(([n, s]) => [s, n]));
  const schemas: Record<string, unknown> = {};
  for (const [name, schema] of named) schemas[name] = refify(schema, names);
  const json = (schema: object) => ({ "application/json": { schema: refify(schema, names, false) } });

  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
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
        schema: q.configParam === undefined ? q.schema : (req.params[q.configParam] ?? q.schema),
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
    // Every call that reads its request head answers 414 / 431 over the limits (src/wire/request.ts);
    // the service paths and the stream upgrade read nothing of it.
    const limited = !("kind" in r && r.kind === "plain") && r.path !== "/stream";
    const errors = limited ? [...r.errors, 414, 431].sort((a, b) => a - b) : r.errors;
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
        "REST interface of the exchange (docs/API.md). Money in answers is exact: JSON " +
        "numbers whose decimal text is the value, balances as decimal strings. Requests accept a JSON " +
        "number or a decimal string for price and amount. Errors are `{errors: {field: [message]}}` " +
        "(plus `codes`), English or Russian by Accept-Language. Request schemas follow the server's " +
        "config (pair and currency names, each pair's decimals and bounds); exact decimal bounds are " +
        "the annotations `x-decimals`, `x-minimum`, `x-exclusiveMinimum`, `x-maximum` (decimal text). " +
        "See docs/API.md 1.1.",
    },
    servers: [{ url: "/" }],
    tags: [
      { name: "orders", description: "Signed order entry (docs/API.md 7.1-7.2, 8)" },
      { name: "market", description: "Public market data (docs/API.md 7.3-7.7, 9)" },
      { name: "user", description: "Signed reads of the caller's data (docs/API.md 7.8-7.11, 8.6)" },
      { name: "admin", description: "Operator calls (docs/API.md 11)" },
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
  if (!r.path.startsWith("/1.0") || r.path === "/1.0/openapi.json" || r.path === "/1.0/asyncapi.json")
    return "service";
  if (r.method === "post") return "orders";
  return r.auth === "none" ? "market" : "user";
}
