/** docs/API.md 7.10 `GET /trade/pairs/user-history`: the caller's trades over all pairs, paginated. */

import { tradeRowView } from "../../entry/row-views.ts";
import { pageParams, userPointFilter } from "../../entry/validate.ts";
import { Code } from "../../errors/catalogue.ts";
import { sendError } from "../../wire/request.ts";
import { serialize, tradesPageSchema } from "../../wire/schemas.ts";
import { ok } from "../route-steps.ts";
import { type GetRoute, nonceQuery, pageQuery, pointQuery, SIGNED_GET } from "../route-types.ts";

export const userHistory: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/pairs/user-history",
  auth: "signedQuery",
  query: [...pageQuery, ...pointQuery, nonceQuery],
  ok: tradesPageSchema, // serialize.tradesPage
  errors: SIGNED_GET,
  operationId: "userHistory",
  summary:
    "The caller's trades over all pairs (or one), newest first, paginated; or from a point, oldest first",
  source: "docs/API.md 7.10, 20.3",
  handler: (ctx) => {
    const { config, reader, finish } = ctx;
    return (res, info, _pair, key) => {
      const pp = pageParams(info.query);
      if (typeof pp === "number") return sendError(res, info, pp, finish);
      // docs/API.md 20.3: a page from a point; without these parameters, the page of 7.10 as before.
      const filter = userPointFilter(info.query, config);
      if (typeof filter === "number") return sendError(res, info, filter, finish);
      reader.userTrades(key!.userId, pp[0], pp[1], filter).then(
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
