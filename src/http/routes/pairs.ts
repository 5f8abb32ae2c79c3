/** docs/API.md 7.3 `GET /trade/pairs`: the 24 h record (ticker) of every pair, in config order. */
import { nowMicro } from "../../util/time.ts";
import { pairsSchema, serialize } from "../../wire/schemas.ts";
import { ok } from "../route-steps.ts";
import { type GetRoute, PUBLIC_GET } from "../route-types.ts";

export const pairs: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/pairs",
  auth: "none",
  ok: pairsSchema, // serialize.pairs
  errors: PUBLIC_GET,
  operationId: "pairs",
  summary: "24 h exchange records of every pair, in config order",
  source: "docs/API.md 7.3",
  handler: (ctx) => {
    const { exchange } = ctx;
    const list = ctx.config.pairs;
    return (res, info) => {
      const now = nowMicro();
      const out = list.map((p) => {
        const m = exchange.market(p.index);
        const rec = m.exchange(now) as ReturnType<typeof m.exchange> & {
          closeBidValue: number;
          closeAskValue: number;
        };
        rec.closeBidValue = m.bids.size > 0 ? m.levels(0, 1)[0].price : 0;
        rec.closeAskValue = m.asks.size > 0 ? m.levels(1, 1)[0].price : 0;
        return rec;
      });
      ok(ctx, res, info, serialize.pairs(out));
    };
  },
};
