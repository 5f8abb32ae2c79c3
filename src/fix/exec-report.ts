/**
 * ExecutionReport(8) fields (docs/API.md 17.2) from an order record: the order's facts as exact
 * integers of its pair (ticks, lots), its state after a change, the fill of a trade, AvgPx. Every
 * decimal is printed from integers with the pair's decimals; no float takes part in arithmetic.
 * Ticks and lots are JS integers, exact as the core keeps them (below 2^53: the config bounds prices
 * and amounts to 15 digits); a quote (ticks × lots, `executedQuote`) is a bigint, made only when a
 * report needs it (a fill, AvgPx of an order that executed).
 */
import type { ExchangeConfig, PairConfig } from "../config/exchange-config.ts";
import type { OrderView, UserTradeView } from "../core/exchange.ts";
import { formatDecimal, formatDigits, ParseError, POW10_NUMBER, parseDecimal } from "../util/numbers.ts";
import { field, fixTime } from "./codec.ts";
import type { OutMsg } from "./fix-conn.ts";

/** An order as the reports need it: its pair and its amounts in lots and ticks. */
export interface FixOrder {
  readonly id: number;
  readonly pair: PairConfig;
  /** ClOrdID(11): the order's clientOrderId, `NONE` when it has none. */
  readonly clOrdId: string;
  /** Side(54): 1 buy, 2 sell. */
  readonly side: string;
  /** OrdType(40): 1 market, 2 limit, 3 stop (market), 4 stop-limit (docs/API.md 18). */
  readonly ordType: string;
  /** Ticks of a stop order's StopPx(99) (0: not a stop). */
  readonly stopPx: number;
  /** Whether a stop order has triggered (docs/API.md 18). */
  readonly triggered: boolean;
  /** Why a triggered order ended cancelled whole (docs/API.md 18), the Text(58) of that report. */
  readonly cancelReason: string | undefined;
  /** TimeInForce(59) when the order has one. */
  readonly tif: string | undefined;
  /** ListID(66): an OCO leg's OCO id (docs/API.md 18.1), 0 for any other order. */
  readonly ocoId: number;
  readonly amount: number;
  /** Ticks of a limit order (0 for a market order). */
  readonly price: number;
  readonly used: number;
  /** `executedQuote` (docs/API.md 5.1) as the record's exact decimal text: `quoteOf` reads it. */
  readonly executedQuote: string;
  readonly cancelled: boolean;
  /** Symbol(55) to TimeInForce(59) as field text, made by the order's first report. */
  facts?: string;
}

const TIF = new Map([
  ["GTC", "1"],
  ["IOC", "3"],
  ["FOK", "4"],
]);

/**
 * The exact integer (ticks or lots) of a record's decimal: a number whose shortest text is the
 * exact decimal of at most `decimals` places, as the views give it (src/core/views.ts `scaled`).
 * `value × 10^decimals` rounded, then checked to divide back to `value` exactly (the fast path of
 * parseDecimal in src/util/numbers.ts, which decides anything else).
 */
export function unitsOf(value: number, decimals: number): number {
  if (value === 0) return 0;
  const unit = POW10_NUMBER[decimals];
  const n = Math.round(value * unit);
  if (n > 0 && n < 1e15 && n / unit === value) return n;
  const u = parseDecimal(value, decimals);
  if (typeof u === "bigint" && u < 2n ** 53n) return Number(u);
  throw new RangeError(`not a decimal of ${decimals} places: ${value}`);
}

/** A count of ticks or lots as the decimal it is, `decimals` places. */
export function unitsText(n: number, decimals: number): string {
  return formatDigits(String(n), decimals);
}

/** `executedQuote` of `o` (ticks × lots): what its fills executed. */
export function quoteOf(o: FixOrder): bigint {
  if (o.used === 0) return 0n;
  const pair = o.pair;
  const u = parseDecimal(o.executedQuote, pair.priceDecimals + pair.amountDecimals);
  if (typeof u === "bigint") return u;
  if (u === ParseError.Zero) return 0n;
  throw new RangeError(`not an executed quote of ${pair.name}: ${o.executedQuote}`);
}

export function fixOrderOf(view: OrderView, config: ExchangeConfig): FixOrder {
  const pair = config.pairsByName.get(view.pairName)!;
  const limit = view.tradeType === "limit";
  // A trailing stop on a pair that never traded has no stopPrice yet (docs/API.md 18).
  const stop = view.stopDirection !== undefined;
  return {
    id: view.id,
    pair,
    clOrdId: view.clientOrderId ?? "NONE",
    side: view.directionType === "buy" ? "1" : "2",
    ordType: limit ? (stop ? "4" : "2") : stop ? "3" : "1",
    stopPx: view.stopPrice !== undefined ? unitsOf(view.stopPrice, pair.priceDecimals) : 0,
    triggered: view.triggered === true,
    cancelReason: view.cancelReason,
    tif: view.timeInForce === undefined ? undefined : TIF.get(view.timeInForce),
    ocoId: view.ocoId ?? 0,
    amount: unitsOf(view.amount, pair.amountDecimals),
    // A triggered stop-market order's `price` is its average (docs/API.md 18): not a limit.
    price: limit ? unitsOf(view.price, pair.priceDecimals) : 0,
    used: unitsOf(view.amountUsed, pair.amountDecimals),
    executedQuote: view.executedQuote,
    cancelled: view.isCancelled,
  };
}

