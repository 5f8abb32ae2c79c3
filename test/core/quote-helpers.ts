/**
 * Calls for the stage tests of pair events and quotes on a core of real parts
 * (test/core/core-fixture.ts): each resolves with what the edge would answer.
 */
import assert from "node:assert/strict";
import { afterEach } from "node:test";
import { type Exchange, LIMIT, type OrderView } from "../../src/core/exchange.ts";
import type { QuoteLevel, QuoteResult } from "../../src/core/quotes.ts";
import { Answers } from "../../src/entry/answers.ts";
import { Code } from "../../src/errors/catalogue.ts";
import { type CoreOptions, startCore } from "./core-fixture.ts";

export { BTC, FEE_USER, USDT } from "./core-fixture.ts";

/** Cores not closed yet: closed after each test, passed or failed, so no thread outlives it. */
const openCores: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (openCores.length > 0) await openCores.pop()!();
});

export const answers = new Answers();

/** A core of real parts (test/core/core-fixture.ts) whose calls below answer through `answers`. */
export async function core(file: string, options: Omit<CoreOptions, "answers"> = {}) {
  const c = await startCore(file, { ...options, answers });
  openCores.push(c.close);
  return c;
}

export interface Answer {
  err: number;
  order: OrderView | null;
}

/** Places an order of `type` LIMIT or MARKET (price in ticks, amount in lots). */
export function place(
  exchange: Exchange,
  user: number,
  side: 0 | 1,
  price: number,
  amount: number,
  type: 0 | 1 = LIMIT,
  flags = 0,
): Promise<Answer> {
  return new Promise((resolve) => {
    const request = answers.order((err, order) => resolve({ err, order }));
    const code = exchange.createOrder(
      user,
      0,
      { type, side, price, amount, flags, clientOrderId: undefined, expiresAt: 0, session: 0 },
      request,
    );
    if (code === 0) return;
    answers.drop(request);
    resolve({ err: code, order: null });
  });
}

/** Amends the open order `id` of `user` and resolves with its answer. */
export function amend(
  exchange: Exchange,
  user: number,
  id: number,
  price: number,
  amount: number,
): Promise<Answer> {
  return new Promise((resolve) => {
    const o = exchange.ownOpenOrder(user, id);
    assert.ok(o !== undefined, `order ${id} of user ${user} is open`);
    const request = answers.order((err, order) => resolve({ err, order }));
    const code = exchange.amendOrder(o, price, amount, request);
    if (code === 0) return;
    answers.drop(request);
    resolve({ err: code, order: null });
  });
}

/** Cancels the order `id` of `user` and resolves with the answer's code. */
export function cancel(exchange: Exchange, user: number, id: number): Promise<number> {
  return new Promise((resolve) => {
    const request = answers.cancel((err) => resolve(err));
    const code = exchange.cancelOrder(user, id, request);
    if (code === 0) return;
    answers.drop(request);
    resolve(code);
  });
}

export interface QuoteAnswer {
  err: number;
  result: QuoteResult | null;
}

/** Sends a quote of `user` on pair 0 (`bids` and `asks` as [price, amount] in ticks and lots). */
export function quote(
  exchange: Exchange,
  user: number,
  bids: [number, number][],
  asks: [number, number][],
  session = 0,
): Promise<QuoteAnswer> {
  const levels: QuoteLevel[] = [
    ...bids.map(([price, amount]): QuoteLevel => ({ side: 0, price, amount })),
    ...asks.map(([price, amount]): QuoteLevel => ({ side: 1, price, amount })),
  ];
  return new Promise((resolve) => {
    const request = answers.quote((err, result) => resolve({ err, result }));
    const code = exchange.quote(user, 0, levels, request, session);
    if (code === 0) return;
    answers.drop(request);
    assert.notEqual(code, Code.BUSY);
    resolve({ err: code, result: null });
  });
}

/** The ids of a quote's placed orders (an error code stays as it is). */
export function placedIds(result: QuoteResult | null): (number | string)[] {
  return (result?.placed ?? []).map((p) => (typeof p === "number" ? `error ${p}` : p.id));
}
