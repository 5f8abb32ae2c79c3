/** CONTRACT 8.6 `GET /trade/orders/{orderId}`: one of the caller's orders, from its committed row. */

import { Code } from "../../errors/catalogue.ts";
import { readSmallInteger } from "../../util/integers.ts";
import { answerOrder, httpReply } from "../../entry/calls.ts";
import { sendError } from "../request.ts";
import { MAX_ORDER_ID } from "../../json/request-schemas.ts";
import { type GetRoute, nonceQuery, SIGNED_GET } from "../route.ts";
import { orderWithUpdateSchema } from "../../json/schemas.ts";

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
  source: "CONTRACT 8.6",
  handler: (ctx) => {
    const { reader, finish } = ctx;
    return (res, info, _pair, key, orderId) => {
      const id = readSmallInteger(orderId, 1, MAX_ORDER_ID);
      if (id < 0) return sendError(res, info, Code.ORDER_ID_INVALID, finish);
      answerOrder(ctx, key!.userId, reader.order(id), httpReply(ctx, res, info));
    };
  },
};
