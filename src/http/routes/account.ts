/**
 * docs/API.md 20.4 `GET /trade/account`: who the caller is (its uid, which names its user channels)
 * and its available and reserved balances (5.6) of every configured currency, in config order.
 */

import { balancesOf } from "../../entry/calls.ts";
import { accountSchema, serialize } from "../../wire/schemas.ts";
import { ok } from "../route-steps.ts";
import { type GetRoute, nonceQuery, SIGNED_GET } from "../route-types.ts";

export const account: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/account",
  auth: "signedQuery",
  query: [nonceQuery],
  ok: accountSchema, // serialize.account
  errors: SIGNED_GET,
  operationId: "account",
  summary: "The caller's uid and its balances of every currency of the configured pairs",
  source: "docs/API.md 20.4",
  handler: (ctx) => {
    const currencies = [...ctx.config.currencies.keys()];
    return (res, info, _pair, key) =>
      ok(
        ctx,
        res,
        info,
        serialize.account({
          uid: ctx.deps.users.uids[key!.userId],
          balances: balancesOf(ctx, key!.userId, currencies),
        }),
      );
  },
};
