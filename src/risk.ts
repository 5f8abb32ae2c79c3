/**
 * Risk (exchange-core's R1 hold and R2 release): what a resting limit order holds in the ledger,
 * defined once for placing, filling, amending, cancelling and recovering orders.
 *
 * A limit buy holds price × open lots of the quote currency; a sell holds its open lots of the base
 * currency. Ledger units per book unit come from the currency scales (CONTRACT 2.1: a quote
 * currency's scale is at least priceDecimals + amountDecimals of every pair it quotes, so a hold
 * is never rounded). A market buy holds a budget instead (Exchange.createOrder).
 */

import { pow10 } from "./numbers.ts";
import { BUY } from "./protocol/engine.ts";

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
