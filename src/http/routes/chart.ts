/** docs/API.md 7.5 `GET /trade/pairs/{pairName}/chart/{period}`: candles (5.7), oldest first. */

import { PERIODS, type Period } from "../../core/read-models/pair-market.ts";
import { CHART_LIMIT_DEFAULT, CHART_LIMIT_MAX } from "../../entry/limits.ts";
import { queryInteger } from "../../entry/validate.ts";
import { Code } from "../../errors/catalogue.ts";
import { sendError } from "../../wire/request.ts";
import { chartLimitParam, timeParam } from "../../wire/request-schemas.ts";
import { chartSchema, serialize } from "../../wire/schemas.ts";
import { ok } from "../route-steps.ts";
import { type GetRoute, PUBLIC_GET_PAIR } from "../route-types.ts";

export const chart: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/pairs/{pairName}/chart/{period}",
  auth: "none",
  query: [
    {
      name: "limit",
      description: "1..1000 (default 500): the newest N candles",
      schema: chartLimitParam,
    },
    {
      name: "from",
      description: "Unix ms, inclusive, by candle start; not after `to` (else 400 `errors.from`)",
      schema: timeParam,
    },
    { name: "to", description: "Unix ms, inclusive, by candle start", schema: timeParam },
  ],
  ok: chartSchema, // serialize.chart
  errors: [400, ...PUBLIC_GET_PAIR],
  operationId: "chart",
  summary: "Candles of intervals that hold a trade, oldest first",
  source: "docs/API.md 7.5",
  handler: (ctx) => {
    const { exchange, finish } = ctx;
    return (res, info, pair, _key, period) => {
      if (!(PERIODS as readonly string[]).includes(period))
        return sendError(res, info, Code.PERIOD_UNKNOWN, finish);
      const q = new URLSearchParams(info.query);
      let limit = CHART_LIMIT_DEFAULT;
      let from = Number.NEGATIVE_INFINITY;
      let to = Number.POSITIVE_INFINITY;
      const l = q.get("limit");
      if (l !== null) {
        limit = queryInteger(l);
        if (limit < 0) return sendError(res, info, Code.LIMIT_INVALID, finish);
        if (limit < 1 || limit > CHART_LIMIT_MAX)
          return sendError(res, info, Code.LIMIT_OUT_OF_RANGE, finish);
      }
      const f = q.get("from");
      if (f !== null) {
        from = queryInteger(f);
        if (from < 0) return sendError(res, info, Code.FROM_INVALID, finish);
      }
      const t = q.get("to");
      if (t !== null) {
        to = queryInteger(t);
        if (to < 0) return sendError(res, info, Code.TO_INVALID, finish);
      }
      if (from > to) return sendError(res, info, Code.FROM_AFTER_TO, finish);
      ok(
        ctx,
        res,
        info,
        serialize.chart(exchange.market(pair!.index).chart(period as Period, limit, from, to)),
      );
    };
  },
};
