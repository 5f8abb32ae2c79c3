/**
 * R2 (src/core/pair-events.ts): each event a pair worker reports, settled through the core with real
 * parts (a real worker, the real writer on a temp file, the real ledger). What a trade, a rested
 * order, a done order, an amend, an MMP change and a command's END do to the balances and answers.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { type CommitListener, MARKET } from "../../src/core/exchange.ts";
import { FLAG_POST_ONLY } from "../../src/core/order-options.ts";
import { Code } from "../../src/errors/catalogue.ts";
import { BUY, SELL } from "../../src/protocol/pair/engine.ts";
import { tempDir } from "../db/helpers.ts";
import { amend, BTC, cancel, core, FEE_USER, place, quote, USDT } from "./quote-helpers.ts";

/** With fees the ledger scale grows by the rates' 6 decimals (docs/API.md 9): a lot and a tick × lot are 10^6 units. */
const UNIT = 10n ** 6n;

describe("pair events", () => {
  const tmp = tempDir("pair-events");
  after(() => tmp.cleanup());
  let n = 0;
  const file = () => `${tmp.dbPath}-${++n}`;

  it("settles a trade on both sides with the taker's and the maker's fee to the fee account, and releases a limit buy's price improvement", async () => {
    const { exchange, ledger } = await core(file(), { fees: { maker: 1_000n, taker: 2_000n } });
    ledger.deposit(0, BTC, 100n * UNIT);
    ledger.deposit(1, USDT, 10_100n * 10n * UNIT);
    const sell = await place(exchange, 0, SELL, 10_000, 30);
    assert.equal(sell.err, 0);
    const buy = await place(exchange, 1, BUY, 10_100, 10);
    assert.equal(buy.err, 0);
    assert.equal(buy.order!.amountUsed, 0.00001);
    // 10 lots at the maker's 100.00: base 10 × 10^6, cost 10_000 × 10 × 10^6 (docs/API.md 9).
    const base = 10n * UNIT;
    const cost = 10_000n * 10n * UNIT;
    // The buyer, taker, pays 0.2% of the base it receives; the seller, maker, 0.1% of the quote.
    const buyerFee = (base * 2_000n) / 10n ** 6n;
    const sellerFee = (cost * 1_000n) / 10n ** 6n;
    assert.equal(ledger.available(1, BTC), base - buyerFee);
    assert.equal(ledger.available(0, USDT), cost - sellerFee);
    assert.equal(ledger.available(FEE_USER, BTC), buyerFee);
    assert.equal(ledger.available(FEE_USER, USDT), sellerFee);
    // The buy held 101.00 a lot and paid 100.00: the difference is back, nothing stays held.
    assert.equal(ledger.available(1, USDT), 100n * 10n * UNIT);
    assert.equal(ledger.reserved(1, USDT), 0n);
    // The maker's 20 lots left still hold their base.
    assert.equal(ledger.reserved(0, BTC), 20n * UNIT);
    assert.equal(ledger.available(0, BTC), 70n * UNIT);
    assert.equal(exchange.ownOpenOrder(0, sell.order!.id)?.used, 10);
  });

  it("makes a limit order that does not fill completely an open order holding only its unfilled lots", async () => {
    const { exchange, ledger } = await core(file());
    ledger.deposit(0, BTC, 4n);
    ledger.deposit(1, USDT, 100_000n);
    assert.equal((await place(exchange, 0, SELL, 10_000, 4)).err, 0);
    const buy = await place(exchange, 1, BUY, 10_000, 10);
    assert.equal(buy.err, 0);
    assert.equal(buy.order!.amountUsed, 0.000004);
    assert.equal(buy.order!.isCancelled, false);
    const open = exchange.ownOpenOrder(1, buy.order!.id);
    assert.ok(open !== undefined, "the rested buy is an open order");
    assert.equal(open.used, 4);
    assert.equal(ledger.reserved(1, USDT), 60_000n);
    assert.equal(ledger.available(1, USDT), 0n);
    assert.deepEqual(exchange.openOrderIds(1, 0), [buy.order!.id]);
  });

  it("releases exactly what a cancelled order's unfilled lots hold and closes it", async () => {
    const { exchange, ledger } = await core(file());
    ledger.deposit(0, BTC, 4n);
    ledger.deposit(1, USDT, 100_000n);
    await place(exchange, 0, SELL, 10_000, 4);
    const buy = await place(exchange, 1, BUY, 10_000, 10);
    assert.equal(await cancel(exchange, 1, buy.order!.id), 0);
    assert.equal(ledger.reserved(1, USDT), 0n);
    assert.equal(ledger.available(1, USDT), 60_000n);
    assert.equal(ledger.available(1, BTC), 4n);
    assert.equal(exchange.ownOpenOrder(1, buy.order!.id), undefined);
  });

  it("gives an amended order its new price and amount and holds exactly what they need", async () => {
    const { exchange, ledger } = await core(file());
    ledger.deposit(1, USDT, 100_000n);
    const buy = await place(exchange, 1, BUY, 10_000, 10);
    assert.equal(ledger.reserved(1, USDT), 100_000n);
    const amended = await amend(exchange, 1, buy.order!.id, 9_000, 8);
    assert.equal(amended.err, 0);
    assert.equal(amended.order!.price, 90);
    assert.equal(amended.order!.amount, 0.000008);
    assert.equal(ledger.reserved(1, USDT), 72_000n);
    assert.equal(ledger.available(1, USDT), 28_000n);
    // The order now holds 8 lots at 90.00: its cancel gives back exactly that.
    assert.equal(await cancel(exchange, 1, buy.order!.id), 0);
    assert.equal(ledger.reserved(1, USDT), 0n);
    assert.equal(ledger.available(1, USDT), 100_000n);
  });

  it("tells the listener of an MMP trigger after the fill that reached the limit and releases the protected orders it cancelled", async () => {
    const mmp: [number, string, boolean, number][] = [];
    const listener: CommitListener = {
      wantsOrders: () => false,
      wantsUserTrades: () => false,
      wantsTrades: () => false,
      orderChanged: () => {},
      userTrade: () => {},
      publicTrades: () => {},
      levelsChanged: () => {},
      bboChanged: () => {},
      l3Changed: () => {},
      mmpChanged: (user, pairName, frozen, until) => mmp.push([user, pairName, frozen, until]),
    };
    const { exchange, ledger } = await core(file(), { listener });
    ledger.deposit(0, BTC, 10n);
    ledger.deposit(1, USDT, 50_000n);
    // docs/API.md 8.10: quote orders are protected; 5 lots filled within 10 s freeze until a reset.
    await new Promise<void>((resolve) =>
      assert.equal(
        exchange.mmp.set(0, 0, { intervalSeconds: 10, qtyLimit: 5, frozenSeconds: 0 }, resolve, Code.BUSY),
        0,
      ),
    );
    const q = await quote(
      exchange,
      0,
      [],
      [
        [10_000, 5],
        [10_100, 5],
      ],
    );
    assert.equal(q.err, 0);
    assert.equal(ledger.reserved(0, BTC), 10n);
    const buy = await place(exchange, 1, BUY, 10_000, 5);
    assert.equal(buy.err, 0);
    assert.deepEqual(mmp, [[0, "btc_usdt", true, 0]]);
    // The ask left at 101.00 was cancelled by the trigger: its 5 lots are free again.
    assert.equal(ledger.reserved(0, BTC), 0n);
    assert.equal(ledger.available(0, BTC), 5n);
    assert.equal(ledger.available(0, USDT), 50_000n);
    assert.deepEqual(exchange.openOrderIds(0, 0), []);
  });

  it("answers a create the book refused at its END with the engine's code and releases its hold", async () => {
    const { exchange, ledger } = await core(file());
    ledger.deposit(0, BTC, 5n);
    ledger.deposit(1, USDT, 100_000n);
    await place(exchange, 0, SELL, 10_000, 5);
    // A post-only buy at the best ask would take liquidity: the engine ends it with WOULD_TAKE.
    const buy = await place(exchange, 1, BUY, 10_000, 10, 0, FLAG_POST_ONLY);
    assert.equal(buy.err, Code.WOULD_TAKE_LIQUIDITY);
    assert.equal(buy.order, null);
    assert.equal(ledger.reserved(1, USDT), 0n);
    assert.equal(ledger.available(1, USDT), 100_000n);
    assert.equal(ledger.reserved(0, BTC), 5n);
  });

  it("answers a market order with its average price once its END comes", async () => {
    const { exchange, ledger } = await core(file());
    ledger.deposit(0, BTC, 10n);
    ledger.deposit(1, USDT, 1_000_000n);
    await place(exchange, 0, SELL, 10_000, 5);
    await place(exchange, 0, SELL, 10_003, 5);
    const buy = await place(exchange, 1, BUY, 0, 8, MARKET);
    assert.equal(buy.err, 0);
    // 5 lots at 100.00 and 3 at 100.03: 80_009 / 8 = 10_001.125 ticks, rounded half up to 100.01.
    assert.equal(buy.order!.price, 100.01);
    assert.equal(buy.order!.amountUsed, 0.000008);
    assert.equal(ledger.available(1, USDT), 1_000_000n - 80_009n);
    assert.equal(ledger.reserved(1, USDT), 0n);
    // docs/API.md 5.1: the exact value, 80_009 ticks × lots (what the ledger moved).
    assert.equal(buy.order!.executedQuote, "0.00080009");
  });

  it("adds price × lots of every fill to the executed value of the taker and of each maker, exactly as the ledger moved it", async () => {
    const { exchange, ledger } = await core(file());
    ledger.deposit(0, BTC, 100n);
    ledger.deposit(1, USDT, 100_000_000n);
    const a = await place(exchange, 0, SELL, 10_000, 4);
    assert.equal((await place(exchange, 0, SELL, 10_001, 6)).err, 0);
    assert.equal(a.order!.executedQuote, "0", "0 before any fill");
    const buy = await place(exchange, 1, BUY, 10_002, 20);
    // 4 lots at 100.00 and 6 at 100.01; the rest rests.
    const value = 4n * 10_000n + 6n * 10_001n;
    assert.equal(buy.order!.executedQuote, "0.00100006");
    assert.equal(exchange.ownOpenOrder(1, buy.order!.id)?.executed, value);
    assert.equal(ledger.available(0, USDT), value, "what the sellers received");
    // The resting buy is a maker now: a later sell adds to it.
    const sell = await place(exchange, 0, SELL, 9_000, 5);
    assert.equal(sell.order!.executedQuote, "0.0005001");
    assert.equal(exchange.ownOpenOrder(1, buy.order!.id)?.executed, value + 5n * 10_002n);
    assert.equal(ledger.available(0, USDT), value + 5n * 10_002n);
  });
});
