/** Wire views of committed rows (src/protocol/rows.ts) that the read routes answer with. */
import type { ExchangeConfig } from "../config.ts";
import type { OrderView, UserTradeView } from "../exchange.ts";
import type { OrderRow, UserTradeRow } from "../protocol/rows.ts";
import { orderView, userTradeView } from "../views.ts";

export function orderRowView(o: OrderRow, config: ExchangeConfig, withUpdate = false): OrderView {
  const facts = { ...o, used: o.amountUsed, cancelled: !!o.isCancelled };
  return orderView(config.pairsByName.get(o.pair)!, facts, withUpdate);
}

export function tradeRowView(t: UserTradeRow, config: ExchangeConfig): UserTradeView {
  return userTradeView(config.pairsByName.get(t.pair)!, t);
}
