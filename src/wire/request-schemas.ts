/**
 * Request rules: the bounds every call checks (one constant each, read by the route that checks it)
 * and the request schemas of the OpenAPI document, built from those constants and from the config
 * (pair and currency names, each pair's decimals and bounds). The validation and the document read
 * the same numbers, so a client generated from the document sends what the server takes.
 *
 * Schema conventions (docs/API.md "Requests in the OpenAPI document"):
 * - a decimal is `oneOf` a JSON number (`minimum`/`maximum`, or `exclusiveMinimum` 0) and a string
 *   whose `pattern` bounds its integer digits and its decimals; both carry `x-decimals` (the most
 *   significant decimals; trailing zeros beyond are fine) and the exact bounds as decimal text,
 *   `x-minimum` / `x-exclusiveMinimum` / `x-maximum` (inclusive unless named exclusive);
 * - an integer of a body is `oneOf` a JSON integer and a string of digits (docs/API.md 1), the string
 *   with the same bounds as `x-minimum` / `x-maximum`;
 * - `null` is a value only of the order options that docs/API.md 8.2 lists as nullable.
 */

import type { ExchangeConfig, PairConfig } from "../config/exchange-config.ts";
import { MAX_LEDGER_VALUE } from "../config/ledger-bounds.ts";
import { CLIENT_ORDER_ID_RE, STP_NAMES, TIF_NAMES } from "../core/order-options.ts";
import { PAIR_STATUS_NAMES } from "../core/pair-status.ts";
import { PERIODS } from "../core/read-models/pair-market.ts";
import {
  BOOK_LIMIT_MAX,
  CHART_LIMIT_MAX,
  HISTORY_LIMIT_MAX,
  MAX_BATCH_CANCELS,
  MAX_BATCH_ORDERS,
  MAX_DEAD_MAN_SECONDS,
  MAX_MMP_SECONDS,
  MAX_ORDER_ID,
  MAX_QUERY_INTEGER,
  MAX_SINCE_MS,
  PAGE_SIZE_MAX,
} from "../entry/limits.ts";
import { MAX_QUOTE_LEVELS } from "../protocol/pair/engine.ts";
import { MAX_DIGITS, MAX_NONCE, MAX_SAFE } from "../util/integers.ts";
import { formatDecimal, MAX_INTEGER_DIGITS, parseDecimal } from "../util/numbers.ts";

// ---------------------------------------------------------------- the bounds the server checks

/** Largest nonce (docs/API.md 3): a non-negative 64-bit integer. */
export { MAX_NONCE };
/** A listen key (docs/API.md 10). */
export const LISTEN_KEY_RE = /^[0-9a-f]{64}$/;
/** A user's uid (docs/API.md 1, 11), any case. */
export const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** Largest balance a deposit may create: the ledger's bound (config.ts MAX_LEDGER_VALUE). */
export const MAX_BALANCE = MAX_LEDGER_VALUE;

/**
 * Largest amount one deposit or withdrawal may name, in ledger units of a currency with `scale`
 * decimals: the ledger's bound, and at most MAX_INTEGER_DIGITS digits before the point (what
 * numbers.ts parses; a larger balance is reached by several deposits).
 */
export function maxTransfer(scale: number): bigint {
  const parsable = 10n ** BigInt(MAX_INTEGER_DIGITS + scale) - 1n;
  return parsable < MAX_BALANCE ? parsable : MAX_BALANCE;
}

// ---------------------------------------------------------------- building blocks

type Schema = Record<string, unknown>;

const str = { type: "string" } as const;

/** A string matching `re` (its source is the pattern: the check and the document share it). */
function matching(re: RegExp, extra: Schema = {}): Schema {
  return { type: "string", pattern: re.source, ...extra };
}

/** Digits before the point of `value / 10^scale` (at least 1). */
function integerDigits(value: bigint, scale: number): number {
  const text = formatDecimal(value, scale);
  const dot = text.indexOf(".");
  return dot === -1 ? text.length : dot;
}

