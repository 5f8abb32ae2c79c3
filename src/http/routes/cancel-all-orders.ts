/** docs/API.md 8.4 `POST /trade/cancel-all-orders`: every open order of the caller, or of one pair. */

import { CANCEL_ALL_ORDERS_FIELDS, cancelAllOrdersCall } from "../../entry/calls.ts";
import { renderCancelled } from "../../wire/render.ts";
import { cancelledSchema } from "../../wire/schemas.ts";
import { httpReply } from "../http-reply.ts";
import { type PostRoute, SIGNED_POST } from "../route-types.ts";

export const cancelAllOrders: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/cancel-all-orders",
  auth: "signedBody",
  fields: CANCEL_ALL_ORDERS_FIELDS,
  body: (s) => s.cancelAll,
  ok: cancelledSchema, // serialize.cancelled (in cancelAll)
  errors: SIGNED_POST,
  operationId: "cancelAllOrders",
  summary: "Cancel every open order of the caller (all pairs or one)",
  source: "docs/API.md 8.4",
  handler: (ctx) => (res, info, key, body) =>
    cancelAllOrdersCall(ctx, key, body, CANCEL_ALL_ORDERS_FIELDS, httpReply(ctx, res, info, renderCancelled)),
};
