/**
 * The calls of a trading session (docs/API.md 13) and their schemas. Each call runs the order entry
 * call its REST route runs (src/entry/calls.ts): the same field sets less `nonce`, the same
 * validation, the same command to the core and the same result, rendered as the REST body is
 * (src/wire/render.ts); only the Reply differs (slot-reply.ts).
 *
 * SESSION_CALLS is a plain array of {method, params, result, run, render}: `params(s)` is the JSON
 * schema of the call's params for a config's request schemas (src/wire/request-schemas.ts), `result`
 * the JSON schema of its 200 result. Documents are built from it; `run` is what the session executes.
 */
import type { ExchangeConfig } from "../config/exchange-config.ts";
import {
  AMEND_ORDER_FIELDS,
  amendOrderCall,
  type BodyCall,
  balancesOf,
  CANCEL_ALL_AFTER_FIELDS,
  CANCEL_ALL_ORDERS_FIELDS,
  CANCEL_ORDER_FIELDS,
  CANCEL_ORDERS_FIELDS,
  type Caller,
  CREATE_ORDERS_FIELDS,
  cancelAllAfterCall,
  cancelAllOrdersCall,
  cancelOrderCall,
  cancelOrdersCall,
  createOcoCall,
  createOrderCall,
  createOrdersCall,
  executionsCall,
  MMP_RESET_FIELDS,
  MMP_SET_FIELDS,
  mmpGetCall,
  mmpResetCall,
  mmpSetCall,
  openOrdersCall,
  orderByClientIdCall,
  orderByIdCall,
  quoteCall,
  withoutNonce,
  withPair,
} from "../entry/calls.ts";
import type { EntryContext } from "../entry/context.ts";
import { OPEN_ORDERS_PAIR, unknownFields } from "../entry/fields.ts";
import type { Reply } from "../entry/reply.ts";
import { CREATE_FIELDS, OCO_FIELDS, ORDER_FIELDS } from "../entry/validate.ts";
import { QUOTE_FIELDS } from "../entry/validate-quote.ts";
import { Code } from "../errors/catalogue.ts";
import type { Lang } from "../errors/language.ts";
import {
  cancelOrdersResultSchema,
  createOrdersResultSchema,
  emptyArraySchema,
} from "../wire/document-schemas.ts";
import {
  type Render,
  renderBalances,
  renderBatch,
  renderCancelled,
  renderCancels,
  renderEmpty,
  renderExecutions,
  renderMmp,
  renderOco,
  renderOrder,
  renderOrders,
  renderQuote,
  renderTime,
  renderTriggerTime,
} from "../wire/render.ts";
import {
  clientOrderIdParam,
  executionsAfterParam,
  executionsLimitParam,
  orderIdSchema,
  type RequestSchemas,
} from "../wire/request-schemas.ts";
import {
  balancesSchema,
  cancelledSchema,
  executionsSchema,
  mmpSchema,
  ocoResultSchema,
  orderListSchema,
  orderWithUpdateSchema,
  quoteResultSchema,
  timeSchema,
  triggerTimeSchema,
} from "../wire/schemas.ts";

type Schema = Record<string, unknown>;

/** A logged-on session as a call sees it. */
export interface CallSession extends Caller {
  readonly userId: number;
}

/**
 * A session call answering a `T`: `run` is the order entry call on the params (src/entry/calls.ts),
 * `render` the JSON of its result in the answer's `result`. Methods, not function properties, so
 * that a table of calls of different results is one type.
 */
export interface SessionCall<T = unknown> {
  readonly method: string;
  /** JSON schema of the params (a REST body schema without `nonce`, or the call's own). */
  params(s: RequestSchemas): Schema;
  /** JSON schema of the 200 result. */
  readonly result: Schema;
  /** Runs the call; `params` is a JSON object (checked before). */
  run(ctx: EntryContext, s: CallSession, params: Record<string, unknown>, reply: Reply<T>): void;
  render(result: T, lang: Lang): string;
}

/** The params schema of a REST body schema: the same without `nonce`, in its branches too. */
function noNonce(schema: Schema): Schema {
  const out: Schema = { ...schema };
  if (schema.properties !== undefined) {
    const props = { ...(schema.properties as Schema) };
    delete props.nonce;
    out.properties = props;
  }
  for (const k of ["oneOf", "anyOf"] as const) {
    const branches = schema[k];
    if (Array.isArray(branches)) out[k] = branches.map((b: Schema) => noNonce(b));
  }
  return out;
}

const ORDER_GET: ReadonlySet<string> = new Set(["orderId", "clientOrderId"]);
const OPEN: ReadonlySet<string> = new Set(["pairName"]);
const NONE: ReadonlySet<string> = new Set();
const EXECUTIONS_PARAMS: ReadonlySet<string> = new Set(["after", "limit"]);