/**
 * A decimal (docs/API.md 1) with at most `decimals` decimals, within `[min, max]` (`min` undefined:
 * above 0), values in units of 10^-decimals.
 */
export function decimalSchema(
  decimals: number,
  min: bigint | undefined,
  max: bigint,
  description: string,
): Schema {
  const maxText = formatDecimal(max, decimals);
  const minText = min === undefined ? undefined : formatDecimal(min, decimals);
  const low = minText === undefined ? { exclusiveMinimum: 0 } : { minimum: Number(minText) };
  const xLow = minText === undefined ? { "x-exclusiveMinimum": "0" } : { "x-minimum": minText };
  const fraction = decimals === 0 ? "(\\.0+)?" : `(\\.[0-9]{1,${decimals}}0*)?`;
  return {
    description,
    oneOf: [
      // `maximum` is the largest double within the bound, for validators that read doubles; the
      // server reads a number literal exactly (src/wire/json-body.ts), so `x-maximum` is the bound.
      {
        type: "number",
        ...low,
        maximum: largestDoubleWithin(max, decimals),
        "x-decimals": decimals,
        "x-maximum": maxText,
      },
      {
        type: "string",
        pattern: `^0*[0-9]{1,${integerDigits(max, decimals)}}${fraction}$`,
        "x-decimals": decimals,
        ...xLow,
        "x-maximum": maxText,
      },
    ],
  };
}

/**
 * The largest double whose value the server takes as at most `max` (in units of 10^-decimals): a
 * JSON number's `maximum` must not round above the exact bound (999...9.99 is 1e21 as a double).
 */
function largestDoubleWithin(max: bigint, decimals: number): number {
  const bits = new Float64Array(1);
  const word = new BigInt64Array(bits.buffer);
  bits[0] = Number(formatDecimal(max, decimals));
  for (let step = 0; step < 64; step++) {
    const exact = parseDecimal(bits[0], decimals);
    if (typeof exact === "bigint" && exact <= max) return bits[0];
    word[0] -= 1n; // the next double towards zero (the value is positive)
  }
  throw new Error(`no double within ${formatDecimal(max, decimals)} at ${decimals} decimals`);
}

/** The text of an integer (docs/API.md 1): digits only, leading zeros allowed, at most MAX_DIGITS. */
export const INTEGER_TEXT = `^[0-9]{1,${MAX_DIGITS}}$`;

/** An integer of a body (docs/API.md 1): a JSON integer or a string of digits, within `[min, max]`. */
export function integerInputSchema(min: number, max: number | bigint, description?: string): Schema {
  const exact = typeof max === "number" ? { maximum: max } : {};
  return {
    ...(description === undefined ? {} : { description }),
    oneOf: [
      { type: "integer", minimum: min, ...exact, "x-maximum": String(max) },
      { type: "string", pattern: INTEGER_TEXT, "x-minimum": String(min), "x-maximum": String(max) },
    ],
  };
}

/** An integer of a query or a path (text on the wire): digits, within `[min, max]`. */
export function integerParamSchema(min: number, max: number | bigint): Schema {
  return typeof max === "number"
    ? { type: "integer", minimum: min, maximum: max }
    : { type: "integer", minimum: min, "x-maximum": String(max) };
}

export const nonceSchema = integerInputSchema(
  0,
  MAX_NONCE,
  "Optional replay guard: strictly greater than the last nonce of this token",
);
export const orderIdSchema = integerInputSchema(1, MAX_ORDER_ID);
/** docs/API.md 8.8: the call's deadline. */
export const expiresAtSchema = integerInputSchema(
  1,
  MAX_SAFE,
  "Optional deadline, Unix ms: a call whose execution starts later answers 400 errors.expiresAt (REQUEST_EXPIRED) and changes nothing",
);
const uuid = matching(UUID_RE);
const listenKey = matching(LISTEN_KEY_RE);
const clientOrderId = matching(CLIENT_ORDER_ID_RE, {
  description: "docs/API.md 8.2: unique per user over all of that user's orders",
});

