/**
 * The AsyncAPI 3.0 document of the WebSocket interfaces, served at `GET /1.0/asyncapi.json`
 * (issue 29): the read-only stream `/stream` (docs/API.md 12, 10) and the trading session `/session`
 * (docs/API.md 13). Like the OpenAPI document (openapi.ts) it is built from the config and the very
 * schema objects the server serialises with (schemas.ts, named by `namedSchemas`), so the two
 * documents share their component names and cannot drift from the wire.
 *
 * The document describes the server: it `send`s stream messages and the session's events and
 * frame errors, and `receive`s session calls, each with a `reply` of its answer or its error answer.
 *
 *   servers     `stream` (pathname /stream) and `session` (pathname /session), protocol ws
 *   channels    one per stream channel kind, its address the channel name as subscribed
 *               (`orders:{pair}`, the `stream` field of its messages); one for the session
 *   messages    per stream channel its snapshot and/or update; per session call its call, its
 *               answer and its error answer; per session event (hello, reports) its frame; the
 *               frame error answer
 *
 * Where things are declared: a stream channel in STREAM_CHANNELS, a session event in
 * SESSION_EVENTS (both below), a session call in SESSION_CALLS of src/session/methods.ts, handed in
 * as `sessionCalls` (server.ts passes DESCRIBED_SESSION_CALLS: the logon, then SESSION_CALLS), so
 * this builder imports nothing of the session itself.
 */
import type { ExchangeConfig } from "../config/exchange-config.ts";
import { errorBodySchema } from "../wire/document-schemas.ts";
import { type RequestSchemas, requestSchemas } from "../wire/request-schemas.ts";
import { mmpEventSchema, orderSchema, pairStatusSchema, userTradeSchema } from "../wire/schemas.ts";
import { namedSchemas, refify } from "./openapi.ts";

/**
 * One session call (docs/API.md 13): the `method` of the frame, the schema of its params for a
 * config's request schemas, and its answer's result. The entries of SESSION_CALLS
 * (src/session/methods.ts) are these.
 */
export interface SessionCallSpec {
  readonly method: string;
  readonly params: (s: RequestSchemas) => object;
  readonly result: object;
  readonly summary?: string;
}

type Json = Record<string, unknown>;

