/**
 * Schemas the server does not serialise with, for the OpenAPI document (openapi.ts): request bodies
 * (seed, CONTRACT 1.2, 8), the error body (CONTRACT 5, 9), the batch answers the server assembles
 * from serialised parts (CONTRACT 8.5), and the answers of the CONTRACT 9-10 calls, written from
 * the contract text (routes marked `fromContractText`) until those routes land with their own
 * schemas in schemas.ts; the route table should then point at those and the copies here go away.
 *
 * Response bodies the server writes with fast-json-stringify are NOT described here: openapi.ts
 * takes them from schemas.ts, so the document cannot drift from the wire.
 */
import { orderWithUpdateSchema } from "./schemas.ts";

const str = { type: "string" } as const;

/** A decimal as requests accept it: a JSON number or a decimal string (CONTRACT 2.1). */
export const decimalInputSchema = {
  description:
    'A JSON number or a decimal string such as "0.015" (never rounded: too many decimals is a 400)',
  oneOf: [{ type: "number" }, { type: "string", pattern: "^[0-9]+(\\.[0-9]+)?$" }],
} as const;

/**
 * An integer field of a body (CONTRACT 2.5, src/integers.ts): a JSON integer or a string of decimal
 * digits holding the same integer, within the bounds.
 */
function integerInput<const Min extends number, const Max extends number | undefined = undefined>(
  minimum: Min,
  maximum?: Max,
) {
  const range = maximum === undefined ? { minimum } : { minimum, maximum };
  return {
    oneOf: [
      { type: "integer", ...range },
      { type: "string", pattern: "^[0-9]+$" },
    ],
  } as const;
}

/** An order id in a body: a positive integer (CONTRACT 2.4, 2.5). */
export const orderIdInputSchema = integerInput(1, Number.MAX_SAFE_INTEGER);

/** Replay guard (CONTRACT 5): a non-negative integer of at most 64 bits, as a JSON number or a string of digits. */
export const nonceSchema = {
  description: "Optional replay guard: strictly greater than the last nonce of this token (0 to 2^64-1)",
  ...integerInput(0),
} as const;

const messages = { type: "array", items: str } as const;

/** CONTRACT 5 error body, with the machine-readable `codes` of CONTRACT 9 (one per message). */
export const errorBodySchema = {
  type: "object",
  properties: {
    errors: { type: "object", additionalProperties: messages, minProperties: 1 },
    codes: {
      type: "object",
      additionalProperties: { type: "array", items: { type: "string", pattern: "^[A-Z][A-Z0-9_]*$" } },
    },
  },
  required: ["errors", "codes"],
  additionalProperties: false,
} as const;

// ---------------------------------------------------------------- requests (seed 4.1, 4.2; CONTRACT 8)

const createOrderFields = {
  pairName: { type: "string", description: "A configured pair" },
  tradeType: { type: "string", enum: ["limit", "market"] },
  directionType: { type: "string", enum: ["buy", "sell"] },
  price: { ...decimalInputSchema, description: "Required for limit orders; ignored for market orders" },
  amount: { ...decimalInputSchema, description: "In the base currency, for both directions" },
  clientOrderId: {
    type: "string",
    pattern: "^[A-Za-z0-9_-]{1,36}$",
    description: "CONTRACT 8.2: unique per user over all of that user's orders",
  },
  timeInForce: { type: "string", enum: ["GTC", "IOC", "FOK"], description: "CONTRACT 8.2; limit only" },
  postOnly: { type: "boolean", description: "CONTRACT 8.2; limit GTC only" },
} as const;

/** 4.1 create-order body (with the optional fields of CONTRACT 8.2). */
export const createOrderRequestSchema = {
  type: "object",
  properties: { ...createOrderFields, nonce: nonceSchema },
  required: ["pairName", "tradeType", "directionType", "amount"],
  additionalProperties: false,
} as const;

/** 4.2 cancel-order body. */
export const cancelOrderRequestSchema = {
  type: "object",
  properties: {
    orderId: orderIdInputSchema,
    nonce: nonceSchema,
  },
  required: ["orderId"],
  additionalProperties: false,
} as const;

/** CONTRACT 8.3 amend-order body. */
export const amendOrderRequestSchema = {
  type: "object",
  properties: {
    orderId: orderIdInputSchema,
    amount: { ...decimalInputSchema, description: "The new total amount (above amountUsed)" },
    price: decimalInputSchema,
    nonce: nonceSchema,
  },
  required: ["orderId"],
  anyOf: [{ required: ["amount"] }, { required: ["price"] }],
  additionalProperties: false,
} as const;

