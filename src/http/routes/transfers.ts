/** docs/API.md 7.11 `GET /trade/transfers`: the caller's deposits and withdrawals, paginated as 7.9. */
import type { ExchangeConfig } from "../../config/exchange-config.ts";
import { pageParams } from "../../entry/validate.ts";
import { Code } from "../../errors/catalogue.ts";
import type { TransferRow } from "../../protocol/db/rows.ts";
import { formatDecimal } from "../../util/numbers.ts";
import { formatDateTime } from "../../util/time.ts";
import { sendError } from "../../wire/request.ts";
import { serialize, transfersPageSchema } from "../../wire/schemas.ts";
import { ok } from "../route-steps.ts";
import { type GetRoute, nonceQuery, pageQuery, SIGNED_GET } from "../route-types.ts";

export const transfers: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/transfers",
  auth: "signedQuery",
  query: [...pageQuery, nonceQuery],
  ok: transfersPageSchema, // serialize.transfersPage
  errors: SIGNED_GET,
  operationId: "transfers",
  summary: "The caller's deposits and withdrawals, newest first, paginated",
  source: "docs/API.md 7.11",
  description:
    "Every deposit and withdrawal of the caller (credits from the config file are deposits), newest " +
    "first; ids are one increasing sequence over all users. `amount` is a decimal string without sign.",
  handler: (ctx) => {
    const { config, reader, finish } = ctx;
    return (res, info, _pair, key) => {
      const pp = pageParams(info.query);
      if (typeof pp === "number") return sendError(res, info, pp, finish);
      reader.userTransfers(key!.userId, pp[0], pp[1]).then(
        (r) =>
          ok(
            ctx,
            res,
            info,
            serialize.transfersPage({ total: r.total, items: r.items.map((t) => transferView(t, config)) }),
          ),
        () => sendError(res, info, Code.INTERNAL, finish),
      );
    };
  },
};

/** A stored transfer as the caller sees it: the kind as `type`, the amount unsigned in decimals. */
export function transferView(t: TransferRow, config: ExchangeConfig) {
  const units = BigInt(t.amount);
  // A currency the config no longer names is shown in its stored units.
  const scale = config.currencies.get(t.currency)?.scale ?? 0;
  return {
    id: t.id,
    type: t.kind,
    currency: t.currency,
    amount: formatDecimal(units < 0n ? -units : units, scale),
    time: formatDateTime(t.timeMicro),
  };
}
