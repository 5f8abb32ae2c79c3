/**
 * Checks an HTTP answer against the OpenAPI document (src/documents/openapi.ts): the operation is found
 * by method and path, the status must be one the operation documents, and a JSON body must match
 * that status's schema. The harness hooks it into every ExchangeClient it makes, so every answer an
 * end-to-end test receives is checked and a mismatch fails that test.
 *
 * Cheap: path templates are compiled to regular expressions once, and each (operation, status)
 * schema is compiled by ajv the first time it is needed, then reused.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import type { ResponseInfo } from "../../src/client/index.ts";
import { buildOpenApi } from "../../src/documents/openapi.ts";
import { ROUTES } from "../../src/documents/openapi-routes.ts";
import { TEST_CONFIG } from "./pairs.ts";

type Json = Record<string, unknown>;

interface Operation {
  method: string;
  path: string;
  regex: RegExp;
  /** Path parameters: fewer sort first, so a literal path wins over a template (OpenAPI rule). */
  params: number;
  responses: Json;
}

/** The document of the test config (test/e2e/pairs.ts) that the e2e checks hold answers against. */
export const doc = buildOpenApi(TEST_CONFIG, ROUTES);
export const components = (doc.components as Json).schemas as Json;
const ajv = new Ajv2020({ strict: false, allErrors: true });

/** The schema with every `#/components/schemas/X` reference replaced by X (there are no cycles). */
export function deref(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(deref);
  if (schema === null || typeof schema !== "object") return schema;
  const ref = (schema as Json).$ref;
  if (typeof ref === "string") return deref(components[ref.slice("#/components/schemas/".length)]);
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) out[k] = deref(v);
  return out;
}

const operations: Operation[] = [];
for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
  for (const [method, op] of Object.entries(item)) {
    const source = path
      .split(/\{[A-Za-z]+\}/)
      .map((part) => part.replace(/[.*+?^$(){}|[\]\\]/g, "\\$&"))
      .join("[^/]+");
    operations.push({
      method: method.toUpperCase(),
      path,
      regex: new RegExp(`^${source}$`),
      params: (path.match(/\{/g) ?? []).length,
      responses: (op as Json).responses as Json,
    });
  }
}
operations.sort((a, b) => a.params - b.params);

/** Paths of the REST interface and the service endpoints; anything else is the web page. */
const API_PATH = /^\/(?:1\.0|admin|health|metrics|stream)(?:\/|$)/;

const errorValidator = ajv.compile(deref(components.ErrorBody) as object);
const validators = new Map<string, ValidateFunction | null>();

function validatorFor(op: Operation, key: string): ValidateFunction | null {
  const id = `${op.method} ${op.path} ${key}`;
  let v = validators.get(id);
  if (v === undefined) {
    const content = (op.responses[key] as Json).content as Json | undefined;
    const json = content?.["application/json"] as Json | undefined;
    v = json === undefined ? null : ajv.compile(deref(json.schema) as object);
    validators.set(id, v);
  }
  return v;
}

/** Why `res` does not match the document, or null when it does. */
export function openApiMismatch(res: ResponseInfo): string | null {
  const q = res.pathAndQuery.indexOf("?");
  const path = q === -1 ? res.pathAndQuery : res.pathAndQuery.slice(0, q);
  const what = `${res.method} ${path} -> ${res.status}`;
  const op = operations.find((o) => o.method === res.method && o.regex.test(path));
  // Outside the REST interface: CORS preflights and the web page's files (docs/API.md 10).
  if (op === undefined && res.status < 400 && (res.method === "OPTIONS" || !API_PATH.test(path))) return null;
  if (op === undefined) {
    // Unknown path or method: only the router's error answers are allowed.
    if (res.status !== 404 && res.status !== 405)
      return `${what}: no operation in the OpenAPI document for this method and path`;
    return checkBody(errorValidator, res, what);
  }
  const key = [String(res.status), `${String(res.status)[0]}XX`, "default"].find(
    (k) => op.responses[k] !== undefined,
  );
  if (key === undefined) return `${what}: status not documented for ${op.method} ${op.path}`;
  const validate = validatorFor(op, key);
  return validate === null ? null : checkBody(validate, res, what);
}

function checkBody(validate: ValidateFunction, res: ResponseInfo, what: string): string | null {
  if (res.body === undefined) return `${what}: body is not JSON: ${res.text.slice(0, 200)}`;
  if (validate(res.body)) return null;
  return `${what}: body does not match the OpenAPI schema: ${ajv.errorsText(validate.errors)}\n  body: ${res.text.slice(0, 500)}`;
}

/** The client hook: throws (failing the call, so the test) on a mismatch. */
export function assertOpenApi(res: ResponseInfo): void {
  const mismatch = openApiMismatch(res);
  if (mismatch !== null) throw new Error(`OpenAPI check failed: ${mismatch}`);
}

const STREAM_SCHEMAS: Record<string, string> = {
  exchanges: "StreamExchangesMessage",
  orders: "StreamOrdersMessage",
  history: "StreamHistoryMessage",
  user_orders: "StreamUserOrdersMessage",
  user_history: "StreamUserHistoryMessage",
  bbo: "StreamBboMessage",
  orders_l3: "StreamOrdersL3Message",
};
const streamValidators = new Map<string, ValidateFunction>();

/** Why a stream message does not match the document's Stream*Message schema, or null. */
export function streamMismatch(message: { stream: string; data: unknown }): string | null {
  const kind = message.stream.split(":")[0];
  const name = STREAM_SCHEMAS[kind];
  if (name === undefined) return `stream ${message.stream}: no message schema for channel kind ${kind}`;
  let validate = streamValidators.get(name);
  if (validate === undefined) {
    validate = ajv.compile(deref(components[name]) as object);
    streamValidators.set(name, validate);
  }
  const valid: boolean = validate(message);
  if (valid) return null;
  return `stream ${message.stream}: ${ajv.errorsText(validate.errors)}\n  message: ${JSON.stringify(message).slice(0, 500)}`;
}
