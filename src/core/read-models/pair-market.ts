/**
 * Public read models of one pair, kept on the main thread from the pair worker's events so that
 * public GETs never touch SQLite: the aggregated book, the last 200 trades, the rolling 24 h
 * values and the candles of every chart period.
 *
 * Prices are ticks and amounts lots (integers); they become JSON numbers only when a record is
 * built for output (`scaled`).
 */

import { crc32 } from "../../util/crc32.ts";
import { formatDecimal, scaled } from "../../util/numbers.ts";

export { scaled };

import type { L3Book } from "./l3-view.ts";

/** Levels of each side the book checksum covers (docs/API.md 12.5). */
export const CHECKSUM_LEVELS = 25;

/** Best bid and offer (docs/API.md 7.6.1): price and aggregate amount of each side, 0 when empty. */
export interface Bbo {
  bid: number;
  bidAmount: number;
  ask: number;
  askAmount: number;
  seq: number;
  eventTimeMicro: string;
}

/** Chart periods of the interface (4.5), with their length in ms. */
export const PERIODS = ["1m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "12h", "1d", "1w"] as const;
export type Period = (typeof PERIODS)[number];
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;
export const PERIOD_MS: Readonly<Record<Period, number>> = {
  "1m": MIN,
  "5m": 5 * MIN,
  "15m": 15 * MIN,
  "30m": 30 * MIN,
  "1h": HOUR,
  "2h": 2 * HOUR,
  "4h": 4 * HOUR,
  "6h": 6 * HOUR,
  "12h": 12 * HOUR,
  "1d": DAY,
  "1w": WEEK,
};
/** 1970-01-05, the first Monday after the epoch: weeks start on Monday 00:00 UTC. */
const FIRST_MONDAY_MS = 4 * DAY;

/** Start (ms) of the interval of `period` holding `ms` (UTC aligned, docs/API.md 7.5). */
export function intervalStart(period: Period, ms: number): number {
  const len = PERIOD_MS[period];
  if (period === "1w") return Math.floor((ms - FIRST_MONDAY_MS) / len) * len + FIRST_MONDAY_MS;
  return Math.floor(ms / len) * len;
}

/**
 * One side of the aggregated book: its levels as two parallel arrays, prices and their totals,
 * kept worst first, so that the changes near the best price, where most happen, move only the few
 * levels after them (a level is found by binary search). Read best first through `size`,
 * `priceAt` and `totalAt`.
 */
export class BookSide {
  /** Prices, worst first (bids ascending, asks descending). */
  private readonly prices: number[] = [];
  /** Each price's total, in the same order. */
  private readonly totals: number[] = [];
  /** Bids: the best is the highest. */
  private readonly descending: boolean;

  constructor(descending: boolean) {
    this.descending = descending;
  }

  /** Levels on this side. */
  get size(): number {
    return this.prices.length;
  }

  /** The price of the `i`-th level, best first (0 is the best); `i < size`. */
  priceAt(i: number): number {
    return this.prices[this.prices.length - 1 - i];
  }

  /** The total of the `i`-th level, best first; `i < size`. */
  totalAt(i: number): number {
    return this.totals[this.totals.length - 1 - i];
  }

  /** Sets the total at `price`; 0 removes the level. */
  set(price: number, total: number): void {
    const p = this.prices;
    const t = this.totals;
    const at = this.find(price);
    const had = at < p.length && p[at] === price;
    if (had) {
      if (total !== 0) {
        t[at] = total;
        return;
      }
      // Shift the better levels down by one, element by element: Array#copyWithin and #splice take
      // the generic builtin path (about 0.9 µs for a remove and an insert on 50 levels, against 0.1).
      const last = p.length - 1;
      for (let i = at; i < last; i++) {
        p[i] = p[i + 1];
        t[i] = t[i + 1];
      }
      p.pop();
      t.pop();
    } else if (total !== 0) {
      p.push(price);
      t.push(total);
      for (let i = p.length - 1; i > at; i--) {
        p[i] = p[i - 1];
        t[i] = t[i - 1];
      }
      p[at] = price;
      t[at] = total;
    }
  }

  /** The total at `price` (0: no level there). */
  total(price: number): number {
    const at = this.find(price);
    return at < this.prices.length && this.prices[at] === price ? this.totals[at] : 0;
  }

  best(): number {
    const p = this.prices;
    return p.length === 0 ? 0 : p[p.length - 1];
  }

  /** Index of `price` in `prices` (worst first), or where it would be inserted. */
  private find(price: number): number {
    const p = this.prices;
    let lo = 0;
    let hi = p.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const worse = this.descending ? p[mid] < price : p[mid] > price;
      if (worse) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

export interface PublicTrade {
  /** docs/API.md 20: the trade id. */
  id: number;
  directionType: "buy" | "sell";
  tradeType: "limit" | "market";
  price: number;
  amount: number;
  tradeTime: number;
  eventTimeMicro: string;
}

/** A candle in ticks/lots: [startMs, open, high, low, close, volume]. */
export type Candle = [number, number, number, number, number, number];

export interface ExchangeRecord {
  pairName: string;
  openValue: number;
  minValue: number;
  maxValue: number;
  closeValue: number;
  volume: number;
}

export const HISTORY_SIZE = 200;
/** Numbers kept per trade of the history ring: side, type, price, amount, micro, trade id. */
const HIST_FIELDS = 6;
const WINDOW_MICRO = 24 * 3600 * 1_000_000;
/** Candles kept in memory per period; older ones stay in the database. */
export const CANDLES_KEPT = 5000;

/** `price:amount` of the best CHECKSUM_LEVELS levels of a side, best first, joined by `,`. */
function sideText(s: BookSide, pd: number, ad: number): string {
  const n = Math.min(CHECKSUM_LEVELS, s.size);
  let out = "";
  for (let i = 0; i < n; i++) {
    if (i > 0) out += ",";
    out += `${formatDecimal(BigInt(s.priceAt(i)), pd)}:${formatDecimal(BigInt(s.totalAt(i)), ad)}`;
  }
  return out;
}

export class PairMarket {
  readonly name: string;
  readonly priceDecimals: number;
  readonly amountDecimals: number;
  readonly bids = new BookSide(true);
  readonly asks = new BookSide(false);
  /**
   * The last HISTORY_SIZE trades as numbers (side, type, price, amount, micro, id each), a ring
   * whose newest trade is at `histHead - 1`: a trade costs six stores here, and its public item (three
   * formatted strings and an object) is built only when someone reads the history.
   */
  private readonly hist = new Float64Array(HISTORY_SIZE * HIST_FIELDS);
  private histHead = 0;
  private histCount = 0;
  /** `history` as last built; null once a trade came since. */
  private historyItems: PublicTrade[] | null = null;
  /** Candles per period, oldest first. */
  readonly candles: Candle[][] = PERIODS.map(() => []);
  /** Periods whose last candle changed since the last drain (bit i = PERIODS[i]). */
  dirtyCandles = 0;
  /** Candles closed by a newer one while changed since the last drain: [period index, candle]. */
  private readonly closedCandles: [number, Candle][] = [];
  /** Bumped on every change of the book; lets callers cache serialized output. */
  bookVersion = 0;
  /** Book sequence (docs/API.md 12.3) of the state the levels show: the last change applied. */
  seq = 0;
  /** eventTimeMicro of the book change `seq` (docs/API.md 7.6.1); 0: the book never changed. */
  bookMicro = 0;
  /** The order-by-order book (docs/API.md 7.6.2) while someone wants it (Exchange.wantL3), else null. */
  l3: L3Book | null = null;
  /** The checksum (docs/API.md 12.5) of the book version `checksumVersion`. */
  private checksumValue = 0;
  private checksumVersion = -1;
  historyVersion = 0;

  // Rolling 24 h window, oldest first; parallel arrays with a moving start index.
  private wTime: number[] = [];
  private wPrice: number[] = [];
  private wAmount: number[] = [];
  private wStart = 0;
  private wVolume = 0;
  // Monotonic deques of window indices (absolute, before compaction offsets): the front of
  // `minQ` is the index of the window's minimum price, the front of `maxQ` of its maximum.
  private minQ: number[] = [];
  private minHead = 0;
  private maxQ: number[] = [];
  private maxHead = 0;
  private lastPrice = 0;
  /** eventTimeMicro of the last trade: the next one is strictly greater. */
  lastMicro = 0;

  constructor(name: string, priceDecimals: number, amountDecimals: number) {
    this.name = name;
    this.priceDecimals = priceDecimals;
    this.amountDecimals = amountDecimals;
  }

  setLevel(side: 0 | 1, price: number, total: number): void {
    (side === 0 ? this.bids : this.asks).set(price, total);
    this.bookVersion++;
  }

  /** A command's level changes (`side, price, total` triples, Publication.levels), in order. */
  applyLevels(levels: readonly number[]): void {
    for (let i = 0; i < levels.length; i += 3)
      this.setLevel(levels[i] as 0 | 1, levels[i + 1], levels[i + 2]);
  }

  /**
   * A committed book change (Results): its level changes, its `seq` and time. True when it moved
   * the best bid or the best ask (price or aggregate amount), the BBO channel's trigger (13.1).
   */
  applyChange(levels: readonly number[], seq: number, micro: number): boolean {
    const b = this.bids;
    const a = this.asks;
    const bid = b.best();
    const ask = a.best();
    const bidTotal = b.size === 0 ? 0 : b.totalAt(0);
    const askTotal = a.size === 0 ? 0 : a.totalAt(0);
    this.applyLevels(levels);
    this.seq = seq;
    this.bookMicro = micro;
    return (
      b.best() !== bid ||
      a.best() !== ask ||
      (b.size === 0 ? 0 : b.totalAt(0)) !== bidTotal ||
      (a.size === 0 ? 0 : a.totalAt(0)) !== askTotal
    );
  }

  /** docs/API.md 20.2: Unix ms of the book change `seq` (0: the book never changed). */
  get bookTime(): number {
    return Math.floor(this.bookMicro / 1000);
  }

  /** The best bid and offer now (docs/API.md 7.6.1), with the book's seq and the time of that change. */
  bbo(): Bbo {
    const b = this.bids;
    const a = this.asks;
    return {
      bid: scaled(b.best(), this.priceDecimals),
      bidAmount: b.size === 0 ? 0 : scaled(b.totalAt(0), this.amountDecimals),
      ask: scaled(a.best(), this.priceDecimals),
      askAmount: a.size === 0 ? 0 : scaled(a.totalAt(0), this.amountDecimals),
      seq: this.seq,
      eventTimeMicro: String(this.bookMicro),
    };
  }

  /**
   * The text the book checksum covers (docs/API.md 12.5): the best CHECKSUM_LEVELS asks ascending,
   * `|`, the best CHECKSUM_LEVELS bids descending, each `price:amount` in canonical decimals.
   */
  checksumText(): string {
    return `${sideText(this.asks, this.priceDecimals, this.amountDecimals)}|${sideText(
      this.bids,
      this.priceDecimals,
      this.amountDecimals,
    )}`;
  }

  /** CRC-32 of `checksumText()`, computed once per book version. */
  checksum(): number {
    if (this.checksumVersion !== this.bookVersion) {
      this.checksumValue = crc32(this.checksumText());
      this.checksumVersion = this.bookVersion;
    }
    return this.checksumValue;
  }

  /** The next eventTimeMicro for a trade at (clock) time `nowMicro`: strictly increasing. */
  nextMicro(nowMicro: number): number {
    const t = nowMicro > this.lastMicro ? nowMicro : this.lastMicro + 1;
    this.lastMicro = t;
    return t;
  }

  /** Adds a trade to every read model (trades arrive in execution order). */
  addTrade(side: 0 | 1, type: 0 | 1, price: number, amount: number, micro: number, id: number): void {
    this.putHistory(this.histHead, side, type, price, amount, micro, id);
    this.histHead = this.histHead === HISTORY_SIZE - 1 ? 0 : this.histHead + 1;
    if (this.histCount < HISTORY_SIZE) this.histCount++;
    this.historyItems = null;
    this.historyVersion++;
    this.lastMicro = micro;
    this.addToWindow(price, amount, micro);
    this.addToCandles(price, amount, micro);
  }

  /** The last trades (at most HISTORY_SIZE), newest first, as public items (docs/API.md 5.4). */
  get history(): readonly PublicTrade[] {
    let items = this.historyItems;
    if (items === null) {
      items = new Array(this.histCount);
      for (let i = 0; i < this.histCount; i++) items[i] = this.historyItem(i);
      this.historyItems = items;
    }
    return items;
  }

  /** The newest trade's public item, as the stream sends it (built without the rest of the history). */
  latestTrade(): PublicTrade {
    return this.historyItem(0);
  }

  /** The ring slot of the `i`-th newest trade (i = histCount: the slot before the oldest). */
  private slotOf(i: number): number {
    const slot = this.histHead - 1 - i;
    return slot < 0 ? slot + HISTORY_SIZE : slot;
  }

  /** The public item of the `i`-th newest trade of the ring (i < histCount). */
  private historyItem(i: number): PublicTrade {
    const h = this.hist;
    const o = this.slotOf(i) * HIST_FIELDS;
    return this.publicTrade(h[o] as 0 | 1, h[o + 1] as 0 | 1, h[o + 2], h[o + 3], h[o + 4], h[o + 5]);
  }

  private putHistory(
    slot: number,
    side: number,
    type: number,
    price: number,
    amount: number,
    micro: number,
    id: number,
  ) {
    const h = this.hist;
    const o = slot * HIST_FIELDS;
    h[o] = side;
    h[o + 1] = type;
    h[o + 2] = price;
    h[o + 3] = amount;
    h[o + 4] = micro;
    h[o + 5] = id;
  }

  /** The public history item (2.4) of a trade, as sent on the stream and kept for REST. */
  publicTrade(
    side: 0 | 1,
    type: 0 | 1,
    price: number,
    amount: number,
    micro: number,
    id: number,
  ): PublicTrade {
    return {
      id,
      directionType: side === 0 ? "buy" : "sell",
      tradeType: type === 0 ? "limit" : "market",
      price: scaled(price, this.priceDecimals),
      amount: scaled(amount, this.amountDecimals),
      tradeTime: Math.floor(micro / 1_000_000),
      eventTimeMicro: String(micro),
    };
  }

  /** Recovery: appends a stored trade to the history (fed newest first, before any new trade). */
  restoreHistory(side: 0 | 1, type: 0 | 1, price: number, amount: number, micro: number, id: number): void {
    if (this.histCount < HISTORY_SIZE) {
      // Older than every trade held: the slot before the oldest one.
      this.putHistory(this.slotOf(this.histCount), side, type, price, amount, micro, id);
      this.histCount++;
      this.historyItems = null;
    }
    if (micro > this.lastMicro) this.lastMicro = micro;
  }

  /** Recovery: adds a stored trade of the last 24 h to the window (fed oldest first). */
  restoreWindow(price: number, amount: number, micro: number): void {
    this.addToWindow(price, amount, micro);
  }

  private addToWindow(price: number, amount: number, micro: number): void {
    this.lastPrice = price;
    const idx = this.wTime.length;
    this.wTime.push(micro);
    this.wPrice.push(price);
    this.wAmount.push(amount);
    this.wVolume += amount;
    while (this.minQ.length > this.minHead && this.wPrice[this.minQ[this.minQ.length - 1]] >= price)
      this.minQ.pop();
    this.minQ.push(idx);
    while (this.maxQ.length > this.maxHead && this.wPrice[this.maxQ[this.maxQ.length - 1]] <= price)
      this.maxQ.pop();
    this.maxQ.push(idx);
  }

  private addToCandles(price: number, amount: number, micro: number): void {
    const ms = Math.floor(micro / 1000);
    for (let i = 0; i < PERIODS.length; i++) {
      const list = this.candles[i];
      const start = intervalStart(PERIODS[i], ms);
      const last = list.length === 0 ? undefined : list[list.length - 1];
      if (last !== undefined && last[0] === start) {
        if (price > last[2]) last[2] = price;
        if (price < last[3]) last[3] = price;
        last[4] = price;
        last[5] += amount;
      } else {
        // The candle it closes may have changed since the last drain: it is written then too.
        if (last !== undefined && (this.dirtyCandles & (1 << i)) !== 0) this.closedCandles.push([i, last]);
        list.push([start, price, price, price, price, amount]);
        if (list.length > CANDLES_KEPT) list.shift();
      }
      this.dirtyCandles |= 1 << i;
    }
  }

  /** The last trade's price in ticks, -1 when the pair never traded (docs/API.md 18). */
  get lastTrade(): number {
    return this.lastPrice > 0 ? this.lastPrice : -1;
  }

  /** Recovery: seeds the last trade price and candles without touching the 24 h window. */
  restoreLastPrice(price: number): void {
    this.lastPrice = price;
  }

  /**
   * Recovery: a committed trade after the last candle snapshot (migration 005) goes into the
   * candles again; they count as changed, so the next snapshot writes them.
   */
  replayCandles(price: number, amount: number, micro: number): void {
    this.addToCandles(price, amount, micro);
  }

  restoreCandle(periodIndex: number, c: Candle): void {
    this.candles[periodIndex].push(c);
  }

  /**
   * Calls `fn` with each candle changed since the last drain: the candles closed since then (a
   * later trade opened the next one), then each period's current candle.
   */
  drainCandles(fn: (period: Period, c: Candle) => void): void {
    const d = this.dirtyCandles;
    if (d === 0) return;
    const closed = this.closedCandles;
    for (let j = 0; j < closed.length; j++) fn(PERIODS[closed[j][0]], closed[j][1]);
    closed.length = 0;
    for (let i = 0; i < PERIODS.length; i++) {
      if ((d & (1 << i)) !== 0) {
        const list = this.candles[i];
        fn(PERIODS[i], list[list.length - 1]);
      }
    }
    this.dirtyCandles = 0;
  }

  /** The 24 h record (2.2) at `nowMicro`. */
  exchange(nowMicro: number): ExchangeRecord {
    this.evict(nowMicro);
    const pd = this.priceDecimals;
    const n = this.wTime.length - this.wStart;
    if (n === 0) {
      const last = scaled(this.lastPrice, pd);
      return {
        pairName: this.name,
        openValue: last,
        minValue: last,
        maxValue: last,
        closeValue: last,
        volume: 0,
      };
    }
    const min = this.wPrice[this.minQ[this.minHead]];
    const max = this.wPrice[this.maxQ[this.maxHead]];
    return {
      pairName: this.name,
      openValue: scaled(this.wPrice[this.wStart], pd),
      minValue: scaled(min, pd),
      maxValue: scaled(max, pd),
      closeValue: scaled(this.wPrice[this.wPrice.length - 1], pd),
      volume: scaled(this.wVolume, this.amountDecimals),
    };
  }

  /** Levels of one side as output records, best first, at most `limit`. */
  levels(side: 0 | 1, limit: number): { price: number; amount: number }[] {
    const s = side === 0 ? this.bids : this.asks;
    const n = Math.min(limit, s.size);
    const out = new Array<{ price: number; amount: number }>(n);
    for (let i = 0; i < n; i++) {
      out[i] = {
        price: scaled(s.priceAt(i), this.priceDecimals),
        amount: scaled(s.totalAt(i), this.amountDecimals),
      };
    }
    return out;
  }

  /**
   * Candles (2.7) oldest first: those whose start lies in [from, to], the newest `limit` of them.
   */
  chart(period: Period, limit: number, from: number, to: number): number[][] {
    const list = this.candles[PERIODS.indexOf(period)];
    let hi = list.length;
    while (hi > 0 && list[hi - 1][0] > to) hi--;
    let lo = hi;
    while (lo > 0 && hi - lo < limit && list[lo - 1][0] >= from) lo--;
    const pd = this.priceDecimals;
    const out = new Array<number[]>(hi - lo);
    for (let i = lo; i < hi; i++) {
      const c = list[i];
      out[i - lo] = [
        c[0],
        scaled(c[1], pd),
        scaled(c[3], pd),
        scaled(c[2], pd),
        scaled(c[4], pd),
        scaled(c[5], this.amountDecimals),
      ];
    }
    return out;
  }

  private evict(nowMicro: number): void {
    const cutoff = nowMicro - WINDOW_MICRO;
    let s = this.wStart;
    while (s < this.wTime.length && this.wTime[s] <= cutoff) {
      this.wVolume -= this.wAmount[s];
      s++;
    }
    this.wStart = s;
    while (this.minHead < this.minQ.length && this.minQ[this.minHead] < s) this.minHead++;
    while (this.maxHead < this.maxQ.length && this.maxQ[this.maxHead] < s) this.maxHead++;
    // Compact once the dead prefix dominates, so memory stays proportional to the window.
    if (s > 1024 && s * 2 > this.wTime.length) {
      this.wTime = this.wTime.slice(s);
      this.wPrice = this.wPrice.slice(s);
      this.wAmount = this.wAmount.slice(s);
      this.minQ = this.minQ.slice(this.minHead).map((i) => i - s);
      this.maxQ = this.maxQ.slice(this.maxHead).map((i) => i - s);
      this.minHead = 0;
      this.maxHead = 0;
      this.wStart = 0;
    }
  }
}
