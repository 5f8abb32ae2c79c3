/**
 * The results stage (src/core/results.ts) through the core with real parts: a real pair worker,
 * the real database writer on a temp SQLite file, the real ledger. A crossing order's trade and
 * order rows go into the writer's batch; its answer and the stream's messages come only once a
 * batch after the one open when the rows were added has been acknowledged; the rows are then in
 * their tables as answered.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import {
  type CommitListener,
  Exchange,
  LIMIT,
  type OrderView,
  pairEventHandler,
} from "../../src/core/exchange.ts";
import { Ledger } from "../../src/core/ledger.ts";
import { PairMarket } from "../../src/core/read-models/pair-market.ts";
import { DbWriter } from "../../src/db/writer.ts";
import { Answers } from "../../src/entry/answers.ts";
import { PairChannel } from "../../src/pair/pair-client.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";
import { ORDER_COLUMNS, TRADE_COLUMNS } from "../../src/protocol/db/rows.ts";
import { BUY, SELL } from "../../src/protocol/pair/engine.ts";
import { tempDir } from "../db/helpers.ts";

const BTC = 0;
const USDT = 1;

describe("results", () => {
  const tmp = tempDir("results");
  after(() => tmp.cleanup());

  it("puts a trade's rows into the writer's batch, answers after that batch commits, then tells the listener", async () => {
    const writer = await DbWriter.start(tmp.dbPath);
    const ledger = new Ledger(["btc", "usdt"]);
    const answers = new Answers();
    /** What happened, in order, with the writer's acknowledged batches at that moment. */
    const log: string[] = [];
    let batchesAtTrade = -1;
    const listener: CommitListener = {
      wantsOrders: () => true,
      wantsUserTrades: () => true,
      wantsTrades: () => {
        // Asked as the trade's row has just gone into the current batch (R2 → results).
        if (batchesAtTrade < 0) batchesAtTrade = writer.stats.batches;
        return true;
      },
      orderChanged: (user, view) => log.push(`order ${user} ${view.id} ${view.amountUsed}`),
      userTrade: (user, view) => log.push(`trade ${user} ${view.id}`),
      publicTrades: (pair, trades) => log.push(`public ${pair} ${trades.length}`),
      levelsChanged: (pair, _levels, seq) => log.push(`levels ${pair} ${seq}`),
      // The best bid and offer and the L3 book are not this test's concern.
      bboChanged: () => {},
      l3Changed: () => {},
    };
    const exchange = new Exchange({ ledger, db: writer, sink: answers, listener });
    const channel = new PairChannel({ pairName: "btc_usdt", onEvent: pairEventHandler(exchange, 0) });
    try {
      await channel.ready;
      exchange.addPair(
        { index: 0, name: "btc_usdt", base: "btc", quote: "usdt", priceDecimals: 2, amountDecimals: 6 },
        new PairMarket("btc_usdt", 2, 6),
        channel,
        6,
        8,
      );
      ledger.deposit(0, BTC, 10n ** 6n);
      ledger.deposit(1, USDT, 10n ** 12n);
      const place = (user: number, side: 0 | 1, amount: number) =>
        new Promise<{ err: number; view: OrderView | null; batches: number }>((resolve) => {
          const request = answers.order((err, view) => {
            log.push(`answer ${view?.id}`);
            resolve({ err, view, batches: writer.stats.batches });
          });
          const code = exchange.createOrder(
            user,
            0,
            {
              type: LIMIT,
              side,
              price: 10_000,
              amount,
              flags: 0,
              clientOrderId: undefined,
              expiresAt: 0,
              session: 0,
            },
            request,
          );
          assert.equal(code, 0);
        });
      const sell = await place(0, SELL, 30);
      assert.equal(sell.err, 0);
      log.length = 0;
      const buy = await place(1, BUY, 10);
      assert.equal(buy.err, 0);
      assert.ok(batchesAtTrade >= 0, "the trade was made");
      // Answered only once a batch after the one holding the rows was acknowledged.
      assert.ok(
        buy.batches > batchesAtTrade,
        `answered at ${buy.batches} batches, rows added at ${batchesAtTrade}`,
      );
      // The answer first, then the stream: the book, public trades, both users' trades, then both
      // orders (a user's trade is numbered below the order change it made, docs/API.md 16).
      const sellId = sell.view!.id;
      const buyId = buy.view!.id;
      assert.deepEqual(log, [
        `answer ${buyId}`,
        "levels 0 2",
        "public 0 1",
        "trade 1 1",
        "trade 0 1",
        `order 0 ${sellId} 0.00001`,
        `order 1 ${buyId} 0.00001`,
      ]);
      // The rows, once applied to their tables, are what was answered.
      await writer.applied();
      const ro = openDatabase(tmp.dbPath, { readonly: true });
      try {
        const orders = ro.prepare(`SELECT ${ORDER_COLUMNS} FROM orders ORDER BY id`).all() as {
          id: number;
          userId: number;
          amount: number;
          amountUsed: number;
        }[];
        assert.deepEqual(
          orders.map((o) => [o.id, o.userId, o.amount, o.amountUsed]),
          [
            [sellId, 0, 30, 10],
            [buyId, 1, 10, 10],
          ],
        );
        const trades = ro.prepare(`SELECT ${TRADE_COLUMNS} FROM trades`).all() as {
          id: number;
          price: number;
          amount: number;
          takerOrderId: number;
          makerOrderId: number;
        }[];
        assert.deepEqual(
          trades.map((t) => [t.id, t.price, t.amount, t.takerOrderId, t.makerOrderId]),
          [[1, 10_000, 10, buyId, sellId]],
        );
      } finally {
        ro.close();
      }
    } finally {
      await channel.close();
      await writer.close();
    }
  });
});
