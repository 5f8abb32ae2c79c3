/** docs/API.md 9 `GET /info`: the server's clock and every pair's trading rules, in config order. */

import { PAIR_STATUS_NAMES, type PairStatusName } from "../../core/pair-status.ts";
import { FEE_DECIMALS } from "../../core/risk.ts";
import { formatDecimal } from "../../util/numbers.ts";
import { infoSchema, serialize } from "../../wire/schemas.ts";
import { ok } from "../route-steps.ts";
import { type GetRoute, PUBLIC_GET } from "../route-types.ts";

export const venueInfo: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/info",
  auth: "none",
  ok: infoSchema, // serialize.info
  errors: PUBLIC_GET,
  operationId: "info",
  summary: "Server time and every pair's trading rules, in config order",
  source: "docs/API.md 9, 11",
  handler: (ctx) => {
    // Everything but the clock and the statuses is fixed at start: built once.
    const infoPairs = ctx.config.pairs.map((p) => ({
      name: p.name,
      base: p.base,
      quote: p.quote,
      priceDecimals: p.priceDecimals,
      amountDecimals: p.amountDecimals,
      tickSize: formatDecimal(1n, p.priceDecimals),
      stepSize: formatDecimal(1n, p.amountDecimals),
      minAmount: formatDecimal(p.minAmount, p.amountDecimals),
      maxAmount: formatDecimal(p.maxAmount, p.amountDecimals),
      maxPrice: formatDecimal(p.maxPrice, p.priceDecimals),
      minNotional: formatDecimal(p.minNotional, p.priceDecimals + p.amountDecimals),
      makerFee: formatDecimal(p.makerFee, FEE_DECIMALS),
      takerFee: formatDecimal(p.takerFee, FEE_DECIMALS),
      status: "trading" as PairStatusName,
    }));
    const { statuses } = ctx.exchange;
    return (res, info) => {
      for (const p of ctx.config.pairs) infoPairs[p.index].status = PAIR_STATUS_NAMES[statuses.get(p.index)];
      ok(ctx, res, info, serialize.info({ serverTime: Date.now(), pairs: infoPairs }));
    };
  },
};
