/**
 * The calls of a trading session (CONTRACT 11.2) and their schemas. Each call runs the same code as
 * its REST route (src/http/calls.ts): the same field sets less `nonce`, the same validation, the same
 * command to the core and the same answer view; only the Reply differs (src/session/session.ts).
 *
 * SESSION_CALLS is a plain array of {method, params, result}: `params(s)` is the JSON schema of the
 * call's params for a config's request schemas (src/http/request-schemas.ts), `result` the JSON
 * schema of its 200 result. Documents are built from it; `run` is what the session executes.
 */
import type { ExchangeConfig } from "../config/exchange-config.ts";
import { Code } from "../errors/catalogue.ts";
import {
  amendOrderCall,
  answerOrder,
  type BodyCall,
  balancesOf,
  type Caller,
  cancelAllAfterCall,
  cancelAllOrdersCall,
  cancelOrderCall,
  cancelOrdersCall,
  createOrderCall,
  createOrdersCall,
  MMP_RESET_FIELDS,
  MMP_SET_FIELDS,
  mmpGetCall,
  mmpResetCall,
  mmpSetCall,
  openOrdersCall,
  orderByClientIdCall,
  quoteCall,
  type Reply,
  withoutNonce,
} from "../http/calls.ts";
import { unknownFields } from "../http/json-body.ts";
import { clientOrderIdParam, orderIdSchema, type RequestSchemas } from "../http/request-schemas.ts";
import type { RouteContext } from "../http/route.ts";
import { AMEND_ORDER_FIELDS } from "../http/routes/amend-order.ts";
import { CANCEL_ALL_AFTER_FIELDS } from "../http/routes/cancel-all-after.ts";
import { CANCEL_ALL_ORDERS_FIELDS } from "../http/routes/cancel-all-orders.ts";
import { CANCEL_ORDER_FIELDS } from "../http/routes/cancel-order.ts";
import { CANCEL_ORDERS_FIELDS } from "../http/routes/cancel-orders.ts";
import { CREATE_ORDERS_FIELDS } from "../http/routes/create-orders.ts";
import {
  balancesSchema,
  cancelledSchema,
  mmpSchema,
  orderListSchema,
  orderWithUpdateSchema,
  quoteResultSchema,
  timeSchema,
  triggerTimeSchema,
} from "../http/schemas.ts";
import {
  cancelOrdersResultSchema,
  createOrdersResultSchema,
  emptyArraySchema,
} from "../http/schemas-contract.ts";
import { CREATE_FIELDS, ORDER_FIELDS, orderIdOf } from "../http/validate.ts";
import { QUOTE_FIELDS } from "../http/validate-quote.ts";

type Schema = Record<string, unknown>;

/** A logged-on session as a call sees it. */
export interface CallSession extends Caller {
  readonly userId: number;
}

