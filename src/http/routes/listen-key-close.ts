/** docs/API.md 10 `POST /trade/listen-key/close`: end a listen key. */

import { unknownFields } from "../../entry/fields.ts";
import { multiErrorBody } from "../../errors/bodies.ts";
import { emptyArraySchema } from "../../wire/document-schemas.ts";
import { send } from "../../wire/request.ts";
import { type PostRoute, SIGNED_POST } from "../route-types.ts";
import { listenKeyAnswer } from "./listen-key.ts";

const FIELDS: ReadonlySet<string> = new Set(["listenKey", "nonce"]);

export const closeListenKey: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/listen-key/close",
  auth: "signedBody",
  fields: FIELDS,
  body: (s) => s.listenKeyClose,
  ok: emptyArraySchema,
  errors: SIGNED_POST,
  operationId: "closeListenKey",
  summary: "End a listen key",
  source: "docs/API.md 10",
  description: "Answers `[]`, like cancel-order (docs/API.md 10).",
  handler: (ctx) => {
    const listenKeys = ctx.deps.listenKeys;
    return (res, info, key, body) => {
      // Strict bodies (docs/API.md 8.1): an unknown field is a 400 under its own name.
      const bad = unknownFields(body, FIELDS);
      if (bad.length > 0) return send(res, info, 400, multiErrorBody(bad, info.lang), ctx.finish);
      listenKeyAnswer(ctx, res, info, listenKeys.handleClose(key.userId, body));
    };
  },
};
