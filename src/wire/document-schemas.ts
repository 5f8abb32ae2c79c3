/**
 * Schemas the server does not serialise with, for the OpenAPI document (openapi.ts): the error body
 * (docs/API.md 5, 9), the batch answers the server assembles from serialised parts (docs/API.md
 * 8.5), and the small answers written by hand (listen keys, `[]`).
 *
 * Request bodies are in request-schemas.ts (built from the config, with the bounds the server checks).
 * Response bodies the server writes with fast-json-stringify are NOT described here: openapi.ts
 * takes them from schemas.ts, so the document cannot drift from the wire.
 */
import { orderWithUpdateSchema } from "./schemas.ts";

const str = { type: "string" } as const;

const messages = { type: "array", items: str } as const;

/** docs/API.md 4 error body, with the machine-readable `codes` (one per message). */
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

// ---------------------------------------------------------------- responses (docs/API.md 8-10)

/** docs/API.md 8.5 create-orders answer: per element the created order or its errors. */
export const createOrdersResultSchema = {
  type: "array",
  items: { oneOf: [orderWithUpdateSchema, errorBodySchema] },
} as const;

/** docs/API.md 8.5 cancel-orders answer. */
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

/** docs/API.md 10 listen-key answer. */
export const listenKeySchema = {
  type: "object",
  properties: {
    listenKey: { type: "string", pattern: "^[0-9a-f]{64}$" },
    expiresAt: { type: "integer", description: "Unix ms" },
  },
  required: ["listenKey", "expiresAt"],
  additionalProperties: false,
} as const;

/** docs/API.md 10 listen-key/close answer: `[]`, like cancel-order. */
export const emptyArraySchema = { type: "array", maxItems: 0 } as const;

/** `{status}` of /health. */
export const healthSchema = {
  type: "object",
  properties: {
    status: { type: "string", enum: ["ok", "starting"] },
    // Only with replication configured (docs/API.md 1, docs/OPERATIONS.md "A second box: follower").
    role: { type: "string", enum: ["leader", "follower"] },
    epoch: { type: "integer" },
    replication: { type: "string", enum: ["async", "sync"] },
    followers: { type: "integer" },
    // `sync`: answers wait for a follower (leader), or for this one (follower).
    synchronous: { type: "boolean" },
    // Unix ms: since when a `sync` leader goes on alone; since when a follower may lack a change its
    // leader acknowledged (promotion then needs `force`).
    aloneSince: { anyOf: [{ type: "integer" }, { type: "null" }] },
    behindSince: { anyOf: [{ type: "integer" }, { type: "null" }] },
    leader: { type: "string" },
    connected: { type: "boolean" },
    lagMs: { type: "integer" },
    lastCommit: { type: "integer" },
  },
  required: ["status"],
  additionalProperties: false,
} as const;
