/** docs/API.md 9 `GET /time`: the server's clock. */

import { serialize, timeSchema } from "../../wire/schemas.ts";
import { ok } from "../route-steps.ts";
import { type GetRoute, PUBLIC_GET } from "../route-types.ts";

export const time: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/time",
  auth: "none",
  ok: timeSchema, // serialize.time
  errors: PUBLIC_GET,
  operationId: "time",
  summary: "Server time (Unix ms)",
  source: "docs/API.md 9",
  handler: (ctx) => (res, info) => ok(ctx, res, info, serialize.time({ serverTime: Date.now() })),
};
