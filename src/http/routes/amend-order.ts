/** CONTRACT 8.3 `POST /trade/amend-order`: a new amount and/or price for an open order, same id. */

import { amendOrderCall, httpReply } from "../../entry/calls.ts";
import { type PostRoute, SIGNED_POST } from "../route.ts";
import { orderWithUpdateSchema } from "../../json/schemas.ts";

export const AMEND_ORDER_FIELDS: ReadonlySet<string> = new Set([
  "orderId",
  "amount",
  "price",
  "nonce",
  "expiresAt",
]);

export const amendOrder: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/amend-order",
  auth: "signedBody",
  fields: AMEND_ORDER_FIELDS,
  body: (s) => s.amendOrder,
  ok: orderWithUpdateSchema, // serialize.order (in amendOne)
  errors: SIGNED_POST,
  operationId: "amendOrder",
  summary: "Change an open order's amount and/or price, keeping its id",
  source: "CONTRACT 8.3",
  handler: (ctx) => (res, info, key, body) =>
    amendOrderCall(ctx, key, body, AMEND_ORDER_FIELDS, httpReply(ctx, res, info)),
};
