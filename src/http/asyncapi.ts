/**
 * The AsyncAPI 3.0 document of the WebSocket interfaces, served at `GET /1.0/asyncapi.json`
 * (issue 29): the read-only stream `/stream` (CONTRACT 7, 9, 10) and the trading session `/session`
 * (CONTRACT 11). Like the OpenAPI document (openapi.ts) it is built from the config and the very
 * schema objects the server serialises with (schemas.ts, named by `namedSchemas`), so the two
 * documents share their component names and cannot drift from the wire.
 *
 * The document describes the server: it `send`s stream messages, the hello frame and reports, and
 * `receive`s session calls, each with a `reply` of its answer or its error answer.
 *
 *   servers     `stream` (pathname /stream) and `session` (pathname /session), protocol ws
 *   channels    one per stream channel kind, its address the channel name as subscribed
 *               (`orders:{pair}`, the `stream` field of its messages); one for the session
 *   messages    per stream channel its snapshot and/or update; per session call its call, its
 *               answer and its error answer; hello, the frame error answer, the two reports
 *
 * The session calls are handed in (`sessionCalls`: method, params schema, result schema), so this
 * builder imports nothing of the session itself.
 */
import type { ExchangeConfig } from "../config.ts";
import { namedSchemas, refify } from "./openapi.ts";
import { errorBodySchema } from "./schemas-contract.ts";

/** One session call (CONTRACT 11.2): the `method` of the frame, its params and its answer's result. */
export interface SessionCallSpec {
  readonly method: string;
  readonly params: object;
  readonly result: object;
}

type Json = Record<string, unknown>;

/** A stream channel kind (src/stream/channels.ts) and what it sends (CONTRACT 7 table). */
interface StreamChannelSpec {
  /** The key in `channels` and the prefix of its message names. */
  key: string;
  address: string;
  /** Component schema of its messages (the OpenAPI Stream*Message). */
  schema: string;
  user: boolean;
  description: string;
  /** Message kinds: `snapshot` on connect, `update` afterwards. */
  snapshot?: string;
  update: string;
}

const STREAM_CHANNELS: readonly StreamChannelSpec[] = [
  {
    key: "exchanges",
    address: "exchanges",
    schema: "StreamExchangesMessage",
    user: false,
    description: "All pairs' 24 h records, in config order (CONTRACT 7).",
    snapshot: "On connect: the full array, every pair in config order.",
    update:
      "After trades: the changed pairs' records (coalesced, at most one message per 100 ms). " +
      "`eventTimeMicro` has no REST counterpart.",
  },
  {
    key: "orders",
    address: "orders:{pair}",
    schema: "StreamOrdersMessage",
    user: false,
    description:
      "The aggregated book of a pair (CONTRACT 7, 9): a snapshot, then the changed levels. `seq` is " +
      "the book sequence: the snapshot carries the current one, each later message the previous + 1.",
    snapshot: "On connect: every level of both sides and the current `seq`.",
    update:
      "After every book change: only the changed levels; `amount` is the new aggregate, 0 means the level is gone.",
  },
  {
    key: "history",
    address: "history:{pair}",
    schema: "StreamHistoryMessage",
    user: false,
    description: "The pair's public trades (CONTRACT 7). Nothing on connect.",
    update: "The trades of each matching step, in execution order.",
  },
  {
    key: "user_orders",
    address: "user_orders:{uid}",
    schema: "StreamUserOrdersMessage",
    user: true,
    description:
      "The caller's orders (CONTRACT 7): a signed upgrade or a listen key (CONTRACT 10); another " +
      "user's uid is refused with 403. Nothing on connect.",
    update: "The order after each change: created, each fill, cancel (as the REST reads return it).",
  },
  {
    key: "user_history",
    address: "user_history:{uid}",
    schema: "StreamUserHistoryMessage",
    user: true,
    description: "The caller's trades (CONTRACT 7), as in the user history. Nothing on connect.",
    update: "Each trade of the user, as in the user history.",
  },
];

const STREAM_TEXT =
  "Read-only stream (seed 6; CONTRACT 7, 9, 10): `ws://HOST:PORT/stream?streams=<channel>,...` " +
  "(1 to 100 entries, URL-encoding allowed). Subscriptions are fixed at connect time: there are no " +
  "subscribe or unsubscribe frames, and frames from the client are ignored. Every message is " +
  '`{"stream": <channel as subscribed>, "data": ...}`. The upgrade is refused with an HTTP answer and ' +
  "the error body of CONTRACT 5 (see the OpenAPI operation `stream`): 400 (key `streams`) for an " +
  "empty list, an unknown channel or pair, more than 100 entries; 401 without valid credentials for " +
  "a user channel; 403 for another user's channel. The server sends WebSocket pings; a connection " +
  "silent past the idle timeout (default 120 s) is closed. Close codes: 1008 slow consumer (unsent " +
  "buffer over the bound, default 1 MiB: reconnect and resync from a snapshot), 4001 the listen key " +
  "that admitted the connection ended, 1001 server shutdown.";