/** A stream channel kind (src/stream/channels.ts) and what it sends (docs/API.md 12.2 table). */
interface StreamChannelSpec {
  /** The key in `channels` and the prefix of its message names. */
  key: string;
  address: string;
  /** Component schema of its messages (the OpenAPI Stream*Message). */
  schema: string;
  /** Component schema of its snapshot when that differs from its updates. */
  snapshotSchema?: string;
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
    description: "All pairs' 24 h records, in config order (docs/API.md 12.2).",
    snapshot: "On connect: the full array, every pair in config order.",
    update:
      "After trades: the changed pairs' records (coalesced, at most one message per 100 ms). " +
      "`eventTimeMicro` has no REST counterpart.",
  },
  {
    key: "status",
    address: "status",
    schema: "StreamStatusMessage",
    snapshotSchema: "StreamStatusSnapshotMessage",
    user: false,
    description:
      "Every pair's status (docs/API.md 12.2, 11): `trading`, `cancelOnly` or `halted`, as `GET /info` shows it " +
      "and `POST /admin/pairs/status` sets it.",
    snapshot: "On connect: `[{pairName, status}]`, every pair in config order.",
    update: "After each change of a pair's status, once it is committed: `{pairName, status}`.",
  },
  {
    key: "orders",
    address: "orders:{pair}",
    schema: "StreamOrdersMessage",
    user: false,
    description:
      "The aggregated book of a pair (docs/API.md 12.2, 12.3): a snapshot, then the changed levels. `seq` is " +
      "the book sequence: the snapshot carries the current one, each later message the previous + 1.",
    snapshot: "On connect: every level of both sides and the current `seq`.",
    update:
      "After every book change: only the changed levels; `amount` is the new aggregate, 0 means the level is gone.",
  },
  {
    key: "bbo",
    address: "bbo:{pair}",
    schema: "StreamBboMessage",
    user: false,
    description:
      "The best bid and offer of a pair (docs/API.md 7.6.1, 12.5), as `GET /trade/pairs/{pair}/bbo` answers it. " +
      'Price and amount 0 for an empty side; `eventTimeMicro` "0" for a book that never changed.',
    snapshot: "On connect: the best bid and ask with the current book `seq`.",
    update:
      "After every book change that moves the best bid or ask (price or aggregate amount), after its " +
      "commit, never coalesced, with that change's `seq`.",
  },
  {
    key: "orders_l3",
    address: "orders_l3:{pair}",
    schema: "StreamOrdersL3Message",
    user: false,
    description:
      "The order-by-order book of a pair (docs/API.md 7.6.2, 12.5): every resting order with its remaining " +
      "amount, no owner. Applying the events with `seq` > S to a snapshot of `seq` S gives the later book.",
    snapshot: "On connect: `{seq, buy, sell}`, sides in price then time priority, as `GET .../orders/l3`.",
    update:
      "After every book change: `{seq, events}`, each event open / change / done of one order, in the " +
      "order they happened.",
  },
  {
    key: "history",
    address: "history:{pair}",
    schema: "StreamHistoryMessage",
    user: false,
    description: "The pair's public trades (docs/API.md 12.2). Nothing on connect.",
    update: "The trades of each matching step, in execution order.",
  },
  {
    key: "user_orders",
    address: "user_orders:{uid}",
    schema: "StreamUserOrdersMessage",
    user: true,
    description:
      "The caller's orders (docs/API.md 12.2): a signed upgrade (12.1) or a listen key (10); another " +
      "user's uid is refused with 403. Nothing on connect.",
    update:
      "The order after each change: created, each fill, cancel (as the REST reads return it); " +
      "`execSeq`: the change's number in the user's execution sequence (docs/API.md 16).",
  },
  {
    key: "user_history",
    address: "user_history:{uid}",
    schema: "StreamUserHistoryMessage",
    user: true,
    description: "The caller's trades (docs/API.md 12.2), as in the user history. Nothing on connect.",
    update:
      "Each trade of the user, as in the user history; `execSeq`: the trade's number in the user's " +
      "execution sequence (docs/API.md 16).",
  },
];

const STREAM_TEXT =
  "Read-only stream (docs/API.md 12, 10): `ws://HOST:PORT/stream?streams=<channel>,...` " +
  "(1 to 100 entries, URL-encoding allowed). Subscriptions are fixed at connect time: there are no " +
  "subscribe or unsubscribe frames, and frames from the client are ignored. Every message is " +
  '`{"stream": <channel as subscribed>, "data": ...}`. The upgrade is refused with an HTTP answer and ' +
  "the error body of docs/API.md 4 (see the OpenAPI operation `stream`): 400 (key `streams`) for an " +
  "empty list, an unknown channel or pair, more than 100 entries; 401 without valid credentials for " +
  "a user channel; 403 for another user's channel. The server sends WebSocket pings after half the " +
  "idle timeout (default 120 s) without a frame from the client (a pong counts). Close codes: 4002 " +
  "nothing from the client for the whole idle timeout, 1008 slow consumer (unsent " +
  "buffer over the bound, default 1 MiB: reconnect and resync from a snapshot), 4001 the listen key " +
  "that admitted the connection ended or the API key that signed the upgrade (or made that listen " +
  "key) was revoked, 1009 a client message over 16 KiB (the stream is read-only), 1001 server shutdown.";

