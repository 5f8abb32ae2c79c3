/** CONTRACT 8.7 `POST /trade/cancel-all-after`: the dead-man's switch (src/core/dead-man.ts). */

import { multiErrorBody } from "../../errors/bodies.ts";
import { Code } from "../../errors/catalogue.ts";
import { readSmallInteger } from "../../util/integers.ts";
import { unknownFields } from "../json-body.ts";
import { send, sendError } from "../request.ts";
import { MAX_DEAD_MAN_SECONDS } from "../request-schemas.ts";
import { ok, type PostRoute, SIGNED_POST } from "../route.ts";
import { serialize, triggerTimeSchema } from "../schemas.ts";

const FIELDS: ReadonlySet<string> = new Set(["timeout", "nonce"]);

export const cancelAllAfter: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/cancel-all-after",
  auth: "signedBody",
  fields: FIELDS,
  body: (s) => s.cancelAllAfter,
  ok: triggerTimeSchema, // serialize.triggerTime
  errors: SIGNED_POST,
  operationId: "cancelAllAfter",
  summary: "Dead-man's switch: cancel all open orders unless renewed within `timeout` seconds",
  source: "CONTRACT 8.7",
  description: "`0` disarms. Held in memory: a restart disarms it.",
  handler: (ctx) => {
    const { deps, finish } = ctx;
    return (res, info, key, body) => {
      const bad = unknownFields(body, FIELDS);
      if (bad.length > 0) return send(res, info, 400, multiErrorBody(bad, info.lang), finish);
      const timeout = readSmallInteger(body.timeout, 0, MAX_DEAD_MAN_SECONDS);
      if (timeout < 0) return sendError(res, info, Code.TIMEOUT_INVALID, finish);
      ok(ctx, res, info, serialize.triggerTime({ triggerTime: deps.deadMan.arm(key.userId, timeout) }));
    };
  },
};
