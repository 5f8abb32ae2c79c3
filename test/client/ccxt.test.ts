/**
 * The ccxt exchange class of the client package (src/client/ccxt.ts, docs/API.md 20.7) against a real
 * server on an ephemeral port and a real SQLite file: every unified method it offers, each answer
 * checked against the server's own REST record of the same thing; the error classes chosen from the
 * answers' codes; and the watch methods against a live book and a live fill.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import ccxt from "ccxt";
import Exchange from "../../src/client/ccxt.ts";
import { bookChecksum } from "../../src/client/checksum.ts";
import type { ApiResponse, Order as RestOrder, UserTrade } from "../../src/client/index.ts";
import { expectOk, limit, market, REPO_ROOT, TestServer, type TestUser } from "../e2e/harness.ts";
import { waitFor } from "../wait.ts";

const { Precise } = ccxt;

/** The exact decimal text of a numeric field in an answer's text (docs/API.md 1: numbers are exact). */
function textOf(res: ApiResponse<unknown>, field: string): string {
  const m = new RegExp(`"${field}":(-?[0-9.eE+-]+)`).exec(res.text);
  assert.ok(m !== null, `${field} in ${res.text}`);
  return m[1];
}

/** A ccxt number as the decimal it holds (String prints the shortest text that reads back the same). */
function decimal(n: number | undefined): string {
  assert.ok(n !== undefined);
  return Precise.stringAdd(String(n), "0") ?? "";
}

/** A ccxt book side (an Array subclass) as plain `[price, amount]` pairs. */
function plain(side: ArrayLike<ArrayLike<number | undefined>>): (number | undefined)[][] {
  return Array.from(side, (level) => Array.from(level));
}

function exchangeOf(server: TestServer, user: { apiToken: string; secretKey: string }): Exchange {
  return new Exchange({
    apiKey: user.apiToken,
    secret: user.secretKey,
    urls: { api: { rest: server.origin } },
  });
}

/**
 * Resolves once the class's stream connection for `channel` is open: the user and history channels
 * send nothing on connect (docs/API.md 12.2), so a test makes its change only after this.
 */
async function streamOpen(ex: Exchange, channel: string): Promise<void> {
  const client = await waitFor(
    () =>
      Object.entries(
        (ex as unknown as { clients: Record<string, { connected: Promise<unknown> }> }).clients,
      ).find(([url]) => url.includes(channel))?.[1],
    { what: `a stream connection for ${channel}` },
  );
  await client.connected;
}

