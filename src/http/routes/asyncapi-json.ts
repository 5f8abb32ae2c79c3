/** `GET /1.0/asyncapi.json` (issue 29): the AsyncAPI 3.0 document of /stream and /session (src/documents/asyncapi.ts). */

import { ok } from "../route-steps.ts";
import { type GetRoute, PUBLIC_GET } from "../route-types.ts";

export const asyncapi: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/asyncapi.json",
  auth: "none",
  ok: { type: "object", required: ["asyncapi", "channels"] },
  errors: PUBLIC_GET,
  operationId: "asyncapi",
  summary: "The AsyncAPI 3.0 document of the stream and the trading session",
  source: "issue 29",
  // Built once at start from the config (like openapi.json).
  handler: (ctx) => {
    const json = ctx.asyncApiJson;
    return (res, info) => ok(ctx, res, info, json);
  },
};
