/** CONTRACT 10 `POST /trade/listen-key`: create (`{}`) or extend (`{listenKey}`) a stream listen key. */
import type { HttpResponse } from "@trufflesuite/uws-js-unofficial";
import type { ListenKeyAnswer } from "../listen-keys.ts";
import { type RequestInfo, sendError } from "../request.ts";
import { ok, type PostRoute, type RouteContext, SIGNED_POST } from "../route.ts";
import { listenKeyRequestSchema, listenKeySchema } from "../schemas-contract.ts";

/** Answers what src/http/listen-keys.ts decided: its body, or its error code. */
export function listenKeyAnswer(ctx: RouteContext, res: HttpResponse, info: RequestInfo, a: ListenKeyAnswer) {
  if (a.body !== undefined) ok(ctx, res, info, a.body);
  else sendError(res, info, a.code, ctx.finish);
}

export const listenKey: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/listen-key",
  auth: "signedBody",
  // Documented; listen-keys.ts reads `listenKey` and, today, ignores other fields.
  fields: new Set(["listenKey", "nonce"]),
  body: listenKeyRequestSchema,
  ok: listenKeySchema,
  errors: SIGNED_POST,
  operationId: "listenKey",
  summary: "Create (`{}`) or extend (`{listenKey}`) a stream listen key, valid 60 minutes",
  source: "CONTRACT 10",
  handler: (ctx) => {
    const listenKeys = ctx.deps.listenKeys;
    return (res, info, key, body) =>
      listenKeyAnswer(ctx, res, info, listenKeys.handleCreateOrExtend(key.userId, body));
  },
};
