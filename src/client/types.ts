/**
 * The wire types (docs/API.md 5, 12) as the client library sees them: orders,
 * trades, balances, the book and the stream's messages. Declared once, here: the client library
 * (index.ts, stream.ts, book.ts) re-exports them and the web page (web/src/) imports them, type
 * only. No runtime code, nothing from Node, so the page's build can include it.
 */

export type TradeType = "limit" | "market";
export type TimeInForce = "GTC" | "IOC" | "FOK";
export type DirectionType = "buy" | "sell";
/** docs/API.md 18: `up` triggers at a trade price >= stopPrice, `down` at <=. */
export type StopDirection = "up" | "down";
/** docs/API.md 8.11. */
export type SelfTradePrevention = "cancelMaker" | "cancelTaker" | "cancelBoth";

/** 2.1 Order as lists, pages and streams show it (no updateTime). */
export interface Order {
  /** docs/API.md 8: present only when the order has them. */
  clientOrderId?: string;
  timeInForce?: TimeInForce;
  postOnly?: true;
  cancelOnDisconnect?: true;
  /** docs/API.md 8.10: a protected order. */
  mmp?: true;
  /** docs/API.md 8.11: present when not cancelMaker. */
  selfTradePrevention?: "cancelTaker" | "cancelBoth";
  /** docs/API.md 8.12: placed by a mass quote (then also postOnly and mmp). */
  quote?: true;
  /** docs/API.md 18: a stop order's stop price and direction, and whether (and when) it triggered. */
  stopPrice?: number;
  /** docs/API.md 18: a trailing stop's delta (its stopPrice is the current one). */
  trailingDelta?: number;
  stopDirection?: StopDirection;
  triggered?: boolean;
  triggerTime?: string;
  /** docs/API.md 18: why a triggered order ended cancelled whole, or an OCO leg its sibling cancelled. */
  cancelReason?: "NO_LIQUIDITY" | "INSUFFICIENT_FUNDS" | "NOTIONAL_BELOW_MIN" | "OCO";
  /** docs/API.md 18: both legs of an OCO carry its id (the limit leg's). */
  ocoId?: number;
  id: number;
  pairName: string;
  tradeType: TradeType;
  directionType: DirectionType;
  price: number;
  amount: number;
  amountUsed: number;
  isCancelled: boolean;
  createTime: string;
  /** docs/API.md 16: the number of the order's latest change in its user's execution sequence. */
  execSeq: number;
  /**
   * docs/API.md 5.1: the quote amount its fills executed so far (price × amount summed over its
   * trades, fees excluded; 0 before any fill), so the average price is executedQuote / amountUsed.
   * Exact on the wire, but it may have more significant digits than a double keeps: read the body
   * with a decimal parser where that matters.
   */
  executedQuote: number;
}

/** docs/API.md 8.10: GET /trade/mmp, POST /trade/mmp and POST /trade/mmp/reset. */
export interface MmpState {
  pairName: string;
  intervalSeconds: number;
  /** Base amount as decimal text. */
  qtyLimit: string;
  frozenSeconds: number;
  frozen: boolean;
  /** Unix ms when the freeze ends; 0 when not frozen or frozen until a reset. */
  frozenUntil: number;
}

/** 2.1 Order as create-order answers it. */
export interface CreatedOrder extends Order {
  updateTime: string;
}

/** 2.2 Pair exchange record without the bid/ask fields (pair page). */
export interface ExchangeRecord {
  pairName: string;
  openValue: number;
  minValue: number;
  maxValue: number;
  closeValue: number;
  volume: number;
}

/** 2.2 as `GET /trade/pairs` answers it. */
export interface PairRecord extends ExchangeRecord {
  closeBidValue: number;
  closeAskValue: number;
}

/** 2.3 Aggregated order level. */
export interface Level {
  price: number;
  amount: number;
}

export interface OrderBook {
  buy: Level[];
  sell: Level[];
  /** docs/API.md 12.3: the book sequence of the state shown. */
  seq: number;
  /** docs/API.md 12.5: CRC-32 of the best 25 levels a side of the whole book (see checksum.ts). */
  checksum?: number;
  /** docs/API.md 20.2: Unix ms of the book's last change (0: never changed); REST book and pair page. */
  time?: number;
}

/** 2.4 Public trade history item. */
export interface PublicTrade {
  /** docs/API.md 20: the trade id. */
  id: number;
  directionType: DirectionType;
  tradeType: TradeType;
  price: number;
  amount: number;
  tradeTime: number;
  eventTimeMicro: string;
}

/** 2.5 The user's own trade. */
export interface UserTrade {
  id: number;
  pairName: string;
  tradeType: TradeType;
  directionType: DirectionType;
  price: number;
  amount: number;
  tradeTime: string;
  /** docs/API.md 9: what this side paid (0 without fees), in `feeCurrency`. */
  fee: number;
  feeCurrency: string;
  /** docs/API.md 16: the trade's number in this user's execution sequence. */
  execSeq: number;
  /** docs/API.md 20: this user's order in the trade. */
  orderId: number;
  /** docs/API.md 20: this user's order was resting (maker) or incoming (taker). */
  liquidity: "maker" | "taker";
}

