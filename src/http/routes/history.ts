/**
 * docs/API.md 7.7 `GET /trade/pairs/{pairName}/history`: the pair's last 200 trades, newest first;
 * 20.3: from a point (`since`, `fromId`) oldest first, at most `limit`.
 */

import { HISTORY_LIMIT_DEFAULT, HISTORY_LIMIT_MAX } from "../../entry/limits.ts";
import { historyLimit, pointParams } from "../../entry/validate.ts";
import { Code } from "../../errors/catalogue.ts";
import { sendError } from "../../wire/request.ts";
import { fromIdParam, historyLimitParam, sinceParam } from "../../wire/request-schemas.ts";
import { historySchema, serialize } from "../../wire/schemas.ts";
import { ok } from "../route-steps.ts";
import { type GetRoute, PUBLIC_GET_PAIR } from "../route-types.ts";

export const history: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/pairs/{pairName}/history",
  auth: "none",
  query: [
    {
      name: "since",
      description: "Unix ms: the trades at or after it, oldest first (docs/API.md 20.3)",
      schema: sinceParam,
    },
    {
      name: "fromId",
      description: "A trade id: the trades with that id or above, oldest first (docs/API.md 20.3)",
      schema: fromIdParam,
    },
    {
      name: "limit",
      description: `At most this many trades, 1..${HISTORY_LIMIT_MAX} (default ${HISTORY_LIMIT_DEFAULT})`,
      schema: historyLimitParam,
    },
  ],
  ok: historySchema, // serialize.history
  errors: [400, ...PUBLIC_GET_PAIR],
  operationId: "history",
  summary: "The last 200 trades of the pair, newest first; or from a point, oldest first",
  source: "docs/API.md 7.7, 20.3",
  handler: (ctx) => {
    const { exchange, config, reader, finish } = ctx;
    return (res, info, pair) => {
      const market = exchange.market(pair!.index);
      // The last HISTORY_LIMIT_DEFAULT trades are held in memory: the usual read touches no database.
      if (info.query === "") return ok(ctx, res, info, serialize.history(market.history));
      const q = new URLSearchParams(info.query);
      const point = pointParams(q, config, false);
      if (typeof point === "number") return sendError(res, info, point, finish);
      const limit = historyLimit(q);
      if (limit < 0) return sendError(res, info, -limit, finish);
      const fromPoint = point.sinceMicro !== null || point.fromId !== null;
      if (!fromPoint && limit <= HISTORY_LIMIT_DEFAULT)
        return ok(ctx, res, info, serialize.history(market.history.slice(0, limit)));
      reader.pairTrades({ pair: pair!.name, sinceMicro: point.sinceMicro, fromId: point.fromId, limit }).then(
        (rows) =>
          ok(
            ctx,
            res,
            info,
            serialize.history(
              rows.map((t) =>
                market.publicTrade(
                  t.takerSide as 0 | 1,
                  t.takerType as 0 | 1,
                  t.price,
                  t.amount,
                  t.timeMicro,
                  t.id,
                ),
              ),
            ),
          ),
        (err) => sendError(res, info, Code.INTERNAL, finish, undefined, err),
      );
    };
  },
};
