/**
 * The exchange core through real parts: a real pair worker (with a deliberately tiny command
 * ring), the real database writer on a temp file, the real ledger.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { DbWriter } from "../src/db/writer.ts";
import { Exchange, LIMIT, MARKET, type OrderView, pairEventHandler } from "../src/exchange.ts";
import { Ledger } from "../src/ledger.ts";
import { PairMarket } from "../src/market-data.ts";
import { PairChannel } from "../src/pair-client.ts";
import { BUY, SELL } from "../workers/matching/types.ts";
import { tempDir } from "./db/helpers.ts";

describe("Exchange core", () => {
  const tmp = tempDir("exchange-core");
  after(() => tmp.cleanup());

  it("holds commands while the pair's command ring is full and answers every one in order", async () => {
    const writer = await DbWriter.start(tmp.dbPath);
    const ledger = new Ledger(["btc", "usdt"]);
    const exchange = new Exchange(ledger, writer);
    const market = new PairMarket("btc_usdt", 2, 6);
    const channel = new PairChannel({
      pairName: "btc_usdt",
      commandSlots: 4,
      onEvent: pairEventHandler(exchange, 0),
    });
    await channel.ready;
    const pair = {
      index: 0,
      name: "btc_usdt",
      base: "btc",
      quote: "usdt",
      priceDecimals: 2,
      amountDecimals: 6,
    };
    // Ledger scales: btc 6 (base, amountDecimals), usdt 8 (priceDecimals + amountDecimals).
    exchange.addPair(pair, market, channel, 6, 8);
    ledger.deposit(0, 0, 1_000n * 10n ** 6n);
    ledger.deposit(1, 1, 10_000_000n * 10n ** 8n);

    // 200 sells of 1 lot at 100.00..101.99 by user 0, then one market buy of 150 lots by user 1:
    // far more commands than the 4-slot ring holds, all sent in one tick.
    const answers: OrderView[] = [];
    const replies: Promise<void>[] = [];
    for (let i = 0; i < 200; i++) {
      replies.push(
        new Promise((resolve, reject) => {
          const accepted = exchange.createOrder(0, 0, LIMIT, SELL, 10_000 + i, 1, (err, order) => {
            if (err !== 0) reject(new Error(`order ${i} refused with ${err}`));
            else {
              answers.push(order!);
              resolve();
            }
          });
          assert.equal(accepted, true);
        }),
      );
    }
    let marketOrder: OrderView | null = null;
    replies.push(
      new Promise((resolve, reject) => {
        exchange.createOrder(1, 0, MARKET, BUY, 0, 150, (err, order) => {
          if (err !== 0) reject(new Error(`market refused with ${err}`));
          marketOrder = order;
          resolve();
        });
      }),
    );
    await Promise.all(replies);

    assert.deepEqual(
      answers.map((o) => o.id),
      Array.from({ length: 200 }, (_, i) => i + 1),
    );
    const m = marketOrder as OrderView | null;
    assert.ok(m !== null);
    assert.equal(m.id, 201);
    assert.equal(m.amountUsed, 0.00015);
    // Cost: the 150 cheapest asks, 100.00 + 100.01 + ... + 101.49 for one lot (10^-6 btc) each.
    let costTicksLots = 0n;
    for (let i = 0; i < 150; i++) costTicksLots += BigInt(10_000 + i);
    assert.equal(ledger.available(1, 1), 10_000_000n * 10n ** 8n - costTicksLots);
    assert.equal(ledger.available(0, 1), costTicksLots);
    assert.equal(ledger.reserved(0, 0), 50n);
    assert.equal(market.asks.prices.length, 50);
    assert.equal(market.asks.prices[0], 10_150);
    assert.deepEqual(ledger.check([1_000n * 10n ** 6n, 10_000_000n * 10n ** 8n]), []);
    assert.equal(exchange.inFlight(0), 0);
    await channel.close();
    await writer.close();
  });
});
