/**
 * Market-maker controls end to end (docs/API.md 8) on the real server: strict bodies, exact numbers,
 * client order ids, batches, cancel-all, order reads, the dead-man's switch, and the concurrent
 * market buys of one user. Time in force, post-only and amend are in market-maker-orders.test.ts.
 *
 * One server for the file; every test uses its own users and cancels their open orders afterwards.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CreatedOrder, Order } from "../../src/client/index.ts";
import { ERRORS } from "../../src/errors/catalogue.ts";
import { SessionSocket } from "../session/helpers.ts";
import { waitFor } from "../wait.ts";
import { auditExchange } from "./audit.ts";
import { dec } from "./decimal.ts";
import {
  expectError,
  expectOk,
  limit,
  market,
  placeLimit,
  sharedServer,
  type TestServer,
  type TestUser,
} from "./harness.ts";

const RU = { headers: { "Accept-Language": "ru" } };

describe("market-maker controls", () => {
  let server: TestServer;
  sharedServer((s) => {
    server = s;
  });
  const place = placeLimit;

  /** Sends `body` as it is (signed) to a POST route under /1.0. */
  function postText(user: TestUser, route: string, body: string, opts = {}) {
    return user.client.raw("POST", `/1.0${route}`, {
      body,
      headers: { "Content-Type": "application/json", ...(opts as { headers?: object }).headers },
      sign: true,
    });
  }

  describe("strict request bodies (8.1)", () => {
    it("answers 400 under the unknown field on every call and changes nothing", async () => {
      const u = await server.newUser({ usdt: "1000", btc: "1" });
      const o = await place(u, "btc_usdt", "buy", "100", "1");
      const before = await server.balanceTable(u);
      const cases: [string, string][] = [
        ["/trade/cancel-order", `{"orderId":${o.id},"orderID":1}`],
        ["/trade/cancel-all-orders", '{"pair":"btc_usdt"}'],
        ["/trade/create-orders", `{"orders":[],"extra":true}`],
        ["/trade/cancel-orders", `{"orderIds":[${o.id}],"ids":[1]}`],
        ["/trade/cancel-all-after", '{"timeout":0,"timeOut":5}'],
      ];
      for (const [route, body] of cases) {
        const res = await postText(u, route, body);
        const field = Object.keys(JSON.parse(body)).find(
          (k) => !["orderId", "orders", "orderIds", "timeout"].includes(k),
        )!;
        const messages = expectError(res, 400, field, route);
        assert.deepEqual(messages, ["Unknown field"]);
      }
      expectError(await postText(u, "/trade/cancel-order", `{"orderId":${o.id},"x":1}`, RU), 400, "x");
      const ru = await postText(u, "/trade/cancel-order", `{"orderId":${o.id},"x":1}`, RU);
      assert.deepEqual(expectError(ru, 400, "x"), ["Неизвестное поле"]);
      // The order is still open and nothing moved.
      const open = expectOk(await u.client.openOrders("btc_usdt"));
      assert.deepEqual(
        open.map((x) => x.id),
        [o.id],
      );
      assert.deepEqual(await server.balanceTable(u), before);
    });

    it("accepts nonce on every authenticated call and refuses it inside a batch element", async () => {
      const u = await server.newUser({ usdt: "1000" });
      const res = await u.client.createOrders([limit("btc_usdt", "buy", "100", "1")], { nonce: 10 });
      expectOk(res);
      const el = await postText(
        u,
        "/trade/create-orders",
        '{"orders":[{"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":"1","amount":"1","nonce":11}]}',
      );
      const [first] = expectOk(el) as { errors?: Record<string, string[]> }[];
      assert.deepEqual(first.errors, { nonce: ["Unknown field"] });
      expectOk(await u.client.cancelAllAfter(0, { nonce: 12 }));
    });

    it("answers 400 to an unknown field of an admin call", async () => {
      const u = await server.newUser({});
      const res = await server.admin.raw("POST", "/admin/deposit", {
        body: JSON.stringify({ uid: u.uid, currency: "usdt", amount: "5", note: "x" }),
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${server.adminToken}` },
      });
      expectError(res, 400, "note");
      const b = await server.balances(u);
      assert.equal(b.get("usdt")?.available ?? 0n, 0n);
    });
  });

  describe("errors in both languages", () => {
    it("answers each new field's error in English and Russian from the catalogue, changing nothing", async () => {
      const u = await server.newUser({ usdt: "1000" });
      const o = await place(u, "btc_usdt", "buy", "100", "1");
      const base = limit("btc_usdt", "buy", "100", "1");
      const cases: [string, string, string, keyof typeof ERRORS][] = [
        [
          "/trade/create-order",
          JSON.stringify({ ...base, clientOrderId: "a b" }),
          "clientOrderId",
          "CLIENT_ORDER_ID_INVALID",
        ],
        [
          "/trade/create-order",
          JSON.stringify({ ...base, timeInForce: "X" }),
          "timeInForce",
          "TIME_IN_FORCE_INVALID",
        ],
        [
          "/trade/create-order",
          JSON.stringify({ ...market("btc_usdt", "buy", "1"), timeInForce: "IOC" }),
          "timeInForce",
          "TIME_IN_FORCE_NOT_LIMIT",
        ],
        ["/trade/create-order", JSON.stringify({ ...base, postOnly: 1 }), "postOnly", "POST_ONLY_INVALID"],
        [
          "/trade/create-order",
          JSON.stringify({ ...base, postOnly: true, timeInForce: "IOC" }),
          "postOnly",
          "POST_ONLY_NOT_GTC",
        ],
        ["/trade/amend-order", JSON.stringify({ orderId: o.id }), "body", "AMEND_NOTHING"],
        ["/trade/amend-order", JSON.stringify({ orderId: o.id, amount: "1", x: 1 }), "x", "UNKNOWN_FIELD"],
        ["/trade/create-orders", JSON.stringify({ orders: [] }), "orders", "ORDERS_INVALID"],
        ["/trade/cancel-orders", JSON.stringify({ orderIds: "1" }), "orderIds", "ORDER_IDS_INVALID"],
        ["/trade/cancel-all-after", JSON.stringify({ timeout: 601 }), "timeout", "TIMEOUT_INVALID"],
      ];
      const before = await server.balanceTable(u);
      for (const [route, body, field, name] of cases) {
        assert.deepEqual(expectError(await postText(u, route, body), 400, field, route), [ERRORS[name].en]);
        assert.deepEqual(expectError(await postText(u, route, body, RU), 400, field, route), [
          ERRORS[name].ru,
        ]);
      }
      assert.deepEqual(await server.balanceTable(u), before);
      assert.deepEqual(expectOk(await u.client.order(o.id)), o);
      assert.equal(expectOk(await u.client.openOrders("btc_usdt")).length, 1);
    });
  });

  describe("exact numbers (2.1)", () => {
    it("refuses a JSON number with more decimals than the pair allows, even where a double rounds it away", async () => {
      const u = await server.newUser({ usdt: "100000", btc: "10" });
      const body = (price: string, amount: string) =>
        `{"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":${price},"amount":${amount}}`;
      expectError(
        await postText(u, "/trade/create-order", body("2000", "1.0000000000000001")),
        400,
        "amount",
      );
      expectError(await postText(u, "/trade/create-order", body("2000.0000000000001", "1")), 400, "price");
      expectError(await postText(u, "/trade/create-order", body("2000", "1e-7")), 400, "amount");
      expectError(
        await postText(u, "/trade/create-order", body("2000", "12345678901234567890")),
        400,
        "amount",
      );
      assert.equal(expectOk(await u.client.openOrders("btc_usdt")).length, 0, "nothing was created");
      // Long but exact numbers are fine.
      const ok = expectOk(
        await postText(u, "/trade/create-order", body("2000.0000000000000", "0.50000000000000000")),
      );
      assert.equal((ok as Order).amount, 0.5);
      assert.equal((ok as Order).price, 2000);
      const e = expectOk(await postText(u, "/trade/create-order", body("2E+3", "5e-1")));
      assert.equal((e as Order).amount, 0.5);
    });
  });

  describe("client order ids (8.2, 8.6)", () => {
    it("echoes the id, refuses a repeat and finds the order by it", async () => {
      const u = await server.newUser({ usdt: "1000" });
      const other = await server.newUser({ usdt: "1000" });
      const o = expectOk(
        await u.client.createOrder({ ...limit("btc_usdt", "buy", "100", "1"), clientOrderId: "q-1_A" }),
      );
      assert.equal(o.clientOrderId, "q-1_A");
      assert.equal("timeInForce" in o, false, "no timeInForce when not given");
      assert.equal("postOnly" in o, false, "no postOnly when not given");
      const dup = await u.client.createOrder({
        ...limit("btc_usdt", "buy", "99", "1"),
        clientOrderId: "q-1_A",
      });
      expectError(dup, 400, "clientOrderId");
      // Unique per user only.
      expectOk(
        await other.client.createOrder({ ...limit("btc_usdt", "buy", "99", "1"), clientOrderId: "q-1_A" }),
      );
      const found = expectOk(await u.client.orderByClientId("q-1_A"));
      assert.deepEqual(found, o);
      expectError(await u.client.orderByClientId("nope"), 404, "orderId");
      expectError(await u.client.orderByClientId("bad id!"), 400, "clientOrderId");
      // Stream and pages carry it too.
      const page = expectOk(await u.client.userOrders("btc_usdt"));
      assert.equal(page.items[0].clientOrderId, "q-1_A");
      assert.equal(expectOk(await u.client.openOrders("btc_usdt"))[0].clientOrderId, "q-1_A");
    });

    it("refuses malformed ids and options, with nothing created", async () => {
      const u = await server.newUser({ usdt: "1000" });
      const base = limit("btc_usdt", "buy", "100", "1");
      for (const clientOrderId of ["", "x".repeat(37), "a b", "ä", 5, true] as unknown[]) {
        expectError(
          await u.client.createOrder({ ...base, clientOrderId } as never),
          400,
          "clientOrderId",
          `clientOrderId ${JSON.stringify(clientOrderId)}`,
        );
      }
      expectOk(await u.client.createOrder({ ...base, clientOrderId: "x".repeat(36) }));
      for (const timeInForce of ["gtc", "DAY", 1]) {
        expectError(await u.client.createOrder({ ...base, timeInForce } as never), 400, "timeInForce");
      }
      expectError(
        await u.client.createOrder({ ...market("btc_usdt", "buy", "1"), timeInForce: "IOC" }),
        400,
        "timeInForce",
        "time in force on a market order",
      );
      expectError(await u.client.createOrder({ ...base, postOnly: "yes" } as never), 400, "postOnly");
      for (const timeInForce of ["IOC", "FOK"] as const) {
        expectError(await u.client.createOrder({ ...base, timeInForce, postOnly: true }), 400, "postOnly");
      }
      expectError(
        await u.client.createOrder({ ...market("btc_usdt", "buy", "1"), postOnly: true }),
        400,
        "postOnly",
      );
      const ru = await u.client.createOrder({ ...base, timeInForce: "X" } as never, RU);
      assert.deepEqual(expectError(ru, 400, "timeInForce"), ["Срок действия должен быть GTC, IOC или FOK"]);
      assert.equal(expectOk(await u.client.openOrders("btc_usdt")).length, 1);
    });

    it("does not use up the id of an order the book refused", async () => {
      const u = await server.newUser({ usdt: "1000" });
      // No liquidity for a market order: refused, nothing created.
      expectError(
        await u.client.createOrder({ ...market("eth_btc", "sell", "1"), clientOrderId: "retry-me" }),
        400,
        "amount",
      );
      expectError(await u.client.orderByClientId("retry-me"), 404, "orderId");
      const o = expectOk(
        await u.client.createOrder({ ...limit("btc_usdt", "buy", "10", "1"), clientOrderId: "retry-me" }),
      );
      assert.equal(expectOk(await u.client.orderByClientId("retry-me")).id, o.id);
    });
  });

  describe("batches (8.5)", () => {
    it("answers each created order on its own, in order", async () => {
      const u = await server.newUser({ usdt: "1000" });
      const res = await u.client.createOrders([
        limit("btc_usdt", "buy", "100", "1"),
        limit("btc_usdt", "buy", "abc", "1"),
        limit("btc_usdt", "buy", "100", "100"),
        { ...limit("btc_usdt", "buy", "101", "1"), clientOrderId: "b1" },
        { ...limit("btc_usdt", "buy", "102", "1"), clientOrderId: "b1" },
      ]);
      const out = expectOk(res) as (CreatedOrder & { errors?: Record<string, string[]> })[];
      assert.equal(out.length, 5);
      assert.equal(out[0].price, 100);
      assert.deepEqual(Object.keys(out[1]), ["errors", "codes"]);
      assert.deepEqual(Object.keys(out[1].errors!), ["price"]);
      assert.deepEqual(out[2].errors, { amount: ["Insufficient funds on balance"] });
      assert.deepEqual((out[2] as { codes?: object }).codes, { amount: ["INSUFFICIENT_FUNDS"] });
      assert.equal(out[3].clientOrderId, "b1");
      assert.deepEqual(Object.keys(out[4].errors!), ["clientOrderId"]);
      assert.ok(out[0].id < out[3].id, "executed in array order");
      assert.deepEqual(
        expectOk(await u.client.openOrders("btc_usdt")).map((o) => o.id),
        [out[3].id, out[0].id],
      );
    });

    it("refuses an empty, oversized or non-array batch", async () => {
      const u = await server.newUser({ usdt: "1000" });
      const one = limit("btc_usdt", "buy", "1", "1");
      expectError(await u.client.createOrders([]), 400, "orders");
      expectError(await u.client.createOrders(Array.from({ length: 21 }, () => one)), 400, "orders");
      expectError(await postText(u, "/trade/create-orders", '{"orders":{"a":1}}'), 400, "orders");
      const notObject = expectOk(await postText(u, "/trade/create-orders", '{"orders":[1]}')) as object[];
      assert.deepEqual(Object.keys((notObject[0] as { errors: object }).errors), ["body"]);
      expectOk(await u.client.createOrders(Array.from({ length: 20 }, () => one)));
      expectError(await u.client.cancelOrders([]), 400, "orderIds");
      expectError(await u.client.cancelOrders(Array.from({ length: 101 }, (_, i) => i + 1)), 400, "orderIds");
    });

    it("cancels each id on its own and reports the ones it could not", async () => {
      const u = await server.newUser({ usdt: "1000" });
      const other = await server.newUser({ usdt: "1000" });
      const a = await place(u, "btc_usdt", "buy", "100", "1");
      const b = await place(u, "eth_usdt", "buy", "100", "1");
      const theirs = await place(other, "btc_usdt", "buy", "100", "1");
      const res = expectOk(await u.client.cancelOrders([a.id, b.id, a.id, theirs.id, "x1", 999_999_999]));
      const failed = (orderId: unknown, message: string, code: string) => ({
        orderId,
        errors: { orderId: [message] },
        codes: { orderId: [code] },
      });
      assert.deepEqual(res, [
        { orderId: a.id },
        { orderId: b.id },
        failed(a.id, "Order already cancelled", "ORDER_ALREADY_CANCELLED"),
        failed(theirs.id, "Order not found", "ORDER_NOT_FOUND"),
        failed("x1", "Order id must be a positive integer", "ORDER_ID_INVALID"),
        failed(999_999_999, "Order not found", "ORDER_NOT_FOUND"),
      ] as never);
      assert.equal(expectOk(await other.client.openOrders("btc_usdt")).length, 1);
      const bal = await server.balances(u);
      assert.equal(bal.get("usdt")!.reserved, 0n);
    });
  });

  describe("cancel-all (8.4)", () => {
    it("cancels every open order of the caller in scope, answers ids ascending and streams each cancel", async () => {
      const u = await server.newUser({ usdt: "10000", btc: "10" });
      const other = await server.newUser({ usdt: "10000" });
      const stream = await server.stream([`user_orders:${u.uid}`, "orders:btc_usdt"], u);
      try {
        const a = await place(u, "btc_usdt", "buy", "100", "1");
        const b = await place(u, "btc_usdt", "sell", "300", "1");
        const c = await place(u, "eth_usdt", "buy", "10", "1");
        const keep = await place(other, "btc_usdt", "buy", "100", "2");
        const first = expectOk(await u.client.cancelAllOrders("btc_usdt"));
        assert.deepEqual(first, { cancelled: [a.id, b.id] });
        for (const id of [a.id, b.id]) {
          await stream.next(
            (m) =>
              m.stream.startsWith("user_orders") &&
              (m.data as Order).id === id &&
              (m.data as Order).isCancelled,
          );
        }
        await stream.next((m) => {
          const d = m.data as { sell: { price: number; amount: number }[] };
          return m.stream === "orders:btc_usdt" && d.sell.some((l) => l.price === 300 && l.amount === 0);
        });
        assert.deepEqual(expectOk(await u.client.cancelAllOrders()), { cancelled: [c.id] });
        assert.deepEqual(expectOk(await u.client.cancelAllOrders()), { cancelled: [] });
        const bal = await server.balances(u);
        assert.equal(bal.get("usdt")!.reserved, 0n);
        assert.equal(bal.get("btc")!.reserved, 0n);
        assert.deepEqual(
          expectOk(await other.client.openOrders("btc_usdt")).map((o) => o.id),
          [keep.id],
        );
        expectError(await u.client.cancelAllOrders("xxx_yyy"), 400, "pairName");
      } finally {
        await stream.close();
      }
    });

    it("also cancels orders sent just before it in one session, still in the matching engine", async () => {
      const u = await server.newUser({ usdt: "100000" });
      const s = await SessionSocket.logon(server, u, { reports: false });
      try {
        // One session runs its calls in the order they arrive (docs/API.md 13), so the cancel-all
        // comes after the 30 creates, sent in the same burst without waiting for their answers.
        const creates = Array.from({ length: 30 }, (_, i) =>
          s.call("order.create", { ...limit("btc_usdt", "buy", String(100 + i), "1") }),
        );
        const all = s.call("orders.cancelAll", {});
        const created = (await Promise.all(creates)).map((a) => {
          assert.equal(a.status, 200, JSON.stringify(a));
          return a.result as CreatedOrder;
        });
        const answer = await all;
        assert.equal(answer.status, 200, JSON.stringify(answer));
        assert.deepEqual(
          (answer.result as { cancelled: number[] }).cancelled,
          created.map((o) => o.id).sort((x, y) => x - y),
        );
        assert.equal(expectOk(await u.client.openOrders("btc_usdt")).length, 0);
        assert.equal((await server.balances(u)).get("usdt")!.reserved, 0n);
      } finally {
        s.close();
      }
    });

    it("cancels exactly the orders it answers when creates race it over REST", async () => {
      const u = await server.newUser({ usdt: "100000" });
      // Separate connections reach the server in no set order: whatever it is, each create that
      // the cancel-all met is in its answer and cancelled, and every other one is still open.
      const creates = Array.from({ length: 30 }, (_, i) =>
        u.client.createOrder(limit("btc_usdt", "buy", String(100 + i), "1")),
      );
      const all = u.client.cancelAllOrders();
      const created = (await Promise.all(creates)).map((r) => expectOk(r));
      const { cancelled } = expectOk(await all);
      const ids = new Set(created.map((o) => o.id));
      assert.deepEqual(
        cancelled,
        [...cancelled].sort((x, y) => x - y),
        "ascending",
      );
      for (const id of cancelled) assert.ok(ids.has(id), `cancelled ${id}, which is not one of the creates`);
      const open = expectOk(await u.client.openOrders("btc_usdt")).map((o) => o.id);
      assert.deepEqual(
        [...open, ...cancelled].sort((x, y) => x - y),
        [...ids].sort((x, y) => x - y),
        "every create is either cancelled by it or still open",
      );
      for (const id of cancelled) assert.equal(expectOk(await u.client.order(id)).isCancelled, true);
      const stillHeld = open.reduce(
        (sum, id) => sum + dec(String(created.find((o) => o.id === id)!.price)),
        0n,
      );
      assert.equal((await server.balances(u)).get("usdt")!.reserved, stillHeld);
    });
  });

  describe("order reads (8.6)", () => {
    it("reads one order of the caller by id, and not another user's", async () => {
      const u = await server.newUser({ usdt: "1000" });
      const other = await server.newUser({ usdt: "1000" });
      const o = await place(u, "btc_usdt", "buy", "100", "1");
      assert.deepEqual(expectOk(await u.client.order(o.id)), o);
      expectError(await other.client.order(o.id), 404, "orderId");
      expectError(await u.client.order(999_999_999), 404, "orderId");
      expectError(await u.client.order("abc"), 400, "orderId");
      expectError(await server.public.order(o.id), 401, "auth");
      expectOk(await u.client.cancelOrder(o.id));
      const c = expectOk(await u.client.order(o.id));
      assert.equal(c.isCancelled, true);
      assert.ok(c.updateTime >= o.updateTime);
    });

    it("lists the caller's open orders of one pair, newest first", async () => {
      const u = await server.newUser({ usdt: "10000", btc: "1" });
      const seller = await server.newUser({ btc: "1" });
      const a = await place(u, "btc_usdt", "buy", "100", "1");
      const b = await place(u, "btc_usdt", "buy", "101", "2");
      await place(u, "eth_usdt", "buy", "10", "1");
      const c = await place(u, "btc_usdt", "buy", "99", "1");
      expectOk(await u.client.cancelOrder(c.id));
      // b partly filled: still open.
      expectOk(await seller.client.createOrder(limit("btc_usdt", "sell", "101", "1")));
      const open = expectOk(await u.client.openOrders("btc_usdt"));
      assert.deepEqual(
        open.map((o) => [o.id, o.amountUsed]),
        [
          [b.id, 1],
          [a.id, 0],
        ],
      );
      expectError(await u.client.openOrders("nope_nope"), 404, "pairName");
    });
  });

  describe("dead-man's switch (8.7)", () => {
    it("keeps every open order until the timeout passes, then cancels them all without a renewal", async () => {
      const u = await server.newUser({ usdt: "1000" });
      const a = await place(u, "btc_usdt", "buy", "100", "1");
      const b = await place(u, "eth_usdt", "buy", "100", "1");
      const armed = expectOk(await u.client.cancelAllAfter(10)).triggerTime;
      // Not at once: a witness armed after u's switch, with a shorter timeout, fires before it (the
      // server's triggerTimes say so). Once the witness's order is cancelled, time has passed on
      // the server, and u's orders must still be open.
      const witness = await server.newUser({ usdt: "1000" });
      await place(witness, "btc_usdt", "buy", "99", "1");
      const witnessFires = expectOk(await witness.client.cancelAllAfter(1)).triggerTime;
      assert.ok(witnessFires < armed, `the witness fires at ${witnessFires}, u's switch at ${armed}`);
      await waitFor(async () => expectOk(await witness.client.openOrders("btc_usdt")).length === 0, {
        what: "the witness's switch to cancel its order",
        intervalMs: 50,
      });
      const stillOpen = [
        ...expectOk(await u.client.openOrders("btc_usdt")),
        ...expectOk(await u.client.openOrders("eth_usdt")),
      ];
      assert.deepEqual(
        stillOpen.map((o) => o.id),
        [a.id, b.id],
        "open until the timeout",
      );
      // A renewal re-arms the switch with its own timeout (docs/API.md 8.7); this one then fires.
      const before = Date.now();
      const { triggerTime } = expectOk(await u.client.cancelAllAfter(1));
      assert.ok(
        triggerTime >= before + 1000 && triggerTime <= Date.now() + 1000,
        `triggerTime ${triggerTime}`,
      );
      await waitFor(
        async () =>
          expectOk(await u.client.openOrders("btc_usdt")).length +
            expectOk(await u.client.openOrders("eth_usdt")).length ===
          0,
        { what: "the dead-man's switch to cancel both open orders", intervalMs: 50 },
      );
      assert.equal(expectOk(await u.client.openOrders("btc_usdt")).length, 0);
      assert.equal(expectOk(await u.client.openOrders("eth_usdt")).length, 0);
      assert.equal((await server.balances(u)).get("usdt")!.reserved, 0n);
    });

    it("does nothing once disarmed, and refuses a bad timeout", async () => {
      const u = await server.newUser({ usdt: "1000" });
      const o = await place(u, "btc_usdt", "buy", "100", "1");
      // A witness armed after u's switch fires after it would have: once the witness's order is
      // cancelled, u's switch has had its chance (its cancel would have gone first, on the same pair).
      const witness = await server.newUser({ usdt: "1000" });
      await place(witness, "btc_usdt", "buy", "100", "1");
      expectOk(await u.client.cancelAllAfter(1));
      assert.deepEqual(expectOk(await u.client.cancelAllAfter(0)), { triggerTime: 0 });
      expectOk(await witness.client.cancelAllAfter(1));
      await waitFor(async () => expectOk(await witness.client.openOrders("btc_usdt")).length === 0, {
        what: "the witness's switch to cancel its order",
        intervalMs: 50,
      });
      assert.deepEqual(
        expectOk(await u.client.openOrders("btc_usdt")).map((x) => x.id),
        [o.id],
      );
      for (const timeout of [-1, 601, 1.5, "x", null]) {
        expectError(await u.client.cancelAllAfter(timeout as number), 400, "timeout", `timeout ${timeout}`);
      }
    });
  });

  describe("market buys of one user at once", () => {
    it("fills 20 concurrent market buys that the balance covers, each one", async () => {
      const seller = await server.newUser({ btc: "1" });
      const buyer = await server.newUser({ usdt: "100000" });
      for (let i = 0; i < 4; i++) await place(seller, "btc_usdt", "sell", String(1000 + i), "0.05");
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => buyer.client.createOrder(market("btc_usdt", "buy", "0.01"))),
      );
      for (const a of answers) {
        const o = expectOk(a, "market buy");
        assert.equal(o.amountUsed, 0.01);
        assert.equal(o.isCancelled, false);
      }
      await auditExchange(server);
    });
  });

  describe("durability", () => {
    it("keeps acknowledged batches, cancel-alls and client ids after kill -9", async () => {
      const u = await server.newUser({ usdt: "100000" });
      const created = expectOk(
        await u.client.createOrders([
          { ...limit("btc_usdt", "buy", "100", "1"), clientOrderId: "k1" },
          { ...limit("eth_usdt", "buy", "100", "1"), clientOrderId: "k2" },
          { ...limit("btc_usdt", "buy", "101", "1"), clientOrderId: "k3" },
        ]),
      ) as CreatedOrder[];
      const { cancelled } = expectOk(await u.client.cancelAllOrders("eth_usdt"));
      assert.deepEqual(cancelled, [created[1].id]);
      await server.kill();
      await server.restart();
      assert.deepEqual(
        expectOk(await u.client.openOrders("btc_usdt")).map((o) => o.clientOrderId),
        ["k3", "k1"],
      );
      assert.equal(expectOk(await u.client.openOrders("eth_usdt")).length, 0);
      assert.equal(expectOk(await u.client.orderByClientId("k2")).isCancelled, true);
      expectError(
        await u.client.createOrder({ ...limit("btc_usdt", "buy", "1", "1"), clientOrderId: "k2" }),
        400,
        "clientOrderId",
        "a client id is never given twice, across restarts",
      );
      await auditExchange(server);
    });
  });
});
