/** seed 4.2 `POST /trade/cancel-order` (CONTRACT 3). */
import { multiErrorBody } from "../../errors/bodies.ts";
import { Code } from "../../errors/catalogue.ts";
import { unknownFields } from "../json-body.ts";
import { send, sendError } from "../request.ts";
import { ok, type PostRoute, SIGNED_POST } from "../route.ts";
import { emptyArraySchema } from "../schemas-contract.ts";
import { cancelOne } from "../trade.ts";
import { expiresAtOf, orderIdOf } from "../validate.ts";

const FIELDS: ReadonlySet<string> = new Set(["orderId", "nonce", "expiresAt"]);

export const cancelOrder: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/cancel-order",
  auth: "signedBody",
  fields: FIELDS,
  body: (s) => s.cancelOrder,
  ok: emptyArraySchema, // the literal `[]`
  errors: SIGNED_POST,
  operationId: "cancelOrder",
  summary: "Cancel one of the caller's orders",
  source: "seed 4.2; CONTRACT 3",
  description:
    "Unknown id or another user's order: 400 `errors.orderId` (order not found); already cancelled or " +
    "fully executed: 400 `errors.orderId`.",
  handler: (ctx) => {
    const finish = ctx.finish;
    return (res, info, key, body) => {
      const bad = unknownFields(body, FIELDS);
      if (bad.length > 0) return send(res, info, 400, multiErrorBody(bad, info.lang), finish);
      const orderId = orderIdOf(body.orderId);
      const expiresAt = expiresAtOf(body);
      if (orderId < 0 && expiresAt < 0)
        return send(
          res,
          info,
          400,
          multiErrorBody([[-orderId], [Code.EXPIRES_AT_INVALID]], info.lang),
          finish,
        );
      if (orderId < 0) return sendError(res, info, -orderId, finish);
      if (expiresAt < 0) return sendError(res, info, Code.EXPIRES_AT_INVALID, finish);
      cancelOne(
        ctx,
        key.userId,
        orderId,
        (err) => (err === 0 ? ok(ctx, res, info, "[]") : sendError(res, info, err, finish)),
        expiresAt,
      );
    };
  },
};
