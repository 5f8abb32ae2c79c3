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
import type {
  CreatedOrder,
  HistoryQuery,
  Order,
  PointQuery,
  PublicTrade,
  UserTrade,
} from "../../src/client/index.ts";
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

describe("reading from a point", () => {
  let server: TestServer;
  let a: TestUser;
  let b: TestUser;
  /** Public trades in id order: t1 btc_usdt and t2 eth_usdt below the marks, t3 btc_usdt and t4 eth_usdt above. */
  let t: PublicTrade[];
  /** b's orders in id order: its four market buys. */
  let bOrders: Order[];

  const ms = (trade: PublicTrade) => Math.floor(Number(trade.eventTimeMicro) / 1000);

  before(async () => {
    server = await TestServer.start();
    a = await server.newUser({ btc: "10", eth: "10" });
    b = await server.newUser({ usdt: "1000000" });
    expectOk(await a.client.createOrder(limit("btc_usdt", "sell", "30000", "1")));
    expectOk(await a.client.createOrder(limit("eth_usdt", "sell", "2000", "1")));
    expectOk(await b.client.createOrder(market("btc_usdt", "buy", "0.1")));
    expectOk(await b.client.createOrder(market("eth_usdt", "buy", "0.1")));
    await server.restart();
    expectOk(await b.client.createOrder(market("btc_usdt", "buy", "0.2")));
    expectOk(await b.client.createOrder(market("eth_usdt", "buy", "0.2")));
    const all = [
      ...expectOk(await server.public.history("btc_usdt")),
      ...expectOk(await server.public.history("eth_usdt")),
    ];
    t = all.sort((x, y) => x.id - y.id);
    bOrders = expectOk(await b.client.userOrders("btc_usdt")).items.reverse();
    assert.equal(t.length, 4);
    assert.equal(bOrders.length, 4);
    const m = marks(server);
    assert.ok(t[1].id <= m.trades && t[2].id > m.trades, "t1, t2 below the trades' mark; t3, t4 above");
    assert.ok(
      bOrders[1].id <= m.orders && bOrders[2].id > m.orders,
      "two of b's orders on each side of the mark",
    );
  });
  after(async () => {
    await server.close();
  });

  describe("GET .../history", () => {
    it("answers the trades at or after `since`, oldest first, the boundary included to the millisecond", async () => {
      const ids = async (q: HistoryQuery) =>
        expectOk(await server.public.history("btc_usdt", q)).map((x) => x.id);
      assert.deepEqual(await ids({ since: ms(t[0]) }), [t[0].id, t[2].id]);
      assert.deepEqual(await ids({ since: ms(t[0]) + 1 }), [t[2].id], "a millisecond later: only t3");
      assert.deepEqual(await ids({ since: ms(t[2]) }), [t[2].id]);
      assert.deepEqual(await ids({ since: ms(t[2]) + 1 }), []);
      assert.deepEqual(await ids({ since: 0 }), [t[0].id, t[2].id], "since 0: every trade, oldest first");
      assert.deepEqual(await ids({ since: 0, limit: 1 }), [t[0].id], "at most `limit`");
    });

    it("answers the trades from `fromId`, an exact cursor, oldest first", async () => {
      const ids = async (q: HistoryQuery) =>
        expectOk(await server.public.history("btc_usdt", q)).map((x) => x.id);
      assert.deepEqual(await ids({ fromId: t[0].id }), [t[0].id, t[2].id]);
      assert.deepEqual(await ids({ fromId: t[0].id + 1 }), [t[2].id], "an id between two trades of the pair");
      assert.deepEqual(await ids({ fromId: t[2].id }), [t[2].id]);
      assert.deepEqual(await ids({ fromId: t[3].id + 1 }), []);
      assert.deepEqual(await ids({ fromId: t[0].id, since: ms(t[2]) }), [t[2].id], "both filters hold");
      const items = expectOk(await server.public.history("eth_usdt", { fromId: 1 }));
      assert.deepEqual(items, [t[1], t[3]], "the same items as the newest-first history, oldest first");
    });

    it("keeps the newest-first history without a point, `limit` keeping the newest", async () => {
      const all = expectOk(await server.public.history("btc_usdt"));
      assert.deepEqual(
        all.map((x) => x.id),
        [t[2].id, t[0].id],
      );
      assert.deepEqual(expectOk(await server.public.history("btc_usdt", { limit: 1 })), [all[0]]);
      assert.deepEqual(expectOk(await server.public.history("btc_usdt", { limit: 1000 })), all);
    });

    it("refuses a bad since, fromId or limit with 400 on that field, in English and Russian", async () => {
      const ru = server.client({ apiToken: "x", secretKey: "y" }, { lang: "ru" });
      for (const [q, field] of [
        [{ since: -1 }, "since"],
        [{ since: "1.5" }, "since"],
        [{ since: "abc" }, "since"],
        [{ since: "" }, "since"],
        [{ since: "9007199254741" }, "since"],
        [{ fromId: 0 }, "fromId"],
        [{ fromId: "x" }, "fromId"],
        [{ limit: 0 }, "limit"],
        [{ limit: 1001 }, "limit"],
        [{ limit: "two" }, "limit"],
      ] as const) {
        const [en] = expectError(await server.public.history("btc_usdt", q), 400, field, JSON.stringify(q));
        const [russian] = expectError(await ru.history("btc_usdt", q), 400, field, JSON.stringify(q));
        assert.match(en, /^[\x20-\x7e]+$/, "English");
        assert.match(russian, /[а-яА-Я]/, "Russian");
      }
    });
  });

  describe("user-history and user-orders", () => {
    it("filters the caller's trades by pair, newest first, with the total of the filtered ones", async () => {
      const page = expectOk(await b.client.userHistory({ pairName: "eth_usdt" }));
      assert.deepEqual(page.total, 2);
      assert.deepEqual(
        page.items.map((x) => x.id),
        [t[3].id, t[1].id],
      );
      const orders = expectOk(await b.client.userOrders("btc_usdt", { pairName: "eth_usdt" }));
      assert.equal(orders.total, 2);
      assert.deepEqual(
        orders.items.map((o) => o.id),
        [bOrders[3].id, bOrders[1].id],
      );
      assert.ok(orders.items.every((o) => o.pairName === "eth_usdt"));
    });

    it("reads the caller's trades from `since` oldest first, the boundary exact, below and above the marks", async () => {
      const read = async (q: PointQuery) => {
        const p = expectOk(await b.client.userHistory(q));
        return [p.total, p.items.map((x) => x.id)];
      };
      assert.deepEqual(await read({ since: ms(t[1]) }), [3, [t[1].id, t[2].id, t[3].id]]);
      assert.deepEqual(await read({ since: ms(t[1]) + 1 }), [2, [t[2].id, t[3].id]]);
      assert.deepEqual(await read({ since: 0, pageSize: 2, page: 2 }), [4, [t[2].id, t[3].id]], "paged as 4");
      assert.deepEqual(await read({ since: ms(t[1]), pairName: "eth_usdt" }), [2, [t[1].id, t[3].id]]);
      assert.deepEqual(await read({ since: ms(t[3]) + 1 }), [0, []]);
    });

    it("reads the caller's trades and orders from `fromId`, an exact cursor", async () => {
      const trades = async (q: PointQuery) => {
        const p = expectOk(await b.client.userHistory(q));
        return [p.total, p.items.map((x) => x.id)];
      };
      assert.deepEqual(await trades({ fromId: t[1].id }), [3, [t[1].id, t[2].id, t[3].id]]);
      assert.deepEqual(await trades({ fromId: t[1].id + 1 }), [2, [t[2].id, t[3].id]]);
      assert.deepEqual(await trades({ fromId: t[1].id, pageSize: 1, page: 3 }), [3, [t[3].id]]);
      assert.deepEqual(await trades({ fromId: t[2].id, pairName: "btc_usdt" }), [1, [t[2].id]]);

      const orders = async (q: PointQuery) => {
        const p = expectOk(await b.client.userOrders("eth_btc", q));
        return [p.total, p.items.map((o) => o.id)];
      };
      const ids = bOrders.map((o) => o.id);
      assert.deepEqual(await orders({ fromId: ids[1] }), [3, ids.slice(1)]);
      assert.deepEqual(await orders({ fromId: ids[1] + 1 }), [2, ids.slice(2)]);
      assert.deepEqual(await orders({ fromId: ids[0], pairName: "btc_usdt" }), [2, [ids[0], ids[2]]]);
      assert.deepEqual(await orders({ fromId: ids[3] + 1 }), [0, []]);
    });

    it("reads the caller's orders created at or after `since`, to the second of their createTime", async () => {
      const second = (o: Order) => Date.parse(`${o.createTime.replace(" ", "T")}Z`);
      const last = bOrders[3];
      const p = expectOk(await b.client.userOrders("btc_usdt", { since: second(last) }));
      assert.ok(
        p.items.some((o) => o.id === last.id),
        "created within the second that `since` starts",
      );
      assert.deepEqual(
        p.items.map((o) => o.id),
        [...p.items.map((o) => o.id)].sort((x, y) => x - y),
        "oldest first",
      );
      assert.equal(p.total, p.items.length);
      const after = expectOk(await b.client.userOrders("btc_usdt", { since: second(last) + 1000 }));
      assert.deepEqual(after, { total: 0, items: [] }, "none created a second later");
      const all = expectOk(await b.client.userOrders("btc_usdt", { since: 0 }));
      assert.deepEqual(
        all.items.map((o) => o.id),
        bOrders.map((o) => o.id),
      );
    });

    it("keeps the pages newest first over every pair without the new parameters", async () => {
      const trades = expectOk(await b.client.userHistory());
      assert.deepEqual([trades.total, trades.items.map((x) => x.id)], [4, t.map((x) => x.id).reverse()]);
      const orders = expectOk(await b.client.userOrders("btc_usdt"));
      assert.deepEqual(orders.total, 4);
      assert.deepEqual(
        orders.items.map((o) => o.id),
        bOrders.map((o) => o.id).reverse(),
      );
    });

    it("refuses an unknown pair, a bad since or fromId with 400 on that field, in English and Russian", async () => {
      const ru = server.client(b, { lang: "ru" });
      for (const [q, field] of [
        [{ pairName: "doge_usdt" }, "pairName"],
        [{ pairName: "" }, "pairName"],
        [{ since: -5 }, "since"],
        [{ since: "1e3" }, "since"],
        [{ fromId: 0 }, "fromId"],
        [{ fromId: "-1" }, "fromId"],
      ] as const) {
        for (const [client, russian] of [
          [b.client, false],
          [ru, true],
        ] as const) {
          const what = `${JSON.stringify(q)}${russian ? " ru" : ""}`;
          const [h] = expectError(await client.userHistory(q), 400, field, `user-history ${what}`);
          const [o] = expectError(await client.userOrders("btc_usdt", q), 400, field, `user-orders ${what}`);
          assert.equal(h, o);
          assert.match(h, russian ? /[а-яА-Я]/ : /^[\x20-\x7e]+$/);
        }
      }
    });
  });
});

