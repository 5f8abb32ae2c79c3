/** docs/API.md 7.9 `GET /trade/pairs/{pairName}/user-orders`: the caller's orders, all pairs, by page. */

import { orderRowView } from "../../entry/row-views.ts";
import { pageParams, userPointFilter } from "../../entry/validate.ts";
import { Code } from "../../errors/catalogue.ts";
import { sendError } from "../../wire/request.ts";
import { ordersPageSchema, serialize } from "../../wire/schemas.ts";
import { ok } from "../route-steps.ts";
import { type GetRoute, nonceQuery, pageQuery, pointQuery, SIGNED_GET_PAIR } from "../route-types.ts";

export const userOrders: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/pairs/{pairName}/user-orders",
  auth: "signedQuery",
  query: [...pageQuery, ...pointQuery, nonceQuery],
  ok: ordersPageSchema, // serialize.ordersPage
  errors: SIGNED_GET_PAIR,
  operationId: "userOrders",
  summary:
    "The caller's orders over all pairs (or one), newest first, paginated; or from a point, oldest first",
  source: "docs/API.md 7.9, 20.3",
  handler: (ctx) => {
    const { config, reader, finish } = ctx;
    return (res, info, _pair, key) => {
      const pp = pageParams(info.query);
      if (typeof pp === "number") return sendError(res, info, pp, finish);
      // docs/API.md 20.3: a page from a point; without these parameters, the page of 7.9 as before.
      const filter = userPointFilter(info.query, config);
      if (typeof filter === "number") return sendError(res, info, filter, finish);
      reader.userOrders(key!.userId, pp[0], pp[1], filter).then(
        (r) =>
          ok(
            ctx,
            res,
            info,
            serialize.ordersPage({ total: r.total, items: r.items.map((o) => orderRowView(o, config)) }),
          ),
        (err) => sendError(res, info, Code.INTERNAL, finish, undefined, err),
      );
    };
  },
};
