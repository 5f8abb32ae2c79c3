/**
 * What the stop-order tests share (docs/API.md 18): an order's record, and one trade at a price
 * between two users, which is what triggers and moves stops.
 */
import assert from "node:assert/strict";
import type { Order } from "../../src/client/index.ts";
import { expectOk, placeLimit, type TestUser } from "./harness.ts";

export async function read(user: TestUser, id: number): Promise<Order> {
  return expectOk(await user.client.order(id), `order ${id}`);
}

/** One trade of `amount` at `price` between `maker` and `taker` (no other ask below it). */
export async function tradeAt(maker: TestUser, taker: TestUser, pair: string, price: string, amount: string) {
  await placeLimit(maker, pair, "sell", price, amount);
  const buy = await placeLimit(taker, pair, "buy", price, amount);
  assert.equal(buy.amountUsed, Number(amount), `the trade at ${price}`);
}
