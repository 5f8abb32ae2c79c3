/** docs/API.md 8.5 `POST /trade/cancel-orders`: 1..100 orders by id, each answered on its own. */

import { CANCEL_ORDERS_FIELDS, cancelOrdersCall } from "../../entry/calls.ts";
import { cancelOrdersResultSchema } from "../../wire/document-schemas.ts";
import { renderCancels } from "../../wire/render.ts";
import { httpReply } from "../http-reply.ts";
import { type PostRoute, SIGNED_POST } from "../route-types.ts";

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
  source: "docs/API.md 8.5",
  handler: (ctx) => (res, info, key, body) =>
    cancelOrdersCall(ctx, key, body, CANCEL_ORDERS_FIELDS, httpReply(ctx, res, info, renderCancels)),
};
