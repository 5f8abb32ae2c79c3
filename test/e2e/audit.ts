/**
 * Whole-exchange audits from the outside: read every user's balances, orders and trades and every
 * book, then check them against each other and against the money the harness put in.
 *
 * From first principles (docs/API.md 6), for every user and currency:
 *   available + reserved = deposits − withdrawals + Σ trades (buy: +amount base, −price×amount quote;
 *                                                             sell: the opposite)
 *   reserved = Σ open limit buys price × (amount − amountUsed) of the quote
 *            + Σ open limit sells (amount − amountUsed) of the base
 *            + Σ waiting stop-market sells (amount) of the base (docs/API.md 18; a waiting
 *              stop-market buy holds nothing, a waiting stop-limit holds as a limit order)
 *            except that an OCO's waiting stop leg beside its open limit leg holds only what it
 *            would hold beyond the limit leg's (the two share one hold)
 * and for every (pair, direction): Σ amountUsed of the user's orders = Σ amounts of its trades.
 * Each book equals the aggregation of every user's open limit orders that are not waiting stops,
 * and is not crossed.
 * Over all users, available + reserved of a currency equals deposits − withdrawals; nothing is < 0.
 */

import assert from "node:assert/strict";
import type {
  Candle,
  Order,
  OrderBook,
  PairPage,
  PairRecord,
  PublicTrade,
  UserTrade,
} from "../../src/client/index.ts";
import { dec, fmt, mul } from "./decimal.ts";
import {
  type Balances,
  CURRENCIES,
  expectOk,
  isOpen,
  PAIR_NAMES,
  PAIRS,
  pairSpec,
  type TestServer,
  type TestUser,
} from "./harness.ts";

export interface UserState {
  user: TestUser;
  balances: Balances;
  orders: Order[];
  trades: UserTrade[];
}

/** A canonical (string) order level, for exact comparisons. */
export interface TextLevel {
  price: string;
  amount: string;
}

export interface TextBook {
  buy: TextLevel[];
  sell: TextLevel[];
}

export function textBook(book: OrderBook): TextBook {
  const side = (levels: { price: number; amount: number }[]) =>
    levels.map((l) => ({ price: fmt(dec(l.price)), amount: fmt(dec(l.amount)) }));
  return { buy: side(book.buy), sell: side(book.sell) };
}

export async function readUserState(server: TestServer, user: TestUser): Promise<UserState> {
  const [balances, orders, trades] = await Promise.all([
    server.balances(user),
    server.allOrders(user),
    server.allTrades(user),
  ]);
  return { user, balances, orders, trades };
}

export async function readBooks(server: TestServer): Promise<Map<string, TextBook>> {
  const books = new Map<string, TextBook>();
  for (const pair of PAIR_NAMES) {
    books.set(pair, textBook(expectOk(await server.public.orderBook(pair), `book ${pair}`)));
  }
  return books;
}

/** The book implied by these orders: open limit orders aggregated by price, best first. */
export function impliedBook(orders: Iterable<Order>, pair: string): TextBook {
  const buy = new Map<bigint, bigint>();
  const sell = new Map<bigint, bigint>();
  for (const o of orders) {
    // docs/API.md 18: a waiting stop is in no book.
    if (o.pairName !== pair || o.tradeType !== "limit" || !isOpen(o) || o.triggered === false) continue;
    const side = o.directionType === "buy" ? buy : sell;
    const price = dec(o.price);
    side.set(price, (side.get(price) ?? 0n) + dec(o.amount) - dec(o.amountUsed));
  }
  const levels = (m: Map<bigint, bigint>, descending: boolean) =>
    [...m.entries()]
      .sort((a, b) => (a[0] === b[0] ? 0 : a[0] < b[0] !== descending ? -1 : 1))
      .map(([price, amount]) => ({ price: fmt(price), amount: fmt(amount) }));
  return { buy: levels(buy, true), sell: levels(sell, false) };
}

