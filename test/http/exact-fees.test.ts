/**
 * A fee is an exact decimal (docs/API.md 9) and may have more significant digits than a double keeps:
 * every body that carries user trades writes it as a JSON number with exactly its digits. So is an
 * order's `executedQuote` (docs/API.md 5.1) in every body that carries orders.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { UserTradeView } from "../../src/core/views.ts";
import { serialize } from "../../src/wire/schemas.ts";

const FEE = "975461.03793811917";

function trade(fee: string): UserTradeView {
  return {
    id: 1,
    pairName: "btc_usdt",
    tradeType: "limit",
    directionType: "sell",
    price: 98765.43,
    amount: 9876.543219,
    tradeTime: "2026-11-23 18:00:00",
    fee,
    feeCurrency: "usdt",
    execSeq: 1,
    orderId: 5,
    liquidity: "taker",
  };
}

describe("exact fees on the wire", () => {
  it("writes the fee's digits as a JSON number in pages, the pair page and stream messages", () => {
    assert.notEqual(String(Number(FEE)), FEE, "the fee must not survive a double");
    const bodies = [
      serialize.tradesPage({ total: 2, items: [trade(FEE), trade("0")] }),
      serialize.pairPage({
        exchanges: [],
        orders: { buy: [], sell: [], seq: 0, checksum: 2343686810, time: 0 },
        history: [],
        userOrders: [],
        userHistory: [trade(FEE)],
      }),
      serialize.streamUserTrade({ stream: "user_history:u", data: trade(FEE), execSeq: 1 }),
    ];
    for (const body of bodies) {
      assert.ok(body.includes(`"fee":${FEE},"feeCurrency":"usdt"`), body);
      JSON.parse(body);
    }
    assert.ok(bodies[0].includes('"fee":0,'), bodies[0]);
  });

  it("leaves every other string alone, however it looks", () => {
    // Client text is the only string that may hold a quote (the server's own words cannot).
    const order = {
      id: 1,
      pairName: "btc_usdt",
      tradeType: "limit" as const,
      directionType: "buy" as const,
      price: 1,
      amount: 1,
      amountUsed: 0,
      isCancelled: false,
      createTime: "2026-11-23 18:00:00",
      clientOrderId: '"fee":"2","executedQuote":"3"',
      execSeq: 1,
      executedQuote: "1.5",
    };
    const body = serialize.pairPage({
      exchanges: [],
      orders: { buy: [], sell: [], seq: 0, checksum: 2343686810, time: 0 },
      history: [],
      userOrders: [order],
      userHistory: [trade("1.5")],
    });
    assert.equal(JSON.parse(body).userOrders[0].clientOrderId, '"fee":"2","executedQuote":"3"');
    assert.equal(JSON.parse(body).userOrders[0].executedQuote, 1.5);
    assert.equal(JSON.parse(body).userHistory[0].fee, 1.5);
    const stream = serialize.streamUserTrade({ stream: '"fee":"2"', data: trade("1.5"), execSeq: 1 });
    assert.equal(JSON.parse(stream).stream, '"fee":"2"');
    assert.equal(JSON.parse(stream).data.fee, 1.5);
  });

  it("writes an order's executedQuote digits as a JSON number beside a fee in one body", () => {
    const executed = "99999999890.00000001";
    assert.notEqual(String(Number(executed)), executed, "the value must not survive a double");
    const body = serialize.pairPage({
      exchanges: [],
      orders: { buy: [], sell: [], seq: 0, checksum: 2343686810, time: 0 },
      history: [],
      userOrders: [
        {
          id: 1,
          pairName: "btc_usdt",
          tradeType: "limit",
          directionType: "buy",
          price: 9999999.99,
          amount: 9999.999999,
          amountUsed: 9999.999999,
          isCancelled: false,
          createTime: "2026-11-23 18:00:00",
          execSeq: 2,
          executedQuote: executed,
        },
      ],
      userHistory: [trade(FEE)],
    });
    assert.ok(body.includes(`"executedQuote":${executed}}`), body);
    assert.ok(body.includes(`"fee":${FEE},`), body);
    JSON.parse(body);
  });
});
