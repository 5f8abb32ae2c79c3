/** docs/API.md 7.4 `GET /trade/pairs/{pairName}`: the initial data of a pair page, optionally signed. */

import type { OrderView, UserTradeView } from "../../core/exchange.ts";
import { orderRowView, tradeRowView } from "../../entry/row-views.ts";
import { Code } from "../../errors/catalogue.ts";
import { nowMicro } from "../../util/time.ts";
import { sendError } from "../../wire/request.ts";
import { pairPageSchema, serialize } from "../../wire/schemas.ts";
import { ok } from "../route-steps.ts";
import { type GetRoute, nonceQuery, SIGNED_GET_PAIR } from "../route-types.ts";

export const pairPage: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/pairs/{pairName}",
  auth: "optionalSignedQuery",
  // Without auth headers the call is public and its query is not read.
  query: [{ ...nonceQuery, description: `${nonceQuery.description}; read only when the call is signed` }],
  ok: pairPageSchema, // serialize.pairPage
  errors: SIGNED_GET_PAIR,
  operationId: "pairPage",
  summary: "Initial data of a pair page",
  source: "docs/API.md 7.4",
  description:
    "Without auth headers `userOrders` and `userHistory` are null; with headers that fail: 401. " +
    "`userOrders` / `userHistory`: the caller's 20 newest, over all pairs.",
  handler: (ctx) => {
    const { config, exchange, reader, finish } = ctx;
    const list = config.pairs;
    return (res, info, pair, key) => {
      const m = exchange.market(pair!.index);
      const now = nowMicro();
      const page = {
        exchanges: list.map((p) => exchange.market(p.index).exchange(now)),
        orders: {
          buy: m.levels(0, 1_000_000),
          sell: m.levels(1, 1_000_000),
          seq: m.seq,
          checksum: m.checksum(),
          time: m.bookTime,
        },
        history: m.history,
        userOrders: null as OrderView[] | null,
        userHistory: null as UserTradeView[] | null,
      };
      if (key === null) return ok(ctx, res, info, serialize.pairPage(page));
      reader.recentForUser(key.userId, 20).then(
        (r) => {
          page.userOrders = r.orders.map((o) => orderRowView(o, config));
          page.userHistory = r.trades.map((t) => tradeRowView(t, config));
          ok(ctx, res, info, serialize.pairPage(page));
        },
        (err) => sendError(res, info, Code.INTERNAL, finish, undefined, err),
      );
    };
  },
};
