/**
 * The declarative description of one HTTP call (method, path, authentication, request body, query
 * parameters, one response schema per status): what each route file of routes/ states about
 * itself, what route-table.ts lists and what openapi.ts turns into the OpenAPI document.
 */
import type { RequestSchemas } from "../json/request-schemas.ts";

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
  /** The schema is the config's path parameter of this name instead (RequestSchemas.params). */
  configParam?: string;
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
