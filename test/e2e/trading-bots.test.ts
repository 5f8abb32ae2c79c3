/**
 * What trading bots need (docs/API.md 20), end to end on a real server and a real SQLite file:
 * trades tied to their orders, the book's time, reads from a point, the account read and the
 * minimum order value. User rows are read from two places (the user-row tables up to the writer's
 * marks, the tail above them: migration 002); a restart moves the marks over the trades made
 * before it, so the tests see rows on both sides of them.
 */

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Database from "better-sqlite3";
import type { CreatedOrder, UserTrade } from "../../src/client/index.ts";
import { CURRENCIES, expectError, expectOk, limit, market, TestServer, type TestUser } from "./harness.ts";

/** The writer's marks (migration 002): user rows at or below them are in user_orders / user_trades. */
function marks(server: TestServer): { orders: number; trades: number } {
  const db = new Database(server.dbPath, { readonly: true, fileMustExist: true });
  try {
    const of = (key: string) =>
      db.prepare<[string], number>("SELECT value FROM meta WHERE key = ?").pluck().get(key) ?? 0;
    return { orders: of("user_orders_through"), trades: of("user_trades_through") };
  } finally {
    db.close();
  }
}

describe("trades tied to orders", () => {
  let server: TestServer;
  let maker: TestUser;
  let taker: TestUser;
  let ask: CreatedOrder;
  let bid: CreatedOrder;
  let marketBuy: CreatedOrder;
  let limitSell: CreatedOrder;

  before(async () => {
    server = await TestServer.start();
    maker = await server.newUser({ btc: "10", usdt: "100000", eth: "10" });
    taker = await server.newUser({ btc: "10", usdt: "100000", eth: "10" });
    // Trade 1 (btc_usdt): the maker's resting ask, taken by a market buy.
    ask = expectOk(await maker.client.createOrder(limit("btc_usdt", "sell", "30000", "1")));
    marketBuy = expectOk(await taker.client.createOrder(market("btc_usdt", "buy", "0.25")));
    // The restart writes the user rows of everything so far and moves the marks over them.
    await server.restart();
    // Trade 2 (eth_usdt), above the marks: the maker's resting bid, taken by a limit sell.
    bid = expectOk(await maker.client.createOrder(limit("eth_usdt", "buy", "2000", "2")));
    limitSell = expectOk(await taker.client.createOrder(limit("eth_usdt", "sell", "1999", "0.5")));
  });
  after(async () => {
    await server.close();
  });

  it("has one trade below the writer's mark and one above it", async () => {
    const m = marks(server);
    assert.ok(
      m.trades >= expectOk(await server.public.history("btc_usdt"))[0].id,
      "trade 1 is below the mark",
    );
    assert.ok(
      expectOk(await server.public.history("eth_usdt"))[0].id > m.trades,
      "trade 2 is above the mark",
    );
  });

  it("names the caller's order and its liquidity in user-history items, below and above the marks", async () => {
    const mine = (items: UserTrade[]) => items.map((t) => [t.pairName, t.orderId, t.liquidity]);
    assert.deepEqual(mine(expectOk(await maker.client.userHistory()).items), [
      ["eth_usdt", bid.id, "maker"],
      ["btc_usdt", ask.id, "maker"],
    ]);
    assert.deepEqual(mine(expectOk(await taker.client.userHistory()).items), [
      ["eth_usdt", limitSell.id, "taker"],
      ["btc_usdt", marketBuy.id, "taker"],
    ]);
  });

  it("gives public history items the trade id, the same as the users' items", async () => {
    const takerTrades = expectOk(await taker.client.userHistory()).items;
    const btc = expectOk(await server.public.history("btc_usdt"));
    const eth = expectOk(await server.public.history("eth_usdt"));
    assert.deepEqual(
      [eth[0].id, btc[0].id],
      takerTrades.map((t) => t.id),
    );
    assert.ok(eth[0].id > btc[0].id, "trade ids grow");
  });

  it("shows the ids on the pair page's history and the caller's userHistory", async () => {
    const page = expectOk(await maker.client.pairPage("eth_usdt"));
    const userTrades = expectOk(await maker.client.userHistory()).items;
    assert.equal(page.history[0].id, userTrades[0].id);
    assert.deepEqual(page.userHistory, userTrades, "the page's userHistory items are the REST items");
  });

  it("shows orderId and liquidity on the trade items of the executions read", async () => {
    const ex = expectOk(await maker.client.executions({ limit: 1000 }));
    const trades = ex.items.flatMap((e) => (e.event === "trade" ? [e.data] : []));
    assert.deepEqual(
      trades.map((t) => [t.orderId, t.liquidity]),
      [
        [ask.id, "maker"],
        [bid.id, "maker"],
      ],
    );
  });
});

