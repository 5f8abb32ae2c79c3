/** CONTRACT 8.5 `POST /trade/cancel-orders`: 1..100 orders by id, each answered on its own. */

import { cancelOrdersCall, httpReply } from "../../entry/calls.ts";
import { type PostRoute, SIGNED_POST } from "../route.ts";
import { cancelOrdersResultSchema } from "../../json/document-schemas.ts";

export const CANCEL_ORDERS_FIELDS: ReadonlySet<string> = new Set(["orderIds", "nonce", "expiresAt"]);

export const cancelOrders: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/cancel-orders",
  auth: "signedBody",
  fields: CANCEL_ORDERS_FIELDS,
  body: (s) => s.cancelOrders,
  ok: cancelOrdersResultSchema, // assembled here: `{"orderId":id}` or with the error body's fields
  errors: SIGNED_POST,
  operationId: "cancelOrders",
  summary: "Cancel 1..100 orders by id",
  source: "CONTRACT 8.5",
  handler: (ctx) => (res, info, key, body) =>
    cancelOrdersCall(ctx, key, body, CANCEL_ORDERS_FIELDS, httpReply(ctx, res, info)),
};
