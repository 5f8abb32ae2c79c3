/**
 * The core with real parts for the stage tests of pair events and quotes: a real pair worker
 * (btc_usdt), the real database writer on a temp file, the real ledger and the real Answers. The
 * calls resolve with what the edge would answer.
 */
import assert from "node:assert/strict";
import { afterEach } from "node:test";
import {
  type CommitListener,
  Exchange,
  LIMIT,
  type OrderView,
  pairEventHandler,
} from "../../src/core/exchange.ts";
import { Ledger } from "../../src/core/ledger.ts";
import { PairMarket } from "../../src/core/market-data.ts";
import { PairStatuses } from "../../src/core/pair-status.ts";
import type { QuoteLevel, QuoteResult } from "../../src/core/quotes.ts";
import { DbWriter } from "../../src/db/writer.ts";
import { Code } from "../../src/errors/catalogue.ts";
import { Answers } from "../../src/http/answers.ts";
import { PairChannel } from "../../src/pair/pair-client.ts";

export const BTC = 0;
export const USDT = 1;
/** The fee account's user id in these cores. */
export const FEE_USER = 99;

/** Cores not closed yet: closed after each test, passed or failed, so no thread outlives it. */
const openCores: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (openCores.length > 0) await openCores.pop()!();
});

export const answers = new Answers();

export interface CoreOptions {
  /** Maker and taker rates in units of 10^-6 (docs/API.md 9: the ledger scale grows by 6). */
  fees?: { maker: bigint; taker: bigint };
  listener?: CommitListener | null;
}

/**
 * A core with pair 0 btc_usdt (2 price decimals, 6 amount decimals). Without fees a lot is 1 btc
 * unit and a tick × lot 1 usdt unit; with fees both are 10^6 units (the rates' decimals).
 */
export async function core(file: string, options: CoreOptions = {}) {
  const writer = await DbWriter.start(file);
  const ledger = new Ledger(["btc", "usdt"]);
  // As at start (src/boot.ts): the fee account is a ledger user before any trade credits it.
  ledger.ensureUser(FEE_USER);
  const statuses = new PairStatuses();
  const exchange = new Exchange({
    ledger,
    db: writer,
    sink: answers,
    listener: options.listener ?? null,
    statuses,
    feeUser: FEE_USER,
  });
  const channel = new PairChannel({ pairName: "btc_usdt", onEvent: pairEventHandler(exchange, 0) });
  await channel.ready;
  const fees = options.fees;
  exchange.addPair(
    {
      index: 0,
      name: "btc_usdt",
      base: "btc",
      quote: "usdt",
      priceDecimals: 2,
      amountDecimals: 6,
      makerFee: fees?.maker,
      takerFee: fees?.taker,
    },
    new PairMarket("btc_usdt", 2, 6),
    channel,
    fees === undefined ? 6 : 12,
    fees === undefined ? 8 : 14,
  );
  const close = async () => {
    await channel.close();
    await writer.close();
  };
  openCores.push(close);
  return { exchange, ledger, statuses, writer };
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
