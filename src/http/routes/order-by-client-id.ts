/** CONTRACT 8.6 `GET /trade/orders?clientOrderId=`: one of the caller's orders by client order id. */

import { CLIENT_ORDER_ID_RE } from "../../core/orders.ts";
import { Code } from "../../errors/catalogue.ts";
import { sendError } from "../request.ts";
import { clientOrderIdParam } from "../request-schemas.ts";
import { type GetRoute, nonceQuery, SIGNED_GET } from "../route.ts";
import { orderWithUpdateSchema } from "../schemas.ts";
import { answerOrder } from "./order.ts";

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
  source: "CONTRACT 8.6",
  handler: (ctx) => {
    const { reader, finish } = ctx;
    return (res, info, _pair, key) => {
      const id = new URLSearchParams(info.query).get("clientOrderId");
      if (id === null || id === "") return sendError(res, info, Code.CLIENT_ORDER_ID_REQUIRED, finish);
      if (!CLIENT_ORDER_ID_RE.test(id)) return sendError(res, info, Code.CLIENT_ORDER_ID_INVALID, finish);
      answerOrder(ctx, res, info, key!.userId, reader.orderByClientId(key!.userId, id));
    };
  },
};
