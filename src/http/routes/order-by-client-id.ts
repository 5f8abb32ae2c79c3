/** docs/API.md 8.6 `GET /trade/orders?clientOrderId=`: one of the caller's orders by client order id. */

import { orderByClientIdCall } from "../../entry/calls.ts";
import { renderOrder } from "../../wire/render.ts";
import { clientOrderIdParam } from "../../wire/request-schemas.ts";
import { orderWithUpdateSchema } from "../../wire/schemas.ts";
import { httpReply } from "../http-reply.ts";
import { type GetRoute, nonceQuery, SIGNED_GET } from "../route-types.ts";

export const orderByClientId: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/orders",
  auth: "signedQuery",
  query: [
    {
      name: "clientOrderId",
      description: "The id given at creation",
      schema: clientOrderIdParam,
      required: true,
    },
    nonceQuery,
  ],
  ok: orderWithUpdateSchema, // serialize.order (in answerOrder)
  errors: [404, ...SIGNED_GET],
  operationId: "orderByClientId",
  summary: "One of the caller's orders by its client order id",
  source: "docs/API.md 8.6",
  handler: (ctx) => (res, info, _pair, key) =>
    orderByClientIdCall(
      ctx,
      key!.userId,
      new URLSearchParams(info.query).get("clientOrderId"),
      httpReply(ctx, res, info, renderOrder),
    ),
};
