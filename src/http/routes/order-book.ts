/** docs/API.md 7.6 `GET /trade/pairs/{pairName}/orders`: the aggregated book with its `seq` (12.3). */
import type { PairConfig } from "../../config/exchange-config.ts";
import { BOOK_LIMIT_MAX } from "../../entry/limits.ts";
import { queryInteger } from "../../entry/validate.ts";
import { Code } from "../../errors/catalogue.ts";
import { sendError } from "../../wire/request.ts";
import { bookLimitParam } from "../../wire/request-schemas.ts";
import { bookSchema, serialize } from "../../wire/schemas.ts";
import { ok } from "../route-steps.ts";
import { type GetRoute, PUBLIC_GET_PAIR } from "../route-types.ts";

/** "Every level": the book without `?limit=`. */
const ALL = 1_000_000;

export const orderBook: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/pairs/{pairName}/orders",
  auth: "none",
  query: [
    {
      name: "limit",
      description: "1..1000: the best N levels of each side (default all)",
      schema: bookLimitParam,
    },
  ],
  ok: bookSchema, // serialize.book
  errors: [400, ...PUBLIC_GET_PAIR],
  operationId: "orderBook",
  summary: "Aggregated order book: sell ascending, buy descending",
  source: "docs/API.md 7.6, 5.3, 12.3 (seq), 12.5 (checksum)",
  handler: (ctx) => {
    const { exchange, finish } = ctx;
    // The whole book's body per pair, kept until the book changes (its version moves).
    const bookCache = new Map<number, { version: number; body: string }>();
    const bookBody = (p: PairConfig, limit: number): string => {
      const m = exchange.market(p.index);
      if (limit >= ALL) {
        const cached = bookCache.get(p.index);
        if (cached !== undefined && cached.version === m.bookVersion) return cached.body;
      }
      // docs/API.md 7.6: the checksum covers the best 25 levels of the whole book, whatever the limit.
      const body = serialize.book({
        buy: m.levels(0, limit),
        sell: m.levels(1, limit),
        seq: m.seq,
        checksum: m.checksum(),
        time: m.bookTime,
      });
      if (limit >= ALL) bookCache.set(p.index, { version: m.bookVersion, body });
      return body;
    };
    return (res, info, pair) => {
      let limit = ALL;
      if (info.query !== "") {
        const l = new URLSearchParams(info.query).get("limit");
        if (l !== null) {
          limit = queryInteger(l);
          if (limit < 0) return sendError(res, info, Code.LIMIT_INVALID, finish);
          if (limit < 1 || limit > BOOK_LIMIT_MAX)
            return sendError(res, info, Code.LIMIT_OUT_OF_RANGE, finish);
        }
      }
      ok(ctx, res, info, bookBody(pair!, limit));
    };
  },
};
