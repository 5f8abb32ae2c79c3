/**
 * Every channel's first message and the messages that follow an order, a trade and a cancel, field
 * by field, and equal to what the REST reads return for the same object (docs/API.md 12).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type {
  ExchangeRecord as ClientExchangeRecord,
  PublicTrade,
  UserTrade,
} from "../../src/client/index.ts";
import { EXCHANGES_PERIOD_MS } from "../../src/stream/hub.ts";
import { crc32 } from "../../src/util/crc32.ts";
import {
  type BookData,
  cancelOrder,
  createOrder,
  DATETIME,
  get,
  MICRO,
  type Order,
  PAIR_NAMES,
  StreamClient,
  type StreamMessage,
  signedHeaders,
  startServer,
  type TestServer,
} from "./helpers.ts";

/** The `exchanges` channel's record: 2.2 plus the stream-only event time. */
type ExchangeRecord = ClientExchangeRecord & { eventTimeMicro: string };

const EXCHANGE_KEYS = [
  "pairName",
  "openValue",
  "minValue",
  "maxValue",
  "closeValue",
  "volume",
  "eventTimeMicro",
];
const LEVEL_KEYS = ["price", "amount", "eventTimeMicro"];
const TRADE_KEYS = ["id", "directionType", "tradeType", "price", "amount", "tradeTime", "eventTimeMicro"];
const ORDER_KEYS = [
  "id",
  "pairName",
  "tradeType",
  "directionType",
  "price",
  "amount",
  "amountUsed",
  "isCancelled",
  "createTime",
  "execSeq",
  "executedQuote",
];
const USER_TRADE_KEYS = [
  "id",
  "pairName",
  "tradeType",
  "directionType",
  "price",
  "amount",
  "tradeTime",
  "fee",
  "feeCurrency",
  "execSeq",
  "orderId",
  "liquidity",
];

function withoutUpdate(o: Order): Omit<Order, "updateTime"> {
  const { updateTime: _, ...rest } = o;
  return rest;
}

/** Next message of `stream` (skipping none: the next message must be on that stream). */
async function nextOn(client: StreamClient, stream: string): Promise<StreamMessage> {
  const m = await client.next();
  assert.equal(m.stream, stream, `expected a message on ${stream}, got ${JSON.stringify(m)}`);
  // A user's executions carry their number beside the data (docs/API.md 16), the rest nothing more.
  const numbered = m.stream.startsWith("user_orders:") || m.stream.startsWith("user_history:");
  assert.deepEqual(Object.keys(m), numbered ? ["stream", "data", "execSeq"] : ["stream", "data"]);
  return m;
}