/** Expected total (available + reserved) and reserved per currency of one user, from its records. */
export function expectedLedger(state: UserState): {
  total: Map<string, bigint>;
  reserved: Map<string, bigint>;
} {
  const total = new Map<string, bigint>(CURRENCIES.map((c) => [c, state.user.net.get(c) ?? 0n]));
  const reserved = new Map<string, bigint>(CURRENCIES.map((c) => [c, 0n]));
  const add = (m: Map<string, bigint>, c: string, v: bigint) => m.set(c, (m.get(c) ?? 0n) + v);
  for (const t of state.trades) {
    const p = pairSpec(t.pairName);
    const amount = dec(t.amount);
    const cost = mul(dec(t.price), amount);
    if (t.directionType === "buy") {
      add(total, p.base, amount);
      add(total, p.quote, -cost);
    } else {
      add(total, p.base, -amount);
      add(total, p.quote, cost);
    }
  }
  const holdOf = (o: Order): bigint => {
    const left = dec(o.amount) - dec(o.amountUsed);
    // Only a waiting stop-market order is open; a sell holds its amount (docs/API.md 18).
    if (o.tradeType !== "limit") return o.directionType === "sell" ? left : 0n;
    return o.directionType === "buy" ? mul(dec(o.price), left) : left;
  };
  const open = new Map<number, Order>();
  for (const o of state.orders) if (isOpen(o)) open.set(o.id, o);
  for (const o of open.values()) {
    const p = pairSpec(o.pairName);
    let hold = holdOf(o);
    const limitLeg = o.ocoId !== undefined && o.ocoId !== o.id ? open.get(o.ocoId) : undefined;
    if (limitLeg !== undefined && o.triggered === false) {
      const shared = holdOf(limitLeg);
      hold = hold > shared ? hold - shared : 0n;
    }
    add(reserved, o.directionType === "buy" ? p.quote : p.base, hold);
  }
  return { total, reserved };
}

/** Per-user checks: ledger reconstruction, fills = trades, nothing negative, order fields sane. */
export function auditUser(state: UserState): void {
  const who = `user ${state.user.uid}`;
  const { total, reserved } = expectedLedger(state);
  for (const c of CURRENCIES) {
    const actual = state.balances.get(c) ?? { available: 0n, reserved: 0n };
    assert.ok(actual.available >= 0n, `${who}: ${c} available is negative: ${fmt(actual.available)}`);
    assert.ok(actual.reserved >= 0n, `${who}: ${c} reserved is negative: ${fmt(actual.reserved)}`);
    assert.equal(
      fmt(actual.available + actual.reserved),
      fmt(total.get(c)!),
      `${who}: ${c} available + reserved must equal deposits − withdrawals + trades`,
    );
    assert.equal(
      fmt(actual.reserved),
      fmt(reserved.get(c)!),
      `${who}: ${c} reserved must equal its open orders`,
    );
  }
  const used = new Map<string, bigint>();
  const traded = new Map<string, bigint>();
  for (const o of state.orders) {
    const key = `${o.pairName} ${o.directionType}`;
    used.set(key, (used.get(key) ?? 0n) + dec(o.amountUsed));
    assert.ok(dec(o.amountUsed) <= dec(o.amount), `${who}: order ${o.id} amountUsed above amount`);
    // A market order ends in its own step; a stop-market one waits until triggered (docs/API.md 18).
    if (o.tradeType === "market" && o.triggered !== false) {
      assert.ok(
        o.isCancelled || dec(o.amountUsed) === dec(o.amount),
        `${who}: market order ${o.id} is still open: ${JSON.stringify(o)}`,
      );
    }
  }
  for (const t of state.trades) {
    const key = `${t.pairName} ${t.directionType}`;
    traded.set(key, (traded.get(key) ?? 0n) + dec(t.amount));
  }
  const keys = new Set([...used.keys(), ...traded.keys()]);
  for (const key of keys) {
    assert.equal(
      fmt(used.get(key) ?? 0n),
      fmt(traded.get(key) ?? 0n),
      `${who}: Σ amountUsed of ${key} orders must equal Σ amounts of ${key} trades`,
    );
  }
  // Ids strictly decrease down the pages (newest first), never repeat.
  for (let i = 1; i < state.orders.length; i++) {
    assert.ok(state.orders[i - 1].id > state.orders[i].id, `${who}: user-orders not in id-descending order`);
  }
  for (let i = 1; i < state.trades.length; i++) {
    assert.ok(state.trades[i - 1].id > state.trades[i].id, `${who}: user-history not in id-descending order`);
  }
}

