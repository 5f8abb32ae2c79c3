/**
 * The one place where order entry talks to the core (src/core/exchange.ts): create, cancel, amend,
 * cancel-all, quote, and the committed row that judges an order the core no longer holds. The calls
 * (calls.ts) use these after validation; every `exchange.*` command call of every front end is in
 * this file. Each command carries a request id from `ctx.answers` (answers.ts): the core answers 0
 * when it accepted the command, and its result later comes back under that id; any other code is a
 * refusal with nothing changed, answered here.
 */
import { isWaitingStop, LIMIT, MARKET, type QuoteResult } from "../core/command.ts";
import { NEEDS_ROW, type OrderView } from "../core/exchange.ts";
import type { QuoteLevel } from "../core/quotes.ts";
import { closedError } from "../core/recently-closed.ts";
import type { ErrorEntry } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";
import { BUY } from "../protocol/pair/engine.ts";
import { formatDecimal, parseDecimal } from "../util/numbers.ts";
import type { EntryContext } from "./context.ts";
import type { Reply } from "./reply.ts";
import { belowMinNotional, parseAmount, parsePrice, type ValidOco, type ValidOrder } from "./validate.ts";

/** Sends a valid order to the core; `reply` gets the error code, or 0 and the order. */
export function placeOrder(
  ctx: EntryContext,
  userId: number,
  v: ValidOrder,
  reply: (err: number, order: OrderView | null) => void,
): void {
  const p = v.pair!;
  const { answers, metrics } = ctx;
  const request = answers.order((err, order) => {
    if (err === 0) metrics.order(p.index, v.type);
    reply(err, order);
  });
  const code = ctx.exchange.createOrder(userId, p.index, v, request);
  if (code === 0) return;
  // Refused at once, nothing changed: no result will come under the id.
  answers.drop(request);
  reply(code, null);
}

/** docs/API.md 18: create-oco's answer, the OCO's id and its legs (limit leg, stop leg). */
export interface OcoView {
  ocoId: number;
  orders: [OrderView, OrderView];
}

/** Sends a valid OCO to the core; `reply` gets the error code, or 0 and the OCO. */
export function placeOco(
  ctx: EntryContext,
  userId: number,
  v: ValidOco,
  reply: (err: number, oco: OcoView | null) => void,
): void {
  const p = v.pair!;
  const { answers, metrics } = ctx;
  const request = answers.order((err, limit, stop) => {
    if (err !== 0) return reply(err, null);
    metrics.order(p.index, LIMIT);
    reply(0, { ocoId: limit!.id, orders: [limit!, stop!] });
  });
  const code = ctx.exchange.createOco(userId, p.index, v, request);
  if (code === 0) return;
  answers.drop(request);
  reply(code, null);
}

/**
 * A batch's answer (docs/API.md 8.5): element i goes in place i, in any order, and the list is
 * answered once all `n` are in.
 */
export function batchAnswer<T>(n: number, done: (items: T[]) => void) {
  const out: T[] = new Array(n);
  let left = n;
  return (i: number, item: T): void => {
    out[i] = item;
    if (--left === 0) done(out);
  };
}

/**
 * Cancels one order of `userId`; `reply` gets 0 once the cancel committed, or the error code
 * (an order no longer in memory is judged by its committed row).
 */
export function cancelOne(
  ctx: EntryContext,
  userId: number,
  orderId: number,
  reply: (err: number) => void,
  expiresAt = 0,
): void {
  // A cancel that waited behind the caller's quote (src/core/quotes.ts) may find the order gone.
  const request = ctx.answers.cancel((err) =>
    err === NEEDS_ROW ? readClosed(ctx, userId, orderId, reply) : reply(err),
  );
  const code = ctx.exchange.cancelOrder(userId, orderId, request, expiresAt);
  if (code === 0) return;
  ctx.answers.drop(request);
  if (code === NEEDS_ROW) readClosed(ctx, userId, orderId, reply);
  else reply(code);
}

/** The cancel error of an order the core no longer holds, from its committed row. */
/**
 * The pair, side and type of the caller's open order `orderId`, and whether it has traded; undefined
 * when it is not the caller's open order. A FIX cancel or replace names its order with these
 * (docs/API.md 17.2, DECISIONS.md "FIX gateway: readings of the contract").
 */
export function openOrderFacts(
  ctx: EntryContext,
  userId: number,
  orderId: number,
):
  | { pairName: string; side: "buy" | "sell"; type: "limit" | "market"; stop: boolean; traded: boolean }
  | undefined {
  const o = ctx.exchange.ownOpenOrder(userId, orderId);
  if (o === undefined) return undefined;
  return {
    pairName: ctx.config.pairs[o.pair].name,
    side: o.side === BUY ? "buy" : "sell",
    type: o.type === LIMIT ? "limit" : "market",
    stop: o.stopDirection !== 0,
    traded: o.used > 0,
  };
}

/**
 * The ids of `userId`'s stop orders waiting for their trigger now (docs/API.md 18): the FIX
 * reports tell the trigger of these from their other changes (docs/API.md 17.2, ExecType L).
 */
export function waitingStopIds(ctx: EntryContext, userId: number): number[] {
  const ids: number[] = [];
  for (const o of ctx.exchange.openOrders.userOrders(userId, [])) if (isWaitingStop(o)) ids.push(o.id);
  return ids;
}

