/**
 * ExecutionReport(8) fields (docs/API.md 17.2) from an order record: the order's facts as exact
 * integers of its pair (ticks, lots), its state after a change, the fill of a trade, AvgPx. Every
 * decimal is printed from integers with the pair's decimals; no float takes part in arithmetic.
 */
import type { ExchangeConfig, PairConfig } from "../config/exchange-config.ts";
import type { OrderView, UserTradeView } from "../core/exchange.ts";
import { formatDecimal, ParseError, parseDecimal } from "../util/numbers.ts";
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
  readonly stopPx: bigint;
  /** Whether a stop order has triggered (docs/API.md 18). */
  readonly triggered: boolean;
  /** Why a triggered order ended cancelled whole (docs/API.md 18), the Text(58) of that report. */
  readonly cancelReason: string | undefined;
  /** TimeInForce(59) when the order has one. */
  readonly tif: string | undefined;
  readonly amount: bigint;
  /** Ticks of a limit order (0 for a market order). */
  readonly price: bigint;
  readonly used: bigint;
  /** `executedQuote` (docs/API.md 5.1) in ticks × lots: the quote its fills executed. */
  readonly executed: bigint;
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
 * The exact integer of a record's decimal (a number whose shortest text is the exact decimal of at
 * most `decimals` places, as the views give it).
 */
export function unitsOf(value: number, decimals: number): bigint {
  const u = parseDecimal(value, decimals);
  if (typeof u === "bigint") return u;
  if (u === ParseError.Zero) return 0n;
  throw new RangeError(`not a decimal of ${decimals} places: ${value}`);
}

/** `executedQuote` (exact decimal text of the quote currency) as ticks × lots of `pair`. */
function executedOf(text: string, pair: PairConfig): bigint {
  const u = parseDecimal(text, pair.priceDecimals + pair.amountDecimals);
  if (typeof u === "bigint") return u;
  if (u === ParseError.Zero) return 0n;
  throw new RangeError(`not an executed quote of ${pair.name}: ${text}`);
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
    stopPx: view.stopPrice !== undefined ? unitsOf(view.stopPrice, pair.priceDecimals) : 0n,
    triggered: view.triggered === true,
    cancelReason: view.cancelReason,
    tif: view.timeInForce === undefined ? undefined : TIF.get(view.timeInForce),
    amount: unitsOf(view.amount, pair.amountDecimals),
    // A triggered stop-market order's `price` is its average (docs/API.md 18): not a limit.
    price: limit ? unitsOf(view.price, pair.priceDecimals) : 0n,
    used: unitsOf(view.amountUsed, pair.amountDecimals),
    executed: executedOf(view.executedQuote, pair),
    cancelled: view.isCancelled,
  };
}

/**
 * AvgPx(6): `executedQuote / amountUsed` (docs/API.md 17.2), ticks × lots over lots, rounded half-up
 * to the pair's price decimals in integers; 0 before a fill.
 */
export function avgPx(quote: bigint, used: bigint, pair: PairConfig): string {
  if (used <= 0n) return "0";
  return formatDecimal((quote * 2n + used) / (used * 2n), pair.priceDecimals);
}

/** OrdStatus(39) of an order with `cum` executed: 4 cancelled, 2 filled, 1 partially, 0 new. */
export function ordStatus(o: FixOrder, cum: bigint, cancelled: boolean): string {
  if (cancelled) return "4";
  if (cum >= o.amount) return "2";
  return cum > 0n ? "1" : "0";
}

/** A fill of a trade on the order (ExecType=F). */
export interface Fill {
  readonly trade: UserTradeView;
  readonly qty: bigint;
  readonly px: bigint;
  readonly maker: boolean;
}

/** What one report says beyond the order's own facts. */
export interface ReportState {
  execType: string;
  ordStatus: string;
  cum: bigint;
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
    field(38, formatDecimal(o.amount, p.amountDecimals));
  if (o.ordType === "2" || o.ordType === "4") text += field(44, formatDecimal(o.price, p.priceDecimals));
  if (o.stopPx > 0n) text += field(99, formatDecimal(o.stopPx, p.priceDecimals));
  if (o.tif !== undefined) text += field(59, o.tif);
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
    field(14, formatDecimal(s.cum, p.amountDecimals)) +
    field(151, done ? "0" : formatDecimal(o.amount - s.cum, p.amountDecimals)) +
    field(6, avgPx(s.quote, s.cum, p)) +
    field(60, fixTime(Date.now()));
  // docs/API.md 18: a triggered order that ended cancelled whole says why.
  if (s.execType === "4" && o.cancelReason !== undefined) body += field(58, o.cancelReason);
  const f = s.fill;
  if (f !== undefined) {
    body +=
      field(32, formatDecimal(f.qty, p.amountDecimals)) +
      field(31, formatDecimal(f.px, p.priceDecimals)) +
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