/** A zero `qtyLimit` (docs/API.md 8.10: only with intervalSeconds 0). */
const MMP_ZERO: Schema = {
  description: "Zero: only with intervalSeconds 0",
  anyOf: [
    { type: "number", const: 0 },
    { type: "string", pattern: "^0+(\\.0+)?$" },
  ],
};

/** Nullable: the schema or `null` (which counts as not given). */
function orNull(schema: Schema, description: string): Schema {
  return { description, anyOf: [schema, { type: "null" }] };
}

function pairNames(config: ExchangeConfig): string[] {
  return config.pairs.map((p) => p.name);
}

// ---------------------------------------------------------------- order bodies

function amountOf(p: PairConfig): Schema {
  return decimalSchema(
    p.amountDecimals,
    p.minAmount,
    p.maxAmount,
    `In ${p.base}: ${p.amountDecimals} decimals at most, from minAmount to maxAmount of ${p.name}`,
  );
}

function priceOf(p: PairConfig): Schema {
  return decimalSchema(
    p.priceDecimals,
    undefined,
    p.maxPrice,
    `In ${p.quote}: ${p.priceDecimals} decimals at most, above 0, at most maxPrice of ${p.name}`,
  );
}

/**
 * One order (create-order, an element of create-orders): one branch per pair and trade type, keyed
 * by `pairName` and `tradeType` (`const`), with that pair's decimals and bounds.
 */
function orderSchema(config: ExchangeConfig, withNonce: boolean): Schema {
  const branches: Schema[] = [];
  for (const p of config.pairs) {
    for (const tradeType of ["limit", "market"] as const) {
      const limit = tradeType === "limit";
      const properties: Schema = {
        pairName: { const: p.name },
        tradeType: { const: tradeType },
        directionType: { type: "string", enum: ["buy", "sell"] },
        amount: amountOf(p),
        price: limit ? priceOf(p) : { description: "Ignored for a market order (any value)" },
        clientOrderId: orNull(clientOrderId, "Optional; null counts as not given"),
        timeInForce: limit
          ? orNull({ type: "string", enum: [...TIF_NAMES] }, "GTC (default), IOC or FOK; null: not given")
          : { type: "null", description: "Limit orders only: a market order may send null (not given)" },
        postOnly: limit
          ? orNull({ type: "boolean" }, "Limit GTC only; null: not given")
          : { enum: [false, null], description: "Limit GTC only: a market order may send false or null" },
        mmp: limit
          ? orNull({ type: "boolean" }, "docs/API.md 8.10 protected order: limit GTC only; null: not given")
          : { enum: [false, null], description: "Limit GTC only: a market order may send false or null" },
        selfTradePrevention: orNull(
          { type: "string", enum: [...STP_NAMES] },
          "docs/API.md 8.11: cancelMaker (default), cancelTaker or cancelBoth; null: not given",
        ),
        stopPrice: orNull(
          priceOf(p),
          "docs/API.md 18: a stop order's stop price, with stopDirection; null: not given",
        ),
        stopDirection: orNull(
          { type: "string", enum: ["up", "down"] },
          "docs/API.md 18: up triggers at a trade price >= stopPrice, down at <=; with stopPrice or trailingDelta; null: not given",
        ),
        trailingDelta: orNull(
          priceOf(p),
          "docs/API.md 18: a trailing stop's distance from the highest (down) or lowest (up) trade price since it arrived, in place of stopPrice, with stopDirection; null: not given",
        ),
      };
      if (withNonce) {
        properties.nonce = nonceSchema;
        properties.expiresAt = expiresAtSchema;
      }
      const branch: Schema = {
        title: `${p.name} ${tradeType}`,
        type: "object",
        properties,
        required: limit
          ? ["pairName", "tradeType", "directionType", "amount", "price"]
          : ["pairName", "tradeType", "directionType", "amount"],
        additionalProperties: false,
      };
      // postOnly true and mmp true need GTC (docs/API.md 8.2, 8.10): IOC or FOK with either is a 400.
      const rules: Schema[] = limit
        ? ["postOnly", "mmp"].map((option) => ({
            if: { properties: { [option]: { const: true } }, required: [option] },
            // biome-ignore lint/suspicious/noThenProperty: the `then` of JSON Schema's if/then
            then: { properties: { timeInForce: { enum: ["GTC", null] } } },
          }))
        : [];
      // docs/API.md 18: stopPrice or trailingDelta (not both) with stopDirection, or none of them;
      // a stop is neither postOnly nor mmp.
      const given = (field: string): Schema => ({
        properties: { [field]: { type: ["string", "number"] } },
        required: [field],
      });
      for (const [field, other] of [
        ["stopPrice", "trailingDelta"],
        ["trailingDelta", "stopPrice"],
      ]) {
        rules.push({
          if: given(field),
          // biome-ignore lint/suspicious/noThenProperty: the `then` of JSON Schema's if/then
          then: {
            properties: {
              stopDirection: { type: "string" },
              [other]: { type: "null" },
              postOnly: { enum: [false, null] },
              mmp: { enum: [false, null] },
            },
            required: ["stopDirection"],
          },
        });
      }
      rules.push({
        if: given("stopDirection"),
        // biome-ignore lint/suspicious/noThenProperty: the `then` of JSON Schema's if/then
        then: { anyOf: [given("stopPrice"), given("trailingDelta")] },
      });
      branch.allOf = rules;
      branches.push(branch);
    }
  }
  return {
    type: "object",
    description:
      "One branch per configured pair and trade type (keyed by `pairName` and `tradeType`), with the " +
      "pair's decimals and bounds (GET /1.0/info).",
    oneOf: branches,
  };
}

