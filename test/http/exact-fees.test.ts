/**
 * A fee is an exact decimal (CONTRACT 9) and may have more significant digits than a double keeps:
 * every body that carries user trades writes it as a JSON number with exactly its digits.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { serialize } from "../../src/http/schemas.ts";
import type { UserTradeView } from "../../src/views.ts";

const FEE = "975461.03793811917";

function trade(fee: string, pairName = "btc_usdt"): UserTradeView {
  return {
    id: 1,
    pairName,
    tradeType: "limit",
    directionType: "sell",
    price: 98765.43,
    amount: 9876.543219,
    tradeTime: "2026-11-23 18:00:00",
    fee,
    feeCurrency: "usdt",
  };
}

describe("exact fees on the wire", () => {
  it("writes the fee's digits as a JSON number in pages, the pair page and stream messages", () => {
    assert.notEqual(String(Number(FEE)), FEE, "the fee must not survive a double");
    const bodies = [
      serialize.tradesPage({ total: 2, items: [trade(FEE), trade("0")] }),
      serialize.pairPage({
        exchanges: [],
        orders: { buy: [], sell: [], seq: 0 },
        history: [],
        userOrders: [],
        userHistory: [trade(FEE)],
      }),
      serialize.streamUserTrade({ stream: "user_history:u", data: trade(FEE) }),
    ];
    for (const body of bodies) {
      assert.ok(body.includes(`"fee":${FEE},"feeCurrency":"usdt"`), body);
      JSON.parse(body);
    }
    assert.ok(bodies[0].includes('"fee":0,'), bodies[0]);
  });

  it("leaves every other string alone, however it looks", () => {
    const body = serialize.tradesPage({ total: 1, items: [trade("1.5", '"fee":"2"')] });
    assert.equal(JSON.parse(body).items[0].pairName, '"fee":"2"');
    assert.equal(JSON.parse(body).items[0].fee, 1.5);
  });
});