/** CONTRACT 8.4 cancel-all-orders body. */
export const cancelAllRequestSchema = {
  type: "object",
  properties: { pairName: str, nonce: nonceSchema },
  additionalProperties: false,
} as const;

/** CONTRACT 8.5 create-orders body. */
export const createOrdersRequestSchema = {
  type: "object",
  properties: {
    orders: {
      type: "array",
      minItems: 1,
      maxItems: 20,
      items: {
        type: "object",
        properties: createOrderFields,
        required: ["pairName", "tradeType", "directionType", "amount"],
        additionalProperties: false,
      },
    },
    nonce: nonceSchema,
  },
  required: ["orders"],
  additionalProperties: false,
} as const;

/** CONTRACT 8.5 cancel-orders body. */
export const cancelOrdersRequestSchema = {
  type: "object",
  properties: {
    orderIds: { type: "array", minItems: 1, maxItems: 100, items: orderIdInputSchema },
    nonce: nonceSchema,
  },
  required: ["orderIds"],
  additionalProperties: false,
} as const;

/** CONTRACT 8.7 cancel-all-after body. */
export const cancelAllAfterRequestSchema = {
  type: "object",
  properties: { timeout: integerInput(0, 600), nonce: nonceSchema },
  required: ["timeout"],
  additionalProperties: false,
} as const;

/** CONTRACT 10 listen-key body: `{}` creates, `{"listenKey"}` extends. */
export const listenKeyRequestSchema = {
  type: "object",
  properties: { listenKey: { type: "string", pattern: "^[0-9a-f]{64}$" }, nonce: nonceSchema },
  additionalProperties: false,
} as const;

/** CONTRACT 10 listen-key/close body. */
export const listenKeyCloseRequestSchema = {
  type: "object",
  properties: { listenKey: { type: "string", pattern: "^[0-9a-f]{64}$" }, nonce: nonceSchema },
  required: ["listenKey"],
  additionalProperties: false,
} as const;

const uuid = {
  type: "string",
  pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
} as const;

/** CONTRACT 1.2 POST /admin/users body. */
export const adminUserRequestSchema = {
  type: "object",
  properties: { uid: uuid },
  additionalProperties: false,
} as const;

/** CONTRACT 1.2 POST /admin/api-keys body. */
export const adminApiKeyRequestSchema = {
  type: "object",
  properties: { uid: uuid },
  required: ["uid"],
  additionalProperties: false,
} as const;

/** CONTRACT 1.2 POST /admin/api-keys/revoke body. */
export const adminRevokeRequestSchema = {
  type: "object",
  properties: { apiToken: str },
  required: ["apiToken"],
  additionalProperties: false,
} as const;

/** CONTRACT 1.2 POST /admin/deposit and /admin/withdraw body. */
export const adminTransferRequestSchema = {
  type: "object",
  properties: { uid: uuid, currency: str, amount: decimalInputSchema },
  required: ["uid", "currency", "amount"],
  additionalProperties: false,
} as const;

// ---------------------------------------------------------------- responses (CONTRACT 8-10)

/** CONTRACT 8.5 create-orders answer: per element the created order or its errors. */
export const createOrdersResultSchema = {
  type: "array",
  items: { oneOf: [orderWithUpdateSchema, errorBodySchema] },
} as const;

/** CONTRACT 8.5 cancel-orders answer. */
export const cancelOrdersResultSchema = {
  type: "array",
  items: {
    type: "object",
    properties: {
      orderId: {
        description: "The id as sent: an integer, or whatever was sent in its place (then with errors)",
      },
      errors: errorBodySchema.properties.errors,
      codes: errorBodySchema.properties.codes,
    },
    required: ["orderId"],
    additionalProperties: false,
  },
} as const;

/** CONTRACT 10 listen-key answer. */
export const listenKeySchema = {
  type: "object",
  properties: {
    listenKey: { type: "string", pattern: "^[0-9a-f]{64}$" },
    expiresAt: { type: "integer", description: "Unix ms" },
  },
  required: ["listenKey", "expiresAt"],
  additionalProperties: false,
} as const;

/** CONTRACT 10 listen-key/close answer: the contract does not name it; `[]` like cancel-order. */
export const emptyArraySchema = { type: "array", maxItems: 0 } as const;

/** `{status}` of /health. */
export const healthSchema = {
  type: "object",
  properties: { status: { type: "string", enum: ["ok", "starting"] } },
  required: ["status"],
  additionalProperties: false,
} as const;
