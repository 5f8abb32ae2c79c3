/** docs/API.md 8.3 `POST /trade/amend-order`: a new amount and/or price for an open order, same id. */

import { AMEND_ORDER_FIELDS, amendOrderCall } from "../../entry/calls.ts";
import { renderOrder } from "../../wire/render.ts";
import { orderWithUpdateSchema } from "../../wire/schemas.ts";
import { httpReply } from "../http-reply.ts";
import { type PostRoute, SIGNED_POST } from "../route-types.ts";

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
  source: "docs/API.md 8.3, 18",
  description:
    "A waiting stop order also takes `stopPrice` or `trailingDelta` (docs/API.md 18). Either leg of an " +
    "OCO: 400 `errors.orderId` (code `OCO_AMEND`); cancel it, which cancels both.",
  handler: (ctx) => (res, info, key, body) =>
    amendOrderCall(ctx, key, body, AMEND_ORDER_FIELDS, httpReply(ctx, res, info, renderOrder)),
};