/** The widest decimal rule over every pair: amend-order checks against the order's own pair. */
function anyPairDecimal(config: ExchangeConfig, of: "amount" | "price"): Schema {
  const decimalsOf = (p: PairConfig) => (of === "amount" ? p.amountDecimals : p.priceDecimals);
  const decimals = Math.max(0, ...config.pairs.map(decimalsOf));
  const scale = (p: PairConfig, units: bigint) => units * 10n ** BigInt(decimals - decimalsOf(p));
  let max = 0n;
  let min: bigint | undefined;
  for (const p of config.pairs) {
    const m = scale(p, of === "amount" ? p.maxAmount : p.maxPrice);
    if (m > max) max = m;
    if (of === "amount" && (min === undefined || scale(p, p.minAmount) < min)) min = scale(p, p.minAmount);
  }
  return decimalSchema(
    decimals,
    min,
    max,
    of === "amount"
      ? "The new total amount: the bounds and decimals of the order's pair (GET /1.0/info), above amountUsed"
      : "The new price: the decimals and maxPrice of the order's pair (GET /1.0/info)",
  );
}

/**
 * create-oco (docs/API.md 18): one branch per pair, keyed by `pairName`, with its decimals and
 * bounds. The legs' sides (of the last trade price, of each other) are in the descriptions.
 */
