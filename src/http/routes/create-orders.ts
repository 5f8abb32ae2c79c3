/** docs/API.md 8.5 `POST /trade/create-orders`: 1..20 orders in array order, each answered on its own. */

import { CREATE_ORDERS_FIELDS, createOrdersCall } from "../../entry/calls.ts";
import { ORDER_FIELDS } from "../../entry/validate.ts";
import { createOrdersResultSchema } from "../../wire/document-schemas.ts";
import { renderBatch } from "../../wire/render.ts";
import { httpReply } from "../http-reply.ts";
import { type PostRoute, SIGNED_POST } from "../route-types.ts";

export const createOrders: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/create-orders",
  auth: "signedBody",
  fields: CREATE_ORDERS_FIELDS,
  body: (s) => s.createOrders,
  ok: createOrdersResultSchema, // elements by serialize.order (in placeOrder) or errorBody
  errors: SIGNED_POST,
  operationId: "createOrders",
  summary: "Create 1..20 orders in array order (not atomic)",
  source: "docs/API.md 8.5",
  handler: (ctx) => (res, info, key, body) =>
    createOrdersCall(
      ctx,
      key,
      body,
      CREATE_ORDERS_FIELDS,
      ORDER_FIELDS,
      httpReply(ctx, res, info, renderBatch),
    ),
};