export function readClosed(
  ctx: EntryContext,
  userId: number,
  orderId: number,
  reply: (err: number) => void,
): void {
  ctx.reader.order(orderId).then(
    (row) => {
      if (row === undefined || row.userId !== userId) reply(Code.ORDER_NOT_FOUND);
      else reply(closedError({ cancelled: !!row.isCancelled, used: row.amountUsed, amount: row.amount }));
    },
    () => reply(Code.INTERNAL),
  );
}

/**
 * Amends the caller's order `orderId` (docs/API.md 8.3) and answers: the new amount and price are read
 * against the order's pair (the body's errors so far are in `errors`, empty here).
 */
export function amendOne(
  ctx: EntryContext,
  out: Reply<OrderView>,
  userId: number,
  orderId: number,
  body: Record<string, unknown>,
  errors: ErrorEntry[],
  expiresAt = 0,
): void {
  const { exchange } = ctx;
  const reply = (err: number, order: OrderView | null) => (err === 0 ? out.ok(order!) : out.error(err));
  const o = exchange.ownOpenOrder(userId, orderId);
  if (o === undefined) {
    const err = exchange.notOpenError(userId, orderId);
    if (err >= 0) reply(err, null);
    else readClosed(ctx, userId, orderId, (e) => reply(e, null));
    return;
  }
  // docs/API.md 18: an OCO's legs are cancelled, not amended.
  if (o.ocoId !== 0) {
    reply(Code.OCO_AMEND, null);
    return;
  }
  const pair = ctx.config.pairs[o.pair];
  const hasAmount = body.amount !== undefined && body.amount !== null;
  const hasPrice = body.price !== undefined && body.price !== null;
  const amount = hasAmount ? parseAmount(body.amount, pair, errors) : o.amount;
  const price = hasPrice ? parsePrice(body.price, pair, errors) : o.price;
  // docs/API.md 18: a waiting stop's stop price may change too; a stop-market has no price.
  let stopPrice = 0;
  if (body.stopPrice !== undefined) {
    const sp = parseDecimal(body.stopPrice, pair.priceDecimals);
    if (typeof sp !== "bigint" || sp <= 0n || sp > pair.maxPrice) errors.push([Code.STOP_PRICE_INVALID]);
    else if (!isWaitingStop(o) || o.trailingDelta > 0) errors.push([Code.STOP_AMEND_NOT_WAITING]);
    else stopPrice = Number(sp);
  }
  let trailingDelta = 0;
  if (body.trailingDelta !== undefined) {
    const d = parseDecimal(body.trailingDelta, pair.priceDecimals);
    if (typeof d !== "bigint" || d <= 0n || d > pair.maxPrice) errors.push([Code.TRAILING_DELTA_INVALID]);
    else if (!isWaitingStop(o) || o.trailingDelta === 0) errors.push([Code.TRAILING_AMEND_NOT_TRAILING]);
    else trailingDelta = Number(d);
  }
  const stopMarket = isWaitingStop(o) && o.type === MARKET;
  if (hasPrice && stopMarket) errors.push([Code.STOP_MARKET_PRICE]);
  // docs/API.md 20.5: the amended order is a limit order like any other (a stop-market is checked
  // when it triggers, docs/API.md 18).
  if (errors.length === 0 && !stopMarket && belowMinNotional(pair, price, amount))
    errors.push([
      Code.NOTIONAL_BELOW_MIN,
      formatDecimal(pair.minNotional, pair.priceDecimals + pair.amountDecimals),
    ]);
  if (errors.length > 0) {
    out.invalid(errors);
    return;
  }
  const request = ctx.answers.order(reply);
  const code = exchange.amendOrder(
    o,
    stopMarket ? o.price : price,
    amount,
    request,
    expiresAt,
    stopPrice,
    trailingDelta,
  );
  if (code === 0) return;
  ctx.answers.drop(request);
  reply(code, null);
}

/** Cancels the user's open orders on `pairIndex` (-1: all) and answers the ids cancelled. */
export function cancelAll(
  ctx: EntryContext,
  reply: Reply<number[]>,
  userId: number,
  pairIndex: number,
  expiresAt = 0,
): void {
  const request = ctx.answers.cancelAll((ids) => reply.ok(ids));
  const code = ctx.exchange.cancelAll(userId, pairIndex, request, expiresAt);
  if (code === 0) return;
  ctx.answers.drop(request);
  reply.error(code);
}

/**
 * Replaces the caller's quote on `pairIndex` (docs/API.md 8.12) and answers once it committed: the
 * ids cancelled, and `placed[i]` the order or the error code of level i.
 */
export function quoteOne(
  ctx: EntryContext,
  reply: Reply<QuoteResult>,
  userId: number,
  pairIndex: number,
  levels: readonly QuoteLevel[],
  session: number,
  expiresAt = 0,
): void {
  const request = ctx.answers.quote((code, result) =>
    code !== 0 || result === null ? reply.error(code) : reply.ok(result),
  );
  const code = ctx.exchange.quote(userId, pairIndex, levels, request, session, expiresAt);
  if (code === 0) return;
  ctx.answers.drop(request);
  reply.error(code);
}
