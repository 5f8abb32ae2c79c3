/**
 * A core built of real parts for the core's stage tests: one real pair worker (btc_usdt), the real
 * database writer on a temp SQLite file, the real ledger and the edge's real answer map
 * (src/entry/answers.ts), with helpers that send a command and resolve with its answer.
 *
 * Units: the core works in integer ticks and lots (docs/ARCHITECTURE.md), here ticks of 0.01 usdt and
 * lots of 0.000001 btc; the ledger keeps btc at scale 6 and usdt at scale 8, so a lot is 1 btc unit
 * and a tick × lot is 1 usdt unit: a buy of `amount` lots at `price` ticks holds price × amount usdt
 * units, which lets the tests state every balance exactly.
 */
import assert from "node:assert/strict";
import { type CommitListener, Exchange, type OrderView, pairEventHandler } from "../../src/core/exchange.ts";
import { Ledger } from "../../src/core/ledger.ts";
import { PairStatuses } from "../../src/core/pair-status.ts";
import { PairMarket } from "../../src/core/read-models/pair-market.ts";
import { DbWriter } from "../../src/db/writer.ts";
import type { WriterOptions } from "../../src/db/writer-threads.ts";
import { Answers } from "../../src/entry/answers.ts";
import { Code } from "../../src/errors/catalogue.ts";
import { PairChannel } from "../../src/pair/pair-client.ts";

export const BTC = 0;
export const USDT = 1;
/** The fee account's user id in these cores. */
export const FEE_USER = 99;

export interface TestCore {
  exchange: Exchange;
  ledger: Ledger;
  market: PairMarket;
  answers: Answers;
  statuses: PairStatuses;
  writer: DbWriter;
  close: () => Promise<void>;
}

export interface CoreOptions {
  /** Command slots of the pair's ring (a small ring lets a test fill the queue). */
  commandSlots?: number;
  /** Maker and taker rates in units of 10^-6 (docs/API.md 9: the ledger scale grows by 6). */
  fees?: { maker: bigint; taker: bigint };
  listener?: CommitListener | null;
  /** The answer map to use (default a new one). */
  answers?: Answers;
  writer?: WriterOptions;
  /** The ids the first create and the first trade get (ExchangeOptions; default 1, a new database). */
  nextOrderId?: number;
  nextTradeId?: number;
}

/**
 * A core with the btc_usdt pair (index 0: 2 price decimals, 6 amount decimals) on a real worker,
 * writing to the database `file`. Without fees a lot is 1 btc unit and a tick × lot 1 usdt unit;
 * with fees both are 10^6 units (the rates' decimals).
 */
export async function startCore(file: string, options: CoreOptions = {}): Promise<TestCore> {
  const writer = await DbWriter.start(file, options.writer);
  const ledger = new Ledger(["btc", "usdt"]);
  // As at start (src/boot.ts): the fee account is a ledger user before any trade credits it.
  ledger.ensureUser(FEE_USER);
  const answers = options.answers ?? new Answers();
  const statuses = new PairStatuses();
  const exchange = new Exchange({
    ledger,
    db: writer,
    sink: answers,
    listener: options.listener ?? null,
    statuses,
    feeUser: FEE_USER,
    nextOrderId: options.nextOrderId,
    nextTradeId: options.nextTradeId,
  });
  const channel = new PairChannel({
    pairName: "btc_usdt",
    commandSlots: options.commandSlots,
    onEvent: pairEventHandler(exchange, 0),
  });
  try {
    await channel.ready;
  } catch (e) {
    await writer.close();
    throw e;
  }
  const fees = options.fees;
  const market = new PairMarket("btc_usdt", 2, 6);
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
    market,
    channel,
    fees === undefined ? 6 : 12,
    fees === undefined ? 8 : 14,
  );
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await channel.close();
      await writer.close();
    })());
  return { exchange, ledger, market, answers, statuses, writer, close };
}

