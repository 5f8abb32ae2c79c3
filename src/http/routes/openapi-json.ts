/** `GET /openapi.json` (issue 14): the OpenAPI document of these routes (src/documents/openapi.ts). */

import { ok } from "../route-steps.ts";
import { type GetRoute, PUBLIC_GET } from "../route-types.ts";

export const openapi: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/openapi.json",
  auth: "none",
  ok: { type: "object", required: ["openapi", "paths"] },
  errors: PUBLIC_GET,
  operationId: "openapi",
  summary: "This document",
  source: "issue 14",
  // Built once at start from the route list (openapi.ts imports this folder, so it is handed in).
  handler: (ctx) => {
    const json = ctx.openApiJson;
    return (res, info) => ok(ctx, res, info, json);
  },
};
