/** CONTRACT 8.4 `POST /trade/cancel-all-orders`: every open order of the caller, or of one pair. */

import { cancelAllOrdersCall, httpReply } from "../../entry/calls.ts";
import { type PostRoute, SIGNED_POST } from "../route.ts";
import { cancelledSchema } from "../../json/schemas.ts";

export const CANCEL_ALL_ORDERS_FIELDS: ReadonlySet<string> = new Set(["pairName", "nonce", "expiresAt"]);

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
  source: "CONTRACT 8.4",
  handler: (ctx) => (res, info, key, body) =>
    cancelAllOrdersCall(ctx, key, body, CANCEL_ALL_ORDERS_FIELDS, httpReply(ctx, res, info)),
};