/** A create's outcome: `code` is what createOrder answered at once, `answer` the later result. */
export interface Sent<T> {
  code: number;
  answer: Promise<T>;
}

export interface OrderAnswer {
  err: number;
  order: OrderView | null;
}

/** What a create asks beyond its price and amount. */
export interface CreateExtras {
  type?: 0 | 1;
  expiresAt?: number;
  session?: number;
  clientOrderId?: string;
}

/**
 * Sends a create of `user` on pair 0. An immediate refusal (nothing changed) has no later answer:
 * `answer` then resolves with that code at once.
 */
export function sendCreate(
  core: TestCore,
  user: number,
  side: 0 | 1,
  price: number,
  amount: number,
  extras: CreateExtras = {},
): Sent<OrderAnswer> {
  let resolve!: (a: OrderAnswer) => void;
  const answer = new Promise<OrderAnswer>((r) => {
    resolve = r;
  });
  const request = core.answers.order((err, order) => resolve({ err, order }));
  const code = core.exchange.createOrder(
    user,
    0,
    {
      type: extras.type ?? 0,
      side,
      price,
      amount,
      flags: 0,
      clientOrderId: extras.clientOrderId,
      expiresAt: extras.expiresAt ?? 0,
      session: extras.session ?? 0,
    },
    request,
  );
  if (code !== 0) {
    core.answers.drop(request);
    resolve({ err: code, order: null });
  }
  return { code, answer };
}

/** Places a limit order and waits until it is answered; fails unless it was accepted. */
export async function placeResting(core: TestCore, user: number, side: 0 | 1, price: number, amount: number) {
  const sent = sendCreate(core, user, side, price, amount);
  assert.equal(sent.code, 0);
  const { err, order } = await sent.answer;
  assert.equal(err, 0);
  return order!;
}

/** Sends a cancel of `user`; as sendCreate, an immediate refusal resolves `answer` with its code. */
export function sendCancel(core: TestCore, user: number, orderId: number, expiresAt = 0): Sent<number> {
  let resolve!: (code: number) => void;
  const answer = new Promise<number>((r) => {
    resolve = r;
  });
  const request = core.answers.cancel((err) => resolve(err));
  const code = core.exchange.cancelOrder(user, orderId, request, expiresAt);
  if (code !== 0) {
    core.answers.drop(request);
    resolve(code);
  }
  return { code, answer };
}

/** Sends an amend of the open order `orderId` of `user` to `price` and the new total `amount`. */
export function sendAmend(
  core: TestCore,
  user: number,
  orderId: number,
  price: number,
  amount: number,
  expiresAt = 0,
): Sent<OrderAnswer> {
  const o = core.exchange.ownOpenOrder(user, orderId);
  assert.ok(o !== undefined, `order ${orderId} of user ${user} is open`);
  let resolve!: (a: OrderAnswer) => void;
  const answer = new Promise<OrderAnswer>((r) => {
    resolve = r;
  });
  const request = core.answers.order((err, order) => resolve({ err, order }));
  const code = core.exchange.amendOrder(o, price, amount, request, expiresAt);
  if (code !== 0) {
    core.answers.drop(request);
    resolve({ err: code, order: null });
  }
  return { code, answer };
}

/** Sends a cancel-all of `user` on `pair` (-1: every pair); `answer` is the ids it cancelled. */
export function sendCancelAll(
  core: TestCore,
  user: number,
  pair: number,
  expiresAt = 0,
): Sent<number[] | null> {
  let resolve!: (ids: number[] | null) => void;
  const answer = new Promise<number[] | null>((r) => {
    resolve = r;
  });
  const request = core.answers.cancelAll((ids) => resolve(ids));
  const code = core.exchange.cancelAll(user, pair, request, expiresAt);
  if (code !== 0) {
    core.answers.drop(request);
    resolve(null);
  }
  assert.notEqual(code, Code.BUSY, "the pair's queue has room");
  return { code, answer };
}
