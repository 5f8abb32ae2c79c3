/** Wire views of committed rows (src/protocol/db/rows.ts) that the read routes answer with. */
import type { ExchangeConfig } from "../config/exchange-config.ts";
import type { OrderView, UserTradeView } from "../core/exchange.ts";
import { type OrderFacts, orderView, userTradeView } from "../core/views.ts";
import type { OrderRow, UserTradeRow } from "../protocol/db/rows.ts";

export function orderRowView(o: OrderRow, config: ExchangeConfig, withUpdate = false): OrderView {
  // Every field named, in one literal: `{ ...o, used, cancelled }` of a row that came from the
  // reader thread gave each copy a map of its own, so orderView's loads went megamorphic for the
  // live orders of create-order too (BENCHMARKS.md, "Changes kept").
  const facts: OrderFacts = {
    id: o.id,
    type: o.type,
    side: o.side,
    price: o.price,
    amount: o.amount,
    used: o.amountUsed,
    cancelled: !!o.isCancelled,
    createMicro: o.createMicro,
    updateMicro: o.updateMicro,
    flags: o.flags,
    clientOrderId: o.clientOrderId,
    execSeq: o.execSeq,
    executed: o.executedQuote,
    stopPrice: o.stopPrice,
    stopDirection: o.stopDirection,
    triggerMicro: o.triggerMicro,
    cancelReason: o.cancelReason,
    trailingDelta: o.trailingDelta,
    ocoId: o.ocoId,
  };
  return orderView(config.pairsByName.get(o.pair)!, facts, withUpdate);
}

export function tradeRowView(t: UserTradeRow, config: ExchangeConfig): UserTradeView {
  return userTradeView(config.pairsByName.get(t.pair)!, t);
}
