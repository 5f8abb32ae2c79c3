/**
 * The deadline `expiresAt` (docs/API.md 8.8) on every REST call that changes orders, on the real
 * server: a past deadline answers 400 `errors.expiresAt` (REQUEST_EXPIRED) and changes nothing, a
 * future one works, and a value that is not a positive integer of Unix ms is 400 on the field, in
 * both languages.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ApiResponse, CallOptions } from "../../src/client/index.ts";
import {
  expectError,
  expectOk,
  limit,
  placeLimit,
  sharedServer,
  type TestServer,
  type TestUser,
} from "./harness.ts";

const PAST: CallOptions = { expiresAt: 1 };
const future = (): CallOptions => ({ expiresAt: Date.now() + 60_000 });

function expectExpired(res: ApiResponse<unknown>, what: string): void {
  expectError(res, 400, "expiresAt", what);
  assert.deepEqual((res.body as { codes?: unknown }).codes, { expiresAt: ["REQUEST_EXPIRED"] }, what);
}

describe("expiresAt (docs/API.md 8.8)", () => {
  let server: TestServer;
  sharedServer((s) => {
    server = s;
  });

  /** What a refused call must not change: the user's balances and open orders. */
  async function state(user: TestUser) {
    const balances = await server.balances(user);
    const open = expectOk(await user.client.openOrders("btc_usdt"));
    return {
      balances: [...balances.entries()],
      open: open.map((o) => [o.id, o.price, o.amount, o.isCancelled]),
    };
  }

  it("a past deadline refuses every call that changes orders and changes nothing", async () => {
    const u = await server.newUser({ usdt: "10000", btc: "1" });
    const o = await placeLimit(u, "btc_usdt", "buy", "100", "1");
    const before = await state(u);
    const c = u.client;
    expectExpired(await c.createOrder(limit("btc_usdt", "buy", "90", "1"), PAST), "create-order");
    expectExpired(await c.cancelOrder(o.id, PAST), "cancel-order");
    expectExpired(await c.amendOrder({ orderId: o.id, price: "95" }, PAST), "amend-order");
    expectExpired(await c.cancelAllOrders(undefined, PAST), "cancel-all-orders");
    expectExpired(await c.cancelAllOrders("btc_usdt", PAST), "cancel-all-orders on a pair");
    expectExpired(await c.createOrders([limit("btc_usdt", "sell", "200", "0.1")], PAST), "create-orders");
    expectExpired(await c.cancelOrders([o.id], PAST), "cancel-orders");
    expectExpired(await c.quote("btc_usdt", [["95", "0.1"]], [["105", "0.1"]], PAST), "quote");
    expectExpired(await c.quote("btc_usdt", [], [], PAST), "quote pull");
    assert.deepEqual(await state(u), before);
    const stored = expectOk(await c.order(o.id));
    assert.equal(stored.isCancelled, false);
    assert.equal(stored.price, 100);
  });

  it("a future deadline works on every call", async () => {
    const u = await server.newUser({ usdt: "10000", btc: "1" });
    const c = u.client;
    const a = expectOk(await c.createOrder(limit("btc_usdt", "buy", "90", "1"), future()), "create-order");
    const amended = expectOk(await c.amendOrder({ orderId: a.id, price: "95" }, future()), "amend-order");
    assert.equal(amended.price, 95);
    expectOk(await c.cancelOrder(a.id, future()), "cancel-order");
    const batch = expectOk(
      await c.createOrders(
        [limit("btc_usdt", "sell", "200", "0.1"), limit("btc_usdt", "sell", "201", "0.1")],
        future(),
      ),
      "create-orders",
    );
    const ids = batch.map((r) => (r as { id: number }).id);
    assert.equal(ids.length, 2);
    assert.ok(ids.every((id) => Number.isInteger(id)));
    const cancelled = expectOk(await c.cancelOrders([ids[0]], future()), "cancel-orders");
    assert.deepEqual(cancelled, [{ orderId: ids[0] }]);
    const all = expectOk(await c.cancelAllOrders("btc_usdt", future()), "cancel-all-orders");
    assert.deepEqual(all.cancelled, [ids[1]]);
    // A string of digits is an integer too (docs/API.md 1).
    const s = expectOk(
      await c.createOrder(limit("btc_usdt", "buy", "80", "0.1"), { expiresAt: String(Date.now() + 60_000) }),
    );
    expectOk(await c.cancelAllOrders(undefined, { expiresAt: String(Date.now() + 60_000) }));
    assert.equal(expectOk(await c.order(s.id)).isCancelled, true);
    const q = expectOk(await c.quote("btc_usdt", [["95", "0.1"]], [["105", "0.1"]], future()), "quote");
    assert.equal(q.placed.length, 2);
    const pulled = expectOk(await c.quote("btc_usdt", [], [], future()), "quote pull");
    assert.equal(pulled.cancelled.length, 2);
  });

  it("a value that is not a positive integer of Unix ms is 400 errors.expiresAt, in both languages", async () => {
    const u = await server.newUser({ usdt: "10000", btc: "1" });
    const o = await placeLimit(u, "btc_usdt", "buy", "100", "0.1");
    const before = await state(u);
    const c = u.client;
    const bad: unknown[] = [null, 0, -5, 1.5, "", "1.5", " 5", "1e3", true, {}, [], 2 ** 53];
    const calls: [string, (opts: CallOptions) => Promise<ApiResponse<unknown>>][] = [
      ["create-order", (opts) => c.createOrder(limit("btc_usdt", "buy", "90", "1"), opts)],
      ["cancel-order", (opts) => c.cancelOrder(o.id, opts)],
      ["amend-order", (opts) => c.amendOrder({ orderId: o.id, price: "95" }, opts)],
      ["cancel-all-orders", (opts) => c.cancelAllOrders(undefined, opts)],
      ["create-orders", (opts) => c.createOrders([limit("btc_usdt", "sell", "200", "0.1")], opts)],
      ["cancel-orders", (opts) => c.cancelOrders([o.id], opts)],
      ["quote", (opts) => c.quote("btc_usdt", [["95", "0.1"]], [], opts)],
    ];
    for (const [name, call] of calls) {
      for (const value of bad) {
        const what = `${name} expiresAt ${JSON.stringify(value)}`;
        const res = await call({ expiresAt: value });
        expectError(res, 400, "expiresAt", what);
        assert.deepEqual(
          (res.body as { codes?: unknown }).codes,
          { expiresAt: ["EXPIRES_AT_INVALID"] },
          what,
        );
      }
      const en = expectError(await call({ expiresAt: "x" }), 400, "expiresAt", `${name} en`);
      const ru = expectError(await call({ expiresAt: "x", lang: "ru" }), 400, "expiresAt", `${name} ru`);
      assert.match(en[0], /expiresAt must be a positive integer/);
      assert.match(ru[0], /положительным целым/);
      const exp = expectError(await call({ ...PAST, lang: "ru" }), 400, "expiresAt", `${name} expired ru`);
      assert.match(exp[0], /Срок запроса истёк/);
    }
    assert.deepEqual(await state(u), before);
  });
});