function ocoSchema(config: ExchangeConfig, withNonce: boolean): Schema {
  return {
    type: "object",
    description:
      "One branch per configured pair (keyed by `pairName`). A sell needs price above and stopPrice " +
      "below the last trade price (a buy: the reverse; a pair that never traded: stopPrice below price " +
      "for a sell, above it for a buy), else a 400 on the field that is wrong.",
    oneOf: config.pairs.map((p) => {
      const properties: Schema = {
        pairName: { const: p.name },
        directionType: { type: "string", enum: ["buy", "sell"] },
        amount: amountOf(p),
        price: { ...priceOf(p), description: "The limit leg's price: a post-only GTC limit order" },
        stopPrice: {
          ...priceOf(p),
          description: "The stop leg's stop price (down for a sell, up for a buy)",
        },
        stopLimitPrice: orNull(
          priceOf(p),
          "The stop leg's limit price once triggered (stop-limit); absent or null: a stop-market",
        ),
        clientOrderId: orNull(clientOrderId, "Optional, the limit leg's; null counts as not given"),
      };
      if (withNonce) properties.nonce = nonceSchema;
      properties.expiresAt = expiresAtSchema;
      return {
        title: p.name,
        type: "object",
        properties,
        required: ["pairName", "directionType", "amount", "price", "stopPrice"],
        additionalProperties: false,
      };
    }),
  };
}

/**
 * A mass quote (docs/API.md 8.12): one branch per pair, keyed by `pairName`, each level `[price,
 * amount]` with that pair's decimals and bounds. The ordering rules (bids strictly decreasing,
 * asks strictly increasing, best bid below best ask) are in the descriptions: JSON Schema cannot
 * say them.
 */
function quoteSchema(config: ExchangeConfig): Schema {
  const side = (p: PairConfig, name: string, order: string): Schema => ({
    type: "array",
    maxItems: MAX_QUOTE_LEVELS,
    description: `0 to ${MAX_QUOTE_LEVELS} levels [price, amount], prices ${order}; a malformed side is a 400 on \`${name}\` naming the level`,
    items: {
      type: "array",
      prefixItems: [priceOf(p), amountOf(p)],
      minItems: 2,
      maxItems: 2,
    },
  });
  return {
    type: "object",
    description:
      "One branch per configured pair (keyed by `pairName`). Both sides empty pulls the quote. The best " +
      "bid must be below the best ask (else a 400 on `asks`).",
    oneOf: config.pairs.map((p) => ({
      title: p.name,
      type: "object",
      properties: {
        pairName: { const: p.name },
        bids: side(p, "bids", "strictly decreasing"),
        asks: side(p, "asks", "strictly increasing"),
        nonce: nonceSchema,
        expiresAt: expiresAtSchema,
      },
      required: ["pairName", "bids", "asks"],
      additionalProperties: false,
    })),
  };
}

// ---------------------------------------------------------------- every request body and parameter

export interface RequestSchemas {
  createOrder: Schema;
  /** An element of create-orders: an order without `nonce`. */
  batchOrder: Schema;
  createOrders: Schema;
  cancelOrder: Schema;
  cancelOrders: Schema;
  amendOrder: Schema;
  cancelAll: Schema;
  cancelAllAfter: Schema;
  mmpSet: Schema;
  mmpReset: Schema;
  /** docs/API.md 8.12 mass quote. */
  quote: Schema;
  /** docs/API.md 18 create-oco. */
  createOco: Schema;
  listenKey: Schema;
  listenKeyClose: Schema;
  adminUser: Schema;
  adminApiKey: Schema;
  adminRevoke: Schema;
  adminDeposit: Schema;
  adminWithdraw: Schema;
  adminPairStatus: Schema;
  adminBackup: Schema;
  adminPromote: Schema;
  /** Path parameters by name. */
  params: Record<string, Schema>;
}

