/**
 * A JSON number that no double can hold (`1e400`, `-1e400`) is valid JSON (docs/API.md 1): every
 * numeric field answers 400 under its own name, never `body` ("not valid JSON"), and an answer
 * that echoes the value gives it back as the number the client wrote.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { expectError, expectOk, limit, TestServer, type TestUser } from "./harness.ts";

const JSON_TYPE = { "Content-Type": "application/json" };

describe("numbers too large for a double", () => {
  let server: TestServer;
  let user: TestUser;
  let orderId: number;
  const post = (path: string, body: string) =>
    user.client.raw<unknown>("POST", path, { body, headers: JSON_TYPE, sign: true });

  before(async () => {
    server = await TestServer.start();
    user = await server.newUser({ usdt: "1000" });
    orderId = expectOk(await user.client.createOrder(limit("btc_usdt", "buy", "100", "0.01"))).id;
  });
  after(() => server.close());

  it("answers 400 on the field itself in every signed call", async () => {
    const order = (patch: string) =>
      `{"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":"100","amount":"0.01",${patch}}`;
    const cases: [string, string, string][] = [
      ["/1.0/trade/create-order", order('"amount":1e400').replace('"amount":"0.01",', ""), "amount"],
      ["/1.0/trade/create-order", order('"price":-1e400').replace('"price":"100",', ""), "price"],
      ["/1.0/trade/create-order", order('"nonce":1e400'), "nonce"],
      ["/1.0/trade/amend-order", `{"orderId":${orderId},"amount":1e400}`, "amount"],
      ["/1.0/trade/amend-order", `{"orderId":${orderId},"price":1e400}`, "price"],
      ["/1.0/trade/amend-order", '{"orderId":1e400,"amount":"0.02"}', "orderId"],
      ["/1.0/trade/cancel-order", '{"orderId":1e400}', "orderId"],
      ["/1.0/trade/cancel-all-after", '{"timeout":1e400}', "timeout"],
    ];
    for (const [path, body, field] of cases)
      expectError(await post(path, body), 400, field, `${path} ${body}`);
  });

  it("answers a batch element on its own field, and echoes an id as the number given", async () => {
    const created = await post(
      "/1.0/trade/create-orders",
      '{"orders":[{"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":"100","amount":1e400}]}',
    );
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(Object.keys((created.body as [{ errors: object }])[0].errors), ["amount"]);
    const cancelled = await post("/1.0/trade/cancel-orders", '{"orderIds":[1e400]}');
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.match(cancelled.text, /^\[\{"orderId":1e400,"errors":\{"orderId":\[/);
  });

  it("answers 400 amount to an admin deposit or withdrawal of 1e400", async () => {
    for (const path of ["/admin/deposit", "/admin/withdraw"]) {
      const res = await server.admin.raw<unknown>("POST", path, {
        body: `{"uid":"${user.uid}","currency":"usdt","amount":1e400}`,
        headers: { ...JSON_TYPE, Authorization: `Bearer ${server.adminToken}` },
      });
      expectError(res, 400, "amount", path);
    }
  });
});
