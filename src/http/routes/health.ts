/** docs/API.md 1 `GET /health`: readiness, 200 only once the server accepts orders. */

import { healthSchema } from "../../wire/document-schemas.ts";
import { readRequest, send } from "../../wire/request.ts";
import { ok } from "../route-steps.ts";
import type { PlainRoute } from "../route-types.ts";

export const health: PlainRoute = {
  kind: "plain",
  method: "get",
  path: "/health",
  auth: "none",
  ok: healthSchema, // the literals below
  other: { 503: { description: "Starting or shutting down", schema: healthSchema } },
  errors: [],
  operationId: "health",
  summary: "Readiness: 200 only once the server accepts orders",
  source: "docs/API.md 1",
  handler: (ctx) => {
    const deps = ctx.deps;
    const replication = deps.replicationHealth ?? null;
    // Without replication the answer is exactly section 1's; with it, the role and its figures follow `status`.
    const body = (status: string) =>
      replication === null ? `{"status":"${status}"}` : JSON.stringify({ status, ...replication() });
    return (res, req) => {
      const info = readRequest(res, req, "/health");
      if (deps.ready() && deps.accepting()) ok(ctx, res, info, body("ok"));
      else send(res, info, 503, body("starting"), ctx.finish);
    };
  },
};
