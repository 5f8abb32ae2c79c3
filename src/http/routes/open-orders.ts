/** CONTRACT 8.6 `GET /trade/pairs/{pairName}/open-orders`: the caller's open orders, newest first. */
import { Code } from "../../errors/catalogue.ts";
import { sendError } from "../request.ts";
import { type GetRoute, nonceQuery, ok, SIGNED_GET_PAIR } from "../route.ts";
import { orderRowView } from "../row-views.ts";
import { orderListSchema, serialize } from "../schemas.ts";

export const openOrders: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/pairs/{pairName}/open-orders",
  auth: "signedQuery",
  query: [nonceQuery],
  ok: orderListSchema, // serialize.orders
  errors: SIGNED_GET_PAIR,
  operationId: "openOrders",
  summary: "Every open order of the caller on the pair, newest first",
  source: "CONTRACT 8.6",
  handler: (ctx) => {
    const { config, exchange, reader, finish } = ctx;
    return (res, info, pair, key) => {
      reader.openOrders(exchange.openOrderIds(key!.userId, pair!.index)).then(
        (rows) => ok(ctx, res, info, serialize.orders(rows.map((o) => orderRowView(o, config)))),
        (err) => sendError(res, info, Code.INTERNAL, finish, undefined, err),
      );
    };
  },
};
