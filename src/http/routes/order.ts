/** docs/API.md 8.6 `GET /trade/orders/{orderId}`: one of the caller's orders, from its committed row. */

import { orderByIdCall } from "../../entry/calls.ts";
import { renderOrder } from "../../wire/render.ts";
import { orderWithUpdateSchema } from "../../wire/schemas.ts";
import { httpReply } from "../http-reply.ts";
import { type GetRoute, nonceQuery, SIGNED_GET } from "../route-types.ts";

export const order: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/orders/{orderId}",
  auth: "signedQuery",
  query: [nonceQuery],
  ok: orderWithUpdateSchema, // serialize.order
  errors: [404, ...SIGNED_GET],
  operationId: "order",
  summary: "One of the caller's orders by id",
  source: "docs/API.md 8.6",
  handler: (ctx) => {
    return (res, info, _pair, key, orderId) =>
      orderByIdCall(ctx, key!.userId, orderId, httpReply(ctx, res, info, renderOrder));
  },
};
