/**
 * Read endpoints end to end (4.3-4.10): pairs list, 24 h values, pair page with and without auth,
 * order book ordering and limit, public history, chart candles, user pages and their bounds,
 * unknown pairs, and exact number output.
 *
 * A scripted market is built once (in `before` of the inner suite) and every test reads it; the
 * expected values are worked out by hand in the comments and computed again with exact decimals.
 */

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CHART_PERIODS, type CreatedOrder, type Order, type PublicTrade } from "../../src/client/index.ts";
import { auditExchange, textBook } from "./audit.ts";
import { dec, fmt, mul } from "./decimal.ts";
import { expectError, expectOk, limit, market, PAIR_NAMES, TestServer, type TestUser } from "./harness.ts";

const DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
/** A fraction with a long run of 0s or 9s before a last digit: `0.30000000000000004`, `0.8999999999`. */
const FLOAT_NOISE = /\d\.\d*(0{6,}|9{6,})\d/;
const MINUTE = 60_000;
const PERIOD_MS: Record<string, number> = {
  "1m": MINUTE,
  "5m": 5 * MINUTE,
  "15m": 15 * MINUTE,
  "30m": 30 * MINUTE,
  "1h": 60 * MINUTE,
  "2h": 120 * MINUTE,
  "4h": 240 * MINUTE,
  "6h": 360 * MINUTE,
  "12h": 720 * MINUTE,
  "1d": 1440 * MINUTE,
  "1w": 7 * 1440 * MINUTE,
};
/** 1970-01-05 00:00 UTC, a Monday: weeks start there (docs/API.md 7.5). */
const FIRST_MONDAY = 4 * 1440 * MINUTE;

function intervalStart(period: string, ms: number): number {
  const len = PERIOD_MS[period];
  if (period === "1w") return Math.floor((ms - FIRST_MONDAY) / len) * len + FIRST_MONDAY;
  return Math.floor(ms / len) * len;
}

/** Candles as canonical strings, from public history items (newest first), oldest candle first. */
function expectedCandles(history: readonly PublicTrade[], period: string): string[][] {
  const candles = new Map<number, { o: bigint; min: bigint; max: bigint; c: bigint; v: bigint }>();
  for (const t of [...history].reverse()) {
    const start = intervalStart(period, Math.floor(Number(t.eventTimeMicro) / 1000));
    const price = dec(t.price);
    const c = candles.get(start);
    if (c === undefined) candles.set(start, { o: price, min: price, max: price, c: price, v: dec(t.amount) });
    else {
      if (price < c.min) c.min = price;
      if (price > c.max) c.max = price;
      c.c = price;
      c.v += dec(t.amount);
    }
  }
  return [...candles.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([start, c]) => [String(start), fmt(c.o), fmt(c.min), fmt(c.max), fmt(c.c), fmt(c.v)]);
}

function candleText(candles: number[][]): string[][] {
  return candles.map((c) => [String(c[0]), ...c.slice(1).map((v) => fmt(dec(v)))]);
}

function withoutUpdateTime(o: CreatedOrder): Order {
  const { updateTime: _u, ...rest } = o;
  return rest;
}

