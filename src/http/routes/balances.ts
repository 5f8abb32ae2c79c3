/** seed 4.8 `GET /trade/pairs/{pairName}/user-balances`: available and reserved (CONTRACT 2.3). */
import { formatDecimal } from "../../util/numbers.ts";
import { type GetRoute, nonceQuery, ok, SIGNED_GET_PAIR } from "../route.ts";
import { balancesSchema, serialize } from "../schemas.ts";

export const balances: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/pairs/{pairName}/user-balances",
  auth: "signedQuery",
  query: [nonceQuery],
  ok: balancesSchema, // serialize.balances
  errors: SIGNED_GET_PAIR,
  operationId: "balances",
  summary: "The caller's available and reserved balances of the pair's two currencies",
  source: "seed 4.8; CONTRACT 2.3",
  handler: (ctx) => {
    const { config, exchange } = ctx;
    return (res, info, pair, key) => {
      const ledger = exchange.ledger;
      const out = [pair!.base, pair!.quote].map((currency) => {
        const c = ledger.currencyIndex(currency);
        const scale = config.currencies.get(currency)!.scale;
        const has = ledger.hasUser(key!.userId);
        return {
          currency,
          balance: formatDecimal(has ? ledger.available(key!.userId, c) : 0n, scale),
          reserved: formatDecimal(has ? ledger.reserved(key!.userId, c) : 0n, scale),
        };
      });
      ok(ctx, res, info, serialize.balances(out));
    };
  },
};
