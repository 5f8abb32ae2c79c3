/** CONTRACT 9 `GET /time`: the server's clock. */
import { type GetRoute, ok, PUBLIC_GET } from "../route.ts";
import { serialize, timeSchema } from "../../json/schemas.ts";

export const time: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/time",
  auth: "none",
  ok: timeSchema, // serialize.time
  errors: PUBLIC_GET,
  operationId: "time",
  summary: "Server time (Unix ms)",
  source: "CONTRACT 9",
  handler: (ctx) => (res, info) => ok(ctx, res, info, serialize.time({ serverTime: Date.now() })),
};