const SESSION_TEXT =
  "Trading session (CONTRACT 11): `ws://HOST:PORT/session`. On open the server sends `hello`; the " +
  "first call must be `session.logon` (HMAC-SHA256 hex of the challenge with the secret key). A call " +
  'is one text frame `{"id", "method", "params"?}`, answered `{"id", "status": 200, "result"}` or ' +
  '`{"id", "status", "errors", "codes"}` (CONTRACT 5, 9 bodies; `retryAfterMs` on a rate-limited ' +
  'call). A frame that is not a JSON object or has no valid id is answered with `"id": null`. ' +
  "After logon the session receives `order` and `trade` reports of its user (CONTRACT 11.3). " +
  "Close codes: 4001 logon failed, missing or revoked; 4002 missed heartbeat; 1008 slow consumer.";

/** `id` of a call (CONTRACT 11.2): an integer 0..2^53-1 or 1-36 characters [A-Za-z0-9_-]. */
const callIdSchema = {
  oneOf: [
    { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    { type: "string", pattern: "^[A-Za-z0-9_-]{1,36}$" },
  ],
};

/** A call's error answer: the CONTRACT 5/9 body with the call's id (null for a frame error). */
const sessionErrorSchema = {
  type: "object",
  properties: {
    id: { oneOf: [callIdSchema, { type: "null" }] },
    status: { type: "integer", minimum: 400, maximum: 599 },
    errors: errorBodySchema.properties.errors,
    codes: errorBodySchema.properties.codes,
    retryAfterMs: { type: "integer", minimum: 0 },
  },
  required: ["id", "status", "errors", "codes"],
  additionalProperties: false,
};

const helloSchema = {
  type: "object",
  properties: {
    event: { const: "hello" },
    challenge: { type: "string", pattern: "^[0-9a-f]{64}$" },
    serverTime: { type: "integer" },
  },
  required: ["event", "challenge", "serverTime"],
  additionalProperties: false,
};

function reportSchema(event: string, data: object) {
  return {
    type: "object",
    properties: { event: { const: event }, data },
    required: ["event", "data"],
    additionalProperties: false,
  };
}

/** A component key (AsyncAPI allows `[A-Za-z0-9.\-_]`): `order.create` stays as it is. */
function key(text: string): string {
  return text.replace(/[^A-Za-z0-9.\-_]/g, "_");
}

/**
 * Builds the document of a config and the session's call table (call once at start). Pair names
 * are the `pair` parameter's enum; the session calls' params and results are referred to by the
 * names they have in the OpenAPI document when they are the same objects.
 */
export function buildAsyncApi(
  config: ExchangeConfig,
  sessionCalls: readonly SessionCallSpec[],
  version = "1.0",
): Record<string, unknown> {
  const named = namedSchemas(config);
  const names = new Map<object, string>(named.map(([n, s]) => [s, n]));
  // A call's params or result that equals a named schema (the request schemas are built per call
  // of requestSchemas, so not the same object) is referred to by its name too.
  const byText = new Map<string, string>(named.map(([n, s]) => [JSON.stringify(s), n]));
  const ref = (schema: object) => {
    const name = byText.get(JSON.stringify(schema));
    return name !== undefined ? { $ref: `#/components/schemas/${name}` } : refify(schema, names, false);
  };
  const schemas: Json = {};
  for (const [name, schema] of named) schemas[name] = refify(schema, names);

  const messages: Json = {};
  const channels: Json = {};
  const operations: Json = {};

  // ---------------------------------------------------------------- /stream
  for (const c of STREAM_CHANNELS) {
    const channelMessages: Json = {};
    const add = (kind: "snapshot" | "update", text: string) => {
      const name = `${c.key}.${kind}`;
      messages[name] = {
        name,
        title: `${c.address} ${kind}`,
        summary: text,
        contentType: "application/json",
        payload: { $ref: `#/components/schemas/${c.schema}` },
      };
      channelMessages[name] = { $ref: `#/components/messages/${name}` };
    };
    if (c.snapshot !== undefined) add("snapshot", c.snapshot);
    add("update", c.update);

    const parameters: Json = {};
    if (c.address.includes("{pair}"))
      parameters.pair = {
        description: "A pair of the config",
        enum: config.pairs.map((p) => p.name),
      };
    if (c.address.includes("{uid}")) parameters.uid = { description: "The caller's uid (any letter case)" };
    const query: Json = {
      streams: {
        type: "string",
        description: "Comma-separated channels (1..100), this one among them; URL-encoding allowed",
      },
    };
    if (c.user)
      query.listenKey = {
        type: "string",
        pattern: "^[0-9a-f]{64}$",
        description: "CONTRACT 10: authenticates the upgrade instead of the headers",
      };
    channels[c.key] = {
      address: c.address,
      title: c.address,
      description: c.description,
      servers: [{ $ref: "#/servers/stream" }],
      messages: channelMessages,
      ...(Object.keys(parameters).length > 0 ? { parameters } : {}),
      bindings: {
        ws: {
          method: "GET",
          query: { type: "object", properties: query, required: ["streams"] },
          ...(c.user
            ? {
                headers: {
                  type: "object",
                  description:
                    "Without `listenKey`: the API token and the HMAC-SHA256 hex of the raw query string " +
                    "(CONTRACT 7; CONTRACT 15 binds it to X-Timestamp, GET and /stream)",
                  properties: {
                    Authorization: { type: "string" },
                    "X-Signature": { type: "string" },
                    "X-Timestamp": { type: "string" },
                    "X-Recv-Window": { type: "string" },
                  },
                },
              }
            : {}),
        },
      },
    };
    operations[`stream.${c.key}`] = {
      action: "send",
      channel: { $ref: `#/channels/${c.key}` },
      title: `Stream ${c.address}`,
      summary: c.update,
      messages: Object.keys(channelMessages).map((m) => ({ $ref: `#/channels/${c.key}/messages/${m}` })),
    };
  }

  // ---------------------------------------------------------------- /session
  schemas.SessionCallId = callIdSchema;
  schemas.SessionErrorAnswer = sessionErrorSchema;
  schemas.SessionHello = helloSchema;
  schemas.SessionOrderReport = reportSchema("order", { $ref: "#/components/schemas/Order" });
  schemas.SessionTradeReport = reportSchema("trade", { $ref: "#/components/schemas/UserTrade" });

  const sessionMessages: Json = {};
  const message = (name: string, title: string, payload: unknown, summary?: string) => {
    messages[name] = {
      name,
      title,
      ...(summary !== undefined ? { summary } : {}),
      contentType: "application/json",
      payload,
    };
    sessionMessages[name] = { $ref: `#/components/messages/${name}` };
    return { $ref: `#/channels/session/messages/${name}` };
  };
  const hello = message(
    "session.hello",
    "hello",
    { $ref: "#/components/schemas/SessionHello" },
    "Sent on open: a fresh random challenge per connection and the server time (CONTRACT 11.1).",
  );
  const frameError = message(
    "session.frameError",
    "frame error",
    { $ref: "#/components/schemas/SessionErrorAnswer" },
    "The answer to a frame that is not a call: not a JSON object (key `body`), no valid id (key `id`), " +
      "a missing or unknown method (key `method`); `id` is null when the frame has none.",
  );
  const orderReport = message(
    "session.report.order",
    "order report",
    { $ref: "#/components/schemas/SessionOrderReport" },
    "After logon: every change of the user's orders, whoever caused it, as on user_orders (CONTRACT 11.3).",
  );
  const tradeReport = message(
    "session.report.trade",
    "trade report",
    { $ref: "#/components/schemas/SessionTradeReport" },
    "After logon: every trade of the user, as on user_history (CONTRACT 11.3).",
  );

  const session = { $ref: "#/channels/session" };
  operations["session.hello"] = { action: "send", channel: session, title: "hello", messages: [hello] };
  operations["session.reports"] = {
    action: "send",
    channel: session,
    title: "Execution reports",
    summary: 'Off with `"reports": false` at logon.',
    messages: [orderReport, tradeReport],
  };
  operations["session.frameError"] = {
    action: "send",
    channel: session,
    title: "Frame error answer",
    messages: [frameError],
  };

  for (const call of sessionCalls) {
    const m = key(call.method);
    const callRef = message(`${m}.call`, `${call.method} call`, {
      type: "object",
      properties: {
        id: { $ref: "#/components/schemas/SessionCallId" },
        method: { const: call.method },
        params: ref(call.params),
      },
      required: ["id", "method"],
      additionalProperties: false,
    });
    const answer = message(`${m}.answer`, `${call.method} answer`, {
      type: "object",
      properties: {
        id: { $ref: "#/components/schemas/SessionCallId" },
        status: { const: 200 },
        result: ref(call.result),
      },
      required: ["id", "status", "result"],
      additionalProperties: false,
    });
    const error = message(`${m}.error`, `${call.method} error answer`, {
      $ref: "#/components/schemas/SessionErrorAnswer",
    });
    operations[m] = {
      action: "receive",
      channel: session,
      title: call.method,
      messages: [callRef],
      reply: { channel: session, messages: [answer, error] },
    };
  }

  channels.session = {
    address: null,
    title: "session",
    description: SESSION_TEXT,
    servers: [{ $ref: "#/servers/session" }],
    messages: sessionMessages,
  };

  return {
    asyncapi: "3.0.0",
    info: {
      title: "Exchange server WebSocket interfaces",
      version,
      description:
        "The stream and the trading session of the exchange. Message schemas are those of the REST " +
        "answers (the OpenAPI document at /1.0/openapi.json uses the same component names). See docs/API.md.",
    },
    defaultContentType: "application/json",
    servers: {
      stream: {
        host: "{host}",
        pathname: "/stream",
        protocol: "ws",
        title: "Stream",
        description: STREAM_TEXT,
        variables: { host: { default: "localhost:8080", description: "The server's host and port" } },
      },
      session: {
        host: "{host}",
        pathname: "/session",
        protocol: "ws",
        title: "Trading session",
        description: SESSION_TEXT,
        variables: { host: { default: "localhost:8080", description: "The server's host and port" } },
      },
    },
    channels,
    operations,
    components: { schemas, messages },
  };
}
