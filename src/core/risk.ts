/**
 * Risk (exchange-core's R1 hold and R2 release): what a resting limit order holds in the ledger,
 * defined once for placing, filling, amending, cancelling and recovering orders.
 *
 * A limit buy holds price × open lots of the quote currency; a sell holds its open lots of the base
 * currency. Ledger units per book unit come from the currency scales (docs/API.md 5.6: a quote
 * currency's scale is at least priceDecimals + amountDecimals of every pair it quotes, so a hold
 * is never rounded). A market buy holds a budget instead (Exchange.createOrder).
 */
import { BUY } from "../protocol/pair/engine.ts";
import { pow10 } from "../util/numbers.ts";
import type { Ledger } from "./ledger.ts";

/** Ledger units per book unit of one pair. */
export interface PairUnits {
  /** Ledger units of the base currency per lot. */
  baseMul: bigint;
  /** Ledger units of the quote currency per (tick × lot). */
  quoteMul: bigint;
}

export function pairUnits(
  spec: { priceDecimals: number; amountDecimals: number },
  baseScale: number,
  quoteScale: number,
): PairUnits {
  return {
    baseMul: pow10(baseScale - spec.amountDecimals),
    quoteMul: pow10(quoteScale - spec.priceDecimals - spec.amountDecimals),
  };
}

/** What a limit order of `side` with `lots` open at `price` (ticks) holds, in ledger units. */
export function limitHold(u: PairUnits, side: number, price: number, lots: number): bigint {
  return side === BUY ? BigInt(price) * BigInt(lots) * u.quoteMul : BigInt(lots) * u.baseMul;
}

/**
 * The most more an amend may need to hold than the order holds now (0 when it can only need
 * less): the order goes from `price` and open lots L to `newPrice` and L + `delta`, where L is any
 * of 0..`open` (fills still in the worker can lower it). The extra is linear in L, so its most is
 * at one end.
 */
export function amendHold(
  u: PairUnits,
  side: number,
  price: number,
  open: number,
  newPrice: number,
  delta: number,
): bigint {
  // Lots may be negative here: the formula is the same line either way.
  const atNone = limitHold(u, side, newPrice, delta);
  const atOpen = limitHold(u, side, newPrice, open + delta) - limitHold(u, side, price, open);
  const most = atNone > atOpen ? atNone : atOpen;
  return most > 0n ? most : 0n;
}

/** A fee rate has at most this many decimals (docs/API.md 9: `"0.000125"` is the finest rate). */
export const FEE_DECIMALS = 6;
/** Fee rates are integers in units of 10^-FEE_DECIMALS. */
const FEE_UNIT = pow10(FEE_DECIMALS);

/**
 * The fee on `amount` (ledger units) at `rate` (units of 10^-FEE_DECIMALS). Exact: the currency
 * scales carry the rates' decimals (config.ts ledgerScale), so the division has no remainder.
 */
export function feeOf(amount: bigint, rate: bigint): bigint {
  return (amount * rate) / FEE_UNIT;
}

/** A pair as settlement needs it: units, currency indexes and fee rates. */
export interface SettlementPair extends PairUnits {
  base: number;
  quote: number;
  /** False when both fee rates are 0: settlement then does no fee work at all. */
  hasFees: boolean;
  makerFee: bigint;
  takerFee: bigint;
}

/** One side of a fill as settlement needs it. */
export interface FillSide {
  user: number;
  /** 0 limit, 1 market. */
  type: number;
  /** Limit price in ticks (a limit buy reserved at it). */
  price: number;
  /** Market buy: quote (ledger units) still reserved for it. */
  budget: bigint;
}

/**
 * R2 of one fill of `qty` lots at `price` (ticks, the maker's): the seller's reserved base goes to
 * the buyer and the buyer's reserved quote to the seller, each leg less its receiver's fee, which
 * goes to `feeUser`. Exact: the currency scales carry the rates' decimals (config.ts ledgerScale),
 * so the division by FEE_UNIT never has a remainder. A limit buy filled below its limit gets the
 * difference of its hold back; a market buy's cost comes out of its budget.
 */
export function settleFill(
  ledger: Ledger,
  p: SettlementPair,
  feeUser: number,
  buyer: FillSide,
  seller: FillSide,
  buyerIsTaker: boolean,
  price: number,
  qty: number,
): void {
  const lots = BigInt(qty);
  const base = lots * p.baseMul;
  const cost = BigInt(price) * lots * p.quoteMul;
  if (!p.hasFees) {
    ledger.transfer(seller.user, buyer.user, p.base, base);
    ledger.transfer(buyer.user, seller.user, p.quote, cost);
  } else {
    const buyerRate = buyerIsTaker ? p.takerFee : p.makerFee;
    const sellerRate = buyerIsTaker ? p.makerFee : p.takerFee;
    ledger.transferWithFee(seller.user, buyer.user, feeUser, p.base, base, feeOf(base, buyerRate));
    ledger.transferWithFee(buyer.user, seller.user, feeUser, p.quote, cost, feeOf(cost, sellerRate));
  }
  if (buyer.type === 0) {
    // A limit buy reserved at its own price: a better price releases the difference.
    if (buyer.price !== price)
      ledger.release(buyer.user, p.quote, limitHold(p, BUY, buyer.price - price, qty));
  } else {
    buyer.budget -= cost;
  }
}

/**
 * Recovery (migration 005): what one committed fill did to the totals (available + reserved) of
 * its buyer, its seller and the fee account, leg by leg, exactly as settleFill moved them; `add`
 * receives each (user, currency, amount). Rates are the ones the trade row keeps.
 */
export function fillTotals(
  p: PairUnits & { base: number; quote: number },
  buyer: number,
  seller: number,
  feeUser: number,
  buyerRate: bigint,
  sellerRate: bigint,
  price: number,
  qty: number,
  add: (user: number, currency: number, amount: bigint) => void,
): void {
  const lots = BigInt(qty);
  const base = lots * p.baseMul;
  const cost = BigInt(price) * lots * p.quoteMul;
  const buyerFee = feeOf(base, buyerRate);
  const sellerFee = feeOf(cost, sellerRate);
  add(seller, p.base, -base);
  add(buyer, p.base, base - buyerFee);
  add(buyer, p.quote, -cost);
  add(seller, p.quote, cost - sellerFee);
  if (buyerFee !== 0n) add(feeUser, p.base, buyerFee);
  if (sellerFee !== 0n) add(feeUser, p.quote, sellerFee);
}
