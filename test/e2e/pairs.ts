/**
 * The pairs of the config file every test server gets (harness.ts writes it), and that config as
 * the server reads it: the OpenAPI document of a test server is built from it (openapi-check.ts).
 */

import { validateConfig } from "../../src/config/config-file.ts";
import type { ExchangeConfig } from "../../src/config/exchange-config.ts";

export interface PairSpec {
  name: string;
  base: string;
  quote: string;
  priceDecimals: number;
  amountDecimals: number;
  minAmount: string;
  maxAmount: string;
  maxPrice: string;
}

export const PAIRS: readonly PairSpec[] = [
  {
    name: "btc_usdt",
    base: "btc",
    quote: "usdt",
    priceDecimals: 2,
    amountDecimals: 6,
    minAmount: "0.000001",
    maxAmount: "10000",
    maxPrice: "10000000",
  },
  {
    name: "eth_usdt",
    base: "eth",
    quote: "usdt",
    priceDecimals: 2,
    amountDecimals: 5,
    minAmount: "0.00001",
    maxAmount: "100000",
    maxPrice: "1000000",
  },
  {
    name: "eth_btc",
    base: "eth",
    quote: "btc",
    priceDecimals: 6,
    amountDecimals: 4,
    minAmount: "0.0001",
    maxAmount: "100000",
    maxPrice: "100",
  },
];

export const PAIR_NAMES = PAIRS.map((p) => p.name);

/** The pairs of the config file every test server gets (`base`/`quote` come from the names). */
export const CONFIG_PAIRS = PAIRS.map(({ base: _b, quote: _q, ...rest }) => rest);

/** The config as the server reads it (fees aside): what its OpenAPI document is built from. */
export const TEST_CONFIG: ExchangeConfig = validateConfig({ pairs: CONFIG_PAIRS });
