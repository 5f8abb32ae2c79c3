/**
 * The views (src/core/views.ts): an order (docs/API.md 5.1) and a user's trade with its fee (5.5, 9)
 * as the interface shows them, from facts in book units (ticks, lots, microseconds).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  FLAG_CANCEL_ON_DISCONNECT,
  FLAG_POST_ONLY,
  FLAG_QUOTE_ORDER,
  ORDER_MMP,
  STP_CANCEL_BOTH,
  STP_CANCEL_TAKER,
  TIF_GIVEN,
  TIF_IOC,
} from "../../src/core/order-options.ts";
import { type OrderFacts, orderView, tradeFee, userTradeView, type ViewPair } from "../../src/core/views.ts";
import { BUY, SELL } from "../../src/protocol/pair/engine.ts";

/** btc_usdt as the default config has it: ticks of 0.01 usdt, lots of 0.000001 btc. */
const PAIR: ViewPair = { name: "btc_usdt", base: "btc", quote: "usdt", priceDecimals: 2, amountDecimals: 6 };

/** Microseconds of a UTC time, plus `extra` microseconds within its second. */
const micro = (y: number, mo: number, d: number, h: number, mi: number, s: number, extra = 0) =>
  Date.UTC(y, mo - 1, d, h, mi, s) * 1000 + extra;

function facts(over: Partial<OrderFacts> = {}): OrderFacts {
  return {
    id: 42,
    type: 0,
    side: BUY,
    price: 2_500_001,
    amount: 1_500_000,
    used: 250_000,
    cancelled: false,
    createMicro: micro(2024, 1, 2, 3, 4, 5, 999_999),
    updateMicro: micro(2024, 1, 2, 3, 4, 6),
    flags: 0,
    clientOrderId: undefined,
    execSeq: 0,
    executed: 0n,
    stopPrice: 0,
    stopDirection: 0,
    triggerMicro: 0,
    cancelReason: 0,
    trailingDelta: 0,
    ocoId: 0,
    ...over,
  };
}

describe("orderView", () => {
  it("shows price and amounts at the pair's decimals and the times as UTC datetimes, cut to the second", () => {
    assert.deepEqual(orderView(PAIR, facts(), true), {
      id: 42,
      pairName: "btc_usdt",
      tradeType: "limit",
      directionType: "buy",
      price: 25000.01,
      amount: 1.5,
      amountUsed: 0.25,
      isCancelled: false,
      createTime: "2024-01-02 03:04:05",
      updateTime: "2024-01-02 03:04:06",
      execSeq: 0,
      executedQuote: "0",
    });
  });

  it("shows executedQuote as the exact decimal of ticks × lots, in quote units (docs/API.md 5.1)", () => {
    // 0.1 btc at 25,000.01 and 0.15 btc at 25,000.00: 2,500.001 + 3,750 usdt.
    const executed = 2_500_001n * 100_000n + 2_500_000n * 150_000n;
    assert.equal(orderView(PAIR, facts({ executed }), false).executedQuote, "6250.001");
    // The same value as a stored row keeps it: its digits.
    assert.equal(orderView(PAIR, facts({ executed: executed.toString() }), false).executedQuote, "6250.001");
    assert.equal(orderView(PAIR, facts({ executed: "0" }), false).executedQuote, "0");
    // Past 2^53 and a double's 17 digits: every digit kept.
    const big = 999_999_999n * 9_999_999_999n;
    assert.equal(orderView(PAIR, facts({ executed: big }), false).executedQuote, "99999999890.00000001");
    assert.equal(
      orderView(PAIR, facts({ executed: big.toString() }), false).executedQuote,
      "99999999890.00000001",
    );
  });

  it("carries the number of the order's latest change (docs/API.md 16)", () => {
    assert.equal(orderView(PAIR, facts({ execSeq: 17 }), false).execSeq, 17);
  });

  it("leaves out updateTime when not asked, and names a cancelled market sell as such", () => {
    const v = orderView(PAIR, facts({ type: 1, side: SELL, cancelled: true, price: 0, used: 0 }), false);
    assert.equal("updateTime" in v, false);
    assert.equal(v.tradeType, "market");
    assert.equal(v.directionType, "sell");
    assert.equal(v.isCancelled, true);
    assert.equal(v.price, 0);
    assert.equal(v.amountUsed, 0);
  });

  it("shows the smallest tick and lot exactly", () => {
    const v = orderView(PAIR, facts({ price: 1, amount: 1, used: 1 }), false);
    assert.equal(v.price, 0.01);
    assert.equal(v.amount, 0.000001);
    assert.equal(v.amountUsed, v.amount, "fully executed: amountUsed equals amount (5.1)");
  });

  it("shows no option field for an order placed without options (docs/API.md 5.1: only when set)", () => {
    const keys = Object.keys(orderView(PAIR, facts(), true)).sort();
    assert.deepEqual(keys, [
      "amount",
      "amountUsed",
      "createTime",
      "directionType",
      "execSeq",
      "executedQuote",
      "id",
      "isCancelled",
      "pairName",
      "price",
      "tradeType",
      "updateTime",
    ]);
  });

  it("shows each option that is set: client order id, a named time in force, post-only, cancel on disconnect, mmp, a non-default STP mode", () => {
    const flags =
      TIF_IOC | TIF_GIVEN | FLAG_POST_ONLY | FLAG_CANCEL_ON_DISCONNECT | ORDER_MMP | STP_CANCEL_TAKER;
    const v = orderView(PAIR, facts({ flags, clientOrderId: "mm-1" }), false);
    assert.equal(v.clientOrderId, "mm-1");
    assert.equal(v.timeInForce, "IOC");
    assert.equal(v.postOnly, true);
    assert.equal(v.cancelOnDisconnect, true);
    assert.equal(v.mmp, true);
    assert.equal(v.selfTradePrevention, "cancelTaker");
    assert.equal(orderView(PAIR, facts({ flags: STP_CANCEL_BOTH }), false).selfTradePrevention, "cancelBoth");
  });

  it("does not name a time in force the client did not give (8.2), nor a null client order id", () => {
    const v = orderView(PAIR, facts({ flags: TIF_IOC, clientOrderId: null }), false);
    assert.equal("timeInForce" in v, false);
    assert.equal("clientOrderId" in v, false);
  });

  it("shows a quote order as quote, post-only and mmp (docs/API.md 5.1, 8.12)", () => {
    const v = orderView(PAIR, facts({ flags: FLAG_QUOTE_ORDER | FLAG_POST_ONLY }), false);
    assert.equal(v.quote, true);
    assert.equal(v.mmp, true);
    assert.equal(v.postOnly, true);
  });
});