/**
 * A call that runs a body call of order entry (src/entry/calls.ts) on its params: the REST body's
 * fields less `nonce`, and its body schema less `nonce` (`schemaOf`, of the config's request schemas).
 */
function bodyCall<T>(
  method: string,
  schemaOf: (s: RequestSchemas) => Schema,
  result: Schema,
  call: BodyCall<T>,
  bodyFields: ReadonlySet<string>,
  render: Render<T>,
): SessionCall<T> {
  const fields = withoutNonce(bodyFields);
  return {
    method,
    params: (s) => noNonce(schemaOf(s)),
    result,
    run: (ctx, s, p, reply) => call(ctx, s, p, fields, reply),
    render,
  };
}

/** A call of its own (not a body call), typed by its result. */
function own<T>(call: SessionCall<T>): SessionCall<T> {
  return call;
}

/** The params schema of a call that takes only `pairName`. */
const pairNameOnly = (s: RequestSchemas): Schema => ({
  type: "object",
  properties: { pairName: s.params.pairName },
  required: ["pairName"],
  additionalProperties: false,
});

/** The params schema of a call without params. */
const noParams = (): Schema => ({ type: "object", properties: {}, additionalProperties: false });

/** The calls of docs/API.md 13, `quote.replace` (8.12) and the MMP calls (8.10) among them. */
export const SESSION_CALLS: readonly SessionCall[] = [
  bodyCall(
    "order.create",
    (s) => s.createOrder,
    orderWithUpdateSchema,
    createOrderCall,
    CREATE_FIELDS,
    renderOrder,
  ),
  bodyCall(
    "order.cancel",
    (s) => s.cancelOrder,
    emptyArraySchema,
    cancelOrderCall,
    CANCEL_ORDER_FIELDS,
    renderEmpty,
  ),
  bodyCall(
    "order.amend",
    (s) => s.amendOrder,
    orderWithUpdateSchema,
    amendOrderCall,
    AMEND_ORDER_FIELDS,
    renderOrder,
  ),
  bodyCall(
    "orders.create",
    (s) => s.createOrders,
    createOrdersResultSchema,
    (ctx, s, p, fields, reply) => createOrdersCall(ctx, s, p, fields, ORDER_FIELDS, reply),
    CREATE_ORDERS_FIELDS,
    renderBatch,
  ),
  bodyCall(
    "orders.cancel",
    (s) => s.cancelOrders,
    cancelOrdersResultSchema,
    cancelOrdersCall,
    CANCEL_ORDERS_FIELDS,
    renderCancels,
  ),
  bodyCall(
    "orders.cancelAll",
    (s) => s.cancelAll,
    cancelledSchema,
    cancelAllOrdersCall,
    CANCEL_ALL_ORDERS_FIELDS,
    renderCancelled,
  ),
  bodyCall(
    "orders.cancelAllAfter",
    (s) => s.cancelAllAfter,
    triggerTimeSchema,
    cancelAllAfterCall,
    CANCEL_ALL_AFTER_FIELDS,
    renderTriggerTime,
  ),
  // docs/API.md 18: counts as an order-creating call for cancel-on-disconnect (its legs carry the tag).
  bodyCall("oco.create", (s) => s.createOco, ocoResultSchema, createOcoCall, OCO_FIELDS, renderOco),
  // One branch per pair: `noNonce` takes `nonce` out of each.
  bodyCall("quote.replace", (s) => s.quote, quoteResultSchema, quoteCall, QUOTE_FIELDS, renderQuote),
  own({
    method: "order.get",
    params: () => ({
      type: "object",
      description: "Exactly one of orderId and clientOrderId",
      properties: { orderId: orderIdSchema, clientOrderId: clientOrderIdParam },
      oneOf: [{ required: ["orderId"] }, { required: ["clientOrderId"] }],
      additionalProperties: false,
    }),
    result: orderWithUpdateSchema,
    run: (ctx, s, p, reply) => {
      const bad = unknownFields(p, ORDER_GET);
      if (bad.length > 0) return reply.invalid(bad);
      const hasId = p.orderId !== undefined;
      const hasClient = p.clientOrderId !== undefined;
      if (hasId === hasClient) return reply.error(Code.SESSION_ORDER_GET_PARAMS);
      if (hasClient) {
        const id = p.clientOrderId;
        if (typeof id !== "string") return reply.error(Code.CLIENT_ORDER_ID_INVALID);
        return orderByClientIdCall(ctx, s.userId, id, reply);
      }
      orderByIdCall(ctx, s.userId, p.orderId, reply);
    },
    render: renderOrder,
  }),
  own({
    method: "orders.open",
    params: pairNameOnly,
    result: orderListSchema,
    run: (ctx, s, p, reply) => {
      const bad = unknownFields(p, OPEN);
      if (bad.length > 0) return reply.invalid(bad);
      withPair(ctx, p.pairName, OPEN_ORDERS_PAIR, reply, (pair) =>
        openOrdersCall(ctx, s.userId, pair.index, reply),
      );
    },
    render: renderOrders,
  }),
  own({
    method: "mmp.get",
    params: pairNameOnly,
    result: mmpSchema,
    run: (ctx, s, p, reply) => {
      const bad = unknownFields(p, OPEN);
      if (bad.length > 0) return reply.invalid(bad);
      mmpGetCall(ctx, s.userId, p.pairName, reply);
    },
    render: renderMmp,
  }),
  bodyCall("mmp.set", (s) => s.mmpSet, mmpSchema, mmpSetCall, MMP_SET_FIELDS, renderMmp),
  bodyCall("mmp.reset", (s) => s.mmpReset, mmpSchema, mmpResetCall, MMP_RESET_FIELDS, renderMmp),
  own({
    method: "balances",
    params: noParams,
    result: balancesSchema,
    run: (ctx, s, p, reply) => {
      const bad = unknownFields(p, NONE);
      if (bad.length > 0) return reply.invalid(bad);
      reply.ok(balancesOf(ctx, s.userId, configCurrencies(ctx.config)));
    },
    render: renderBalances,
  }),
  own({
    method: "executions",
    params: () => ({
      type: "object",
      properties: { after: executionsAfterParam, limit: executionsLimitParam },
      additionalProperties: false,
    }),
    result: executionsSchema,
    run: (ctx, s, p, reply) => {
      const bad = unknownFields(p, EXECUTIONS_PARAMS);
      if (bad.length > 0) return reply.invalid(bad);
      executionsCall(ctx, s.userId, p.after, p.limit, reply);
    },
    render: renderExecutions,
  }),
  own({
    method: "ping",
    params: noParams,
    result: timeSchema,
    run: (_ctx, _s, p, reply) => {
      const bad = unknownFields(p, NONE);
      if (bad.length > 0) return reply.invalid(bad);
      reply.ok(Date.now());
    },
    render: renderTime,
  }),
];