describe("minimum order value", () => {
  let server: TestServer;
  /** The wire code of an error answer under `amount`. */
  const codeOf = (res: { body: unknown }) => (res.body as { codes: Record<string, string[]> }).codes.amount;

  before(async () => {
    // 10 usdt on btc_usdt; the other pairs leave it unset.
    server = await TestServer.start({ pairMinNotional: { btc_usdt: "10", eth_btc: "0" } });
  });
  after(async () => {
    await server.close();
  });

  it("shows each pair's minNotional in /info, 0 when not set", async () => {
    const pairs = expectOk(await server.public.info()).pairs;
    assert.deepEqual(
      pairs.map((p) => [p.name, p.minNotional]),
      [
        ["btc_usdt", "10"],
        ["eth_usdt", "0"],
        ["eth_btc", "0"],
      ],
    );
  });

  it("refuses a limit order whose price × amount is below it, exactly, and accepts one at it", async () => {
    const u = await server.newUser({ usdt: "1000", btc: "1" });
    const before = await server.balanceTable(u);
    // 33333.33 × 0.0003 = 9.999999: a millionth below.
    const below = await u.client.createOrder(limit("btc_usdt", "buy", "33333.33", "0.0003"));
    assert.match(expectError(below, 400, "amount")[0], /minimum/);
    assert.deepEqual(codeOf(below), ["NOTIONAL_BELOW_MIN"]);
    const ru = server.client(u, { lang: "ru" });
    assert.match(
      expectError(await ru.createOrder(limit("btc_usdt", "sell", "20000", "0.000499")), 400, "amount")[0],
      /[а-яА-Я]/,
    );
    assert.deepEqual(await server.balanceTable(u), before, "nothing held");
    // 20000 × 0.0005 = 10: at the minimum.
    expectOk(await u.client.createOrder(limit("btc_usdt", "buy", "20000", "0.0005")));
    // An amend to a value below it is refused the same way.
    const open = expectOk(await u.client.createOrder(limit("btc_usdt", "buy", "20000", "0.001")));
    const amended = await u.client.amendOrder({ orderId: open.id, amount: "0.0004" });
    assert.deepEqual(codeOf(amended), ["NOTIONAL_BELOW_MIN"]);
    // Another pair has none.
    expectOk(await u.client.createOrder(limit("eth_btc", "buy", "0.000001", "0.0001")));
    await server.cancelOpenOrders([u]);
  });

  it("refuses a market order whose value at submission, walking other users' orders, is below it", async () => {
    const maker = await server.newUser({ btc: "2", usdt: "1000" });
    const taker = await server.newUser({ usdt: "1000", btc: "1" });
    expectOk(await maker.client.createOrder(limit("btc_usdt", "sell", "30000", "0.0004")));
    expectOk(await maker.client.createOrder(limit("btc_usdt", "sell", "30001", "1")));
    expectOk(await maker.client.createOrder(limit("btc_usdt", "buy", "20000", "0.001")));
    const book = expectOk(await server.public.orderBook("btc_usdt"));
    const before = [await server.balanceTable(maker), await server.balanceTable(taker)];
    // 30000 × 0.0003 = 9: below, whatever price the order would have shown.
    const buy = await taker.client.createOrder(market("btc_usdt", "buy", "0.0003"));
    expectError(buy, 400, "amount");
    assert.deepEqual(codeOf(buy), ["NOTIONAL_BELOW_MIN"]);
    // 20000 × 0.000499 = 9.98.
    const sell = await taker.client.createOrder(market("btc_usdt", "sell", "0.000499"));
    assert.deepEqual(codeOf(sell), ["NOTIONAL_BELOW_MIN"]);
    const after = expectOk(await server.public.orderBook("btc_usdt"));
    assert.deepEqual(
      [after.buy, after.sell, after.seq],
      [book.buy, book.sell, book.seq],
      "the book did not move",
    );
    assert.deepEqual([await server.balanceTable(maker), await server.balanceTable(taker)], before);
    assert.equal(expectOk(await taker.client.userOrders("btc_usdt")).total, 0, "no order was created");
    // Across two levels: 30000 × 0.0003 + 30001 × 0.0001 = 12.0001; at 20000 × 0.0005 = 10.
    expectOk(await taker.client.createOrder(market("btc_usdt", "buy", "0.0004")));
    expectOk(await taker.client.createOrder(market("btc_usdt", "sell", "0.0005")));
    await server.cancelOpenOrders([maker, taker]);
  });
});