const SESSION_TEXT =
  "Trading session (docs/API.md 13): `ws://HOST:PORT/session` (no headers needed, a query string is " +
  "ignored; messages in the language of the upgrade's Accept-Language). On open the server sends " +
  "`hello`; the first call must be `session.logon` (HMAC-SHA256 hex of the challenge with the secret " +
  'key). A call is one text frame `{"id", "method", "params"?}`, answered `{"id", "status": 200, ' +
  '"result"}` or `{"id", "status", "errors", "codes"}` (docs/API.md 4 bodies; `retryAfterMs` on a ' +
  "rate-limited call); answers of calls on one pair come in the calls' order. A frame that is not a " +
  "call is answered by a frame error. After logon the session receives `order` and `trade` reports " +
  "of its user (docs/API.md 13), and `pairStatus` when a pair's status changes (docs/API.md 11). The " +
  "server sends a WebSocket ping after half the heartbeat of silence; any frame or pong counts. The " +
  "upgrade is refused with 503 and the error body while the server starts or stops; a GET without " +
  "upgrade answers 426. Close codes: 4001 logon refused, none within 10 s, or the API key revoked; " +
  "4002 heartbeat missed; 1008 slow consumer; 1009 a message over 1 MiB (a text message over 64 KiB " +
  "answers 413 and the connection stays); 1001 server shutdown.";

