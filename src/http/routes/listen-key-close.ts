/** CONTRACT 10 `POST /trade/listen-key/close`: end a listen key. */
import { type PostRoute, SIGNED_POST } from "../route.ts";
import { emptyArraySchema, listenKeyCloseRequestSchema } from "../schemas-contract.ts";
import { listenKeyAnswer } from "./listen-key.ts";

export const closeListenKey: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/listen-key/close",
  auth: "signedBody",
  // Documented; listen-keys.ts reads `listenKey` and, today, ignores other fields.
  fields: new Set(["listenKey", "nonce"]),
  body: listenKeyCloseRequestSchema,
  ok: emptyArraySchema,
  errors: SIGNED_POST,
  operationId: "closeListenKey",
  summary: "End a listen key",
  source: "CONTRACT 10",
  description: "The contract does not name the answer; `[]` is assumed, like cancel-order.",
  handler: (ctx) => {
    const listenKeys = ctx.deps.listenKeys;
    return (res, info, key, body) =>
      listenKeyAnswer(ctx, res, info, listenKeys.handleClose(key.userId, body));
  },
};
