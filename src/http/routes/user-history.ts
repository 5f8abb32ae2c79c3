/** docs/API.md 7.10 `GET /trade/pairs/user-history`: the caller's trades over all pairs, paginated. */

import { tradeRowView } from "../../entry/row-views.ts";
import { pageParams } from "../../entry/validate.ts";
import { Code } from "../../errors/catalogue.ts";
import { sendError } from "../../wire/request.ts";
import { serialize, tradesPageSchema } from "../../wire/schemas.ts";
import { ok } from "../route-steps.ts";
import { type GetRoute, nonceQuery, pageQuery, SIGNED_GET } from "../route-types.ts";

export const userHistory: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/pairs/user-history",
  auth: "signedQuery",
  query: [...pageQuery, nonceQuery],
  ok: tradesPageSchema, // serialize.tradesPage
  errors: SIGNED_GET,
  operationId: "userHistory",
  summary: "The caller's trades over all pairs, newest first, paginated",
  source: "docs/API.md 7.10",
  handler: (ctx) => {
    const { config, reader, finish } = ctx;
    return (res, info, _pair, key) => {
      const pp = pageParams(info.query);
      if (typeof pp === "number") return sendError(res, info, pp, finish);
      reader.userTrades(key!.userId, pp[0], pp[1]).then(
        (r) =>
          ok(
            ctx,
            res,
            info,
            serialize.tradesPage({ total: r.total, items: r.items.map((t) => tradeRowView(t, config)) }),
          ),
        (err) => sendError(res, info, Code.INTERNAL, finish, undefined, err),
      );
    };
  },
};
