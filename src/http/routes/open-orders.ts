/** docs/API.md 8.6 `GET /trade/pairs/{pairName}/open-orders`: the caller's open orders, newest first. */

import { openOrdersCall } from "../../entry/calls.ts";
import { renderOrders } from "../../wire/render.ts";
import { orderListSchema } from "../../wire/schemas.ts";
import { httpReply } from "../http-reply.ts";
import { type GetRoute, nonceQuery, SIGNED_GET_PAIR } from "../route-types.ts";

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
  source: "docs/API.md 8.6",
  handler: (ctx) => (res, info, pair, key) =>
    openOrdersCall(ctx, key!.userId, pair!.index, httpReply(ctx, res, info, renderOrders)),
};
