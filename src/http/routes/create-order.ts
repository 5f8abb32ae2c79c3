/** docs/API.md 7.1 `POST /trade/create-order` (6, 8.2): the hot path. */
import type { HttpResponse } from "@trufflesuite/uws-js-unofficial";
import type { ApiKey } from "../../accounts/users.ts";
import { createOrderCall, placeValid } from "../../entry/calls.ts";
import { CREATE_FIELDS, type ValidOrder } from "../../entry/validate.ts";
import { renderOrder } from "../../wire/render.ts";
import type { RequestInfo } from "../../wire/request.ts";
import { orderWithUpdateSchema } from "../../wire/schemas.ts";
import { fastOrderParser } from "../fast-order.ts";
import { httpReply } from "../http-reply.ts";
import type { RouteContext } from "../route-context.ts";
import { type PostRoute, SIGNED_POST } from "../route-types.ts";

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
  source: "docs/API.md 7.1, 6, 8.2",
  description:
    "Answers the order as it stands after its own immediate matching, once it and its trades are " +
    "committed. Insufficient funds, no liquidity (market), bounds and decimals: 400 `errors.amount` / " +
    "`errors.price`; unknown pair: 400 `errors.pairName`.",
  handler: (ctx) => (res, info, key, body) =>
    createOrderCall(ctx, key, body, CREATE_FIELDS, httpReply(ctx, res, info, renderOrder)),
  // The common body read from its bytes (src/http/fast-order.ts); every other one by `handler`.
  fast: (ctx) => ({
    parse: fastOrderParser(ctx.config),
    handle: (res, info, key, v) => place(ctx, res, info, key, v),
  }),
};

function place(ctx: RouteContext, res: HttpResponse, info: RequestInfo, key: ApiKey, v: ValidOrder): void {
  placeValid(ctx, key, v, httpReply(ctx, res, info, renderOrder));
}