/** The session's own logon call (answered by the session, not through the table's `run`). */
export const LOGON_METHOD = "session.logon";
export const LOGON_FIELDS: ReadonlySet<string> = new Set([
  "apiToken",
  "signature",
  "cancelOnDisconnect",
  "heartbeatSeconds",
  "reports",
  "resumeFrom",
  "resumeEpoch",
]);
export const LOGON_PARAMS_SCHEMA: Schema = {
  type: "object",
  properties: {
    apiToken: { type: "string" },
    signature: { type: "string", description: "HMAC-SHA256 hex of the hello challenge with the Secret Key" },
    cancelOnDisconnect: { type: "boolean", default: false },
    heartbeatSeconds: { type: "integer", minimum: 1, maximum: 120, default: 30 },
    reports: { type: "boolean", default: true },
    resumeFrom: {
      type: "integer",
      minimum: 0,
      description:
        "docs/API.md 16: replay the user's executions numbered above this one before any live report " +
        '(needs "reports": true)',
    },
    resumeEpoch: {
      type: "integer",
      minimum: 1,
      description:
        "docs/API.md 16: the epoch `resumeFrom` belongs to; another epoch than the server's is refused",
    },
  },
  required: ["apiToken", "signature"],
  additionalProperties: false,
};
export const LOGON_RESULT_SCHEMA: Schema = {
  type: "object",
  properties: {
    uid: { type: "string" },
    cancelOnDisconnect: { type: "boolean" },
    heartbeatSeconds: { type: "integer" },
    reports: { type: "boolean" },
  },
  required: ["uid", "cancelOnDisconnect", "heartbeatSeconds", "reports"],
  additionalProperties: false,
};

/** `session.logon` as the AsyncAPI document describes it (src/documents/asyncapi.ts). */
export const LOGON_CALL = {
  method: LOGON_METHOD,
  params: (): Schema => LOGON_PARAMS_SCHEMA,
  result: LOGON_RESULT_SCHEMA,
  summary:
    "The first call of a session (docs/API.md 13): wrong, unknown or revoked credentials answer 401 " +
    "and close the connection with 4001; other invalid params answer 400 and the session may log on again.",
} as const;

/** Every call a session answers, as the AsyncAPI document lists them: the logon, then SESSION_CALLS. */
export const DESCRIBED_SESSION_CALLS = [LOGON_CALL, ...SESSION_CALLS] as const;

/** Every currency of the configured pairs, in order of first appearance. */
const currencyCache = new WeakMap<ExchangeConfig, readonly string[]>();
function configCurrencies(config: ExchangeConfig): readonly string[] {
  let out = currencyCache.get(config);
  if (out === undefined) {
    out = [...new Set(config.pairs.flatMap((p) => [p.base, p.quote]))];
    currencyCache.set(config, out);
  }
  return out;
}