describe("the ccxt exchange class", () => {
  let server: TestServer;
  let maker: TestUser;
  let taker: TestUser;
  let mex: Exchange;
  let tex: Exchange;

  before(async () => {
    server = await TestServer.start({
      pairFees: { btc_usdt: { makerFee: "0.001", takerFee: "0.002" } },
      pairMinNotional: { eth_usdt: "10" },
    });
    maker = await server.newUser({ btc: "10", usdt: "1000000", eth: "100" });
    taker = await server.newUser({ btc: "10", usdt: "1000000", eth: "100" });
    mex = exchangeOf(server, maker);
    tex = exchangeOf(server, taker);
  });
  after(async () => {
    await mex?.close();
    await tex?.close();
    await server?.close();
  });

  test("fetchMarkets gives ccxt symbols, tick-size precision and /info's bounds, minNotional as limits.cost.min", async () => {
    const info = expectOk(await server.public.info());
    const markets = await mex.fetchMarkets();
    assert.deepEqual(
      markets.map((m) => [m?.id, m?.symbol, m?.base, m?.quote]),
      info.pairs.map((p) => [
        p.name,
        `${p.base.toUpperCase()}/${p.quote.toUpperCase()}`,
        p.base.toUpperCase(),
        p.quote.toUpperCase(),
      ]),
    );
    for (const [i, p] of info.pairs.entries()) {
      const m = markets[i]!;
      assert.equal(decimal(m.precision.price), p.tickSize);
      assert.equal(decimal(m.precision.amount), p.stepSize);
      assert.equal(decimal(m.limits.amount?.min), p.minAmount);
      assert.equal(decimal(m.limits.amount?.max), p.maxAmount);
      assert.equal(decimal(m.limits.price?.min), p.tickSize);
      assert.equal(decimal(m.limits.price?.max), p.maxPrice);
      assert.equal(m.limits.cost?.min === undefined ? "0" : decimal(m.limits.cost.min), p.minNotional);
      assert.equal(decimal(m.maker), p.makerFee);
      assert.equal(decimal(m.taker), p.takerFee);
      assert.equal(m.active, p.status === "trading");
      assert.equal(m.spot, true);
    }
    assert.equal(markets[1]?.limits.cost?.min, 10, "eth_usdt's minNotional");
  });

  test("fetchTime is the server's clock", async () => {
    const before = Date.now();
    const time = await mex.fetchTime();
    assert.ok(time !== undefined && time >= before - 5000 && time <= Date.now() + 5000);
  });

  test("createOrder places a limit order that fetchOrder and fetchOpenOrders read as the REST record", async () => {
    const o = await mex.createOrder("ETH/USDT", "limit", "sell", 1.5, 2500.25, {
      clientOrderId: "ccxt-open-1",
    });
    const rest = expectOk(await maker.client.order(o.id!));
    assert.equal(o.id, String(rest.id));
    assert.equal(o.clientOrderId, "ccxt-open-1");
    assert.equal(o.clientOrderId, rest.clientOrderId);
    assert.deepEqual(
      [o.symbol, o.type, o.side, o.price, o.amount, o.filled, o.remaining, o.cost, o.average, o.status],
      ["ETH/USDT", rest.tradeType, rest.directionType, rest.price, rest.amount, 0, 1.5, 0, undefined, "open"],
    );
    const read = await mex.fetchOrder(o.id, "ETH/USDT");
    assert.deepEqual([read.id, read.status, read.price, read.amount], [o.id, "open", 2500.25, 1.5]);
    const byClientId = await mex.fetchOrder("", undefined, { clientOrderId: "ccxt-open-1" });
    assert.equal(byClientId.id, o.id);
    const open = await mex.fetchOpenOrders("ETH/USDT");
    const restOpen = expectOk(await maker.client.openOrders("eth_usdt"));
    assert.deepEqual(
      open.map((x) => x.id),
      restOpen.map((x) => String(x.id)).reverse(),
      "the REST open orders, oldest first",
    );
    assert.ok(open.every((x) => x.status === "open"));
    await mex.cancelOrder(o.id);
  });

  test("a market order's cost is executedQuote and its average executedQuote / amountUsed, exactly", async () => {
    await mex.createOrder("BTC/USDT", "limit", "sell", 0.123457, 30000.01);
    await mex.createOrder("BTC/USDT", "limit", "sell", 0.5, 30000.02);
    const o = await tex.createOrder("BTC/USDT", "market", "buy", 0.2);
    const res = await taker.client.order(o.id!);
    const rest = expectOk(res);
    const executed = textOf(res, "executedQuote");
    // 0.123457 × 30000.01 + 0.076543 × 30000.02
    assert.equal(
      executed,
      Precise.stringAdd(Precise.stringMul("0.123457", "30000.01"), Precise.stringMul("0.076543", "30000.02")),
    );
    assert.equal(decimal(o.cost), executed);
    assert.equal(o.average, Number(Precise.stringDiv(executed, textOf(res, "amountUsed"), 40)));
    assert.equal(o.status, "closed");
    assert.deepEqual([o.filled, o.remaining, o.type, o.side], [rest.amountUsed, 0, "market", "buy"]);
    // The same through fetchOrder.
    const read = await tex.fetchOrder(o.id!);
    assert.deepEqual([read.cost, read.average, read.status], [o.cost, o.average, "closed"]);
    // An average that is a whole decimal: 0.1 at 30000.01 and 0.1 at 30000.03.
    await mex.createOrder("BTC/USDT", "limit", "sell", 0.1, 30000.03);
    await mex.cancelAllOrders("BTC/USDT");
    await mex.createOrder("BTC/USDT", "limit", "sell", 0.1, 30000.01);
    await mex.createOrder("BTC/USDT", "limit", "sell", 0.1, 30000.03);
    const two = await tex.createOrder("BTC/USDT", "market", "buy", 0.2);
    assert.equal(decimal(two.cost), "6000.004");
    assert.equal(two.average, 30000.02);
  });

  test("fetchMyTrades ties each fill to its REST order, with maker or taker and the fee", async () => {
    const restTaker = expectOk(await taker.client.userHistory({ pairName: "btc_usdt", pageSize: 100 })).items;
    const restMaker = expectOk(await maker.client.userHistory({ pairName: "btc_usdt", pageSize: 100 })).items;
    const check = async (ex: Exchange, rest: UserTrade[], liquidity: string) => {
      const trades = await ex.fetchMyTrades("BTC/USDT");
      assert.deepEqual(
        trades.map((t) => t.id),
        rest.map((t) => String(t.id)).reverse(),
      );
      for (const t of trades) {
        const r = rest.find((x) => String(x.id) === t.id)!;
        assert.equal(t.order, String(r.orderId), "trade.order is the REST order id");
        assert.equal(t.takerOrMaker, liquidity);
        assert.equal(t.takerOrMaker, r.liquidity);
        assert.deepEqual(
          [t.price, t.amount, t.side, t.symbol],
          [r.price, r.amount, r.directionType, "BTC/USDT"],
        );
        assert.equal(decimal(t.cost), Precise.stringMul(String(r.price), String(r.amount)));
        assert.deepEqual([t.fee?.cost, t.fee?.currency], [r.fee, r.feeCurrency.toUpperCase()]);
      }
      return trades;
    };
    const takerTrades = await check(tex, restTaker, "taker");
    await check(mex, restMaker, "maker");
    // The buyer pays the taker fee in btc: 0.2% of what it received.
    assert.equal(
      decimal(takerTrades[0].fee?.cost),
      Precise.stringMul("0.002", decimal(takerTrades[0].amount)),
    );
    // since and limit (docs/API.md 20.3): the oldest from a point.
    const first = await tex.fetchMyTrades("BTC/USDT", takerTrades[0].timestamp, 1);
    assert.deepEqual(
      first.map((t) => t.id),
      [takerTrades[0].id],
    );
  });

  test("fetchClosedOrders lists the filled and the cancelled orders with their statuses", async () => {
    const o = await mex.createOrder("BTC/USDT", "limit", "buy", 0.01, 100);
    const cancelled = await mex.cancelOrder(o.id!, "BTC/USDT");
    assert.equal(cancelled.status, "canceled");
    assert.equal(expectOk(await maker.client.order(o.id!)).isCancelled, true);
    const open = await mex.createOrder("BTC/USDT", "limit", "buy", 0.01, 101);
    const closed = await mex.fetchClosedOrders("BTC/USDT");
    const rest = expectOk(
      await maker.client.userOrders("btc_usdt", { pairName: "btc_usdt", pageSize: 100 }),
    ).items;
    const status = (r: RestOrder) =>
      r.isCancelled ? "canceled" : r.amountUsed === r.amount ? "closed" : "open";
    assert.deepEqual(
      closed.map((x) => [x.id, x.status]),
      rest
        .filter((r) => status(r) !== "open")
        .map((r) => [String(r.id), status(r)])
        .reverse(),
    );
    assert.ok(closed.some((x) => x.status === "closed") && closed.some((x) => x.status === "canceled"));
    assert.ok(!closed.some((x) => x.id === open.id));
    const all = await mex.fetchOrders("BTC/USDT");
    assert.deepEqual(
      all.map((x) => x.id),
      rest.map((r) => String(r.id)).reverse(),
    );
    await mex.cancelOrder(open.id!);
  });

  test("cancelAllOrders cancels the pair's open orders as REST listed them", async () => {
    const a = await mex.createOrder("ETH/USDT", "limit", "buy", 0.01, 1000);
    const b = await mex.createOrder("ETH/USDT", "limit", "buy", 0.01, 1001);
    const cancelled = await mex.cancelAllOrders("ETH/USDT");
    assert.deepEqual(
      cancelled.map((o) => [o.id, o.status, o.symbol]),
      [
        [a.id, "canceled", "ETH/USDT"],
        [b.id, "canceled", "ETH/USDT"],
      ],
    );
    assert.deepEqual(expectOk(await maker.client.openOrders("eth_usdt")), []);
  });

  test("fetchBalance is GET /trade/account: free the available balance, used the reserved", async () => {
    await mex.createOrder("BTC/USDT", "limit", "buy", 0.01, 1000.01);
    const balance = await mex.fetchBalance();
    const account = expectOk(await maker.client.account());
    for (const b of account.balances) {
      const code = b.currency.toUpperCase();
      const mine = Object.entries(balance).find(([k]) => k === code)?.[1] as {
        free: number;
        used: number;
        total: number;
      };
      // ccxt's numbers are doubles: the nearest one to each exact balance.
      assert.equal(mine.free, Number(b.balance));
      assert.equal(mine.used, Number(b.reserved));
      assert.equal(mine.total, Number(Precise.stringAdd(b.balance, b.reserved)));
    }
    await mex.cancelAllOrders();
  });

  test("fetchTicker and fetchTickers are the pairs' 24 h records with the best bid and ask", async () => {
    await mex.createOrder("BTC/USDT", "limit", "buy", 0.01, 29000);
    await mex.createOrder("BTC/USDT", "limit", "sell", 0.01, 31000);
    const records = expectOk(await server.public.pairs());
    const tickers = await mex.fetchTickers();
    assert.deepEqual(Object.keys(tickers).sort(), ["BTC/USDT", "ETH/BTC", "ETH/USDT"]);
    const t = await mex.fetchTicker("BTC/USDT");
    const r = records.find((x) => x.pairName === "btc_usdt")!;
    assert.deepEqual(
      [t.symbol, t.last, t.open, t.high, t.low, t.bid, t.ask, t.baseVolume],
      ["BTC/USDT", r.closeValue, r.openValue, r.maxValue, r.minValue, 29000, 31000, r.volume],
    );
    assert.equal(r.closeBidValue, 29000);
    const never = Object.entries(tickers).find(([k]) => k === "ETH/BTC")?.[1];
    assert.deepEqual(
      [never?.last, never?.bid, never?.ask],
      [undefined, undefined, undefined],
      "a pair never traded",
    );
  });

  test("fetchOrderBook is the REST book, its seq the nonce and its time the timestamp", async () => {
    const book = await mex.fetchOrderBook("BTC/USDT");
    const rest = expectOk(await server.public.orderBook("btc_usdt"));
    assert.deepEqual(
      plain(book.bids),
      rest.buy.map((l) => [l.price, l.amount]),
    );
    assert.deepEqual(
      plain(book.asks),
      rest.sell.map((l) => [l.price, l.amount]),
    );
    assert.equal(book.nonce, rest.seq);
    assert.ok(rest.time !== undefined && rest.time > 0);
    assert.equal(book.timestamp, rest.time);
    const top = await mex.fetchOrderBook("BTC/USDT", 1);
    assert.deepEqual([top.bids.length, top.asks.length], [1, 1]);
  });

  test("fetchTrades gives the trade ids of the pair history, with since and limit", async () => {
    const rest = expectOk(await server.public.history("btc_usdt"));
    const trades = await mex.fetchTrades("BTC/USDT");
    assert.deepEqual(
      trades.map((t) => [t.id, t.price, t.amount, t.side]),
      rest.map((t) => [String(t.id), t.price, t.amount, t.directionType]).reverse(),
    );
    const oldest = rest[rest.length - 1];
    const since = Number(oldest.eventTimeMicro.slice(0, -3));
    assert.equal(trades[0].timestamp, since);
    const two = await mex.fetchTrades("BTC/USDT", since, 2);
    const restTwo = expectOk(await server.public.history("btc_usdt", { since, limit: 2 }));
    assert.deepEqual(
      two.map((t) => t.id),
      restTwo.map((t) => String(t.id)),
    );
  });

  test("fetchOHLCV is the REST chart as [time, open, high, low, close, volume]", async () => {
    const rest = expectOk(await server.public.chart("btc_usdt", "1m"));
    const candles = await mex.fetchOHLCV("BTC/USDT", "1m");
    assert.ok(rest.length > 0);
    assert.deepEqual(
      candles,
      rest.map(([t, o, min, max, c, v]) => [t, o, max, min, c, v]),
    );
    const since = await mex.fetchOHLCV("BTC/USDT", "1m", rest[0][0], 1);
    assert.deepEqual(since, candles.slice(0, 1));
  });

  test("createOrder passes postOnly and timeInForce, and market orders", async () => {
    const po = await mex.createOrder("ETH/USDT", "limit", "buy", 0.01, 1500, { postOnly: true });
    const rest = expectOk(await maker.client.order(po.id!));
    assert.equal(rest.postOnly, true);
    assert.equal(po.postOnly, true);
    const ioc = await mex.createOrder("ETH/USDT", "limit", "buy", 0.01, 1400, { timeInForce: "IOC" });
    assert.equal(expectOk(await maker.client.order(ioc.id!)).timeInForce, "IOC");
    assert.deepEqual([ioc.timeInForce, ioc.status], ["IOC", "canceled"]);
    const viaPo = await mex.createOrder("ETH/USDT", "limit", "buy", 0.01, 1300, { timeInForce: "PO" });
    assert.equal(expectOk(await maker.client.order(viaPo.id!)).postOnly, true);
    await mex.cancelAllOrders("ETH/USDT");
  });

  test("maps the server's codes to ccxt's error classes", async () => {
    await assert.rejects(
      tex.createOrder("BTC/USDT", "limit", "buy", 1000, 1000000),
      (e) => e instanceof ccxt.InsufficientFunds,
    );
    await assert.rejects(tex.fetchOrder("99999999"), (e) => e instanceof ccxt.OrderNotFound);
    await assert.rejects(tex.cancelOrder("99999999"), (e) => e instanceof ccxt.OrderNotFound);
    await assert.rejects(tex.fetchOrder("1/../2"), (e) => e instanceof ccxt.OrderNotFound, "not an order id");
    // docs/API.md 20.5: 0.001 × 2000 is below eth_usdt's minimum of 10.
    await assert.rejects(
      tex.createOrder("ETH/USDT", "limit", "buy", 0.001, 2000),
      (e) => e instanceof ccxt.InvalidOrder && /NOTIONAL_BELOW_MIN/.test((e as Error).message),
    );
    const ask = await mex.createOrder("ETH/USDT", "limit", "sell", 0.01, 3000);
    await assert.rejects(
      tex.createOrder("ETH/USDT", "limit", "buy", 0.01, 3000, { postOnly: true }),
      (e) => e instanceof ccxt.OrderImmediatelyFillable && e instanceof ccxt.InvalidOrder,
    );
    await mex.cancelOrder(ask.id!);
    await assert.rejects(
      tex.createOrder("ETH/BTC", "market", "buy", 0.01),
      (e) => e instanceof ccxt.InvalidOrder,
      "no liquidity",
    );
    const stranger = exchangeOf(server, { apiToken: taker.apiToken, secretKey: "00".repeat(32) });
    await assert.rejects(stranger.fetchBalance(), (e) => e instanceof ccxt.AuthenticationError);
    await stranger.close();
  });

  test("watchOrderBook follows the live book and sees a new level", async () => {
    const first = await mex.watchOrderBook("BTC/USDT");
    const rest = expectOk(await server.public.orderBook("btc_usdt"));
    assert.deepEqual(
      plain(first.bids),
      rest.buy.map((l) => [l.price, l.amount]),
    );
    assert.equal(first.nonce, rest.seq);
    const next = mex.watchOrderBook("BTC/USDT");
    const before = Date.now();
    await maker.client.createOrder(limit("btc_usdt", "buy", "28000.5", "0.25"));
    const book = await next;
    const after = expectOk(await server.public.orderBook("btc_usdt"));
    assert.deepEqual(
      plain(book.bids),
      after.buy.map((l) => [l.price, l.amount]),
    );
    assert.ok(book.bids.some(([p, a]) => p === 28000.5 && a === 0.25));
    assert.equal(book.nonce, after.seq);
    assert.ok(
      book.timestamp !== undefined && book.timestamp >= before - 1000 && book.timestamp >= after.time! - 1000,
    );
  });

  test("watchOrderBook's book is kept by seq and checksum: a gap or a mismatch drops the connection", async () => {
    await mex.loadMarkets();
    const events: string[] = [];
    const fake = (name: string) => ({
      resolve: (book: { nonce?: number; timestamp?: number; bids: number[][] }, hash: string) =>
        events.push(
          `${name} resolve ${hash} ${book.nonce} ${book.timestamp} ${JSON.stringify(plain(book.bids))}`,
        ),
      reject: (error: Error, hash: string) => events.push(`${name} reject ${hash} ${error.constructor.name}`),
      close: () => {
        events.push(`${name} close`);
        return Promise.resolve();
      },
    });
    const handle = (client: object, data: object) =>
      (mex as unknown as { handleMessage(c: object, m: object): void }).handleMessage(client, {
        stream: "orders:eth_btc",
        data,
      });
    const level = (price: string, amount: string) => ({ price, amount, eventTimeMicro: "1764201600123456" });
    const sum = (bids: [number, number][]) => bookChecksum([], bids);
    const a = fake("a");
    handle(a, { buy: [level("0.05", "1")], sell: [], seq: 5, checksum: sum([[0.05, 1]]) });
    handle(a, {
      buy: [level("0.04", "2")],
      sell: [],
      seq: 6,
      checksum: sum([
        [0.05, 1],
        [0.04, 2],
      ]),
    });
    handle(a, { buy: [level("0.04", "3")], sell: [], seq: 6, checksum: 1 }); // already applied
    handle(a, { buy: [level("0.03", "1")], sell: [], seq: 8, checksum: 1 }); // 7 is missing
    const b = fake("b");
    handle(b, { buy: [level("0.05", "1")], sell: [], seq: 8, checksum: sum([[0.05, 1]]) });
    handle(b, { buy: [level("0.05", "2")], sell: [], seq: 9, checksum: 12345 }); // not this book's
    assert.deepEqual(events, [
      "a resolve orderbook:ETH/BTC 5 1764201600123 [[0.05,1]]",
      "a resolve orderbook:ETH/BTC 6 1764201600123 [[0.05,1],[0.04,2]]",
      "a reject orderbook:ETH/BTC InvalidNonce",
      "a close",
      "b resolve orderbook:ETH/BTC 8 1764201600123 [[0.05,1]]",
      "b reject orderbook:ETH/BTC ChecksumError",
      "b close",
    ]);
  });

  test("watchTrades, watchMyTrades and watchOrders see a fill", async () => {
    const trades = tex.watchTrades("ETH/USDT");
    const mine = tex.watchMyTrades("ETH/USDT");
    const orders = tex.watchOrders("ETH/USDT");
    await Promise.all(["history:eth_usdt", "user_history:", "user_orders:"].map((c) => streamOpen(tex, c)));
    const ask = expectOk(await maker.client.createOrder(limit("eth_usdt", "sell", "2000.01", "0.3")));
    const buy = expectOk(await taker.client.createOrder(market("eth_usdt", "buy", "0.3")));
    const restTrade = expectOk(await server.public.history("eth_usdt"))[0];
    const [t] = await trades;
    assert.deepEqual(
      [t.id, t.price, t.amount, t.side, t.symbol],
      [String(restTrade.id), 2000.01, 0.3, "buy", "ETH/USDT"],
    );
    const [m] = await mine;
    assert.deepEqual([m.id, m.order, m.takerOrMaker], [String(restTrade.id), String(buy.id), "taker"]);
    const [o] = await orders;
    const restOrder = await taker.client.order(buy.id);
    assert.deepEqual([o.id, o.status, o.filled], [String(buy.id), "closed", 0.3]);
    assert.equal(decimal(o.cost), textOf(restOrder, "executedQuote"));
    assert.equal(o.average, 2000.01);
    assert.notEqual(ask.id, buy.id);
  });
});