describe("tradeFee", () => {
  it("charges the buyer its rate of the base it receives, in base", () => {
    // 0.5 btc at 0.1%: 0.0005 btc.
    assert.deepEqual(tradeFee(PAIR, BUY, 1_000, 2_500_000, 500_000), { fee: "0.0005", feeCurrency: "btc" });
  });

  it("charges the seller its rate of the quote it receives, in quote", () => {
    // 0.5 btc at 25,000.00 is 12,500 usdt; 0.2% of it is 25 usdt.
    assert.deepEqual(tradeFee(PAIR, SELL, 2_000, 2_500_000, 500_000), { fee: "25", feeCurrency: "usdt" });
  });

  it("is exact beyond a double's digits (docs/API.md 5.5's example)", () => {
    // 0.1% of 876.543219 btc at 98,765.43 is 86,572.16793811917 usdt.
    const { fee } = tradeFee(PAIR, SELL, 1_000, 9_876_543, 876_543_219);
    assert.equal(fee, "86572.16793811917");
  });

  it("keeps every decimal of the smallest fee: one lot at the smallest rate", () => {
    // 10^-6 of 10^-6 btc: 12 decimals (amount decimals + the rates' 6).
    assert.equal(tradeFee(PAIR, BUY, 1, 1, 1).fee, "0.000000000001");
    // One tick × one lot at 10^-6: 10^-2 × 10^-6 × 10^-6.
    assert.equal(tradeFee(PAIR, SELL, 1, 1, 1).fee, "0.00000000000001");
  });

  it("is 0 with no fee, in the side's currency (docs/API.md 5.5: both fields present)", () => {
    assert.deepEqual(tradeFee(PAIR, BUY, 0, 2_500_000, 500_000), { fee: "0", feeCurrency: "btc" });
    assert.deepEqual(tradeFee(PAIR, SELL, 0, 2_500_000, 500_000), { fee: "0", feeCurrency: "usdt" });
  });
});

describe("userTradeView", () => {
  it("shows a trade from the user's side with its fee", () => {
    const v = userTradeView(PAIR, {
      id: 7,
      side: SELL,
      type: 1,
      price: 2_500_050,
      amount: 20_000,
      timeMicro: micro(2025, 11, 27, 23, 59, 59, 500_000),
      feeRate: 1_000,
      execSeq: 0,
      orderId: 12,
      maker: 1,
    });
    // 0.02 btc at 25,000.50 is 500.01 usdt; 0.1% of it is 0.50001.
    assert.deepEqual(v, {
      id: 7,
      pairName: "btc_usdt",
      tradeType: "market",
      directionType: "sell",
      price: 25000.5,
      amount: 0.02,
      tradeTime: "2025-11-27 23:59:59",
      fee: "0.50001",
      feeCurrency: "usdt",
      execSeq: 0,
      orderId: 12,
      liquidity: "maker",
    });
  });

  it("shows a buyer's trade without fee with fee 0 in base", () => {
    const v = userTradeView(PAIR, {
      id: 1,
      side: BUY,
      type: 0,
      price: 100,
      amount: 3,
      timeMicro: 0,
      feeRate: 0,
      execSeq: 0,
      orderId: 3,
      maker: 0,
    });
    assert.equal(v.directionType, "buy");
    assert.equal(v.liquidity, "taker");
    assert.equal(v.tradeType, "limit");
    assert.equal(v.price, 1);
    assert.equal(v.amount, 0.000003);
    assert.equal(v.tradeTime, "1970-01-01 00:00:00");
    assert.equal(v.fee, "0");
    assert.equal(v.feeCurrency, "btc");
  });
});
