/** docs/API.md 7.6.1 `GET /trade/pairs/{pairName}/bbo`: the best bid and offer, with the book's seq. */

import { bboSchema, serialize } from "../../wire/schemas.ts";
import { ok } from "../route-steps.ts";
import { type GetRoute, PUBLIC_GET_PAIR } from "../route-types.ts";

export const bbo: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/pairs/{pairName}/bbo",
  auth: "none",
  ok: bboSchema, // serialize.bbo
  errors: PUBLIC_GET_PAIR,
  operationId: "bbo",
  summary: "Best bid and offer: price and aggregate amount of each side (0: empty), with the book seq",
  source: "docs/API.md 7.6.1",
  description:
    "The same object as the `bbo:{pair}` stream channel sends. `eventTimeMicro`: the time of the book " +
    'change `seq`, "0" for a book that never changed.',
  handler: (ctx) => {
    const exchange = ctx.exchange;
    return (res, info, pair) => ok(ctx, res, info, serialize.bbo(exchange.market(pair!.index).bbo()));
  },
};
