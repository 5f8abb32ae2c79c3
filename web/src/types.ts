/** The wire records the page reads (interface 2.x, CONTRACT 9 `seq`); no DOM, so tests can import it. */

export interface Key {
  uid: string;
  apiToken: string;
  secretKey: string;
}

export interface Level {
  price: number;
  amount: number;
}

export interface Book {
  buy: Level[];
  sell: Level[];
  seq?: number;
}

export interface PublicTrade {
  directionType: "buy" | "sell";
  tradeType: string;
  price: number;
  amount: number;
  tradeTime: number;
  /** Stored trade time, strictly increasing per pair (CONTRACT 2.2): orders trades across REST and stream. */
  eventTimeMicro?: string;
}

export interface Ticker {
  pairName: string;
  openValue: number;
  minValue: number;
  maxValue: number;
  closeValue: number;
  volume: number;
}

export interface Order {
  id: number;
  pairName: string;
  tradeType: "limit" | "market";
  directionType: "buy" | "sell";
  price: number;
  amount: number;
  amountUsed: number;
  isCancelled: boolean;
  createTime: string;
}

export interface UserTrade {
  id: number;
  pairName: string;
  tradeType: string;
  directionType: "buy" | "sell";
  price: number;
  amount: number;
  tradeTime: string;
}

export interface Balance {
  currency: string;
  balance: string;
  reserved?: string;
}

/** [ms, open, min, max, close, volume] (interface 2.7). */
export type Candle = [number, number, number, number, number, number];
