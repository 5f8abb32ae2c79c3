/**
 * The exchange config as the rest of the server sees it once the config file is validated
 * (config-file.ts): pairs with their bounds and ledger factors, currencies with their ledger
 * scales, and the users the file creates. Types only.
 */

export interface PairConfig {
  readonly name: string;
  readonly base: string;
  readonly quote: string;
  readonly priceDecimals: number;
  readonly amountDecimals: number;
  /** In lots (10^-amountDecimals of the base). */
  readonly minAmount: bigint;
  readonly maxAmount: bigint;
  /** In ticks (10^-priceDecimals of the quote). */
  readonly maxPrice: bigint;
  /**
   * The minimum order value (docs/API.md 20.5) in ticks × lots (10^-(priceDecimals + amountDecimals)
   * of the quote); 0n when not set.
   */
  readonly minNotional: bigint;
  /** Position in the config file (docs/API.md 9, 12.2: lists are in config order). */
  readonly index: number;
  /** Lots × baseLedgerFactor = base ledger units: 10^(scale of base − amountDecimals). */
  readonly baseLedgerFactor: bigint;
  /** Ticks × lots × quoteLedgerFactor = quote ledger units: 10^(scale of quote − priceDecimals − amountDecimals). */
  readonly quoteLedgerFactor: bigint;
  /** Fee rates (docs/API.md 9) in units of 10^-FEE_DECIMALS (`"0.001"` is 1000n); 0n when not set. */
  readonly makerFee: bigint;
  readonly takerFee: bigint;
  /** Decimals the two rates need (`"0.0015"`: 4); 0 when both are 0. Both currencies grow by it. */
  readonly feeDecimals: number;
}

export interface CurrencyConfig {
  readonly name: string;
  /** Ledger scale: balances of this currency are integers in units of 10^-scale. */
  readonly scale: number;
}

export interface UserConfig {
  /** Lowercase UUID. */
  readonly uid: string;
  readonly apiToken: string;
  readonly secretKey: string;
  /** Currency -> amount in ledger units of that currency (zero allowed), in file order. */
  readonly balances: ReadonlyMap<string, bigint>;
}

export interface ExchangeConfig {
  readonly pairs: readonly PairConfig[];
  readonly pairsByName: ReadonlyMap<string, PairConfig>;
  /** Every currency of some pair, in order of first appearance in `pairs`. */
  readonly currencies: ReadonlyMap<string, CurrencyConfig>;
  readonly users: readonly UserConfig[];
}