describe("who am I", () => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start();
  });
  after(async () => {
    await server.close();
  });

  it("answers the caller's uid and its balances of every configured currency, in config order", async () => {
    const u = await server.newUser({ usdt: "1000.5", eth: "2" });
    expectOk(await u.client.createOrder(limit("eth_usdt", "sell", "1500", "0.5")));
    const account = expectOk(await u.client.account());
    assert.deepEqual(account, {
      uid: u.uid,
      // btc_usdt, eth_usdt, eth_btc: btc, usdt, eth in order of first appearance.
      balances: [
        { currency: "btc", balance: "0", reserved: "0" },
        { currency: "usdt", balance: "1000.5", reserved: "0" },
        { currency: "eth", balance: "1.5", reserved: "0.5" },
      ],
    });
    assert.deepEqual(
      account.balances.map((b) => b.currency),
      CURRENCIES,
    );
    const other = await server.newUser();
    assert.equal(expectOk(await other.client.account()).uid, other.uid, "each key answers its own user");
  });

  it("is signed like every trade GET: 401 without a key or with a wrong signature", async () => {
    expectError(await server.public.raw("GET", "/1.0/trade/account"), 401, "auth");
    const u = await server.newUser();
    const forged = server.client({ apiToken: u.apiToken, secretKey: "not-the-secret" });
    expectError(await forged.account(), 401, "auth");
  });
});

describe("book time", () => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start();
  });
  after(async () => {
    await server.close();
  });

  it("is 0 for a book that never changed, on the REST book and the pair page", async () => {
    assert.equal(expectOk(await server.public.orderBook("eth_btc")).time, 0);
    assert.equal(expectOk(await server.public.pairPage("eth_btc")).orders.time, 0);
  });

  it("is the Unix ms of the book's last change, the time of the bbo's change, and survives a restart", async () => {
    const u = await server.newUser({ usdt: "100000", btc: "1" });
    const before = Date.now();
    expectOk(await u.client.createOrder(limit("btc_usdt", "buy", "20000", "0.1")));
    const after = Date.now();
    const book = expectOk(await server.public.orderBook("btc_usdt"));
    assert.ok(book.time! >= before - 1 && book.time! <= after + 1, `${book.time} in [${before}, ${after}]`);
    const bbo = expectOk(await server.public.bbo("btc_usdt"));
    assert.equal(book.time, Math.floor(Number(bbo.eventTimeMicro) / 1000), "the time of the change `seq`");
    assert.equal(expectOk(await server.public.orderBook("btc_usdt", { limit: 1 })).time, book.time);
    assert.equal(expectOk(await server.public.pairPage("btc_usdt")).orders.time, book.time);
    // A trade elsewhere does not move this book's time.
    assert.equal(expectOk(await server.public.orderBook("eth_usdt")).time, 0);

    await server.restart();
    const again = expectOk(await server.public.orderBook("btc_usdt"));
    assert.deepEqual([again.seq, again.time], [book.seq, book.time], "the committed time after a restart");
    // The next change moves it forward.
    expectOk(await u.client.createOrder(limit("btc_usdt", "buy", "20001", "0.1")));
    assert.ok(expectOk(await server.public.orderBook("btc_usdt")).time! >= book.time!);
  });
});
