/** CONTRACT 8.5 `POST /trade/cancel-orders`: 1..100 orders by id, each answered on its own. */

import { errorBody, multiErrorBody } from "../../errors/bodies.ts";
import { Code } from "../../errors/catalogue.ts";
import { LosslessNumber, unknownFields } from "../json-body.ts";
import { send, sendError } from "../request.ts";
import { MAX_BATCH_CANCELS } from "../request-schemas.ts";
import { type PostRoute, SIGNED_POST } from "../route.ts";
import { cancelOrdersResultSchema } from "../schemas-contract.ts";
import { batchAnswer, cancelOne } from "../trade.ts";
import { expiresAtOf, orderIdOf } from "../validate.ts";

const FIELDS: ReadonlySet<string> = new Set(["orderIds", "nonce", "expiresAt"]);

export const cancelOrders: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/cancel-orders",
  auth: "signedBody",
  fields: FIELDS,
  body: (s) => s.cancelOrders,
  ok: cancelOrdersResultSchema, // assembled here: `{"orderId":id}` or with the error body's fields
  errors: SIGNED_POST,
  operationId: "cancelOrders",
  summary: "Cancel 1..100 orders by id",
  source: "CONTRACT 8.5",
  handler: (ctx) => {
    const finish = ctx.finish;
    return (res, info, key, body) => {
      const bad = unknownFields(body, FIELDS);
      if (bad.length > 0) return send(res, info, 400, multiErrorBody(bad, info.lang), finish);
      const list = body.orderIds;
      const listBad = !Array.isArray(list) || list.length < 1 || list.length > MAX_BATCH_CANCELS;
      // The deadline of the whole batch (CONTRACT 11.2): past it, no element runs.
      const expiresAt = expiresAtOf(body);
      if (listBad && expiresAt < 0)
        return send(
          res,
          info,
          400,
          multiErrorBody([[Code.ORDER_IDS_INVALID], [Code.EXPIRES_AT_INVALID]], info.lang),
          finish,
        );
      if (listBad) return sendError(res, info, Code.ORDER_IDS_INVALID, finish);
      if (expiresAt < 0) return sendError(res, info, Code.EXPIRES_AT_INVALID, finish);
      if (expiresAt !== 0 && Date.now() > expiresAt)
        return sendError(res, info, Code.REQUEST_EXPIRED, finish);
      const answer = batchAnswer(ctx, res, info, list.length);
      list.forEach((item, i) => {
        const orderId = orderIdOf(item);
        // The id as the client gave it, for an element that is not a valid id (a number a double
        // cannot hold, such as 1e400, by its source text: a JSON number literal).
        const echo =
          orderId > 0
            ? String(orderId)
            : item instanceof LosslessNumber
              ? item.value
              : (JSON.stringify(item) ?? "null");
        // `{"orderId":id}`, or the error body with the id put in front of `errors`.
        const put = (err: number): void =>
          answer(
            i,
            err === 0 ? `{"orderId":${echo}}` : `{"orderId":${echo},${errorBody(err, info.lang).slice(1)}`,
          );
        if (orderId < 0) put(-orderId);
        else cancelOne(ctx, key.userId, orderId, put, expiresAt);
      });
    };
  },
};
