/** docs/API.md 7.8 `GET /trade/pairs/{pairName}/user-balances`: available and reserved (5.6). */

import { balancesOf } from "../../entry/calls.ts";
import { renderBalances } from "../../wire/render.ts";
import { balancesSchema } from "../../wire/schemas.ts";
import { ok } from "../route-steps.ts";
import { type GetRoute, nonceQuery, SIGNED_GET_PAIR } from "../route-types.ts";

export const balances: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/pairs/{pairName}/user-balances",
  auth: "signedQuery",
  query: [nonceQuery],
  ok: balancesSchema, // serialize.balances
  errors: SIGNED_GET_PAIR,
  operationId: "balances",
  summary: "The caller's available and reserved balances of the pair's two currencies",
  source: "docs/API.md 7.8, 5.6",
  handler: (ctx) => (res, info, pair, key) =>
    ok(ctx, res, info, renderBalances(balancesOf(ctx, key!.userId, [pair!.base, pair!.quote]), info.lang)),
};
