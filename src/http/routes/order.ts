/** CONTRACT 8.6 `GET /trade/orders/{orderId}`: one of the caller's orders, from its committed row. */

import type { HttpResponse } from "@trufflesuite/uws-js-unofficial";
import { Code } from "../../errors/catalogue.ts";
import type { OrderRow } from "../../protocol/db/rows.ts";
import { readSmallInteger } from "../../util/integers.ts";
import { type RequestInfo, sendError } from "../request.ts";
import { MAX_ORDER_ID } from "../request-schemas.ts";
import { type GetRoute, nonceQuery, ok, type RouteContext, SIGNED_GET } from "../route.ts";
import { orderRowView } from "../row-views.ts";
import { orderWithUpdateSchema, serialize } from "../schemas.ts";

/** Answers the caller's order from its committed row: 404 when it is none of the caller's. */
export function answerOrder(
  ctx: RouteContext,
  res: HttpResponse,
  info: RequestInfo,
  userId: number,
  row: Promise<OrderRow | undefined>,
): void {
  row.then(
    (o) =>
      o === undefined || o.userId !== userId
        ? sendError(res, info, Code.ORDER_NOT_FOUND_PATH, ctx.finish)
        : ok(ctx, res, info, serialize.order(orderRowView(o, ctx.config, true))),
    (err) => sendError(res, info, Code.INTERNAL, ctx.finish, undefined, err),
  );
}

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
      answerOrder(ctx, res, info, key!.userId, reader.order(id));
    };
  },
};
