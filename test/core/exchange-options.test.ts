/**
 * What the core is built with (src/core/exchange-options.ts holds only its type): each option, given
 * to a real core (test/core/core-fixture.ts) as src/boot.ts gives it, is the one the core's stages
 * use. The ids go on from the given ones (recovery: one past the stored ones), the given pair
 * statuses decide R1, the given sink and listener are told, the fee account gets the fees
 * (docs/API.md 9), and with no ids given a new database starts at 1.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import type { CommitListener, UserTradeView } from "../../src/core/exchange.ts";
import { HALTED } from "../../src/core/pair-status.ts";
import { Code } from "../../src/errors/catalogue.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";
import { BUY, SELL } from "../../src/protocol/pair/engine.ts";
import { tempDir } from "../db/helpers.ts";
import { BTC, FEE_USER, placeResting, sendCreate, startCore, USDT } from "./core-fixture.ts";

/** With fees a lot and a tick × lot are 10^6 ledger units (docs/API.md 9). */
const UNIT = 10n ** 6n;

/** A listener that keeps the user trades it is told of. */
function tradesListener(trades: [number, UserTradeView][]): CommitListener {
  return {
    wantsOrders: () => false,
    wantsUserTrades: () => true,
    wantsTrades: () => false,
    orderChanged: () => {},
    userTrade: (user, view) => trades.push([user, view]),
    publicTrades: () => {},
    levelsChanged: () => {},
    bboChanged: () => {},
    l3Changed: () => {},
  };
}

describe("ExchangeOptions", () => {
  const tmp = tempDir("exchange-options");
  after(() => tmp.cleanup());

  it("goes on from the given ids, tells the given listener and sink, and credits fees to the given fee account", async () => {
    const file = `${tmp.dbPath}-1`;
    const trades: [number, UserTradeView][] = [];
    const listener = tradesListener(trades);
    const core = await startCore(file, {
      nextOrderId: 500,
      nextTradeId: 70,
      fees: { maker: 1_000n, taker: 2_000n },
      listener,
    });
    try {
      assert.equal(core.exchange.listener, listener, "the given listener is the one told");
      assert.equal(core.exchange.results.sink, core.answers, "the given sink is the one told");
      core.ledger.deposit(1, BTC, 10n * UNIT);
      core.ledger.deposit(2, USDT, 10_000n * 10n * UNIT);
      const sell = await placeResting(core, 1, SELL, 10_000, 10);
      assert.equal(sell.id, 500, "the first create gets nextOrderId");
      const buy = sendCreate(core, 2, BUY, 10_000, 10);
      const { err, order } = await buy.answer;
      assert.equal(err, 0);
      assert.equal(order!.id, 501);
      // The trade is the first one: nextTradeId, on both sides.
      assert.deepEqual(
        trades.map(([user, v]) => [user, v.id]).sort((a, b) => a[0] - b[0]),
        [
          [1, 70],
          [2, 70],
        ],
      );
      // The buyer, taker, pays 0.2% of 10 lots of base; the seller, maker, 0.1% of 10_000 × 10 quote.
      assert.equal(core.ledger.available(FEE_USER, BTC), (10n * UNIT * 2_000n) / 10n ** 6n);
      assert.equal(core.ledger.available(FEE_USER, USDT), (10_000n * 10n * UNIT * 1_000n) / 10n ** 6n);
      await core.writer.flush();
      await core.writer.applied();
      const db = openDatabase(file, { readonly: true });
      try {
        const ids = db.prepare<[], number>("SELECT id FROM trades").pluck().all();
        assert.deepEqual(ids, [70]);
        const orders = db.prepare<[], number>("SELECT id FROM orders ORDER BY id").pluck().all();
        assert.deepEqual(orders, [500, 501]);
      } finally {
        db.close();
      }
    } finally {
      await core.close();
    }
  });

  it("decides R1 by the given pair statuses, and starts a new database's ids at 1", async () => {
    const core = await startCore(`${tmp.dbPath}-2`);
    try {
      assert.equal(core.exchange.statuses, core.statuses, "the given statuses are the core's");
      core.ledger.deposit(1, USDT, 1_000_000n);
      core.statuses.set(0, HALTED);
      const refused = sendCreate(core, 1, BUY, 10_000, 1);
      assert.equal(refused.code, Code.PAIR_HALTED);
      core.statuses.set(0, 0);
      const first = await placeResting(core, 1, BUY, 10_000, 1);
      assert.equal(first.id, 1);
      assert.equal(core.exchange.ids.nextTradeId, 1);
    } finally {
      await core.close();
    }
  });
});
