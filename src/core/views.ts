/**
 * One view per wire type (interface 2.1 order, 2.5 user trade), built the same way from the core's
 * live state and from stored rows: REST answers, pages, the pair page and stream messages all show
 * an object through the function here.
 */

import { BUY } from "../protocol/pair/engine.ts";
import { formatDecimal, formatDigits, scaled } from "../util/numbers.ts";
import { formatDateTime } from "../util/time.ts";
import { type SelfTradePrevention, type TimeInForce, withOrderOptions } from "./order-options.ts";
import type { StopFacts } from "./record-sink.ts";
import { FEE_DECIMALS } from "./risk.ts";

/** The order as the interface shows it (2.1). */
export interface OrderView {
  id: number;
  pairName: string;
  tradeType: "limit" | "market";
  directionType: "buy" | "sell";
  price: number;
  amount: number;
  amountUsed: number;
  isCancelled: boolean;
  createTime: string;
  updateTime?: string;
  clientOrderId?: string;
  timeInForce?: TimeInForce;
  postOnly?: true;
  cancelOnDisconnect?: true;
  mmp?: true;
  selfTradePrevention?: SelfTradePrevention;
  quote?: true;
  /** docs/API.md 18: a stop order's stop price and direction, whether it triggered, and when. */
  stopPrice?: number;
  /** docs/API.md 18: a trailing stop's delta. */
  trailingDelta?: number;
  stopDirection?: "up" | "down";
  triggered?: boolean;
  triggerTime?: string;
  /** docs/API.md 18: why a triggered order ended cancelled whole, or an OCO leg cancelled by its sibling. */
  cancelReason?: CancelReason;
  /** docs/API.md 18: both legs of an OCO carry its id (the limit leg's). */
  ocoId?: number;
  /** docs/API.md 16: the number of the order's latest change in its user's execution sequence. */
  execSeq: number;
  /**
   * docs/API.md 5.1: the quote its fills executed, as exact decimal text; it goes on the wire as a
   * JSON number with these very digits (schemas.ts `exactNumbers`), as `fee` does.
   */
  executedQuote: string;
}

/** A user's trade as the interface shows it (2.5). */
export interface UserTradeView {
  id: number;
  pairName: string;
  tradeType: "limit" | "market";
  directionType: "buy" | "sell";
  price: number;
  amount: number;
  tradeTime: string;
  /** docs/API.md 9: what this side paid (0 with no fee), in `feeCurrency` (buyer: base, seller: quote). */
  /**
   * The fee as exact decimal text; it goes on the wire as a JSON number with these very digits
   * (schemas.ts `exactFees`), since a double keeps only about 15 significant digits.
   */
  fee: string;
  feeCurrency: string;
  /** docs/API.md 16: the trade's number in this user's execution sequence. */
  execSeq: number;
  /** docs/API.md 20: this user's order in the trade. */
  orderId: number;
  /** docs/API.md 20: whether this user's order was resting (maker) or incoming (taker). */
  liquidity: "maker" | "taker";
}

/** What a view needs to know of a pair. */
export interface ViewPair {
  name: string;
  base: string;
  quote: string;
  priceDecimals: number;
  amountDecimals: number;
}

/** An order's facts in book units (ticks, lots, microseconds): the core's OrderState is one. */
export interface OrderFacts extends StopFacts {
  id: number;
  /** 0 limit, 1 market. */
  type: number;
  /** 0 buy, 1 sell. */
  side: number;
  price: number;
  amount: number;
  used: number;
  cancelled: boolean;
  createMicro: number;
  updateMicro: number;
  flags: number;
  clientOrderId: string | null | undefined;
  /** The number of its latest change in its user's execution sequence (0: none yet). */
  execSeq: number;
  /**
   * Ticks × lots its fills executed: a bigint (the core's live state) or its decimal digits (a
   * stored row, migration 013).
   */
  executed: bigint | string;
}

/** docs/API.md 18 `cancelReason`. */
export type CancelReason = "NO_LIQUIDITY" | "INSUFFICIENT_FUNDS" | "NOTIONAL_BELOW_MIN" | "OCO";
/** The names of the engine's done reasons 6 to 9 (src/protocol/pair/engine.ts). */
const CANCEL_REASONS: readonly (CancelReason | undefined)[] = [
  undefined,
  undefined,
  undefined,
  undefined,
  undefined,
  undefined,
  "NO_LIQUIDITY",
  "INSUFFICIENT_FUNDS",
  "NOTIONAL_BELOW_MIN",
  "OCO",
];

