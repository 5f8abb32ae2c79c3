/**
 * A pair as the core's stages see it: one record per configured pair, built once by `newPairState`
 * and shared by the stages, each reading its own part (the risk stage its units, currencies and
 * sequencer; the results stage its read model, book sequence and the scratch of the command in
 * progress; snapshots its candles).
 */

import type { OrderState } from "./command.ts";
import type { Ledger } from "./ledger.ts";
import type { PairMarket } from "./read-models/pair-market.ts";
import type { ResultPair } from "./results.ts";
import { pairUnits } from "./risk.ts";
import type { RiskPair } from "./risk-stage.ts";
import type { PairSequencer } from "./sequencer.ts";

/** A configured pair as the core needs it. */
export interface PairSpec {
  index: number;
  name: string;
  base: string;
  quote: string;
  priceDecimals: number;
  amountDecimals: number;
  /** Fee rates in units of 10^-FEE_DECIMALS (config.ts); absent or 0n: no fee. */
  makerFee?: bigint;
  takerFee?: bigint;
}

/**
 * Per pair: scale factors between book units and ledger units (risk.ts), its FIFO, and what the
 * results stage keeps of it (its read model, book sequence, the scratch of the command in progress).
 */
export interface PairState extends RiskPair, ResultPair {
  spec: PairSpec;
  /**
   * docs/API.md 18: the triggered market buys of the command in progress that hold a budget; each
   * is released when the command ends.
   */
  triggeredBuys: OrderState[];
}

/**
 * The state of pair `spec`: its currencies' scales (`baseScale`, `quoteScale`, the ledger's
 * decimals), its read model `market` and sequencer `seq`, and the book sequence last committed
 * (`bookSeq`, 0 for a new book) and its time (`bookMicro`).
 */
export function newPairState(
  spec: PairSpec,
  ledger: Ledger,
  market: PairMarket,
  seq: PairSequencer,
  baseScale: number,
  quoteScale: number,
  bookSeq: number,
  bookMicro: number,
): PairState {
  const makerFee = spec.makerFee ?? 0n;
  const takerFee = spec.takerFee ?? 0n;
  market.seq = bookSeq;
  market.bookMicro = bookMicro;
  return {
    spec,
    market,
    seq,
    base: ledger.currencyIndex(spec.base),
    quote: ledger.currencyIndex(spec.quote),
    ...pairUnits(spec, baseScale, quoteScale),
    hasFees: makerFee !== 0n || takerFee !== 0n,
    makerFee,
    takerFee,
    makerRate: Number(makerFee),
    takerRate: Number(takerFee),
    bookSeq,
    seqDirty: false,
    bookMicro,
    l3: null,
    l3Pending: false,
    touched: [],
    trailed: [],
    trades: [],
    stepTrades: 0,
    userTrades: [],
    levels: [],
    triggeredBuys: [],
  };
}

/**
 * The lowest order id that may still get an order record: the oldest create still in a pair
 * worker (a pair's creates in the worker are in id order), else `nextOrderId`, the next id to be
 * given. Every id below it has had all its records handed to the writer, or never will (refused by
 * the book).
 */
export function lowestUnsettledOrderId(pairs: readonly PairState[], nextOrderId: number): number {
  let low = nextOrderId;
  for (const p of pairs) {
    if (p === undefined) continue;
    const oldest = p.seq.oldestCreate();
    if (oldest < low) low = oldest;
  }
  return low;
}
