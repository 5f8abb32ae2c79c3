/**
 * Self-trade prevention modes end to end (docs/API.md 8.11) on the real server: cancelMaker (the
 * default), cancelTaker and cancelBoth on limit, market and FOK orders and on an amend, each with
 * the exact balances before and after, the `selfTradePrevention` field of the records (shown only
 * when not cancelMaker, kept across a restart), and bad values. After each test the whole exchange
 * is audited from the outside (audit.ts).
 */

import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import type { CreatedOrder, SelfTradePrevention } from "../../src/client/index.ts";
import { errorsOf } from "../../src/client/index.ts";
import { SessionSocket } from "../session/helpers.ts";
import { auditExchange } from "./audit.ts";
import { dec } from "./decimal.ts";
import {
  type Balances,
  expectError,
  expectOk,
  limit,
  market,
  sharedServer,
  type TestServer,
  type TestUser,
} from "./harness.ts";

const PAIR = "btc_usdt";

describe("self-trade prevention modes", () => {
  let server: TestServer;
  sharedServer((s) => {
    server = s;
  });
  afterEach(async () => {
    if (server?.running) await auditExchange(server);
  });

  async function order(user: TestUser, id: number): Promise<CreatedOrder> {
    return expectOk(await user.client.order(id), `order ${id}`);
  }

  /** `{currency: [available, reserved]}` as scaled integers (decimal.ts). */
  function table(b: Balances): Record<string, [bigint, bigint]> {
    const out: Record<string, [bigint, bigint]> = {};
    for (const c of ["btc", "usdt"]) out[c] = [b.get(c)!.available, b.get(c)!.reserved];
    return out;
  }

  /**
   * The self-trader `a` rests a sell of 0.1 at 100; another user `b` rests 0.1 at 101. `a` then
   * buys 0.2 up to 101 with `mode`.
   */
  async function crossOwn(mode: SelfTradePrevention | undefined) {
    const a = await server.newUser({ btc: "1", usdt: "1000" });
    const b = await server.newUser({ btc: "1" });
    const own = expectOk(await a.client.createOrder(limit(PAIR, "sell", "100", "0.1")));
    const other = expectOk(await b.client.createOrder(limit(PAIR, "sell", "101", "0.1")));
    const before = table(await server.balances(a));
    const body =
      mode === undefined
        ? limit(PAIR, "buy", "101", "0.2")
        : { ...limit(PAIR, "buy", "101", "0.2"), selfTradePrevention: mode };
    const taker = expectOk(await a.client.createOrder(body));
    const after = table(await server.balances(a));
    return { a, b, own, other, taker, before, after };
  }

  it("cancelMaker (the default) cancels the own resting order and goes on matching", async () => {
    for (const mode of [undefined, "cancelMaker"] as const) {
      const { a, b, own, other, taker, before, after } = await crossOwn(mode);
      assert.equal(taker.selfTradePrevention, undefined, "not shown for cancelMaker, sent or defaulted");
      assert.equal((await order(a, own.id)).isCancelled, true);
      assert.equal((await order(b, other.id)).amountUsed, 0.1);
      // The taker bought 0.1 at 101 and rests 0.1 at 101 (10.1 held); the own sell's 0.1 is free.
      assert.equal(taker.amountUsed, 0.1);
      assert.equal(taker.isCancelled, false);
      assert.deepEqual(after, {
        btc: [before.btc[0] + dec("0.1") + dec("0.1"), 0n],
        usdt: [before.usdt[0] - dec("10.1") - dec("10.1"), dec("10.1")],
      });
      await server.cancelOpenOrders([a, b]);
    }
  });

  it("cancelTaker ends the incoming order at the own resting one, which stays", async () => {
    const { a, b, own, other, taker, before, after } = await crossOwn("cancelTaker");
    assert.equal(taker.selfTradePrevention, "cancelTaker");
    assert.equal(taker.amountUsed, 0);
    assert.equal(taker.isCancelled, true);
    const rest = await order(a, own.id);
    assert.equal(rest.isCancelled, false);
    assert.equal(rest.amountUsed, 0);
    assert.equal((await order(b, other.id)).amountUsed, 0, "nothing behind the own order traded");
    assert.deepEqual(after, before, "the taker's hold is released exactly");
    assert.equal((await order(a, taker.id)).selfTradePrevention, "cancelTaker");
  });

  it("cancelBoth cancels the own resting order and ends the incoming one", async () => {
    const { a, b, own, other, taker, before, after } = await crossOwn("cancelBoth");
    assert.equal(taker.selfTradePrevention, "cancelBoth");
    assert.equal(taker.amountUsed, 0);
    assert.equal(taker.isCancelled, true);
    assert.equal((await order(a, own.id)).isCancelled, true);
    assert.equal((await order(b, other.id)).amountUsed, 0);
    assert.deepEqual(after, {
      btc: [before.btc[0] + dec("0.1"), 0n],
      usdt: before.usdt,
    });
  });

  it("cancelTaker and cancelBoth end the taker after the fills before its first own order", async () => {
    const a = await server.newUser({ btc: "1", usdt: "1000" });
    const b = await server.newUser({ btc: "1" });
    expectOk(await b.client.createOrder(limit(PAIR, "sell", "100", "0.1")));
    const own = expectOk(await a.client.createOrder(limit(PAIR, "sell", "101", "0.1")));
    const before = table(await server.balances(a));
    const t = expectOk(
      await a.client.createOrder({ ...limit(PAIR, "buy", "102", "0.3"), selfTradePrevention: "cancelTaker" }),
    );
    assert.equal(t.amountUsed, 0.1);
    assert.equal(t.isCancelled, true);
    assert.equal((await order(a, own.id)).isCancelled, false);
    assert.deepEqual(table(await server.balances(a)), {
      btc: [before.btc[0] + dec("0.1"), before.btc[1]],
      usdt: [before.usdt[0] - dec("10"), 0n],
    });
  });

  it("a cancelTaker market order that meets its own order first ends with nothing filled", async () => {
    const a = await server.newUser({ btc: "1", usdt: "1000" });
    const b = await server.newUser({ btc: "1", usdt: "100" });
    const own = expectOk(await a.client.createOrder(limit(PAIR, "sell", "100", "0.1")));
    expectOk(await b.client.createOrder(limit(PAIR, "sell", "101", "0.1")));
    const before = table(await server.balances(a));
    const m = expectOk(
      await a.client.createOrder({ ...market(PAIR, "buy", "0.1"), selfTradePrevention: "cancelTaker" }),
    );
    assert.equal(m.amountUsed, 0);
    assert.equal(m.isCancelled, true);
    assert.equal(m.selfTradePrevention, "cancelTaker");
    assert.equal((await order(a, own.id)).isCancelled, false);
    assert.deepEqual(table(await server.balances(a)), before, "the market buy's budget is released whole");
    // A market sell too, against the own resting buy.
    const ownBuy = expectOk(await a.client.createOrder(limit(PAIR, "buy", "99", "0.1")));
    expectOk(await b.client.createOrder(limit(PAIR, "buy", "98", "0.1")));
    const before2 = table(await server.balances(a));
    const s = expectOk(
      await a.client.createOrder({ ...market(PAIR, "sell", "0.1"), selfTradePrevention: "cancelBoth" }),
    );
    assert.equal(s.amountUsed, 0);
    assert.equal(s.isCancelled, true);
    assert.equal((await order(a, ownBuy.id)).isCancelled, true);
    assert.deepEqual(table(await server.balances(a)), {
      btc: before2.btc,
      usdt: [before2.usdt[0] + dec("9.9"), before2.usdt[1] - dec("9.9")],
    });
  });

  it("a FOK under cancelTaker or cancelBoth counts only the liquidity before its first own order", async () => {
    const a = await server.newUser({ btc: "1", usdt: "1000" });
    const b = await server.newUser({ btc: "1" });
    const b1 = expectOk(await b.client.createOrder(limit(PAIR, "sell", "100", "0.1")));
    const own = expectOk(await a.client.createOrder(limit(PAIR, "sell", "101", "0.1")));
    const b2 = expectOk(await b.client.createOrder(limit(PAIR, "sell", "102", "0.2")));
    const before = table(await server.balances(a));
    for (const mode of ["cancelTaker", "cancelBoth"] as const) {
      const killed = expectOk(
        await a.client.createOrder({
          ...limit(PAIR, "buy", "102", "0.3"),
          timeInForce: "FOK",
          selfTradePrevention: mode,
        }),
      );
      assert.equal(killed.amountUsed, 0, mode);
      assert.equal(killed.isCancelled, true, mode);
      assert.equal((await order(a, own.id)).isCancelled, false, `${mode}: a killed FOK touches nothing`);
      assert.deepEqual(table(await server.balances(a)), before, mode);
    }
    // Under cancelMaker the other users' 0.3 up to 102 count: it executes, cancelling the own order.
    const filled = expectOk(
      await a.client.createOrder({ ...limit(PAIR, "buy", "102", "0.3"), timeInForce: "FOK" }),
    );
    assert.equal(filled.amountUsed, 0.3);
    assert.equal(filled.isCancelled, false);
    assert.equal((await order(a, own.id)).isCancelled, true);
    assert.equal((await order(b, b1.id)).amountUsed, 0.1);
    assert.equal((await order(b, b2.id)).amountUsed, 0.2);
    assert.deepEqual(table(await server.balances(a)), {
      btc: [before.btc[0] + dec("0.3") + dec("0.1"), 0n],
      usdt: [before.usdt[0] - dec("10") - dec("20.4"), 0n],
    });
  });

  it("an amended order keeps its mode, and a restart keeps it on the record", async () => {
    const a = await server.newUser({ btc: "1", usdt: "1000" });
    const own = expectOk(await a.client.createOrder(limit(PAIR, "sell", "100", "0.1")));
    const buy = expectOk(
      await a.client.createOrder({ ...limit(PAIR, "buy", "90", "0.1"), selfTradePrevention: "cancelTaker" }),
    );
    const kept = expectOk(
      await a.client.createOrder({ ...limit(PAIR, "buy", "80", "0.1"), selfTradePrevention: "cancelBoth" }),
    );
    const before = table(await server.balances(a));
    // Moved onto the own sell: as an arriving cancelTaker order it ends there; the sell stays.
    const moved = expectOk(await a.client.amendOrder({ orderId: buy.id, price: "100" }));
    assert.equal(moved.selfTradePrevention, "cancelTaker");
    assert.equal(moved.isCancelled, true);
    assert.equal(moved.amountUsed, 0);
    assert.equal((await order(a, own.id)).isCancelled, false);
    assert.deepEqual(table(await server.balances(a)), {
      btc: before.btc,
      usdt: [before.usdt[0] + dec("9"), before.usdt[1] - dec("9")],
    });
    const reduced = expectOk(await a.client.amendOrder({ orderId: kept.id, amount: "0.05" }));
    assert.equal(reduced.selfTradePrevention, "cancelBoth");
    await server.restart();
    assert.equal((await order(a, kept.id)).selfTradePrevention, "cancelBoth");
    assert.equal((await order(a, buy.id)).selfTradePrevention, "cancelTaker");
    // The recovered resting order still applies its mode when moved.
    const after = expectOk(await a.client.amendOrder({ orderId: kept.id, price: "100" }));
    assert.equal(after.isCancelled, true);
    assert.equal((await order(a, own.id)).isCancelled, true, "cancelBoth cancelled the own sell too");
  });

  it("takes the mode in batches and sessions, and refuses a bad value with 400 in both languages", async () => {
    const a = await server.newUser({ btc: "1", usdt: "1000" });
    const ru = server.client(a, { lang: "ru" });
    const before = table(await server.balances(a));
    for (const value of ["cancelNone", "CANCELTAKER", 1, true, ""]) {
      for (const client of [a.client, ru]) {
        const res = await client.createOrder({
          ...limit(PAIR, "buy", "90", "0.1"),
          selfTradePrevention: value as never,
        });
        expectError(res, 400, "selfTradePrevention", JSON.stringify(value));
        assert.deepEqual((res.body as { codes: object }).codes, {
          selfTradePrevention: ["SELF_TRADE_PREVENTION_INVALID"],
        });
        assert.equal(/[а-яА-Я]/.test(errorsOf(res)!.selfTradePrevention[0]), client === ru);
      }
    }
    assert.deepEqual(table(await server.balances(a)), before, "nothing changed");
    const batch = expectOk(
      await a.client.createOrders([
        { ...limit(PAIR, "buy", "90", "0.1"), selfTradePrevention: "cancelBoth" },
        { ...limit(PAIR, "buy", "90", "0.1"), selfTradePrevention: "x" as never },
      ]),
    );
    assert.equal((batch[0] as CreatedOrder).selfTradePrevention, "cancelBoth");
    assert.deepEqual((batch[1] as { codes: object }).codes, {
      selfTradePrevention: ["SELF_TRADE_PREVENTION_INVALID"],
    });
    const s = await SessionSocket.logon(server, a);
    const created = await s.call("order.create", {
      ...limit(PAIR, "buy", "91", "0.1"),
      selfTradePrevention: "cancelTaker",
    });
    assert.equal((created.result as CreatedOrder).selfTradePrevention, "cancelTaker");
    const bad = await s.call("order.create", {
      ...limit(PAIR, "buy", "91", "0.1"),
      selfTradePrevention: "no",
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.codes, { selfTradePrevention: ["SELF_TRADE_PREVENTION_INVALID"] });
    s.close();
  });
});
