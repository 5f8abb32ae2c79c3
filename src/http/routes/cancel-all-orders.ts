/** CONTRACT 8.4 `POST /trade/cancel-all-orders`: every open order of the caller, or of one pair. */

import { type ErrorEntry, multiErrorBody } from "../../errors/bodies.ts";
import { Code } from "../../errors/catalogue.ts";
import { unknownFields } from "../json-body.ts";
import { send, sendError } from "../request.ts";
import { type PostRoute, SIGNED_POST } from "../route.ts";
import { cancelledSchema } from "../schemas.ts";

import { cancelAll } from "../trade.ts";
import { expiresAtOf } from "../validate.ts";

const FIELDS: ReadonlySet<string> = new Set(["pairName", "nonce", "expiresAt"]);

export const cancelAllOrders: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/cancel-all-orders",
  auth: "signedBody",
  fields: FIELDS,
  body: (s) => s.cancelAll,
  ok: cancelledSchema, // serialize.cancelled (in cancelAll)
  errors: SIGNED_POST,
  operationId: "cancelAllOrders",
  summary: "Cancel every open order of the caller (all pairs or one)",
  source: "CONTRACT 8.4",
  handler: (ctx) => {
    const { config, finish } = ctx;
    return (res, info, key, body) => {
      const bad = unknownFields(body, FIELDS);
      if (bad.length > 0) return send(res, info, 400, multiErrorBody(bad, info.lang), finish);
      // Only an absent pairName means every pair: null is not a pair name (CONTRACT 2.5).
      const pn = body.pairName;
      const errors: ErrorEntry[] = [];
      let pairIndex = -1;
      if (pn !== undefined) {
        const pair = typeof pn === "string" ? config.pairsByName.get(pn) : undefined;
        if (typeof pn !== "string") errors.push([Code.PAIR_NOT_STRING]);
        else if (pair === undefined) errors.push([Code.PAIR_UNKNOWN]);
        else pairIndex = pair.index;
      }
      const expiresAt = expiresAtOf(body);
      if (expiresAt < 0) errors.push([Code.EXPIRES_AT_INVALID]);
      if (errors.length === 1) return sendError(res, info, errors[0][0], finish);
      if (errors.length > 1) return send(res, info, 400, multiErrorBody(errors, info.lang), finish);
      cancelAll(ctx, res, info, key.userId, pairIndex, expiresAt);
    };
  },
};