/** The request schemas of a config (the document is built from these at start). */
export function requestSchemas(config: ExchangeConfig): RequestSchemas {
  const names = pairNames(config);
  const pairName = { type: "string", enum: names, description: "A configured pair" };
  const batchOrder = orderSchema(config, false);
  // One branch per currency, keyed by `currency`: the amount has that currency's ledger decimals.
  const transfer = (what: string): Schema => ({
    type: "object",
    description: what,
    oneOf: [...config.currencies.values()].map((c) => ({
      title: c.name,
      type: "object",
      properties: {
        uid: uuid,
        currency: { const: c.name },
        amount: decimalSchema(
          c.scale,
          undefined,
          maxTransfer(c.scale),
          `In ${c.name}: at most ${c.scale} decimals`,
        ),
      },
      required: ["uid", "currency", "amount"],
      additionalProperties: false,
    })),
  });
  return {
    createOrder: orderSchema(config, true),
    batchOrder,
    createOrders: {
      type: "object",
      properties: {
        orders: {
          type: "array",
          minItems: 1,
          maxItems: MAX_BATCH_ORDERS,
          description:
            "Each element is validated on its own: an invalid element does not fail the call, its place " +
            "in the 200 answer holds its errors.",
          items: {
            anyOf: [
              batchOrder,
              { description: "Any other value: answered in its place with `{errors, codes}`" },
            ],
          },
        },
        nonce: nonceSchema,
        expiresAt: { ...expiresAtSchema, description: "Optional deadline of the whole batch, Unix ms" },
      },
      required: ["orders"],
      additionalProperties: false,
    },
    cancelOrder: {
      type: "object",
      properties: { orderId: orderIdSchema, nonce: nonceSchema, expiresAt: expiresAtSchema },
      required: ["orderId"],
      additionalProperties: false,
    },
    cancelOrders: {
      type: "object",
      properties: {
        orderIds: {
          type: "array",
          minItems: 1,
          maxItems: MAX_BATCH_CANCELS,
          description:
            "Each element is answered on its own: an element that is not an order id gets its errors in " +
            "its place of the 200 answer.",
          items: {
            anyOf: [orderIdSchema, { description: "Any other value: answered in its place with its errors" }],
          },
        },
        nonce: nonceSchema,
        expiresAt: { ...expiresAtSchema, description: "Optional deadline of the whole batch, Unix ms" },
      },
      required: ["orderIds"],
      additionalProperties: false,
    },
    amendOrder: {
      type: "object",
      properties: {
        orderId: orderIdSchema,
        amount: anyPairDecimal(config, "amount"),
        price: anyPairDecimal(config, "price"),
        stopPrice: {
          ...anyPairDecimal(config, "price"),
          description: "docs/API.md 18: a new stop price of a stop order that has not triggered",
        },
        trailingDelta: {
          ...anyPairDecimal(config, "price"),
          description: "docs/API.md 18: a new delta of a trailing stop order that has not triggered",
        },
        nonce: nonceSchema,
        expiresAt: expiresAtSchema,
      },
      required: ["orderId"],
      anyOf: [
        { required: ["amount"] },
        { required: ["price"] },
        { required: ["stopPrice"] },
        { required: ["trailingDelta"] },
      ],
      additionalProperties: false,
    },
    cancelAll: {
      type: "object",
      properties: {
        pairName: { ...pairName, description: "Absent: every pair" },
        nonce: nonceSchema,
        expiresAt: expiresAtSchema,
      },
      additionalProperties: false,
    },
    cancelAllAfter: {
      type: "object",
      properties: {
        timeout: integerInputSchema(0, MAX_DEAD_MAN_SECONDS, "Seconds; 0 disarms"),
        nonce: nonceSchema,
      },
      required: ["timeout"],
      additionalProperties: false,
    },
    mmpSet: {
      type: "object",
      description: "One branch per configured pair (keyed by `pairName`): `qtyLimit` has its amount decimals",
      oneOf: config.pairs.map((p) => ({
        title: p.name,
        type: "object",
        properties: {
          pairName: { const: p.name },
          intervalSeconds: integerInputSchema(0, MAX_MMP_SECONDS, "Seconds of the window; 0 disables"),
          qtyLimit: {
            description: `In ${p.base}: at most ${p.amountDecimals} decimals; above 0, or "0" only with intervalSeconds 0`,
            oneOf: [decimalSchema(p.amountDecimals, undefined, p.maxAmount, "A positive amount"), MMP_ZERO],
          },
          frozenSeconds: integerInputSchema(
            0,
            MAX_MMP_SECONDS,
            "Seconds frozen after a trigger; 0: until a reset",
          ),
          nonce: nonceSchema,
        },
        required: ["pairName", "intervalSeconds", "qtyLimit", "frozenSeconds"],
        additionalProperties: false,
        // qtyLimit "0" only when the interval is 0 (docs/API.md 8.10).
        if: { properties: { qtyLimit: MMP_ZERO }, required: ["qtyLimit"] },
        // biome-ignore lint/suspicious/noThenProperty: the `then` of JSON Schema's if/then
        then: { properties: { intervalSeconds: integerInputSchema(0, 0) } },
      })),
    },
    mmpReset: {
      type: "object",
      properties: { pairName, nonce: nonceSchema },
      required: ["pairName"],
      additionalProperties: false,
    },
    quote: quoteSchema(config),
    createOco: ocoSchema(config, true),
    listenKey: {
      type: "object",
      properties: { listenKey: { ...listenKey, description: "Absent: a new key" }, nonce: nonceSchema },
      additionalProperties: false,
    },
    listenKeyClose: {
      type: "object",
      properties: { listenKey, nonce: nonceSchema },
      required: ["listenKey"],
      additionalProperties: false,
    },
    adminUser: {
      type: "object",
      properties: { uid: { ...uuid, description: "Absent: a new random uid" } },
      additionalProperties: false,
    },
    adminApiKey: {
      type: "object",
      properties: { uid: uuid },
      required: ["uid"],
      additionalProperties: false,
    },
    adminRevoke: {
      type: "object",
      properties: { apiToken: { ...str, minLength: 1 } },
      required: ["apiToken"],
      additionalProperties: false,
    },
    adminDeposit: transfer("The balance after it must stay within 2^63 - 1 ledger units"),
    adminWithdraw: transfer("More than the available balance: 400 `errors.amount`"),
    adminPairStatus: {
      type: "object",
      properties: {
        pairName,
        status: { type: "string", enum: [...PAIR_STATUS_NAMES], description: "docs/API.md 11" },
      },
      required: ["pairName", "status"],
      additionalProperties: false,
    },
    adminBackup: {
      type: "object",
      description: "No fields: a field is answered 400 under its own name",
      properties: {},
      additionalProperties: false,
    },
    adminPromote: {
      type: "object",
      properties: {
        force: {
          type: "boolean",
          description:
            "true: promote even when this follower cannot vouch for holding every change its leader acknowledged",
        },
      },
      additionalProperties: false,
    },
    params: {
      pairName,
      period: { type: "string", enum: [...PERIODS] },
      orderId: integerParamSchema(1, MAX_ORDER_ID),
      uid: { ...uuid, description: "Unknown or not a uid: 404 `errors.uid`" },
    },
  };
}

/** The query parameters of each route that has some (names as the routes read them). */
export const pageSizeParam = integerParamSchema(1, PAGE_SIZE_MAX);
export const pageParam = integerParamSchema(1, MAX_QUERY_INTEGER);
export const nonceParam = integerParamSchema(0, MAX_NONCE);
export const bookLimitParam = integerParamSchema(1, BOOK_LIMIT_MAX);
export const chartLimitParam = integerParamSchema(1, CHART_LIMIT_MAX);
export const timeParam = integerParamSchema(0, MAX_QUERY_INTEGER);
export const clientOrderIdParam = matching(CLIENT_ORDER_ID_RE);
/** docs/API.md 16: `after` and `limit` of the executions read. */
export const executionsAfterParam = integerParamSchema(0, MAX_QUERY_INTEGER);
export const executionsLimitParam = integerParamSchema(1, 1000);
/** docs/API.md 20.3: `since` (Unix ms) and `fromId` of a read from a point. */
export const sinceParam = integerParamSchema(0, MAX_SINCE_MS);
export const fromIdParam = integerParamSchema(1, MAX_QUERY_INTEGER);
export const historyLimitParam = integerParamSchema(1, HISTORY_LIMIT_MAX);