/** docs/API.md 16: an item of the user's executions: an order at its latest change, or a trade. */
export type Execution =
  | { execSeq: number; event: "order"; data: Order }
  | { execSeq: number; event: "trade"; data: UserTrade };

/** docs/API.md 16: GET /trade/executions and the session call `executions`. */
export interface Executions {
  items: Execution[];
  /** The user's last committed execution number when the read was cut. */
  lastExecSeq: number;
  execEpoch: number;
}

/** docs/API.md 9: GET /info, one entry per pair. */
export interface PairInfo {
  name: string;
  base: string;
  quote: string;
  priceDecimals: number;
  amountDecimals: number;
  tickSize: string;
  stepSize: string;
  minAmount: string;
  maxAmount: string;
  maxPrice: string;
  /** docs/API.md 20.5: the minimum order value (price × amount) in the quote currency; "0": none. */
  minNotional: string;
  makerFee: string;
  takerFee: string;
  /** docs/API.md 9. */
  status: PairStatus;
}

/** docs/API.md 11: what a pair accepts. */
export type PairStatus = "trading" | "cancelOnly" | "halted";

/**
 * docs/API.md 11: one pair's status, as `POST /admin/pairs/status` answers it, as the `status` stream
 * channel sends it (all pairs on connect, then one per change) and as a trading session's
 * `pairStatus` event carries it.
 */
export interface PairStatusUpdate {
  pairName: string;
  status: PairStatus;
}

/** Balance item with `reserved` (docs/API.md 5.6). */
export interface Balance {
  currency: string;
  balance: string;
  reserved: string;
}

/** docs/API.md 20.4 GET /trade/account: the caller's uid and its balances of every configured currency. */
export interface Account {
  uid: string;
  balances: Balance[];
}

/** 2.7 Chart candle: [timestamp ms, open, min, max, close, volume]. */
export type Candle = [number, number, number, number, number, number];

/** 2.8 Page wrapper. */
export interface Page<T> {
  total: number;
  items: T[];
}

/** 4.4 Pair page. */
export interface PairPage {
  exchanges: ExchangeRecord[];
  orders: OrderBook;
  history: PublicTrade[];
  userOrders: Order[] | null;
  userHistory: UserTrade[] | null;
}

/** The error body (docs/API.md 4). */
export interface ErrorBody {
  errors: Record<string, string[]>;
  /** docs/API.md 4: one stable code per message, in the same order (docs/API-errors.md). */
  codes: Record<string, string[]>;
}

export interface NewUser {
  uid: string;
  apiToken: string;
  secretKey: string;
}

export interface NewApiKey {
  apiToken: string;
  secretKey: string;
}

/** docs/API.md 7.11: one deposit or withdrawal of GET /trade/transfers. */
export interface Transfer {
  id: number;
  type: "deposit" | "withdraw";
  currency: string;
  /** Decimal string, without sign. */
  amount: string;
  /** `YYYY-MM-DD HH:MM:SS` UTC. */
  time: string;
}

/** docs/API.md 11: GET /admin/users/{uid}. */
export interface AdminUser {
  uid: string;
  balances: Balance[];
  apiKeys: { apiTokenPrefix: string; revoked: boolean }[];
}

/** docs/API.md 11: POST /admin/backup. */
export interface BackupAnswer {
  /** The server's backup folder (`--backup-dir`), absolute. */
  dir: string;
  /** The copy's file name inside that folder. */
  file: string;
  bytes: number;
  /** The highest order (trade) id in the copy; 0 when none. */
  lastOrderId: number;
  lastTradeId: number;
}

/** docs/API.md 11: POST /admin/promote. */
export interface PromoteAnswer {
  role: "leader";
  /** The epoch the server now leads. */
  epoch: number;
  /** The old leader's journal key after which the epoch began. */
  began: number;
  /** Promoted with `force` while it could not vouch for holding every acknowledged change. */
  forced: boolean;
}

export interface BalanceAnswer {
  currency: string;
  balance: string;
}

/** A stream message (docs/API.md 12): the channel it came on and the channel's data. */
export interface StreamMessage<T = unknown> {
  stream: string;
  data: T;
  /** docs/API.md 16: on `user_orders` and `user_history`, the execution's number. */
  execSeq?: number;
}

/** A level of an `orders:{pair}` message: with the stream's time of the change (docs/API.md 12.4). */
export interface StreamLevel extends Level {
  eventTimeMicro?: string;
}

/** An `orders:{pair}` message's data: a snapshot or the changed levels (amount 0: gone). */
export interface BookData {
  buy: StreamLevel[];
  sell: StreamLevel[];
  seq?: number;
  /** docs/API.md 12.5: the checksum of the whole book after this message. */
  checksum?: number;
  /**
   * docs/API.md 20.2: Unix ms of the book's last change. The REST book carries it; a live book
   * (`OrderBookFeed`, the page's) gives the REST book's after a REST read and, after a stream
   * message, the millisecond of that message's levels' `eventTimeMicro`.
   */
  time?: number;
}

