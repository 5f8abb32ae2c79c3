/** docs/API.md 8.7 `POST /trade/cancel-all-after`: the dead-man's switch (src/core/services/dead-man.ts). */

import { CANCEL_ALL_AFTER_FIELDS, cancelAllAfterCall } from "../../entry/calls.ts";
import { renderTriggerTime } from "../../wire/render.ts";
import { triggerTimeSchema } from "../../wire/schemas.ts";
import { httpReply } from "../http-reply.ts";
import { type PostRoute, SIGNED_POST } from "../route-types.ts";

export const cancelAllAfter: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/cancel-all-after",
  auth: "signedBody",
  fields: CANCEL_ALL_AFTER_FIELDS,
  body: (s) => s.cancelAllAfter,
  ok: triggerTimeSchema, // serialize.triggerTime
  errors: SIGNED_POST,
  operationId: "cancelAllAfter",
  summary: "Dead-man's switch: cancel all open orders unless renewed within `timeout` seconds",
  source: "docs/API.md 8.7",
  description: "`0` disarms. Held in memory: a restart disarms it.",
  handler: (ctx) => (res, info, key, body) =>
    cancelAllAfterCall(ctx, key, body, CANCEL_ALL_AFTER_FIELDS, httpReply(ctx, res, info, renderTriggerTime)),
};