export interface SessionCall {
  readonly method: string;
  /** JSON schema of the params (a REST body schema without `nonce`, or the call's own). */
  readonly params: (s: RequestSchemas) => Schema;
  /** JSON schema of the 200 result. */
  readonly result: Schema;
  /** Runs the call; `params` is a JSON object (checked before). */
  readonly run: (ctx: RouteContext, s: CallSession, params: Record<string, unknown>, reply: Reply) => void;
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

/**
 * A call that runs a REST route's body call (src/http/calls.ts) on its params: the route's fields
 * less `nonce`, and its body schema less `nonce` (`schemaOf`, of the config's request schemas).
 */
function bodyCall(
  method: string,
  schemaOf: (s: RequestSchemas) => Schema,
  result: Schema,
  call: BodyCall,
  routeFields: ReadonlySet<string>,
): SessionCall {
  const fields = withoutNonce(routeFields);
  return {
    method,
    params: (s) => noNonce(schemaOf(s)),
    result,
    run: (ctx, s, p, reply) => call(ctx, s, p, fields, reply),
  };
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

/** The calls of CONTRACT 11.2, `quote.replace` (12.1) and the MMP calls (12.2). */
export const SESSION_CALLS: readonly SessionCall[] = [
  bodyCall("order.create", (s) => s.createOrder, orderWithUpdateSchema, createOrderCall, CREATE_FIELDS),
  bodyCall("order.cancel", (s) => s.cancelOrder, emptyArraySchema, cancelOrderCall, CANCEL_ORDER_FIELDS),
  bodyCall("order.amend", (s) => s.amendOrder, orderWithUpdateSchema, amendOrderCall, AMEND_ORDER_FIELDS),
  bodyCall(
    "orders.create",
    (s) => s.createOrders,
    createOrdersResultSchema,
    (ctx, s, p, fields, reply) => createOrdersCall(ctx, s, p, fields, ORDER_FIELDS, reply),
    CREATE_ORDERS_FIELDS,
  ),
  bodyCall(
    "orders.cancel",
    (s) => s.cancelOrders,
    cancelOrdersResultSchema,
    cancelOrdersCall,
    CANCEL_ORDERS_FIELDS,
  ),
  bodyCall(
    "orders.cancelAll",
    (s) => s.cancelAll,
    cancelledSchema,
    cancelAllOrdersCall,
    CANCEL_ALL_ORDERS_FIELDS,
  ),
  bodyCall(
    "orders.cancelAllAfter",
    (s) => s.cancelAllAfter,
    triggerTimeSchema,
    cancelAllAfterCall,
    CANCEL_ALL_AFTER_FIELDS,
  ),
  // One branch per pair: `noNonce` takes `nonce` out of each.
  bodyCall("quote.replace", (s) => s.quote, quoteResultSchema, quoteCall, QUOTE_FIELDS),
  {
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
      const id = orderIdOf(p.orderId);
      if (id < 0) return reply.error(-id);
      answerOrder(ctx, s.userId, ctx.reader.order(id), reply);
    },
  },
  {
    method: "orders.open",
    params: pairNameOnly,
    result: orderListSchema,
    run: (ctx, s, p, reply) => {
      const bad = unknownFields(p, OPEN);
      if (bad.length > 0) return reply.invalid(bad);
      const pn = p.pairName;
      if (pn === undefined) return reply.error(Code.SESSION_PAIR_REQUIRED);
      if (typeof pn !== "string") return reply.error(Code.PAIR_NOT_STRING);
      const pair = ctx.config.pairsByName.get(pn);
      // As the REST path answers an unknown pair: 404.
      if (pair === undefined) return reply.error(Code.PAIR_UNKNOWN_IN_PATH);
      openOrdersCall(ctx, s.userId, pair.index, reply);
    },
  },
  {
    method: "mmp.get",
    params: pairNameOnly,
    result: mmpSchema,
    run: (ctx, s, p, reply) => {
      const bad = unknownFields(p, OPEN);
      if (bad.length > 0) return reply.invalid(bad);
      const pn = p.pairName;
      // As the REST query reads it: a value that is not a string names no pair.
      if (pn !== undefined && typeof pn !== "string") return reply.error(Code.PAIR_NOT_STRING);
      mmpGetCall(ctx, s.userId, pn ?? null, reply);
    },
  },
  bodyCall("mmp.set", (s) => s.mmpSet, mmpSchema, mmpSetCall, MMP_SET_FIELDS),
  bodyCall("mmp.reset", (s) => s.mmpReset, mmpSchema, mmpResetCall, MMP_RESET_FIELDS),
  {
    method: "balances",
    params: noParams,
    result: balancesSchema,
    run: (ctx, s, p, reply) => {
      const bad = unknownFields(p, NONE);
      if (bad.length > 0) return reply.invalid(bad);
      reply.ok(balancesOf(ctx, s.userId, configCurrencies(ctx.config)));
    },
  },
  {
    method: "ping",
    params: noParams,
    result: timeSchema,
    run: (_ctx, _s, p, reply) => {
      const bad = unknownFields(p, NONE);
      if (bad.length > 0) return reply.invalid(bad);
      reply.ok(`{"serverTime":${Date.now()}}`);
    },
  },
];

/** The session's own logon call (answered by the session, not through the table's `run`). */
export const LOGON_METHOD = "session.logon";
export const LOGON_FIELDS: ReadonlySet<string> = new Set([
  "apiToken",
  "signature",
  "cancelOnDisconnect",
  "heartbeatSeconds",
  "reports",
]);
export const LOGON_PARAMS_SCHEMA: Schema = {
  type: "object",
  properties: {
    apiToken: { type: "string" },
    signature: { type: "string", description: "HMAC-SHA256 hex of the hello challenge with the Secret Key" },
    cancelOnDisconnect: { type: "boolean", default: false },
    heartbeatSeconds: { type: "integer", minimum: 1, maximum: 120, default: 30 },
    reports: { type: "boolean", default: true },
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

/** `session.logon` as the AsyncAPI document describes it (src/http/asyncapi.ts). */
export const LOGON_CALL = {
  method: LOGON_METHOD,
  params: (): Schema => LOGON_PARAMS_SCHEMA,
  result: LOGON_RESULT_SCHEMA,
  summary:
    "The first call of a session (CONTRACT 11.1): wrong, unknown or revoked credentials answer 401 " +
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