/** docs/API.md 5.1: the order as the interface shows it, with `updateTime` when asked (the section 8 options when set). */
export function orderView(p: ViewPair, o: OrderFacts, withUpdate: boolean): OrderView {
  const v: OrderView = {
    id: o.id,
    pairName: p.name,
    tradeType: o.type === 0 ? "limit" : "market",
    directionType: o.side === BUY ? "buy" : "sell",
    price: scaled(o.price, p.priceDecimals),
    amount: scaled(o.amount, p.amountDecimals),
    amountUsed: scaled(o.used, p.amountDecimals),
    isCancelled: o.cancelled,
    createTime: formatDateTime(o.createMicro),
    execSeq: o.execSeq,
    executedQuote: executedQuote(o.executed, p.priceDecimals + p.amountDecimals),
  };
  if (withUpdate) v.updateTime = formatDateTime(o.updateMicro);
  withOrderOptions(v, o.flags, o.clientOrderId);
  if (o.stopDirection !== 0) withStop(v, p, o);
  if (o.ocoId !== 0) {
    v.ocoId = o.ocoId;
    // The limit leg has no stop fields; it shows its cancel reason all the same.
    const reason = CANCEL_REASONS[o.cancelReason];
    if (reason !== undefined) v.cancelReason = reason;
  }
  return v;
}

/** docs/API.md 18: a stop order's fields. */
function withStop(v: OrderView, p: ViewPair, o: OrderFacts): void {
  // A trailing stop's current stop price (none until the pair's first trade).
  if (o.trailingDelta === 0 || o.stopPrice !== 0) v.stopPrice = scaled(o.stopPrice, p.priceDecimals);
  if (o.trailingDelta > 0) v.trailingDelta = scaled(o.trailingDelta, p.priceDecimals);
  v.stopDirection = o.stopDirection === 1 ? "up" : "down";
  const t = o.triggerMicro;
  v.triggered = t > 0;
  if (t > 0) v.triggerTime = formatDateTime(t);
  const reason = CANCEL_REASONS[o.cancelReason];
  if (reason !== undefined) v.cancelReason = reason;
}

/**
 * docs/API.md 5.1 `executedQuote`: ticks × lots as the decimal they are in the quote currency
 * (10^-(priceDecimals + amountDecimals) each: the value the ledger moved, at its own scale).
 */
function executedQuote(executed: bigint | string, scale: number): string {
  if (typeof executed === "string") return formatDigits(executed, scale);
  return executed === 0n ? "0" : formatDecimal(executed, scale);
}

/** One side of a trade (a stored user-trade row is one). */
export interface TradeSideFacts {
  /** The trade id. */
  id: number;
  side: number;
  type: number;
  price: number;
  amount: number;
  timeMicro: number;
  /** This side's fee rate in units of 10^-FEE_DECIMALS. */
  feeRate: number;
  /** The trade's number in this side's user's execution sequence. */
  execSeq: number;
  /** This side's order. */
  orderId: number;
  /** 1 (or true) when this side was the maker. */
  maker: number | boolean;
}

/** docs/API.md 5.5: a trade from one user's side, with its fee. */
export function userTradeView(p: ViewPair, t: TradeSideFacts): UserTradeView {
  const { fee, feeCurrency } = tradeFee(p, t.side, t.feeRate, t.price, t.amount);
  return {
    id: t.id,
    pairName: p.name,
    tradeType: t.type === 0 ? "limit" : "market",
    directionType: t.side === BUY ? "buy" : "sell",
    price: scaled(t.price, p.priceDecimals),
    amount: scaled(t.amount, p.amountDecimals),
    tradeTime: formatDateTime(t.timeMicro),
    fee,
    feeCurrency,
    execSeq: t.execSeq,
    orderId: t.orderId,
    liquidity: t.maker ? "maker" : "taker",
  };
}

/**
 * The fee of one side of a trade (docs/API.md 9), as the views show it: the buyer pays `rate` of the
 * base it receives, the seller `rate` of the quote. Exact: computed in integers and printed from
 * the exact decimal (`rate` is in units of 10^-6, so the fee has 6 more decimals than the amount).
 */
export function tradeFee(
  spec: Pick<ViewPair, "base" | "quote" | "priceDecimals" | "amountDecimals">,
  side: number,
  rate: number,
  price: number,
  qty: number,
): { fee: string; feeCurrency: string } {
  const feeCurrency = side === BUY ? spec.base : spec.quote;
  if (rate === 0) return { fee: "0", feeCurrency };
  const fee =
    side === BUY
      ? formatDecimal(BigInt(qty) * BigInt(rate), spec.amountDecimals + FEE_DECIMALS)
      : formatDecimal(
          BigInt(price) * BigInt(qty) * BigInt(rate),
          spec.priceDecimals + spec.amountDecimals + FEE_DECIMALS,
        );
  return { fee, feeCurrency };
}