/**
 * docs/API.md 7.6.1: best bid and offer, `GET .../bbo` and each `bbo:{pair}` message. Price and
 * amount are 0 for an empty side; `eventTimeMicro` is "0" for a book that never changed.
 */
export interface Bbo {
  bid: number;
  bidAmount: number;
  ask: number;
  askAmount: number;
  /** The book seq (docs/API.md 12.3) of the change this is the result of. */
  seq: number;
  eventTimeMicro: string;
}

/** docs/API.md 7.6.2: one resting order of the L3 book (no owner is shown). */
export interface L3Order {
  id: number;
  price: number;
  /** The remaining amount. */
  amount: number;
}

/**
 * docs/API.md 7.6.2: `GET .../orders/l3` and the `orders_l3:{pair}` snapshot: every resting order,
 * each side in price priority (buy descending, sell ascending) and, within a price, time priority.
 */
export interface L3Snapshot {
  seq: number;
  buy: L3Order[];
  sell: L3Order[];
}

/**
 * docs/API.md 7.6.2: `open` (starts resting, with its remaining amount), `change` (new remaining amount,
 * same place in the queue), `done` (left the book, amount 0).
 */
export interface L3Event {
  type: "open" | "change" | "done";
  id: number;
  side: DirectionType;
  price: number;
  amount: number;
}

/** docs/API.md 7.6.2: one `orders_l3:{pair}` message after the snapshot: one book change. */
export interface L3Update {
  seq: number;
  events: L3Event[];
}

// ---- requests (docs/API.md 8) ----------------------------------------------------------------------

/** A decimal as the contract accepts it: a JSON number or a decimal string (docs/API.md 1). */
export type DecimalInput = number | string;

export interface CreateOrderRequest {
  pairName: string;
  tradeType: TradeType;
  directionType: DirectionType;
  price?: DecimalInput;
  amount: DecimalInput;
  /** docs/API.md 8.2: the client's own id, unique per user. */
  clientOrderId?: string;
  timeInForce?: TimeInForce;
  postOnly?: boolean;
  /** docs/API.md 8.10: a protected order (limit GTC only). */
  mmp?: boolean;
  /** docs/API.md 8.11 (default cancelMaker). */
  selfTradePrevention?: SelfTradePrevention;
  /** docs/API.md 18: a stop order: stopPrice or trailingDelta, with stopDirection. */
  stopPrice?: DecimalInput;
  stopDirection?: StopDirection;
  trailingDelta?: DecimalInput;
}

/**
 * docs/API.md 18 create-oco: a post-only limit leg at `price` and a stop leg at `stopPrice` (down
 * for a sell, up for a buy), a stop-limit at `stopLimitPrice` or else a stop-market.
 */
export interface CreateOcoRequest {
  pairName: string;
  directionType: DirectionType;
  amount: DecimalInput;
  price: DecimalInput;
  stopPrice: DecimalInput;
  stopLimitPrice?: DecimalInput;
  /** The limit leg's. */
  clientOrderId?: string;
}

/** docs/API.md 18: create-oco's answer, the limit leg then the stop leg. */
export interface CreatedOco {
  ocoId: number;
  orders: [CreatedOrder, CreatedOrder];
}

/** docs/API.md 8.3: the new total amount, the new price, or both. */
export interface AmendOrderRequest {
  orderId: number | string;
  amount?: DecimalInput;
  price?: DecimalInput;
  /** docs/API.md 18: a new stop price of a stop order that has not triggered. */
  stopPrice?: DecimalInput;
  /** docs/API.md 18: a new delta of a trailing stop order that has not triggered. */
  trailingDelta?: DecimalInput;
}

/** An element of the create-orders answer (docs/API.md 8.5): the order, or its errors. */
export type BatchOrderResult = CreatedOrder | ErrorBody;

/** docs/API.md 8.10 POST /trade/mmp. */
export interface MmpSettingsRequest {
  pairName: string;
  /** 1..3600, 0 disables. */
  intervalSeconds: number | string;
  /** A positive base amount; "0" only with intervalSeconds 0. */
  qtyLimit: DecimalInput;
  /** 0..3600; 0: frozen until a reset. */
  frozenSeconds: number | string;
}

/** docs/API.md 8.12: one quote level, `[price, amount]`. */
export type QuoteLevelInput = [DecimalInput, DecimalInput];

/** docs/API.md 8.12 answer: the ids cancelled (ascending), and per level (bids then asks) the order or its errors. */
export interface QuoteResult {
  cancelled: number[];
  placed: BatchOrderResult[];
}

/** An element of the cancel-orders answer (docs/API.md 8.5). */
export interface BatchCancelResult {
  orderId: number;
  errors?: Record<string, string[]>;
  codes?: Record<string, string[]>;
}
