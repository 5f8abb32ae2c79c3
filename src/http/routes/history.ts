/** docs/API.md 7.7 `GET /trade/pairs/{pairName}/history`: the pair's last 200 trades, newest first. */

import { historySchema, serialize } from "../../wire/schemas.ts";
import { ok } from "../route-steps.ts";
import { type GetRoute, PUBLIC_GET_PAIR } from "../route-types.ts";

export const history: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/pairs/{pairName}/history",
  auth: "none",
  ok: historySchema, // serialize.history
  errors: PUBLIC_GET_PAIR,
  operationId: "history",
  summary: "The last 200 trades of the pair, newest first",
  source: "docs/API.md 7.7",
  handler: (ctx) => {
    const exchange = ctx.exchange;
    return (res, info, pair) => ok(ctx, res, info, serialize.history(exchange.market(pair!.index).history));
  },
};
