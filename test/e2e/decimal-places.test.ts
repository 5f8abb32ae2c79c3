/**
 * A price or amount with more decimals than the pair takes is refused with a message that says how
 * many it takes (docs/API.md section 4), in English and in Russian: create-order, an element of
 * create-orders, amend-order, a quote level, and an admin deposit (the currency's scale).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { ExchangeClient } from "../../src/client/index.ts";
import { expectError, expectOk, limit, TestServer, type TestUser } from "./harness.ts";

describe("too many decimal places", () => {
  let server: TestServer;
  let user: TestUser;
  let russian: ExchangeClient;

  before(async () => {
    server = await TestServer.start();
    user = await server.newUser({ usdt: "1000" });
    russian = user.client.with({ lang: "ru" });
  });
  after(() => server.close());

  it("says how many decimals the pair's price and amount take, in both languages", async () => {
    // btc_usdt: 2 price decimals, 6 amount decimals.
    const order = limit("btc_usdt", "buy", "100.123", "0.0000001");
    const en = await user.client.createOrder(order);
    assert.equal(en.status, 400, en.text);
    assert.deepEqual(JSON.parse(en.text), {
      errors: {
        amount: ["Amount has too many decimal places (at most 6)"],
        price: ["Price has too many decimal places (at most 2)"],
      },
      codes: { amount: ["AMOUNT_TOO_MANY_DECIMALS"], price: ["PRICE_TOO_MANY_DECIMALS"] },
    });
    const ru = await russian.createOrder(order);
    assert.deepEqual(JSON.parse(ru.text).errors, {
      amount: ["Слишком много знаков после запятой в количестве (не больше 6)"],
      price: ["Слишком много знаков после запятой в цене (не больше 2)"],
    });
    // eth_usdt takes 5 amount decimals: the figure is the pair's own.
    const eth = await user.client.createOrder(limit("eth_usdt", "buy", "100", "0.000001"));
    assert.deepEqual(expectError(eth, 400, "amount"), ["Amount has too many decimal places (at most 5)"]);
  });

  it("says it for an element of a batch, an amend and a quote level too", async () => {
    const batch = expectOk(await user.client.createOrders([limit("btc_usdt", "buy", "1.001", "1")]));
    assert.deepEqual((batch[0] as { errors: unknown }).errors, {
      price: ["Price has too many decimal places (at most 2)"],
    });
    const o = expectOk(await user.client.createOrder(limit("btc_usdt", "buy", "1", "1")));
    const amended = await user.client.amendOrder({ orderId: o.id, amount: "0.1234567" });
    assert.deepEqual(expectError(amended, 400, "amount"), ["Amount has too many decimal places (at most 6)"]);
    expectOk(await user.client.cancelOrder(o.id));
    const quote = await russian.quote("btc_usdt", [["1.555", "1"]], []);
    assert.equal(quote.status, 400, quote.text);
    assert.match(quote.text, /\(bids\[0\]: PRICE_TOO_MANY_DECIMALS at most 2\)/);
  });

  it("says how many decimals the currency takes for a deposit", async () => {
    // usdt's scale is 8: btc_usdt's 2 price decimals plus its 6 amount decimals.
    const res = await server.admin.deposit(user.uid, "usdt", "1.000000001");
    assert.deepEqual(expectError(res, 400, "amount"), ["Amount has too many decimal places (at most 8)"]);
  });
});
