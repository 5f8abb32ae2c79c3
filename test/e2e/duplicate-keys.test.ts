/**
 * A JSON object that repeats a key, at any depth, in a request body or a session frame, answers
 * 400 `errors.body` with code BODY_DUPLICATE_KEY whatever the values (docs/API.md 8.1, 13): a signed
 * body must mean one thing to every reader. Through the real server: signed REST calls (the
 * create-order shortcut's shape, a batch's orders, cancel, amend, a quote's levels), an admin call
 * and session frames, and nothing changes (balances, orders, the nonce).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ApiResponse } from "../../src/client/index.ts";
import { SessionSocket } from "../session/helpers.ts";
import { waitFor } from "../wait.ts";
import {
  expectError,
  expectOk,
  placeLimit,
  sharedServer,
  type TestServer,
  type TestUser,
} from "./harness.ts";

const JSON_TYPE = { "Content-Type": "application/json" };
const ORDER = '"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":"100"';

/** A signed POST of exactly this body text. */
function post(user: TestUser, path: string, body: string): Promise<ApiResponse<unknown>> {
  return user.client.raw("POST", `/1.0${path}`, { body, headers: JSON_TYPE, sign: true });
}

/** Asserts the answer is 400 errors.body with the one code BODY_DUPLICATE_KEY. */
function expectDuplicate(res: ApiResponse<unknown>, what: string): void {
  expectError(res, 400, "body", what);
  assert.deepEqual((res.body as { codes: unknown }).codes, { body: ["BODY_DUPLICATE_KEY"] }, what);
}

describe("JSON objects that repeat a key", () => {
  let server: TestServer;
  sharedServer((s) => {
    server = s;
  });

  /** Balances and every btc_usdt order of `user`, to show nothing changed. */
  const stateOf = async (user: TestUser) => ({
    balances: await server.balanceTable(user),
    orders: await server.allOrders(user),
  });

  it("answers 400 errors.body BODY_DUPLICATE_KEY on every signed call, at any depth, and changes nothing", async () => {
    const user = await server.newUser({ usdt: "1000" });
    const resting = await placeLimit(user, "btc_usdt", "buy", "100", "0.01");
    const before = await stateOf(user);
    const cases: [string, string][] = [
      // The body: JSON.parse took it as 0.01.
      ["/trade/create-order", `{${ORDER},"amount":"0.02","amount":"0.01"}`],
      // The same values, and the same through the exact-number parser (an exponent).
      ["/trade/create-order", `{${ORDER},"amount":"0.01","amount":"0.01"}`],
      ["/trade/create-order", `{${ORDER},"amount":1e-2,"amount":2e-2}`],
      // One key written two ways is one key.
      ["/trade/create-order", `{${ORDER},"amount":"0.02","\\u0061mount":"0.01"}`],
      ["/trade/create-order", `{${ORDER},"amount":"0.01","clientOrderId":"a","clientOrderId":"b"}`],
      // In the second order of a batch whose first order is valid: nothing is created.
      [
        "/trade/create-orders",
        `{"orders":[{${ORDER},"amount":"0.01"},{${ORDER},"amount":"0.01","price":"99","price":"98"}]}`,
      ],
      ["/trade/create-orders", `{"orders":[{${ORDER},"amount":"0.01"}],"orders":[]}`],
      ["/trade/cancel-order", `{"orderId":${resting.id},"orderId":${resting.id}}`],
      ["/trade/amend-order", `{"orderId":${resting.id},"amount":"0.02","amount":"0.03"}`],
      ["/trade/quote", '{"pairName":"btc_usdt","bids":[["90","0.01"]],"asks":[],"asks":[["110","0.01"]]}'],
      ["/trade/cancel-all-orders", '{"pairName":"btc_usdt","pairName":"eth_usdt"}'],
    ];
    for (const [path, body] of cases) expectDuplicate(await post(user, path, body), `${path} ${body}`);
    assert.deepEqual(await stateOf(user), before);
  });

  it("consumes no nonce with such a body: the same nonce is then accepted", async () => {
    const user = await server.newUser({ usdt: "1000" });
    expectDuplicate(
      await post(user, "/trade/create-order", `{${ORDER},"amount":"0.01","nonce":7,"nonce":7}`),
      "repeated nonce",
    );
    expectOk(
      await post(user, "/trade/create-order", `{${ORDER},"amount":"0.01","nonce":7}`),
      "nonce 7 after",
    );
  });

  it("answers an admin call the same way and changes no balance", async () => {
    const user = await server.newUser({ usdt: "5" });
    const before = await server.balanceTable(user);
    const res = await server.admin.raw<unknown>("POST", "/admin/deposit", {
      body: `{"uid":"${user.uid}","currency":"usdt","amount":"1","amount":"1000"}`,
      headers: { ...JSON_TYPE, Authorization: `Bearer ${server.adminToken}` },
    });
    expectDuplicate(res, "admin deposit");
    assert.deepEqual(await server.balanceTable(user), before);
  });

  it('answers a session frame with "id": null, 400 errors.body BODY_DUPLICATE_KEY, and keeps the session', async () => {
    const user = await server.newUser({ usdt: "1000" });
    const s = await SessionSocket.logon(server, user);
    const before = await stateOf(user);
    const frames = [
      '{"id":1,"id":2,"method":"ping"}',
      '{"id":"d1","id":"d1","method":"ping"}',
      `{"id":"d2","method":"order.create","params":{${ORDER},"amount":"0.02","amount":"0.01"}}`,
      `{"id":"d3","method":"orders.create","params":{"orders":[{${ORDER},"amount":"0.01"},{${ORDER},"amount":"0.01","amount":"0.01"}]}}`,
      '{"id":"d4","method":"ping","method":"balances"}',
    ];
    for (const frame of frames) {
      const seen = s.frames.length;
      s.send(frame);
      const answer = await waitFor(() => s.frames.slice(seen).find((f) => "status" in f), {
        what: `the answer to ${frame}`,
      });
      assert.deepEqual(
        { id: answer.id, status: answer.status, codes: answer.codes },
        { id: null, status: 400, codes: { body: ["BODY_DUPLICATE_KEY"] } },
        frame,
      );
    }
    assert.equal(s.closeCode, null);
    assert.equal((await s.call("ping")).status, 200);
    assert.deepEqual(await stateOf(user), before);
    s.close();
  });
});