/**
 * AvgPx(6): `executedQuote / amountUsed` (docs/API.md 17.2), ticks × lots over lots, rounded half-up
 * to the pair's price decimals in integers; 0 before a fill.
 */
export function avgPx(quote: bigint, used: number, pair: PairConfig): string {
  if (used <= 0) return "0";
  const u = BigInt(used);
  return formatDecimal((quote * 2n + u) / (u * 2n), pair.priceDecimals);
}

/** OrdStatus(39) of an order with `cum` executed: 4 cancelled, 2 filled, 1 partially, 0 new. */
export function ordStatus(o: FixOrder, cum: number, cancelled: boolean): string {
  if (cancelled) return "4";
  if (cum >= o.amount) return "2";
  return cum > 0 ? "1" : "0";
}

/** A fill of a trade on the order (ExecType=F). */
export interface Fill {
  readonly trade: UserTradeView;
  /** Lots and ticks. */
  readonly qty: number;
  readonly px: number;
  readonly maker: boolean;
}

/** What one report says beyond the order's own facts. */
export interface ReportState {
  execType: string;
  ordStatus: string;
  /** Lots executed up to this report. */
  cum: number;
  /** Ticks × lots executed up to this report (the `executedQuote` of its state, AvgPx). */
  quote: bigint;
  clOrdId?: string;
  origClOrdId?: string;
  /** ExecSeq(20002), 0: none. */
  execSeq: number;
  fill?: Fill;
  /** PossResend(97)=Y (a replayed report). */
  possResend?: boolean;
}

let execIds = 0;
/** ExecIDs are unique across runs too: the run's start in base 36 leads each. */
const RUN = Date.now().toString(36);

export function nextExecId(): string {
  return `${RUN}-${++execIds}`;
}

/** Symbol(55), Side(54), OrdType(40), OrderQty(38), Price(44) and TimeInForce(59) of `o`. */
function factsOf(o: FixOrder): string {
  const p = o.pair;
  let text =
    field(55, p.name) +
    field(54, o.side) +
    field(40, o.ordType) +
    field(38, unitsText(o.amount, p.amountDecimals));
  if (o.ordType === "2" || o.ordType === "4") text += field(44, unitsText(o.price, p.priceDecimals));
  if (o.stopPx > 0) text += field(99, unitsText(o.stopPx, p.priceDecimals));
  if (o.tif !== undefined) text += field(59, o.tif);
  if (o.ocoId > 0) text += field(66, o.ocoId);
  return text;
}

/** One ExecutionReport of `o` in state `s`. */
export function execReport(o: FixOrder, s: ReportState): OutMsg {
  const p = o.pair;
  const done = s.ordStatus === "4" || s.ordStatus === "2" || s.ordStatus === "8";
  let body = field(37, o.id) + field(11, s.clOrdId ?? o.clOrdId);
  if (s.origClOrdId !== undefined) body += field(41, s.origClOrdId);
  // An order's reports of one change (New, fills, Cancelled) share its facts' text.
  o.facts ??= factsOf(o);
  body += field(17, nextExecId()) + field(150, s.execType) + field(39, s.ordStatus) + o.facts;
  body +=
    field(14, unitsText(s.cum, p.amountDecimals)) +
    field(151, done ? "0" : unitsText(o.amount - s.cum, p.amountDecimals)) +
    field(6, avgPx(s.quote, s.cum, p)) +
    field(60, fixTime(Date.now()));
  // docs/API.md 18: a triggered order that ended cancelled whole says why, and so does an OCO leg
  // its sibling cancelled.
  if (s.execType === "4" && o.cancelReason !== undefined) body += field(58, o.cancelReason);
  const f = s.fill;
  if (f !== undefined) {
    body +=
      field(32, unitsText(f.qty, p.amountDecimals)) +
      field(31, unitsText(f.px, p.priceDecimals)) +
      field(880, f.trade.id) +
      field(12, f.trade.fee) +
      field(479, f.trade.feeCurrency) +
      field(851, f.maker ? 1 : 2);
  }
  if (s.execSeq > 0) body += field(20002, s.execSeq);
  return s.possResend === true ? { type: "8", body, extra: field(97, "Y") } : { type: "8", body };
}

/** The fill of `trade` in lots and ticks of its pair. */
export function fillOf(trade: UserTradeView, maker: boolean, pair: PairConfig): Fill {
  return {
    trade,
    qty: unitsOf(trade.amount, pair.amountDecimals),
    px: unitsOf(trade.price, pair.priceDecimals),
    maker,
  };
}
