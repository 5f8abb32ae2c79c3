/**
 * The ledger's bounds and scales: the largest value a balance total may reach, the whole units
 * every currency holds at any scale, the fee account, and the scale of a currency as the pairs
 * that use it (and their fee rates) require.
 */

import { FEE_DECIMALS } from "../core/risk.ts";
import type { PairConfig } from "./exchange-config.ts";

/**
 * The ledger's bound: 2^127 − 1 ledger units, a signed 128-bit integer. The sum of every account's
 * balance of a currency (deposits − withdrawals) stays at or below it (a deposit that would pass it
 * is refused), so every balance, reservation, fee and total of the ledger fits a signed 128-bit
 * integer, whatever the trades between accounts. At the finest scale a currency can have (8 price
 * and 8 amount decimals, plus 6 fee decimals: 22) that is still 1.7 × 10^16 whole units, so every
 * currency holds at least MIN_LEDGER_CAPACITY whole units. Balances and transfers are stored as
 * decimal text (migration 001), which SQLite keeps whatever their size.
 */
export const MAX_LEDGER_VALUE = 2n ** 127n - 1n;
/** Whole units of every currency the ledger holds at any scale a config can give it (10^12). */
export const MIN_LEDGER_CAPACITY = 10n ** 12n;
/** The fee account (docs/API.md 9): a user with no API key that receives every fee. */
export const FEE_ACCOUNT_UID = "00000000-0000-0000-0000-000000000000";

/**
 * The ledger scale of a currency: the largest `amountDecimals` of the pairs where it is the base
 * and `priceDecimals + amountDecimals` of the pairs where it is the quote, so that no amount and no
 * `price × amount` of any pair is ever rounded in the ledger (docs/API.md 1: money is exact), plus the largest
 * `feeDecimals` of the pairs that use it, so that every fee (amount × rate) is exact too
 * (docs/API.md 9). 0 for an unknown one.
 */
export function ledgerScale(
  pairs: ReadonlyArray<
    Pick<PairConfig, "base" | "quote" | "priceDecimals" | "amountDecimals"> & { feeDecimals?: number }
  >,
  currency: string,
): number {
  let scale = 0;
  let fee = 0;
  for (const pair of pairs) {
    if (pair.base === currency) scale = Math.max(scale, pair.amountDecimals);
    if (pair.quote === currency) scale = Math.max(scale, pair.priceDecimals + pair.amountDecimals);
    if (pair.base === currency || pair.quote === currency) fee = Math.max(fee, pair.feeDecimals ?? 0);
  }
  return scale + fee;
}

/** Decimals a rate in units of 10^-FEE_DECIMALS needs (1000n, i.e. 0.001: 3; 0n: 0). */
export function rateDecimals(rate: bigint): number {
  if (rate === 0n) return 0;
  let d = FEE_DECIMALS;
  while (rate % 10n === 0n) {
    rate /= 10n;
    d--;
  }
  return d;
}