describe("stream channels", () => {
  let server: TestServer;
  before(async () => {
    server = await startServer(3);
  });
  after(async () => {
    await server.close();
  });

  test("sends the snapshots on connect and every change after it, as REST shows them", async () => {
    const [maker, taker] = server.users;
    // A book with two levels on each side of btc_usdt before anyone connects.
    const bestAsk = await createOrder(server, maker, {
      pairName: "btc_usdt",
      tradeType: "limit",
      directionType: "sell",
      price: "30000.5",
      amount: "1.5",
    });
    await createOrder(server, maker, {
      pairName: "btc_usdt",
      tradeType: "limit",
      directionType: "sell",
      price: "30100",
      amount: "0.25",
    });
    await createOrder(server, maker, {
      pairName: "btc_usdt",
      tradeType: "limit",
      directionType: "buy",
      price: "29000",
      amount: "1",
    });

    const pub = await StreamClient.connect(server, "streams=exchanges,orders:btc_usdt,history:btc_usdt");
    const query = `streams=user_orders:${maker.uid},user_history:${maker.uid}`;
    const own = await StreamClient.connect(server, query, signedHeaders(maker, query));

    // exchanges: every pair, config order, the 24 h record and a microsecond event time.
    const ex = await nextOn(pub, "exchanges");
    const records = ex.data as ExchangeRecord[];
    assert.deepEqual(
      records.map((r) => r.pairName),
      PAIR_NAMES,
    );
    for (const r of records) {
      assert.deepEqual(Object.keys(r), EXCHANGE_KEYS);
      for (const k of ["openValue", "minValue", "maxValue", "closeValue", "volume"] as const)
        assert.equal(r[k], 0, `${r.pairName}.${k} of a pair never traded`);
      assert.match(r.eventTimeMicro, MICRO);
    }

    // orders:btc_usdt: every level, buy descending and sell ascending, one event time.
    const snap = await nextOn(pub, "orders:btc_usdt");
    const book = snap.data as BookData;
    assert.deepEqual(Object.keys(book), ["buy", "sell", "seq", "checksum"]);
    const t0 = book.sell[0].eventTimeMicro;
    assert.match(t0, MICRO);
    assert.deepEqual(book, {
      buy: [{ price: 29000, amount: 1, eventTimeMicro: t0 }],
      sell: [
        { price: 30000.5, amount: 1.5, eventTimeMicro: t0 },
        { price: 30100, amount: 0.25, eventTimeMicro: t0 },
      ],
      seq: 3, // three orders placed, three changes of the book
      checksum: crc32("30000.5:1.5,30100:0.25|29000:1"), // docs/API.md 12.5
    });
    for (const l of [...book.buy, ...book.sell]) assert.deepEqual(Object.keys(l), LEVEL_KEYS);
    // history and the user channels send nothing on connect (settled: all sent on connect is here).
    await pub.settled();
    await own.settled();
    assert.equal(pub.messages.length, 2, "only the two snapshots on connect");
    assert.equal(own.messages.length, 0, "user channels send nothing on connect");

    // A market buy of 0.5 takes from the best ask.
    const market = await createOrder(server, taker, {
      pairName: "btc_usdt",
      tradeType: "market",
      directionType: "buy",
      amount: "0.5",
    });
    assert.equal(market.amountUsed, 0.5);

    const delta = await nextOn(pub, "orders:btc_usdt");
    const d = delta.data as BookData;
    assert.deepEqual(d.buy, []);
    assert.equal(d.sell.length, 1);
    assert.deepEqual({ price: d.sell[0].price, amount: d.sell[0].amount }, { price: 30000.5, amount: 1 });
    assert.ok(BigInt(d.sell[0].eventTimeMicro) > BigInt(t0), "level event times increase");

    const hist = await nextOn(pub, "history:btc_usdt");
    const trades = hist.data as PublicTrade[];
    assert.equal(trades.length, 1);
    assert.deepEqual(Object.keys(trades[0]), TRADE_KEYS);
    const { tradeTime, eventTimeMicro, id: tradeId, ...rest } = trades[0];
    assert.deepEqual(rest, { directionType: "buy", tradeType: "market", price: 30000.5, amount: 0.5 });
    assert.ok(Number.isInteger(tradeId) && tradeId > 0, "docs/API.md 20: the trade id");
    assert.ok(Number.isInteger(tradeTime));
    assert.match(eventTimeMicro, MICRO);
    assert.equal(tradeTime, Math.floor(Number(eventTimeMicro) / 1e6));
    const restHistory = await get<PublicTrade[]>(server, "/trade/pairs/btc_usdt/history");
    assert.deepEqual(restHistory.body[0], trades[0], "the stream item equals the REST history item");

    // exchanges: only the traded pair, with its 24 h values.
    const ex2 = await nextOn(pub, "exchanges");
    const changed = ex2.data as ExchangeRecord[];
    assert.equal(changed.length, 1);
    const { eventTimeMicro: exTime, ...values } = changed[0];
    assert.deepEqual(values, {
      pairName: "btc_usdt",
      openValue: 30000.5,
      minValue: 30000.5,
      maxValue: 30000.5,
      closeValue: 30000.5,
      volume: 0.5,
    });
    assert.ok(BigInt(exTime) > BigInt(records[0].eventTimeMicro), "exchange event times increase");
    const pairs = await get<Record<string, unknown>[]>(server, "/trade/pairs");
    const { closeBidValue: _b, closeAskValue: _a, ...restRecord } = pairs.body[0];
    assert.deepEqual(restRecord, values, "the stream record equals GET /trade/pairs");

    // The maker's own channels: its trade, then the filled order (docs/API.md 16: a trade is
    // numbered below the order change it makes, and reports go in number order).
    const tradeMsg = await nextOn(own, `user_history:${maker.uid}`);
    const trade = tradeMsg.data as UserTrade;
    assert.deepEqual(Object.keys(trade), USER_TRADE_KEYS);
    assert.match(trade.tradeTime, DATETIME);
    const userHistory = await get<{ items: UserTrade[] }>(server, "/trade/pairs/user-history", maker);
    assert.deepEqual(userHistory.body.items[0], trade, "the stream trade equals the REST user history item");
    assert.deepEqual(
      { ...trade, id: 0, tradeTime: "" },
      {
        id: 0,
        pairName: "btc_usdt",
        tradeType: "limit",
        directionType: "sell",
        price: 30000.5,
        amount: 0.5,
        tradeTime: "",
        fee: 0,
        feeCurrency: "usdt",
        execSeq: trade.execSeq,
        orderId: bestAsk.id,
        liquidity: "maker",
      },
    );
    assert.equal(trade.id, tradeId, "the user's trade is the public trade");
    assert.equal(tradeMsg.execSeq, trade.execSeq, "the message's number is its trade's");

    const fill = await nextOn(own, `user_orders:${maker.uid}`);
    const filled = fill.data as Order;
    assert.deepEqual(Object.keys(filled), ORDER_KEYS);
    assert.equal(filled.amountUsed, 0.5);
    assert.equal(filled.isCancelled, false);
    assert.match(filled.createTime, DATETIME);
    const page = await get<{ items: Order[] }>(
      server,
      "/trade/pairs/btc_usdt/user-orders?pageSize=100",
      maker,
    );
    assert.deepEqual(
      page.body.items.find((o) => o.id === filled.id),
      filled,
      "the stream order equals the REST order",
    );
    // The order's fill is numbered right after the trade that made it (docs/API.md 16).
    assert.equal(filled.execSeq, trade.execSeq + 1);
    assert.equal(fill.execSeq, filled.execSeq);

    // A new limit order: created on user_orders (as the create answer, without updateTime), a new level.
    const created = await createOrder(server, maker, {
      pairName: "btc_usdt",
      tradeType: "limit",
      directionType: "buy",
      price: "28000.01",
      amount: "0.000001",
    });
    assert.deepEqual((await nextOn(own, `user_orders:${maker.uid}`)).data, withoutUpdate(created));
    const level = (await nextOn(pub, "orders:btc_usdt")).data as BookData;
    assert.deepEqual(
      level.buy.map((l) => [l.price, l.amount]),
      [[28000.01, 0.000001]],
    );
    assert.deepEqual(level.sell, []);

    // A cancel: the order with isCancelled, and the level gone (amount 0).
    assert.equal((await cancelOrder(server, maker, created.id)).status, 200);
    assert.deepEqual((await nextOn(own, `user_orders:${maker.uid}`)).data, {
      ...withoutUpdate(created),
      isCancelled: true,
      execSeq: created.execSeq + 1,
    });
    const gone = (await nextOn(pub, "orders:btc_usdt")).data as BookData;
    assert.deepEqual(
      gone.buy.map((l) => [l.price, l.amount]),
      [[28000.01, 0]],
    );

    // A last change marks the end: the next message on each channel it reaches must be its own.
    const marker = await createOrder(server, maker, {
      pairName: "btc_usdt",
      tradeType: "limit",
      directionType: "buy",
      price: "28000.02",
      amount: "0.000001",
    });
    assert.deepEqual(
      (await nextOn(own, `user_orders:${maker.uid}`)).data,
      withoutUpdate(marker),
      "nothing else on the user channels",
    );
    const markerLevel = (await nextOn(pub, "orders:btc_usdt")).data as BookData;
    assert.deepEqual(
      markerLevel.buy.map((l) => [l.price, l.amount]),
      [[28000.02, 0.000001]],
      "nothing else on the public channels",
    );
    // exchanges alone goes out on a timer (a period after a change), so a message it sent wrongly
    // for the cancel or the marker could come after the marker: that one is a bounded wait.
    assert.ok(await pub.quiet(EXCHANGES_PERIOD_MS + 50), "no exchanges message without a trade");
    pub.close();
    own.close();
    assert.equal((await cancelOrder(server, maker, marker.id)).status, 200);
  });

  test("one matching step is one history message with its trades in execution order", async () => {
    const [maker, taker] = server.users;
    for (const price of ["2000", "2000.01", "2000.02"]) {
      await createOrder(server, maker, {
        pairName: "eth_usdt",
        tradeType: "limit",
        directionType: "sell",
        price,
        amount: "0.1",
      });
    }
    const client = await StreamClient.connect(server, "streams=history:eth_usdt,orders:eth_usdt");
    await nextOn(client, "orders:eth_usdt");
    await createOrder(server, taker, {
      pairName: "eth_usdt",
      tradeType: "limit",
      directionType: "buy",
      price: "2000.02",
      amount: "0.25",
    });
    const levels = (await nextOn(client, "orders:eth_usdt")).data as BookData;
    assert.deepEqual(
      levels.sell.map((l) => [l.price, l.amount]),
      [
        [2000, 0],
        [2000.01, 0],
        [2000.02, 0.05],
      ],
      "the changed levels, best first",
    );
    const trades = (await nextOn(client, "history:eth_usdt")).data as PublicTrade[];
    assert.deepEqual(
      trades.map((t) => [t.price, t.amount, t.directionType, t.tradeType]),
      [
        [2000, 0.1, "buy", "limit"],
        [2000.01, 0.1, "buy", "limit"],
        [2000.02, 0.05, "buy", "limit"],
      ],
    );
    for (let i = 1; i < trades.length; i++)
      assert.ok(BigInt(trades[i].eventTimeMicro) > BigInt(trades[i - 1].eventTimeMicro));
    const rest = await get<PublicTrade[]>(server, "/trade/pairs/eth_usdt/history");
    assert.deepEqual(rest.body.slice(0, 3), [...trades].reverse(), "REST history is the same, newest first");
    client.close();
  });

  test("coalesces exchanges to at most one message per 100 ms, pairs in config order", async () => {
    const [maker, taker] = server.users;
    const client = await StreamClient.connect(server, "streams=exchanges");
    await nextOn(client, "exchanges");
    // Resting liquidity on two pairs, then a burst of small trades on both.
    for (const pairName of ["eth_btc", "btc_usdt"]) {
      await createOrder(server, maker, {
        pairName,
        tradeType: "limit",
        directionType: "sell",
        price: pairName === "eth_btc" ? "0.05" : "31000",
        amount: "5",
      });
    }
    const buy = (i: number): Promise<Order> => {
      const pairName = i % 2 === 0 ? "eth_btc" : "btc_usdt";
      // Crossing limit buys (concurrent market buys of one user would each hold all its quote).
      const price = pairName === "eth_btc" ? "0.05" : "31000";
      return createOrder(server, taker, {
        pairName,
        tradeType: "limit",
        directionType: "buy",
        price,
        amount: "0.001",
      });
    };
    // One trade, and its message awaited (it arrives while the server is idle): the rest trades in
    // later periods, so the burst spans several messages however fast the machine is. The rest goes
    // in groups of 8, each sent once the one before is answered.
    await buy(0);
    await client.until(() => client.messages.length > 1, 10_000, "the burst's first exchanges message");
    for (let i = 1; i < 40; i += 8)
      await Promise.all(Array.from({ length: Math.min(8, 40 - i) }, (_, k) => buy(i + k)));
    // Every trade is committed: wait until the stream's last record of each pair says what REST says.
    const traded = (await get<ExchangeRecord[]>(server, "/trade/pairs")).body.filter((r) =>
      ["eth_btc", "btc_usdt"].includes(r.pairName),
    );
    const lastStreamed = () =>
      new Map(
        client.messages.slice(1).flatMap((m) => (m.data as ExchangeRecord[]).map((r) => [r.pairName, r])),
      );
    await client.until(
      () => traded.every((r) => lastStreamed().get(r.pairName)?.volume === r.volume),
      10_000,
      "the burst's last exchanges records",
    );
    const msgs = client.messages.slice(1);
    assert.ok(msgs.length >= 2, `several exchanges messages for the burst, got ${msgs.length}`);
    // The period is bounded on the server's clock, not on when messages reach this client: each
    // record is stamped with the pair's stream clock when its message is built (docs/API.md 12.4),
    // so consecutive messages' stamps are at least 100 ms apart. The 5 ms spare covers building a
    // message's records after the instant its period counts from.
    const stamps = msgs.map((m) => (m.data as ExchangeRecord[]).map((r) => BigInt(r.eventTimeMicro)));
    for (let i = 1; i < stamps.length; i++) {
      const gap =
        stamps[i].reduce((a, b) => (a < b ? a : b)) - stamps[i - 1].reduce((a, b) => (a > b ? a : b));
      assert.ok(
        gap >= 95_000n,
        `messages ${i - 1} and ${i} were built ${gap} µs apart on the server's clock`,
      );
    }
    const last = new Map<string, bigint>();
    for (const m of msgs) {
      const recs = m.data as ExchangeRecord[];
      const names = recs.map((r) => r.pairName);
      assert.deepEqual(
        names,
        PAIR_NAMES.filter((p) => names.includes(p)),
        "config order",
      );
      assert.ok(!names.includes("eth_usdt"), "only traded pairs");
      for (const r of recs) {
        const t = BigInt(r.eventTimeMicro);
        assert.ok(t > (last.get(r.pairName) ?? 0n), "strictly increasing per pair");
        last.set(r.pairName, t);
      }
    }
    const pairs = await get<(ExchangeRecord & { closeBidValue: number })[]>(server, "/trade/pairs");
    const finalByPair = new Map(msgs.flatMap((m) => m.data as ExchangeRecord[]).map((r) => [r.pairName, r]));
    for (const rec of pairs.body) {
      const streamed = finalByPair.get(rec.pairName);
      if (streamed === undefined) continue;
      assert.equal(streamed.volume, rec.volume, `${rec.pairName}: the last record has the final volume`);
      assert.equal(streamed.closeValue, rec.closeValue);
    }
    client.close();
  });

  test("answers 426 to a plain GET of /stream", async () => {
    const res = await fetch(`${server.url}/stream?streams=exchanges`, { headers: { connection: "close" } });
    assert.equal(res.status, 426);
    assert.equal(res.headers.get("upgrade"), "websocket");
    const body = (await res.json()) as { errors: Record<string, string[]> };
    assert.deepEqual(Object.keys(body.errors), ["path"]);
  });
});
