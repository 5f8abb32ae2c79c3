/** docs/API.md 7.2 `POST /trade/cancel-order` (releases the order's hold: 6). */

import { CANCEL_ORDER_FIELDS, cancelOrderCall } from "../../entry/calls.ts";
import { emptyArraySchema } from "../../wire/document-schemas.ts";
import { renderEmpty } from "../../wire/render.ts";
import { httpReply } from "../http-reply.ts";
import { type PostRoute, SIGNED_POST } from "../route-types.ts";

export const cancelOrder: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/cancel-order",
  auth: "signedBody",
  fields: CANCEL_ORDER_FIELDS,
  body: (s) => s.cancelOrder,
  ok: emptyArraySchema, // the literal `[]`
  errors: SIGNED_POST,
  operationId: "cancelOrder",
  summary: "Cancel one of the caller's orders",
  source: "docs/API.md 7.2, 6",
  description:
    "Unknown id or another user's order: 400 `errors.orderId` (order not found); already cancelled or " +
    "fully executed: 400 `errors.orderId`.",
  handler: (ctx) => (res, info, key, body) =>
    cancelOrderCall(ctx, key, body, CANCEL_ORDER_FIELDS, httpReply(ctx, res, info, renderEmpty)),
};
