/** CONTRACT 8.5 `POST /trade/create-orders`: 1..20 orders in array order, each answered on its own. */

import { createOrdersCall, httpReply } from "../../entry/calls.ts";
import { type PostRoute, SIGNED_POST } from "../route.ts";
import { createOrdersResultSchema } from "../../json/document-schemas.ts";
import { ORDER_FIELDS } from "../../entry/validate.ts";

export const CREATE_ORDERS_FIELDS: ReadonlySet<string> = new Set(["orders", "nonce", "expiresAt"]);

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
  source: "CONTRACT 8.5",
  handler: (ctx) => (res, info, key, body) =>
    createOrdersCall(ctx, key, body, CREATE_ORDERS_FIELDS, ORDER_FIELDS, httpReply(ctx, res, info)),
};
