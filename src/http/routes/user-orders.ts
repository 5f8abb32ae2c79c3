/** docs/API.md 7.9 `GET /trade/pairs/{pairName}/user-orders`: the caller's orders, all pairs, by page. */

import { orderRowView } from "../../entry/row-views.ts";
import { pageParams } from "../../entry/validate.ts";
import { Code } from "../../errors/catalogue.ts";
import { sendError } from "../../wire/request.ts";
import { ordersPageSchema, serialize } from "../../wire/schemas.ts";
import { ok } from "../route-steps.ts";
import { type GetRoute, nonceQuery, pageQuery, SIGNED_GET_PAIR } from "../route-types.ts";

export const userOrders: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/pairs/{pairName}/user-orders",
  auth: "signedQuery",
  query: [...pageQuery, nonceQuery],
  ok: ordersPageSchema, // serialize.ordersPage
  errors: SIGNED_GET_PAIR,
  operationId: "userOrders",
  summary: "The caller's orders over all pairs, newest first, paginated",
  source: "docs/API.md 7.9",
  handler: (ctx) => {
    const { config, reader, finish } = ctx;
    return (res, info, _pair, key) => {
      const pp = pageParams(info.query);
      if (typeof pp === "number") return sendError(res, info, pp, finish);
      reader.userOrders(key!.userId, pp[0], pp[1]).then(
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