describe("docs/API.md's ccxt bot (20.7)", () => {
  let server: TestServer;
  let dir: string;
  before(async () => {
    server = await TestServer.start();
    dir = mkdtempSync(join(tmpdir(), "ccxt-bot-"));
  });
  after(async () => {
    await server?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  test("runs as written, the package's import pointing at the source", async () => {
    const doc = readFileSync(join(REPO_ROOT, "docs/API.md"), "utf8");
    const at = doc.indexOf("### 20.7 A ccxt bot");
    assert.ok(at >= 0);
    const block = /```js\n([\s\S]*?)```/.exec(doc.slice(at));
    assert.ok(block !== null, "20.7 has a js block");
    const source = pathToFileURL(join(REPO_ROOT, "src/client/ccxt.ts")).href;
    assert.ok(block[1].includes('from "exchange-client/ccxt"'));
    const bot = join(dir, "bot.mts");
    writeFileSync(bot, block[1].replace('"exchange-client/ccxt"', JSON.stringify(source)));
    const user = await server.newUser({ usdt: "1000" });
    const run = await promisify(execFile)(process.execPath, ["--import", "tsx", bot], {
      cwd: REPO_ROOT,
      env: { ...process.env, TOKEN: user.apiToken, SECRET: user.secretKey, EXCHANGE_URL: server.origin },
      timeout: 60_000,
    });
    const lines = run.stdout.trim().split("\n");
    assert.equal(lines[0], "USDT free 1000, in orders 0");
    assert.match(lines[1], /^best bid/);
    const orders = expectOk(await user.client.userOrders("btc_usdt")).items;
    assert.equal(orders.length, 1);
    assert.equal(lines[2], `${orders[0].id} ccxt-bot-1 open 0 0`);
    assert.equal(orders[0].isCancelled, true, "the bot cancelled its order");
  });
});
