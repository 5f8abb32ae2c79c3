/** docs/API.md 10 `POST /trade/listen-key`: create (`{}`) or extend (`{listenKey}`) a stream listen key. */
import type { HttpResponse } from "@trufflesuite/uws-js-unofficial";
import { unknownFields } from "../../entry/fields.ts";
import { multiErrorBody } from "../../errors/bodies.ts";
import { listenKeySchema } from "../../wire/document-schemas.ts";
import { type RequestInfo, send, sendError } from "../../wire/request.ts";
import type { ListenKeyAnswer } from "../listen-keys.ts";
import type { RouteContext } from "../route-context.ts";
import { ok } from "../route-steps.ts";
import { type PostRoute, SIGNED_POST } from "../route-types.ts";

/** Answers what src/http/listen-keys.ts decided: its body, or its error code. */
const FIELDS: ReadonlySet<string> = new Set(["listenKey", "nonce"]);

export function listenKeyAnswer(ctx: RouteContext, res: HttpResponse, info: RequestInfo, a: ListenKeyAnswer) {
  if (a.body !== undefined) ok(ctx, res, info, a.body);
  else sendError(res, info, a.code, ctx.finish);
}

export const listenKey: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/listen-key",
  auth: "signedBody",
  fields: FIELDS,
  body: (s) => s.listenKey,
  ok: listenKeySchema,
  errors: SIGNED_POST,
  operationId: "listenKey",
  summary: "Create (`{}`) or extend (`{listenKey}`) a stream listen key, valid 60 minutes",
  source: "docs/API.md 10",
  handler: (ctx) => {
    const listenKeys = ctx.deps.listenKeys;
    return (res, info, key, body) => {
      // Strict bodies (docs/API.md 8.1): an unknown field is a 400 under its own name.
      const bad = unknownFields(body, FIELDS);
      if (bad.length > 0) return send(res, info, 400, multiErrorBody(bad, info.lang), ctx.finish);
      listenKeyAnswer(ctx, res, info, listenKeys.handleCreateOrExtend(key.userId, key.token, body));
    };
  },
};