describe("read endpoints", () => {
  let server: TestServer;

  before(async () => {
    server = await TestServer.start();
  });
  after(async () => {
    await server?.close();
  });

  it("lists every configured pair in config order with all values 0 before any trade", async () => {
    const res = await server.public.pairs();
    const pairs = expectOk(res, "pairs");
    assert.deepEqual(
      pairs,
      PAIR_NAMES.map((pairName) => ({
        pairName,
        openValue: 0,
        minValue: 0,
        maxValue: 0,
        closeValue: 0,
        closeBidValue: 0,
        closeAskValue: 0,
        volume: 0,
      })),
    );
    for (const pair of PAIR_NAMES) {
      // docs/API.md 12.5: an empty book's checksum is CRC-32 of "|".
      assert.deepEqual(expectOk(await server.public.orderBook(pair)), {
        buy: [],
        sell: [],
        seq: 0,
        checksum: 2343686810,
        time: 0, // docs/API.md 20.2: a book that never changed
      });
      assert.deepEqual(expectOk(await server.public.history(pair)), []);
      assert.deepEqual(expectOk(await server.public.chart(pair, "1m")), []);
    }
  });

  it("answers 404 errors.pairName for an unknown pair on every pair path", async () => {
    const u = await server.newUser();
    const c = server.public;
    expectError(await c.pairPage("doge_usdt"), 404, "pairName", "pair page");
    expectError(await c.orderBook("doge_usdt"), 404, "pairName", "orders");
    expectError(await c.history("doge_usdt"), 404, "pairName", "history");
    expectError(await c.chart("doge_usdt", "1m"), 404, "pairName", "chart");
    expectError(
      await c.balances("doge_usdt"),
      404,
      "pairName",
      "unauthenticated user-balances (404 before 401)",
    );
    expectError(await u.client.balances("doge_usdt"), 404, "pairName", "user-balances");
    expectError(await u.client.userOrders("doge_usdt"), 404, "pairName", "user-orders");
    expectError(await c.pairPage("BTC_USDT"), 404, "pairName", "pair names are lowercase");
  });

  describe("after a scripted series of trades", () => {
    let m1: TestUser; // maker selling btc
    let m2: TestUser; // maker buying btc
    let m3: TestUser;
    let t: TestUser; // taker
    let p: TestUser; // 25 resting orders, for pages
    let tOrders: CreatedOrder[] = [];
    let pOrders: CreatedOrder[] = [];
    let ethBtcBookText = "";

    before(async () => {
      m1 = await server.newUser({ btc: "10" });
      m2 = await server.newUser({ usdt: "10000" });
      m3 = await server.newUser({ btc: "1" });
      t = await server.newUser({ btc: "1", usdt: "10000" });
      p = await server.newUser({ usdt: "1000" });
      const create = async (u: TestUser, order: Parameters<TestUser["client"]["createOrder"]>[0]) =>
        expectOk(await u.client.createOrder(order), `create ${JSON.stringify(order)}`);

      // btc_usdt, four trades:
      await create(m1, limit("btc_usdt", "sell", "100", "0.5"));
      tOrders.push(await create(t, limit("btc_usdt", "buy", "100", "0.2"))); // t1: 0.2 @ 100, buy limit
      await create(m1, limit("btc_usdt", "sell", "110", "0.3"));
      tOrders.push(await create(t, market("btc_usdt", "buy", "0.4"))); // t2: 0.3 @ 100, t3: 0.1 @ 110, buy market
      await create(m2, limit("btc_usdt", "buy", "90", "1"));
      tOrders.push(await create(t, limit("btc_usdt", "sell", "85", "0.25"))); // t4: 0.25 @ 90, sell limit
      // and resting levels:
      await create(m2, limit("btc_usdt", "buy", "95", "0.1"));
      await create(m2, limit("btc_usdt", "buy", "80", "0.05"));
      await create(m1, limit("btc_usdt", "sell", "120", "0.4"));
      await create(m1, limit("btc_usdt", "sell", "115", "0.6"));
      await create(m3, limit("btc_usdt", "sell", "115", "0.1"));
      tOrders = tOrders.reverse(); // newest first

      // eth_btc: 0.1 + 0.2 at price 0.1, printed as 0.3.
      const m4 = await server.newUser({ eth: "1" });
      const t2 = await server.newUser({ btc: "1" });
      await create(m4, limit("eth_btc", "sell", "0.1", "0.1"));
      await create(m4, limit("eth_btc", "sell", "0.1", "0.2"));
      ethBtcBookText = (await server.public.orderBook("eth_btc")).text;
      await create(t2, limit("eth_btc", "buy", "0.1", "0.3"));

      // eth_usdt: 25 resting orders of one user, in id order.
      for (let i = 0; i < 25; i++) {
        pOrders.push(await create(p, limit("eth_usdt", "buy", fmt(dec("1") + dec("0.01") * BigInt(i)), "1")));
      }
      pOrders = pOrders.reverse();
    });

    it("prints exact decimals: 0.1 + 0.2 at one level and in the 24 h volume is 0.3", async () => {
      assert.match(ethBtcBookText, /\{"price":0\.1,"amount":0\.3\}|\{"amount":0\.3,"price":0\.1\}/);
      const res = await server.public.pairs();
      const ethBtc = expectOk(res).find((r) => r.pairName === "eth_btc")!;
      assert.equal(ethBtc.volume, 0.3);
      assert.match(res.text, /"volume":0\.3[,}]/);
      assert.doesNotMatch(res.text, FLOAT_NOISE, "no float noise in any number");
      const candles = await server.public.chart("eth_btc", "1d");
      assert.doesNotMatch(candles.text, FLOAT_NOISE);
      assert.equal(expectOk(candles).at(-1)![5], 0.3);
    });

    it("reports the 24 h values and the best bid and ask per pair", async () => {
      const pairs = expectOk(await server.public.pairs());
      assert.deepEqual(
        pairs.map((r) => r.pairName),
        PAIR_NAMES,
      );
      assert.deepEqual(pairs[0], {
        pairName: "btc_usdt",
        openValue: 100,
        minValue: 90,
        maxValue: 110,
        closeValue: 90,
        closeBidValue: 95,
        closeAskValue: 110,
        volume: 0.85,
      });
      assert.equal(fmt(dec("0.2") + dec("0.3") + dec("0.1") + dec("0.25")), "0.85");
      assert.deepEqual(pairs[1], {
        pairName: "eth_usdt",
        openValue: 0,
        minValue: 0,
        maxValue: 0,
        closeValue: 0,
        closeBidValue: 1.24,
        closeAskValue: 0,
        volume: 0,
      });
      assert.deepEqual(pairs[2], {
        pairName: "eth_btc",
        openValue: 0.1,
        minValue: 0.1,
        maxValue: 0.1,
        closeValue: 0.1,
        closeBidValue: 0,
        closeAskValue: 0,
        volume: 0.3,
      });
    });

    it("orders the book with sells ascending and buys descending, aggregated per price", async () => {
      const res = await server.public.orderBook("btc_usdt");
      assert.deepEqual(textBook(expectOk(res)), {
        buy: [
          { price: "95", amount: "0.1" },
          { price: "90", amount: "0.75" },
          { price: "80", amount: "0.05" },
        ],
        sell: [
          { price: "110", amount: "0.2" },
          { price: "115", amount: "0.7" },
          { price: "120", amount: "0.4" },
        ],
      });
      for (const level of [...expectOk(res).buy, ...expectOk(res).sell]) {
        assert.deepEqual(Object.keys(level).sort(), ["amount", "price"]);
      }
    });

    it("keeps the best N levels of each side with ?limit=N and refuses a limit out of 1..1000", async () => {
      const top = textBook(expectOk(await server.public.orderBook("btc_usdt", { limit: 2 })));
      assert.deepEqual(top, {
        buy: [
          { price: "95", amount: "0.1" },
          { price: "90", amount: "0.75" },
        ],
        sell: [
          { price: "110", amount: "0.2" },
          { price: "115", amount: "0.7" },
        ],
      });
      const one = textBook(expectOk(await server.public.orderBook("btc_usdt", { limit: 1 })));
      assert.deepEqual(one, {
        buy: [{ price: "95", amount: "0.1" }],
        sell: [{ price: "110", amount: "0.2" }],
      });
      const all = expectOk(await server.public.orderBook("btc_usdt", { limit: 1000 }));
      assert.equal(all.buy.length + all.sell.length, 6);
      expectError(await server.public.orderBook("btc_usdt", { limit: 0 }), 400, "limit", "limit 0");
      expectError(await server.public.orderBook("btc_usdt", { limit: 1001 }), 400, "limit", "limit 1001");
      expectError(await server.public.orderBook("btc_usdt", { limit: "abc" }), 400, "limit", "limit abc");
    });

    it("lists the pair's trades newest first with the taker's direction and type", async () => {
      const history = expectOk(await server.public.history("btc_usdt"));
      assert.deepEqual(
        history.map((h) => [h.directionType, h.tradeType, h.price, h.amount]),
        [
          ["sell", "limit", 90, 0.25],
          ["buy", "market", 110, 0.1],
          ["buy", "market", 100, 0.3],
          ["buy", "limit", 100, 0.2],
        ],
      );
      const now = Date.now() / 1000;
      for (let i = 0; i < history.length; i++) {
        const h = history[i];
        assert.deepEqual(Object.keys(h).sort(), [
          "amount",
          "directionType",
          "eventTimeMicro",
          "id",
          "price",
          "tradeTime",
          "tradeType",
        ]);
        assert.ok(Number.isInteger(h.tradeTime), "tradeTime is an integer of seconds");
        assert.ok(Math.abs(h.tradeTime - now) < 120, `tradeTime ${h.tradeTime} is not now`);
        assert.match(h.eventTimeMicro, /^\d+$/);
        const eventSecond = Number(BigInt(h.eventTimeMicro) / 1_000_000n);
        assert.ok(
          Math.abs(h.tradeTime - eventSecond) <= 1,
          "tradeTime and eventTimeMicro tell the same time",
        );
        if (i > 0) {
          assert.ok(
            BigInt(history[i - 1].eventTimeMicro) > BigInt(h.eventTimeMicro),
            "eventTimeMicro strictly increases per pair (newest first here)",
          );
        }
      }
    });

    it("answers candles of open, min, max, close and volume for every period", async () => {
      const history = expectOk(await server.public.history("btc_usdt"));
      for (const period of CHART_PERIODS) {
        const candles = expectOk(await server.public.chart("btc_usdt", period), `chart ${period}`);
        for (const c of candles) {
          assert.equal(c.length, 6);
          assert.ok(c.every((v) => typeof v === "number"));
        }
        assert.deepEqual(candleText(candles), expectedCandles(history, period), `candles of ${period}`);
      }
      // All four trades fall in one week: open 100, min 90, max 110, close 90, volume 0.85.
      const week = candleText(expectOk(await server.public.chart("btc_usdt", "1w")));
      if (week.length === 1) assert.deepEqual(week[0].slice(1), ["100", "90", "110", "90", "0.85"]);
    });

    it("selects candles with limit, from and to and refuses an unknown period", async () => {
      const all = expectOk(await server.public.chart("btc_usdt", "1m"));
      const newest = expectOk(await server.public.chart("btc_usdt", "1m", { limit: 1 }));
      assert.deepEqual(newest, all.slice(-1));
      const start = all[0][0];
      assert.deepEqual(expectOk(await server.public.chart("btc_usdt", "1m", { from: start, to: start })), [
        all[0],
      ]);
      assert.deepEqual(
        expectOk(await server.public.chart("btc_usdt", "1m", { from: all.at(-1)![0] + 1 })),
        [],
      );
      expectError(await server.public.chart("btc_usdt", "2m"), 400, "period", "2m");
      expectError(await server.public.chart("btc_usdt", "1y"), 400, "period", "1y");
      expectError(await server.public.chart("btc_usdt", "1M"), 400, "period", "1M");
      expectError(await server.public.chart("btc_usdt", "1m", { limit: 0 }), 400, "limit", "limit 0");
      expectError(await server.public.chart("btc_usdt", "1m", { limit: 1001 }), 400, "limit", "limit 1001");
    });

    it("answers the pair page without auth with null user fields", async () => {
      const page = expectOk(await server.public.pairPage("btc_usdt"));
      assert.deepEqual(Object.keys(page).sort(), [
        "exchanges",
        "history",
        "orders",
        "userHistory",
        "userOrders",
      ]);
      assert.equal(page.userOrders, null);
      assert.equal(page.userHistory, null);
      const pairs = expectOk(await server.public.pairs());
      assert.deepEqual(
        page.exchanges,
        pairs.map(({ closeBidValue: _b, closeAskValue: _a, ...rest }) => rest),
        "exchanges: every pair, config order, no bid/ask",
      );
      assert.deepEqual(page.orders, expectOk(await server.public.orderBook("btc_usdt")));
      assert.deepEqual(page.history, expectOk(await server.public.history("btc_usdt")));
    });

    it("answers the pair page with the caller's 20 newest orders and trades over all pairs", async () => {
      const tPage = expectOk(await t.client.pairPage("eth_btc"));
      assert.deepEqual(tPage.userOrders, tOrders.map(withoutUpdateTime));
      assert.deepEqual(tPage.userHistory, expectOk(await t.client.userHistory()).items);
      assert.equal(tPage.userHistory?.length, 4);

      const pPage = expectOk(await p.client.pairPage("btc_usdt"));
      assert.equal(pPage.userOrders?.length, 20);
      assert.deepEqual(pPage.userOrders, pOrders.slice(0, 20).map(withoutUpdateTime));
      assert.deepEqual(pPage.userHistory, []);
    });

    it("refuses the pair page with 401 when the auth headers fail", async () => {
      const wrong = server.client({ apiToken: t.apiToken, secretKey: "not-the-secret" });
      expectError(await wrong.pairPage("btc_usdt"), 401, "auth", "wrong signature");
      const tokenOnly = await server.public.raw("GET", "/1.0/trade/pairs/btc_usdt", {
        headers: { Authorization: t.apiToken },
      });
      expectError(tokenOnly, 401, "auth", "token without signature");
    });

    it("answers user balances per pair currency with available and reserved", async () => {
      const items = expectOk(await m2.client.balances("btc_usdt"));
      assert.equal(items.length, 2);
      for (const item of items)
        assert.deepEqual(Object.keys(item).sort(), ["balance", "currency", "reserved"]);
      const byCurrency = Object.fromEntries(items.map((b) => [b.currency, [b.balance, b.reserved]]));
      // m2 bought 0.25 @ 90 and still bids 0.75 @ 90, 0.1 @ 95, 0.05 @ 80.
      const reserved = mul(dec("90"), dec("0.75")) + mul(dec("95"), dec("0.1")) + mul(dec("80"), dec("0.05"));
      assert.deepEqual(byCurrency, {
        btc: ["0.25", "0"],
        usdt: [fmt(dec("10000") - mul(dec("90"), dec("0.25")) - reserved), fmt(reserved)],
      });
      const tItems = Object.fromEntries(
        expectOk(await t.client.balances("btc_usdt")).map((b) => [b.currency, [b.balance, b.reserved]]),
      );
      // t: +0.2 +0.4 −0.25 btc; −20 −41 +22.5 usdt
      assert.deepEqual(tItems, { btc: ["1.35", "0"], usdt: ["9961.5", "0"] });
      assert.deepEqual(
        Object.fromEntries(
          expectOk(await t.client.balances("eth_btc")).map((b) => [b.currency, [b.balance, b.reserved]]),
        ),
        { eth: ["0", "0"], btc: ["1.35", "0"] },
      );
    });

    it("pages the user's orders newest first with page 1 and pageSize 20 by default", async () => {
      const first = expectOk(await p.client.userOrders("eth_usdt"));
      assert.equal(first.total, 25);
      assert.deepEqual(first.items, pOrders.slice(0, 20).map(withoutUpdateTime));
      const second = expectOk(await p.client.userOrders("eth_usdt", { page: 2 }));
      assert.deepEqual(second, { total: 25, items: pOrders.slice(20).map(withoutUpdateTime) });
      assert.deepEqual(expectOk(await p.client.userOrders("eth_usdt", { page: 3 })), {
        total: 25,
        items: [],
      });
      const big = expectOk(await p.client.userOrders("eth_usdt", { pageSize: 100 }));
      assert.equal(big.items.length, 25);
      const oldest = expectOk(await p.client.userOrders("eth_usdt", { page: 25, pageSize: 1 }));
      assert.deepEqual(oldest.items, [withoutUpdateTime(pOrders[24])]);
      // The path's pair does not filter.
      const tAll = expectOk(await t.client.userOrders("eth_btc"));
      assert.deepEqual(tAll, { total: 3, items: tOrders.map(withoutUpdateTime) });
      for (const o of tAll.items) assert.equal(o.pairName, "btc_usdt");
      assert.equal(tAll.items[1].tradeType, "market");
      assert.equal(tAll.items[1].price, 102.5, "average of 0.3 @ 100 and 0.1 @ 110");
    });

    it("pages the user's trades newest first over all pairs", async () => {
      const tHistory = expectOk(await t.client.userHistory());
      assert.equal(tHistory.total, 4);
      assert.deepEqual(
        tHistory.items.map((h) => [h.pairName, h.directionType, h.tradeType, h.price, h.amount]),
        [
          ["btc_usdt", "sell", "limit", 90, 0.25],
          ["btc_usdt", "buy", "market", 110, 0.1],
          ["btc_usdt", "buy", "market", 100, 0.3],
          ["btc_usdt", "buy", "limit", 100, 0.2],
        ],
      );
      for (const h of tHistory.items) {
        assert.deepEqual(Object.keys(h).sort(), [
          "amount",
          "directionType",
          "execSeq",
          "fee",
          "feeCurrency",
          "id",
          "liquidity",
          "orderId",
          "pairName",
          "price",
          "tradeTime",
          "tradeType",
        ]);
        assert.match(h.tradeTime, DATETIME);
      }
      const m1History = expectOk(await m1.client.userHistory());
      assert.deepEqual(
        m1History.items.map((h) => [h.id, h.directionType, h.tradeType, h.price, h.amount]),
        [
          [tHistory.items[1].id, "sell", "limit", 110, 0.1],
          [tHistory.items[2].id, "sell", "limit", 100, 0.3],
          [tHistory.items[3].id, "sell", "limit", 100, 0.2],
        ],
        "the maker sees the same trade ids from its own side",
      );
      const m2History = expectOk(await m2.client.userHistory());
      assert.deepEqual(
        m2History.items.map((h) => [h.id, h.directionType, h.tradeType, h.price, h.amount]),
        [[tHistory.items[0].id, "buy", "limit", 90, 0.25]],
      );
      const paged = expectOk(await t.client.userHistory({ page: 2, pageSize: 3 }));
      assert.deepEqual(paged, { total: 4, items: tHistory.items.slice(3) });
      assert.deepEqual(expectOk(await p.client.userHistory()), { total: 0, items: [] });
    });

    it("refuses page and pageSize out of bounds with 400 on that field", async () => {
      for (const [query, field] of [
        [{ page: 0 }, "page"],
        [{ page: -1 }, "page"],
        [{ page: "abc" }, "page"],
        [{ page: "1.5" }, "page"],
        [{ pageSize: 0 }, "pageSize"],
        [{ pageSize: 101 }, "pageSize"],
        [{ pageSize: "x" }, "pageSize"],
        [{ pageSize: "2.5" }, "pageSize"],
      ] as const) {
        expectError(
          await p.client.userOrders("btc_usdt", query),
          400,
          field,
          `user-orders ${JSON.stringify(query)}`,
        );
        expectError(await p.client.userHistory(query), 400, field, `user-history ${JSON.stringify(query)}`);
      }
      expectOk(await p.client.userOrders("btc_usdt", { page: 1, pageSize: 1 }));
      expectOk(await p.client.userOrders("btc_usdt", { pageSize: 100 }));
    });

    it("keeps only the last 200 trades in the pair history and the pair page", async () => {
      const maker = await server.newUser({ eth: "300" });
      const taker = await server.newUser({ usdt: "3000" });
      expectOk(await maker.client.createOrder(limit("eth_usdt", "sell", "10", "300")));
      const answers = await Promise.all(
        Array.from({ length: 201 }, () => taker.client.createOrder(limit("eth_usdt", "buy", "10", "1"))),
      );
      for (const a of answers) assert.equal(expectOk(a).amountUsed, 1);
      const history = expectOk(await server.public.history("eth_usdt"));
      assert.equal(history.length, 200);
      for (let i = 1; i < history.length; i++) {
        assert.ok(BigInt(history[i - 1].eventTimeMicro) > BigInt(history[i].eventTimeMicro), "newest first");
      }
      const page = expectOk(await server.public.pairPage("eth_usdt"));
      assert.deepEqual(page.history, history);
      assert.equal(expectOk(await taker.client.userHistory()).total, 201);
      const ethUsdt = expectOk(await server.public.pairs())[1];
      assert.deepEqual(
        [ethUsdt.openValue, ethUsdt.minValue, ethUsdt.maxValue, ethUsdt.closeValue, ethUsdt.volume],
        [10, 10, 10, 10, 201],
      );
      assert.equal(ethUsdt.closeAskValue, 10, "99 eth still offered at 10");
    });

    it("agrees with an audit of every user's ledger, orders and trades", async () => {
      await auditExchange(server);
    });
  });
});
