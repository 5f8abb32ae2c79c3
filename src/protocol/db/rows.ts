/**
 * Row shapes returned by recovery (`recovery.ts`) and the page reader (`reader.ts`): plain
 * objects with integer fields in internal units (ticks, lots, microseconds); the HTTP edge
 * formats them. Side 0 buy / 1 sell; type 0 limit / 1 market.
 */

export interface OrderRow {
  id: number;
  userId: number;
  pair: string;
  side: number;
  type: number;
  /** Ticks; for a market order its average execution price (0 until it fills). */
  price: number;
  amount: number;
  amountUsed: number;
  isCancelled: boolean;
  createMicro: number;
  updateMicro: number;
  /** The order's options (src/core/order-options.ts). */
  flags: number;
  clientOrderId: string | null;
  /** The number of its latest change in its user's execution sequence (migration 011; 0: none). */
  execSeq: number;
  /** Ticks × lots its fills executed, as the digits of the integer (migration 013). */
  executedQuote: string;
  /** docs/API.md 18 (migration 015): stop price in ticks and direction (1 up, 2 down); 0: no stop. */
  stopPrice: number;
  stopDirection: number;
  /** When the stop triggered (µs), 0 while it waits; why it ended cancelled whole (0: no such reason). */
  triggerMicro: number;
  cancelReason: number;
  /** docs/API.md 18 (migration 016): a trailing stop's delta in ticks, 0 for any other order. */
  trailingDelta: number;
  /** docs/API.md 18 (migration 017): an OCO leg's OCO id (its limit leg's id), 0 for any other order. */
  ocoId: number;
}

/** A trade as stored (public history: direction and type are the taker's). */
export interface TradeRow {
  id: number;
  pair: string;
  price: number;
  amount: number;
  takerOrderId: number;
  makerOrderId: number;
  takerUserId: number;
  makerUserId: number;
  takerSide: number;
  takerType: number;
  makerType: number;
  /** The trade's eventTimeMicro. */
  timeMicro: number;
}

/** A trade seen by one of its users: that user's direction and order type. `id` is the trade id. */
export interface UserTradeRow {
  id: number;
  pair: string;
  side: number;
  type: number;
  price: number;
  amount: number;
  timeMicro: number;
  /** The fee rate this side paid, in units of 10^-6 (migration 003); 0 when none. */
  feeRate: number;
  /** The trade's number in this user's execution sequence (migration 011; 0: none). */
  execSeq: number;
  /** This user's order in the trade (migration 014). */
  orderId: number;
  /** 1 when this user's order was the maker, 0 the taker (migration 014). */
  maker: number;
}

/** A deposit or withdrawal as stored (docs/API.md 7.11): `amount` signed ledger units, as text. */
export interface TransferRow {
  id: number;
  currency: string;
  /** Ledger units of the currency as a signed integer text (withdrawals negative). */
  amount: string;
  kind: "deposit" | "withdraw";
  timeMicro: number;
}

export interface CandleRow {
  startMs: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

/** What an execution number numbers (an EXECUTION record's `kind`; in a block, a trade's ref is negative: migration 012). */
export const EXEC_ORDER = 0;
export const EXEC_TRADE = 1;

/** SELECT list producing an OrderRow (is_cancelled still 0/1: see `toOrderRow`). */
export const ORDER_COLUMNS = `id, user_id AS userId, pair, side, type, price, amount,
  amount_used AS amountUsed, is_cancelled AS isCancelled, create_micro AS createMicro,
  update_micro AS updateMicro, flags, client_order_id AS clientOrderId, exec_seq AS execSeq,
  executed_quote AS executedQuote, stop_price AS stopPrice, stop_direction AS stopDirection,
  trigger_micro AS triggerMicro, cancel_reason AS cancelReason, trailing_delta AS trailingDelta,
  oco_id AS ocoId`;

export const TRADE_COLUMNS = `id, pair, price, amount, taker_order_id AS takerOrderId,
  maker_order_id AS makerOrderId, taker_user_id AS takerUserId, maker_user_id AS makerUserId,
  taker_side AS takerSide, taker_type AS takerType, maker_type AS makerType, time_micro AS timeMicro`;

export const USER_TRADE_COLUMNS =
  "trade_id AS id, pair, side, type, price, amount, time_micro AS timeMicro, fee_rate AS feeRate, exec_seq AS execSeq, order_id AS orderId, maker";

export const TRANSFER_COLUMNS = "id, currency, amount, kind, time_micro AS timeMicro";

export const CANDLE_COLUMNS = "start_ms AS startMs, open, high, low, close, volume";

/** Turns the 0/1 of `is_cancelled` into a boolean, in place. */
export function toOrderRow(row: OrderRow): OrderRow {
  row.isCancelled = (row.isCancelled as unknown as number) !== 0;
  return row;
}
