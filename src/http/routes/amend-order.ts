/** CONTRACT 8.3 `POST /trade/amend-order`: a new amount and/or price for an open order, same id. */

import { multiErrorBody } from "../../errors/bodies.ts";
import { Code } from "../../errors/catalogue.ts";
import { unknownFields } from "../json-body.ts";
import { send } from "../request.ts";
import { type PostRoute, SIGNED_POST } from "../route.ts";
import { orderWithUpdateSchema } from "../schemas.ts";

import { amendOne } from "../trade.ts";
import { expiresAtOf, orderIdOf } from "../validate.ts";

const FIELDS: ReadonlySet<string> = new Set(["orderId", "amount", "price", "nonce", "expiresAt"]);

export const amendOrder: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/amend-order",
  auth: "signedBody",
  fields: FIELDS,
  body: (s) => s.amendOrder,
  ok: orderWithUpdateSchema, // serialize.order (in amendOne)
  errors: SIGNED_POST,
  operationId: "amendOrder",
  summary: "Change an open order's amount and/or price, keeping its id",
  source: "CONTRACT 8.3",
  handler: (ctx) => {
    const finish = ctx.finish;
    return (res, info, key, body) => {
      const errors = unknownFields(body, FIELDS);
      const orderId = orderIdOf(body.orderId);
      if (orderId < 0) errors.unshift([-orderId]);
      // null is not an amount or a price, and not "unchanged" either (CONTRACT 2.5): 400 on it.
      if (body.amount === null) errors.push([Code.AMOUNT_NOT_NUMBER]);
      if (body.price === null) errors.push([Code.PRICE_NOT_NUMBER]);
      if (body.amount === undefined && body.price === undefined) errors.push([Code.AMEND_NOTHING]);
      const expiresAt = expiresAtOf(body);
      if (expiresAt < 0) errors.push([Code.EXPIRES_AT_INVALID]);
      if (errors.length > 0) return send(res, info, 400, multiErrorBody(errors, info.lang), finish);
      // The amount and price are read against the order's pair, known once the order is found.
      amendOne(ctx, res, info, key.userId, orderId, body, errors, expiresAt);
    };
  },
};
