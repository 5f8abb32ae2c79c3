/** seed 4.1 `POST /trade/create-order` (CONTRACT 3, 8.2): the hot path. */
import type { HttpResponse } from "@trufflesuite/uws-js-unofficial";
import type { ApiKey } from "../../accounts/users.ts";
import { multiErrorBody } from "../../errors/bodies.ts";
import { fastOrderParser } from "../fast-order.ts";
import { type RequestInfo, send, sendError } from "../request.ts";
import { ok, type PostRoute, type RouteContext, SIGNED_POST } from "../route.ts";
import { orderWithUpdateSchema } from "../schemas.ts";

import { placeOrder } from "../trade.ts";
import { CREATE_FIELDS, type ValidOrder, validateOrder } from "../validate.ts";

export const createOrder: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/create-order",
  auth: "signedBody",
  fields: CREATE_FIELDS,
  body: (s) => s.createOrder,
  ok: orderWithUpdateSchema, // serialize.order (in placeOrder)
  errors: SIGNED_POST,
  operationId: "createOrder",
  summary: "Create a limit or market order",
  source: "seed 4.1; CONTRACT 3, 8.2",
  description:
    "Answers the order as it stands after its own immediate matching, once it and its trades are " +
    "committed. Insufficient funds, no liquidity (market), bounds and decimals: 400 `errors.amount` / " +
    "`errors.price`; unknown pair: 400 `errors.pairName`.",
  handler: (ctx) => {
    const { config, finish } = ctx;
    return (res, info, key, body) => {
      const v = validateOrder(body, config, CREATE_FIELDS);
      if (v.errors.length > 0) {
        return send(res, info, 400, multiErrorBody(v.errors, info.lang), finish);
      }
      place(ctx, res, info, key, v);
    };
  },
  // The common body read from its bytes (src/http/fast-order.ts); every other one by `handler`.
  fast: (ctx) => ({
    parse: fastOrderParser(ctx.config),
    handle: (res, info, key, v) => place(ctx, res, info, key, v),
  }),
};

function place(ctx: RouteContext, res: HttpResponse, info: RequestInfo, key: ApiKey, v: ValidOrder): void {
  placeOrder(ctx, key.userId, v, (err, json) =>
    err === 0 ? ok(ctx, res, info, json) : sendError(res, info, err, ctx.finish),
  );
}