/** Σ over users of available + reserved equals deposits − withdrawals, per currency. */
export function auditConservation(server: TestServer, states: readonly UserState[]): void {
  assert.equal(states.length, server.users.length, "conservation needs every user of the server");
  for (const c of CURRENCIES) {
    let held = 0n;
    for (const s of states) {
      const b = s.balances.get(c);
      if (b !== undefined) held += b.available + b.reserved;
    }
    assert.equal(
      fmt(held),
      fmt(server.totals.get(c) ?? 0n),
      `conservation of ${c}: Σ held = deposits − withdrawals`,
    );
  }
}

/** Every book equals the book implied by all users' open orders, and is not crossed. */
export function auditBooks(books: Map<string, TextBook>, states: readonly UserState[]): void {
  const allOrders = states.flatMap((s) => s.orders);
  for (const pair of PAIR_NAMES) {
    const book = books.get(pair)!;
    assert.deepEqual(book, impliedBook(allOrders, pair), `book of ${pair} must equal the open orders`);
    if (book.buy.length > 0 && book.sell.length > 0) {
      assert.ok(dec(book.buy[0].price) < dec(book.sell[0].price), `book of ${pair} is crossed`);
    }
  }
}

/** Reads everything and runs every audit; returns the states for further checks. */
export async function auditExchange(
  server: TestServer,
): Promise<{ states: UserState[]; books: Map<string, TextBook> }> {
  const states: UserState[] = [];
  // A few users at a time: enough parallelism without flooding the server.
  for (let i = 0; i < server.users.length; i += 8) {
    states.push(...(await Promise.all(server.users.slice(i, i + 8).map((u) => readUserState(server, u)))));
  }
  const books = await readBooks(server);
  for (const s of states) auditUser(s);
  auditConservation(server, states);
  auditBooks(books, states);
  return { states, books };
}

export interface ExchangeSnapshot {
  pairs: PairRecord[];
  books: Record<string, OrderBook>;
  history: Record<string, PublicTrade[]>;
  charts: Record<string, Candle[]>;
  pages: Record<string, PairPage>;
  users: { uid: string; balances: Record<string, [string, string]>; orders: Order[]; trades: UserTrade[] }[];
}

/** Everything readable, as plain JSON values, to compare before and after a restart. */
export async function snapshotExchange(server: TestServer): Promise<ExchangeSnapshot> {
  const c = server.public;
  const snapshot: ExchangeSnapshot = {
    pairs: expectOk(await c.pairs(), "pairs"),
    books: {},
    history: {},
    charts: {},
    pages: {},
    users: [],
  };
  for (const p of PAIRS) {
    snapshot.books[p.name] = expectOk(await c.orderBook(p.name), "book");
    snapshot.history[p.name] = expectOk(await c.history(p.name), "history");
    for (const period of ["1m", "1h", "1w"]) {
      snapshot.charts[`${p.name} ${period}`] = expectOk(await c.chart(p.name, period), "chart");
    }
    snapshot.pages[p.name] = expectOk(await c.pairPage(p.name), "pair page");
  }
  for (const user of server.users) {
    const state = await readUserState(server, user);
    const balances: Record<string, [string, string]> = {};
    for (const [cur, b] of state.balances) balances[cur] = [fmt(b.available), fmt(b.reserved)];
    snapshot.users.push({ uid: user.uid, balances, orders: state.orders, trades: state.trades });
    const page = expectOk(await user.client.pairPage(PAIRS[0].name), "signed pair page");
    snapshot.pages[`${PAIRS[0].name} as ${user.uid}`] = page;
  }
  return snapshot;
}
