/** CONTRACT 8.5 `POST /trade/create-orders`: 1..20 orders in array order, each answered on its own. */

import { errorBody, multiErrorBody } from "../../errors/bodies.ts";
import { Code } from "../../errors/catalogue.ts";
import { unknownFields } from "../json-body.ts";
import { send, sendError } from "../request.ts";
import { MAX_BATCH_ORDERS } from "../request-schemas.ts";
import { type PostRoute, SIGNED_POST } from "../route.ts";
import { createOrdersResultSchema } from "../schemas-contract.ts";
import { batchAnswer, placeOrder } from "../trade.ts";
import { expiresAtOf, ORDER_FIELDS, validateOrder } from "../validate.ts";

const FIELDS: ReadonlySet<string> = new Set(["orders", "nonce", "expiresAt"]);

export const createOrders: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/create-orders",
  auth: "signedBody",
  fields: FIELDS,
  body: (s) => s.createOrders,
  ok: createOrdersResultSchema, // elements by serialize.order (in placeOrder) or errorBody
  errors: SIGNED_POST,
  operationId: "createOrders",
  summary: "Create 1..20 orders in array order (not atomic)",
  source: "CONTRACT 8.5",
  handler: (ctx) => {
    const { config, finish } = ctx;
    return (res, info, key, body) => {
      const bad = unknownFields(body, FIELDS);
      if (bad.length > 0) return send(res, info, 400, multiErrorBody(bad, info.lang), finish);
      const list = body.orders;
      const listBad = !Array.isArray(list) || list.length < 1 || list.length > MAX_BATCH_ORDERS;
      // The deadline of the whole batch (CONTRACT 11.2): past it, no element runs.
      const expiresAt = expiresAtOf(body);
      if (listBad && expiresAt < 0)
        return send(
          res,
          info,
          400,
          multiErrorBody([[Code.ORDERS_INVALID], [Code.EXPIRES_AT_INVALID]], info.lang),
          finish,
        );
      if (listBad) return sendError(res, info, Code.ORDERS_INVALID, finish);
      if (expiresAt < 0) return sendError(res, info, Code.EXPIRES_AT_INVALID, finish);
      if (expiresAt !== 0 && Date.now() > expiresAt)
        return sendError(res, info, Code.REQUEST_EXPIRED, finish);
      const put = batchAnswer(ctx, res, info, list.length);
      for (let i = 0; i < list.length; i++) {
        const item: unknown = list[i];
        if (typeof item !== "object" || item === null || Array.isArray(item)) {
          put(i, errorBody(Code.ORDER_NOT_OBJECT, info.lang));
          continue;
        }
        const v = validateOrder(item as Record<string, unknown>, config, ORDER_FIELDS);
        v.expiresAt = expiresAt;
        if (v.errors.length > 0) put(i, multiErrorBody(v.errors, info.lang));
        else
          placeOrder(ctx, key.userId, v, (err, json) => put(i, err === 0 ? json : errorBody(err, info.lang)));
      }
    };
  },
};
