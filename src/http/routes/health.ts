/** CONTRACT 1 `GET /health`: readiness, 200 only once the server accepts orders. */
import { readRequest, send } from "../request.ts";
import { ok, type PlainRoute } from "../route.ts";
import { healthSchema } from "../../json/document-schemas.ts";

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
  source: "CONTRACT 1",
  handler: (ctx) => {
    const deps = ctx.deps;
    return (res, req) => {
      const info = readRequest(res, req, "/health");
      if (deps.ready() && deps.accepting()) ok(ctx, res, info, '{"status":"ok"}');
      else send(res, info, 503, '{"status":"starting"}', ctx.finish);
    };
  },
};