/** `id` of a call (docs/API.md 13): an integer 0..2^53-1 or 1-36 characters [A-Za-z0-9_-]. */
const callIdSchema = {
  oneOf: [
    { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    { type: "string", pattern: "^[A-Za-z0-9_-]{1,36}$" },
  ],
};

/** The properties of an error answer but its id: the docs/API.md 4 body and the status. */
const errorAnswerProperties = {
  status: { type: "integer", minimum: 400, maximum: 599 },
  errors: errorBodySchema.properties.errors,
  codes: errorBodySchema.properties.codes,
  retryAfterMs: {
    type: "integer",
    minimum: 0,
    description: "Only on a 429 of the rate limit (not on TOO_MANY_IN_FLIGHT)",
  },
};

/** A call's error answer: the docs/API.md 4 body with the call's id. */
const sessionErrorSchema = {
  type: "object",
  properties: { id: { $ref: "#/components/schemas/SessionCallId" }, ...errorAnswerProperties },
  required: ["id", "status", "errors", "codes"],
  additionalProperties: false,
};

/** The answer to a frame that is no call: its id, or null when it has no valid one. */
const frameErrorSchema = {
  type: "object",
  properties: {
    id: { oneOf: [{ $ref: "#/components/schemas/SessionCallId" }, { type: "null" }] },
    ...errorAnswerProperties,
  },
  required: ["id", "status", "errors", "codes"],
  additionalProperties: false,
};

/**
 * What the server sends on a session unasked (docs/API.md 13, 8.10): one entry per `event`, each
 * frame `{"event": <event>, ...fields}` with every field present. Its message is `event.<event>`,
 * sent by the operation `event.<event>`; add an event here and the document has it.
 */
interface SessionEventSpec {
  readonly event: string;
  /** The component schema of the whole frame. */
  readonly schema: string;
  readonly title: string;
  readonly summary: string;
  /** The fields beside `event`, each required. */
  readonly fields: Readonly<Record<string, object>>;
}

/** An execution number (docs/API.md 16): 1, 2, 3, ... per user, with no gap. */
const EXEC_SEQ = { type: "integer", minimum: 1 } as const;

const SESSION_EVENTS: readonly SessionEventSpec[] = [
  {
    event: "hello",
    schema: "SessionHello",
    title: "hello",
    summary: "Sent on open: a fresh random challenge per connection and the server time (docs/API.md 13).",
    fields: {
      challenge: { type: "string", pattern: "^[0-9a-f]{64}$" },
      serverTime: { type: "integer", description: "Unix ms" },
    },
  },
  {
    event: "order",
    schema: "SessionOrderReport",
    title: "order report",
    summary:
      "After logon: every change of the user's orders, whoever caused it, as on user_orders, in " +
      'commit order, after the answer to the call that caused it (docs/API.md 13). Off with `"reports": false`. ' +
      "`execSeq`: the change's number in the user's execution sequence (docs/API.md 16).",
    fields: { data: orderSchema, execSeq: EXEC_SEQ },
  },
  {
    event: "trade",
    schema: "SessionTradeReport",
    title: "trade report",
    summary:
      "After logon: every trade of the user, as on user_history (docs/API.md 13). Off with " +
      "`\"reports\": false`. `execSeq`: the trade's number in the user's execution sequence (docs/API.md 16).",
    fields: { data: userTradeSchema, execSeq: EXEC_SEQ },
  },
  {
    event: "mmp",
    schema: "SessionMmpEvent",
    title: "market-maker protection",
    summary:
      "After logon: the user's MMP state on a pair changed, a trigger froze it or a reset unfroze it, " +
      'after the reports of the orders the trigger cancelled (docs/API.md 8.10). Off with `"reports": false`.',
    fields: { data: mmpEventSchema },
  },
  {
    event: "pairStatus",
    schema: "SessionPairStatusEvent",
    title: "pair status",
    summary:
      "After logon: a pair's status changed (docs/API.md 11), after its commit; sent to every logged-on " +
      "session, also with `\"reports\": false` (it is the venue's state, not a report of the user's orders).",
    fields: { data: pairStatusSchema },
  },
  {
    event: "resumed",
    schema: "SessionResumedEvent",
    title: "resumed",
    summary:
      "After a logon with `resumeFrom` (docs/API.md 16): the replay is complete. `execSeq` is the " +
      "user's last committed execution number when the replay was cut; every live report after this " +
      "one is numbered above it. `execEpoch`: the epoch the numbers belong to.",
    fields: { execSeq: { type: "integer", minimum: 0 }, execEpoch: { type: "integer", minimum: 1 } },
  },
];

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
        payload: {
          $ref: `#/components/schemas/${kind === "snapshot" ? (c.snapshotSchema ?? c.schema) : c.schema}`,
        },
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
        description: "docs/API.md 10: authenticates the upgrade instead of the headers",
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
                    "(docs/API.md 12.1; the bound form of docs/API.md 3 adds X-Timestamp, GET and /stream)",
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
  schemas.SessionFrameError = frameErrorSchema;

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
  const session = { $ref: "#/channels/session" };

  for (const e of SESSION_EVENTS) {
    const properties: Json = { event: { const: e.event } };
    for (const [field, schema] of Object.entries(e.fields)) properties[field] = refify(schema, names, false);
    schemas[e.schema] = {
      type: "object",
      properties,
      required: Object.keys(properties),
      additionalProperties: false,
    };
    const name = `event.${key(e.event)}`;
    const m = message(name, e.title, { $ref: `#/components/schemas/${e.schema}` }, e.summary);
    operations[name] = {
      action: "send",
      channel: session,
      title: e.title,
      summary: e.summary,
      messages: [m],
    };
  }

  const frameError = message(
    "session.frameError",
    "frame error",
    { $ref: "#/components/schemas/SessionFrameError" },
    "The answer to a frame that is no call (docs/API.md 13): a binary frame or text that is not a JSON " +
      "object, or an object in it that repeats a key (400, key `body`, id null; code BODY_DUPLICATE_KEY), " +
      "a missing or malformed id (400, key `id`, id null), a missing, " +
      "non-string or unknown method (400, key `method`, the frame's id); 429 TOO_MANY_IN_FLIGHT when " +
      "1,000 calls wait for their answers.",
  );
  operations["session.frameError"] = {
    action: "send",
    channel: session,
    title: "Frame error answer",
    messages: [frameError],
  };

  const requests = requestSchemas(config);
  for (const call of sessionCalls) {
    const m = key(call.method);
    const callRef = message(`${m}.call`, `${call.method} call`, {
      type: "object",
      properties: {
        id: { $ref: "#/components/schemas/SessionCallId" },
        method: { const: call.method },
        params: ref(call.params(requests)),
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
      ...(call.summary !== undefined ? { summary: call.summary } : {}),
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
