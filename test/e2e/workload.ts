/**
 * Random but reproducible order flow for the burst tests: prices in whole ticks around a mid price,
 * amounts in whole lots, so every generated value is valid for its pair (docs/API.md 1) and the
 * only possible refusals are about money or liquidity.
 */

import {
  type ApiResponse,
  type CreatedOrder,
  type CreateOrderRequest,
  type DirectionType,
  errorsOf,
} from "../../src/client/index.ts";
// mulberry32, so that bursts are reproducible from their seed.
import { mulberry32 as prng } from "../support/prng.ts";
import { fmt, fromUnits } from "./decimal.ts";
import { isOpen, pairSpec, type TestUser } from "./harness.ts";

export interface PairFlow {
  pair: string;
  /** Mid price and half spread, in ticks (10^-priceDecimals). */
  midTicks: number;
  spreadTicks: number;
  /** Amount range, in lots (10^-amountDecimals). */
  minLots: number;
  maxLots: number;
}

/**
 * The three test pairs around prices of their scale (btc_usdt 30,000, eth_usdt 2,000, eth_btc
 * 0.066), with sizes that funds of `{ usdt: "1000000", btc: "100", eth: "1000" }` cover.
 */
export const BURST_PAIRS: readonly PairFlow[] = [
  { pair: "btc_usdt", midTicks: 3_000_000, spreadTicks: 3_000, minLots: 1_000, maxLots: 50_000 },
  { pair: "eth_usdt", midTicks: 200_000, spreadTicks: 200, minLots: 1_000, maxLots: 50_000 },
  { pair: "eth_btc", midTicks: 66_000, spreadTicks: 60, minLots: 100, maxLots: 5_000 },
];

export interface Flow {
  pairs: readonly PairFlow[];
  /** Share of market orders, 0..1. */
  marketShare: number;
  /**
   * Share of stop orders, 0..1 (docs/API.md 18): a stop price drawn as a limit price is, `"up"`
   * above the mid and `"down"` below, so some wait and some are set off by the flow; one whose
   * condition already holds is refused 400 `stopPrice`. Absent: no stops (and the same draws as
   * before they existed).
   */
  stopShare?: number;
}

function between(rng: () => number, min: number, max: number): number {
  return min + Math.floor(rng() * (max - min + 1));
}

export function randomOrder(rng: () => number, flow: Flow): CreateOrderRequest {
  const f = flow.pairs[Math.floor(rng() * flow.pairs.length)];
  const spec = pairSpec(f.pair);
  const directionType: DirectionType = rng() < 0.5 ? "buy" : "sell";
  const amount = fmt(fromUnits(between(rng, f.minLots, f.maxLots), spec.amountDecimals));
  const priceOf = (ticks: number) => fmt(fromUnits(ticks, spec.priceDecimals));
  const stop =
    flow.stopShare !== undefined && rng() < flow.stopShare
      ? between(rng, f.midTicks - f.spreadTicks, f.midTicks + f.spreadTicks)
      : null;
  const stopFields =
    stop === null
      ? {}
      : { stopPrice: priceOf(stop), stopDirection: stop >= f.midTicks ? ("up" as const) : ("down" as const) };
  if (rng() < flow.marketShare)
    return { pairName: f.pair, tradeType: "market", directionType, amount, ...stopFields };
  const ticks = between(rng, f.midTicks - f.spreadTicks, f.midTicks + f.spreadTicks);
  return {
    pairName: f.pair,
    tradeType: "limit",
    directionType,
    price: priceOf(ticks),
    amount,
    ...stopFields,
  };
}

/** What the clients saw acknowledged during a burst. */
export interface Acknowledged {
  /** Order id -> the create-order answer and its owner. */
  orders: Map<number, { order: CreatedOrder; user: TestUser }>;
  /** Ids whose cancel answered 200. */
  cancels: Set<number>;
  /** Answers other than 200 by "status key" (e.g. "400 amount"), with counts. */
  refusals: Map<string, number>;
  /** Requests that got no answer (network error, timeout). */
  unanswered: number;
}

export function newAcknowledged(): Acknowledged {
  return { orders: new Map(), cancels: new Set(), refusals: new Map(), unanswered: 0 };
}

function refusalKey(kind: string, res: ApiResponse<unknown>): string {
  return `${kind} ${res.status} ${Object.keys(errorsOf(res) ?? {}).join(",")}`;
}

export interface BurstOptions {
  users: readonly TestUser[];
  flow: Flow;
  seed: number;
  /** Concurrent request loops per user. */
  loopsPerUser: number;
  /** Requests per loop at most. */
  stepsPerLoop: number;
  /** Chance that a step cancels one of the user's acknowledged orders instead of creating one. */
  cancelShare: number;
  /** Checked before each request; true ends every loop. */
  shouldStop?: () => boolean;
  /** Called after each answer with the number of answers so far. */
  onAnswer?: (answers: number) => void;
  timeoutMs?: number;
}

/**
 * Runs the loops until each has done its steps, or `shouldStop`, or its first request without an
 * answer (the server is gone). Records everything acknowledged into `acked`.
 */
export async function runBurst(options: BurstOptions, acked: Acknowledged): Promise<void> {
  let answers = 0;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const loops = options.users.flatMap((user, u) => {
    const cancellable: number[] = [];
    return Array.from({ length: options.loopsPerUser }, async (_, l) => {
      const rng = prng(options.seed + u * 1000 + l);
      for (let step = 0; step < options.stepsPerLoop; step++) {
        if (options.shouldStop?.() === true) return;
        try {
          if (cancellable.length > 0 && rng() < options.cancelShare) {
            const [id] = cancellable.splice(Math.floor(rng() * cancellable.length), 1);
            const res = await user.client.cancelOrder(id, { timeoutMs });
            if (res.status === 200) acked.cancels.add(id);
            else bump(acked.refusals, refusalKey("cancel", res));
          } else {
            const res = await user.client.createOrder(randomOrder(rng, options.flow), { timeoutMs });
            if (res.status === 200) {
              const order = res.body as CreatedOrder;
              acked.orders.set(order.id, { order, user });
              if (order.tradeType === "limit" && isOpen(order)) {
                cancellable.push(order.id);
              }
            } else {
              bump(acked.refusals, refusalKey("create", res));
            }
          }
          answers++;
          options.onAnswer?.(answers);
        } catch {
          acked.unanswered++;
          return;
        }
      }
    });
  });
  await Promise.all(loops);
}

function bump(m: Map<string, number>, key: string): void {
  m.set(key, (m.get(key) ?? 0) + 1);
}
