/**
 * Market-maker protection end to end (docs/API.md 8.10) on the real server: the settings calls (REST
 * and session), the trigger exactly at the limit inside one sweep, the freeze and its end (time,
 * reset), interval 0, settings across a restart (window and freeze empty after it), the session's
 * `mmp` event, the `mmp` order flag on every record, and bad input. After each test the whole
 * exchange is audited from the outside (audit.ts): every hold released exactly.
 */

import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import type { CreatedOrder, MmpState } from "../../src/client/index.ts";
import { errorsOf } from "../../src/client/index.ts";
import { SessionSocket } from "../session/helpers.ts";
import { sleepUntil, waitFor } from "../wait.ts";
import { auditExchange } from "./audit.ts";
import { dec } from "./decimal.ts";
import { expectError, expectOk, limit, sharedServer, type TestServer, type TestUser } from "./harness.ts";

const PAIR = "btc_usdt";

describe("market-maker protection", () => {
  let server: TestServer;
  sharedServer((s) => {
    server = s;
  });
  afterEach(async () => {
    if (server?.running) await auditExchange(server);
  });

  async function mmp(user: TestUser, pairName = PAIR): Promise<MmpState> {
    return expectOk(await user.client.getMmp(pairName), "get mmp");
  }

  async function setMmp(user: TestUser, intervalSeconds: number, qtyLimit: string, frozenSeconds: number) {
    return expectOk(
      await user.client.setMmp({ pairName: PAIR, intervalSeconds, qtyLimit, frozenSeconds }),
      "set mmp",
    );
  }

  /** A protected GTC limit sell of `maker`. */
  async function protectedSell(maker: TestUser, price: string, amount: string): Promise<CreatedOrder> {
    return expectOk(await maker.client.createOrder({ ...limit(PAIR, "sell", price, amount), mmp: true }));
  }

  async function order(user: TestUser, id: number): Promise<CreatedOrder> {
    return expectOk(await user.client.order(id), `order ${id}`);
  }

  it("answers the disabled settings for a pair never set, and the stored ones once set", async () => {
    const u = await server.newUser();
    assert.deepEqual(await mmp(u), {
      pairName: PAIR,
      intervalSeconds: 0,
      qtyLimit: "0",
      frozenSeconds: 0,
      frozen: false,
      frozenUntil: 0,
    });
    const set = await setMmp(u, 60, "1.5", 30);
    assert.deepEqual(set, {
      pairName: PAIR,
      intervalSeconds: 60,
      qtyLimit: "1.5",
      frozenSeconds: 30,
      frozen: false,
      frozenUntil: 0,
    });
    assert.deepEqual(await mmp(u), set);
    // Per pair: another pair stays disabled.
    assert.equal((await mmp(u, "eth_usdt")).intervalSeconds, 0);
    assert.deepEqual(expectOk(await u.client.resetMmp(PAIR)), set);
  });

  it("triggers at the fill that reaches the limit inside one sweep; the taker goes on with other users' orders", async () => {
    const maker = await server.newUser({ btc: "1" });
    const other = await server.newUser({ btc: "1" });
    const taker = await server.newUser({ usdt: "1000" });
    await setMmp(maker, 60, "0.3", 0);
    const p1 = await protectedSell(maker, "100", "0.1");
    const p2 = await protectedSell(maker, "101", "0.1");
    const p3 = await protectedSell(maker, "102", "0.1");
    const p4 = await protectedSell(maker, "103", "0.1");
    // The maker's order without protection is not touched by the trigger.
    const plain = expectOk(await maker.client.createOrder(limit(PAIR, "sell", "110", "0.1")));
    const o = expectOk(await other.client.createOrder(limit(PAIR, "sell", "104", "0.5")));
    const t = expectOk(await taker.client.createOrder(limit(PAIR, "buy", "105", "0.6")));
    // 0.1 at 100, 101 and 102 (the window reaches 0.3 there), then 0.3 of the other user at 104.
    assert.equal(t.amountUsed, 0.6);
    assert.equal(t.isCancelled, false);
    for (const p of [p1, p2, p3]) assert.equal((await order(maker, p.id)).amountUsed, 0.1);
    const cancelled = await order(maker, p4.id);
    assert.equal(cancelled.amountUsed, 0, "the protected order beyond the trigger never filled");
    assert.equal(cancelled.isCancelled, true);
    assert.equal(cancelled.mmp, true);
    assert.equal((await order(other, o.id)).amountUsed, 0.3);
    const stillOpen = await order(maker, plain.id);
    assert.equal(stillOpen.isCancelled, false);
    const state = await mmp(maker);
    assert.equal(state.frozen, true);
    assert.equal(state.frozenUntil, 0, "frozenSeconds 0: until a reset");
    // Exact ledger: the maker sold 0.3 for 30.3 and holds only the plain order's 0.1.
    const b = await server.balances(maker);
    assert.equal(b.get("btc")!.available, dec("0.6"));
    assert.equal(b.get("btc")!.reserved, dec("0.1"));
    assert.equal(b.get("usdt")!.available, dec("30.3"));
    const tb = await server.balances(taker);
    assert.equal(tb.get("usdt")!.available, dec("938.5"));
    assert.equal(tb.get("usdt")!.reserved, 0n);
  });

  it("refuses new protected orders while frozen, accepts unprotected ones, and a reset unfreezes", async () => {
    const maker = await server.newUser({ btc: "1" });
    const taker = await server.newUser({ usdt: "1000" });
    await setMmp(maker, 60, "0.1", 0);
    await protectedSell(maker, "100", "0.1");
    expectOk(await taker.client.createOrder(limit(PAIR, "buy", "100", "0.1")));
    assert.equal((await mmp(maker)).frozen, true);
    const before = await server.balances(maker);
    const refused = await maker.client.createOrder({ ...limit(PAIR, "sell", "100", "0.1"), mmp: true });
    expectError(refused, 400, "mmp", "protected order while frozen");
    assert.deepEqual(refused.body, {
      errors: { mmp: ["Market maker protection is frozen on this pair"] },
      codes: { mmp: ["MMP_FROZEN"] },
    });
    assert.deepEqual(await server.balances(maker), before, "a refused order changes nothing");
    const plain = expectOk(await maker.client.createOrder(limit(PAIR, "sell", "100", "0.1")));
    assert.equal(plain.mmp, undefined);
    // Frozen on this pair only.
    const maker2 = await server.newUser({ eth: "1" });
    await setMmp(maker2, 60, "0.1", 0);
    expectOk(await maker.client.createOrder({ ...limit("eth_btc", "buy", "0.01", "1"), mmp: true }));
    const reset = expectOk(await maker.client.resetMmp(PAIR));
    assert.equal(reset.frozen, false);
    assert.equal(reset.frozenUntil, 0);
    const again = expectOk(
      await maker.client.createOrder({ ...limit(PAIR, "sell", "120", "0.1"), mmp: true }),
    );
    assert.equal(again.mmp, true);
  });

  it("ends the freeze after frozenSeconds", async () => {
    const maker = await server.newUser({ btc: "1" });
    const taker = await server.newUser({ usdt: "1000" });
    await setMmp(maker, 60, "0.1", 1);
    await protectedSell(maker, "100", "0.1");
    const startedAt = Date.now();
    expectOk(await taker.client.createOrder(limit(PAIR, "buy", "100", "0.1")));
    const frozen = await mmp(maker);
    assert.equal(frozen.frozen, true);
    assert.ok(
      frozen.frozenUntil >= startedAt + 1000 && frozen.frozenUntil <= Date.now() + 1000,
      `frozenUntil ${frozen.frozenUntil} is a second after the trigger`,
    );
    expectError(
      await maker.client.createOrder({ ...limit(PAIR, "sell", "100", "0.1"), mmp: true }),
      400,
      "mmp",
    );
    // Time is the condition here: the freeze ends at frozenUntil.
    await sleepUntil(frozen.frozenUntil + 1);
    assert.deepEqual(
      { frozen: (await mmp(maker)).frozen, frozenUntil: (await mmp(maker)).frozenUntil },
      { frozen: false, frozenUntil: 0 },
    );
    expectOk(await maker.client.createOrder({ ...limit(PAIR, "sell", "100", "0.1"), mmp: true }));
  });

  it("counts nothing with interval 0", async () => {
    const maker = await server.newUser({ btc: "1" });
    const taker = await server.newUser({ usdt: "1000" });
    await setMmp(maker, 60, "0.1", 0);
    const off = await setMmp(maker, 0, "0", 0);
    assert.equal(off.qtyLimit, "0");
    await protectedSell(maker, "100", "0.2");
    const p2 = await protectedSell(maker, "101", "0.1");
    expectOk(await taker.client.createOrder(limit(PAIR, "buy", "100", "0.2")));
    assert.equal((await mmp(maker)).frozen, false);
    assert.equal((await order(maker, p2.id)).isCancelled, false);
  });

  it("counts buys and sells, maker and taker, of protected orders only", async () => {
    const mm = await server.newUser({ btc: "1", usdt: "1000" });
    const other = await server.newUser({ btc: "1", usdt: "1000" });
    await setMmp(mm, 60, "0.3", 0);
    // An unprotected fill does not count.
    expectOk(await mm.client.createOrder(limit(PAIR, "sell", "100", "0.5")));
    expectOk(await other.client.createOrder(limit(PAIR, "buy", "100", "0.5")));
    // 0.1 as a protected maker buy, 0.1 as a protected maker sell: 0.2.
    await protectedSell(mm, "101", "0.1");
    expectOk(await mm.client.createOrder({ ...limit(PAIR, "buy", "99", "0.1"), mmp: true }));
    expectOk(await other.client.createOrder(limit(PAIR, "buy", "101", "0.1")));
    expectOk(await other.client.createOrder(limit(PAIR, "sell", "99", "0.1")));
    assert.equal((await mmp(mm)).frozen, false);
    // A protected taker: its fill reaches 0.3, so its own remainder ends instead of resting.
    expectOk(await other.client.createOrder(limit(PAIR, "sell", "98", "0.05")));
    expectOk(await other.client.createOrder(limit(PAIR, "sell", "97", "0.05")));
    const t = expectOk(await mm.client.createOrder({ ...limit(PAIR, "buy", "98", "0.5"), mmp: true }));
    assert.equal(t.amountUsed, 0.1);
    assert.equal(t.isCancelled, true);
    assert.equal((await mmp(mm)).frozen, true);
  });

  it("keeps the settings across a restart, with an empty window and nobody frozen", async () => {
    const maker = await server.newUser({ btc: "2" });
    const taker = await server.newUser({ usdt: "1000" });
    const frozenUser = await server.newUser({ btc: "1" });
    await setMmp(maker, 600, "0.3", 0);
    expectOk(
      await frozenUser.client.setMmp({
        pairName: PAIR,
        intervalSeconds: 600,
        qtyLimit: "0.1",
        frozenSeconds: 0,
      }),
    );
    const p = await protectedSell(maker, "100", "0.2");
    expectOk(await taker.client.createOrder(limit(PAIR, "buy", "100", "0.2")));
    const f = expectOk(
      await frozenUser.client.createOrder({ ...limit(PAIR, "sell", "100", "0.1"), mmp: true }),
    );
    expectOk(await taker.client.createOrder(limit(PAIR, "buy", "100", "0.1")));
    assert.equal((await order(frozenUser, f.id)).amountUsed, 0.1);
    assert.equal((await mmp(frozenUser)).frozen, true);
    const resting = await protectedSell(maker, "101", "0.5");
    await server.restart();
    assert.deepEqual(await mmp(maker), {
      pairName: PAIR,
      intervalSeconds: 600,
      qtyLimit: "0.3",
      frozenSeconds: 0,
      frozen: false,
      frozenUntil: 0,
    });
    assert.equal((await mmp(frozenUser)).frozen, false, "the frozen state starts empty");
    assert.equal((await order(maker, p.id)).mmp, true, "the row keeps the flag");
    assert.equal((await order(maker, resting.id)).mmp, true);
    // The window starts empty: 0.2 before the restart no longer counts, so 0.2 now does not
    // trigger; 0.1 more does, and cancels the recovered protected order's remainder.
    expectOk(await taker.client.createOrder(limit(PAIR, "buy", "101", "0.2")));
    assert.equal((await mmp(maker)).frozen, false);
    expectOk(await taker.client.createOrder(limit(PAIR, "buy", "101", "0.1")));
    assert.equal((await mmp(maker)).frozen, true);
    const after = await order(maker, resting.id);
    assert.equal(after.amountUsed, 0.3);
    assert.equal(after.isCancelled, true);
  });

  it("sends the mmp event to the user's sessions after a trigger and a reset, and answers the mmp calls", async () => {
    const maker = await server.newUser({ btc: "1" });
    const taker = await server.newUser({ usdt: "1000" });
    const s = await SessionSocket.logon(server, maker);
    const set = await s.call("mmp.set", {
      pairName: PAIR,
      intervalSeconds: 30,
      qtyLimit: "0.1",
      frozenSeconds: 0,
    });
    assert.equal(set.status, 200, JSON.stringify(set));
    assert.deepEqual(set.result, expectOk(await maker.client.getMmp(PAIR)));
    const created = await s.call("order.create", { ...limit(PAIR, "sell", "100", "0.2"), mmp: true });
    assert.equal(created.status, 200, JSON.stringify(created));
    assert.equal((created.result as { mmp: boolean }).mmp, true);
    expectOk(await taker.client.createOrder(limit(PAIR, "buy", "100", "0.1")));
    const event = await waitFor(() => s.frames.find((f) => f.event === "mmp"), {
      what: "the mmp event",
      detail: () => JSON.stringify(s.frames.slice(-5)),
    });
    assert.deepEqual(event, { event: "mmp", data: { pairName: PAIR, frozen: true, frozenUntil: 0 } });
    // The order reports of the trigger's cancel come before it.
    const cancelReport = s.frames.findIndex(
      (f) => f.event === "order" && (f.data as { isCancelled: boolean }).isCancelled,
    );
    assert.ok(cancelReport >= 0 && cancelReport < s.frames.indexOf(event));
    const got = await s.call("mmp.get", { pairName: PAIR });
    assert.equal((got.result as MmpState).frozen, true);
    const refused = await s.call("order.create", { ...limit(PAIR, "sell", "100", "0.1"), mmp: true });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.codes, { mmp: ["MMP_FROZEN"] });
    const reset = await s.call("mmp.reset", { pairName: PAIR });
    assert.equal(reset.status, 200);
    assert.equal((reset.result as MmpState).frozen, false);
    await waitFor(
      () => s.frames.find((f) => f.event === "mmp" && (f.data as { frozen: boolean }).frozen === false),
      { what: "the unfreeze event" },
    );
    const bad = await s.call("mmp.set", {
      pairName: PAIR,
      intervalSeconds: 3601,
      qtyLimit: "1",
      frozenSeconds: 0,
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.codes, { intervalSeconds: ["MMP_INTERVAL_INVALID"] });
    const nonce = await s.call("mmp.reset", { pairName: PAIR, nonce: 1 });
    assert.deepEqual(Object.keys(nonce.errors as object), ["nonce"]);
    s.close();
  });

  it("shows mmp on every record and keeps it through an amend", async () => {
    const maker = await server.newUser({ btc: "1" });
    const stream = await server.stream([`user_orders:${maker.uid}`], maker);
    const o = await protectedSell(maker, "100", "0.2");
    assert.equal(o.mmp, true);
    const amended = expectOk(await maker.client.amendOrder({ orderId: o.id, price: "101" }));
    assert.equal(amended.mmp, true);
    const open = expectOk(await maker.client.openOrders(PAIR));
    assert.equal(open[0].mmp, true);
    const page = expectOk(await maker.client.userOrders(PAIR));
    assert.equal(page.items[0].mmp, true);
    await waitFor(() => stream.messages.find((m) => (m.data as { mmp?: boolean }).mmp === true), {
      what: "the stream's order record with mmp",
    });
    stream.close();
    // In a batch too.
    const batch = expectOk(
      await maker.client.createOrders([
        { ...limit(PAIR, "sell", "120", "0.1"), mmp: true },
        { ...limit(PAIR, "sell", "120", "0.1"), mmp: true, timeInForce: "IOC" },
      ]),
    );
    assert.equal((batch[0] as CreatedOrder).mmp, true);
    assert.deepEqual((batch[1] as { codes: object }).codes, { mmp: ["MMP_NOT_GTC"] });
  });

  it("refuses bad values with 400 on their field in both languages, changing nothing", async () => {
    const u = await server.newUser({ btc: "1", usdt: "1000" });
    const ru = server.client(u, { lang: "ru" });
    await setMmp(u, 60, "1", 10);
    const before = await mmp(u);
    const cases: [Record<string, unknown>, string, string][] = [
      [{ pairName: "nope", intervalSeconds: 1, qtyLimit: "1", frozenSeconds: 0 }, "pairName", "PAIR_UNKNOWN"],
      [{ intervalSeconds: 1, qtyLimit: "1", frozenSeconds: 0 }, "pairName", "PAIR_REQUIRED"],
      [
        { pairName: PAIR, intervalSeconds: 3601, qtyLimit: "1", frozenSeconds: 0 },
        "intervalSeconds",
        "MMP_INTERVAL_INVALID",
      ],
      [
        { pairName: PAIR, intervalSeconds: -1, qtyLimit: "1", frozenSeconds: 0 },
        "intervalSeconds",
        "MMP_INTERVAL_INVALID",
      ],
      [
        { pairName: PAIR, intervalSeconds: 1.5, qtyLimit: "1", frozenSeconds: 0 },
        "intervalSeconds",
        "MMP_INTERVAL_INVALID",
      ],
      [
        { pairName: PAIR, intervalSeconds: 1, qtyLimit: "0", frozenSeconds: 0 },
        "qtyLimit",
        "MMP_QTY_LIMIT_INVALID",
      ],
      [
        { pairName: PAIR, intervalSeconds: 1, qtyLimit: "0.0000001", frozenSeconds: 0 },
        "qtyLimit",
        "MMP_QTY_LIMIT_INVALID",
      ],
      [
        { pairName: PAIR, intervalSeconds: 1, qtyLimit: "-1", frozenSeconds: 0 },
        "qtyLimit",
        "MMP_QTY_LIMIT_INVALID",
      ],
      // A zero written with a sign is no amount, as the request schema says: not even with interval 0.
      [
        { pairName: PAIR, intervalSeconds: 0, qtyLimit: "-0", frozenSeconds: 0 },
        "qtyLimit",
        "MMP_QTY_LIMIT_INVALID",
      ],
      [{ pairName: PAIR, intervalSeconds: 1, frozenSeconds: 0 }, "qtyLimit", "MMP_QTY_LIMIT_INVALID"],
      [
        { pairName: PAIR, intervalSeconds: 1, qtyLimit: "1", frozenSeconds: 3601 },
        "frozenSeconds",
        "MMP_FROZEN_SECONDS_INVALID",
      ],
      [{ pairName: PAIR, intervalSeconds: 1, qtyLimit: "1" }, "frozenSeconds", "MMP_FROZEN_SECONDS_INVALID"],
      [
        { pairName: PAIR, intervalSeconds: 1, qtyLimit: "1", frozenSeconds: 0, extra: 1 },
        "extra",
        "UNKNOWN_FIELD",
      ],
    ];
    for (const [body, field, code] of cases) {
      for (const client of [u.client, ru]) {
        const res = await client.setMmp(body as never);
        assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
        const parsed = JSON.parse(res.text) as {
          errors: Record<string, string[]>;
          codes: Record<string, string[]>;
        };
        assert.deepEqual(Object.keys(parsed.errors), [field], `${JSON.stringify(body)}: ${res.text}`);
        if (code !== "UNKNOWN_FIELD") assert.deepEqual(parsed.codes[field], [code]);
        if (client === ru) assert.match(parsed.errors[field][0], /[а-яА-Я]/, res.text);
        else assert.doesNotMatch(parsed.errors[field][0], /[а-яА-Я]/, res.text);
      }
    }
    assert.deepEqual(await mmp(u), before, "nothing changed");
    expectError(await u.client.getMmp("nope"), 400, "pairName");
    expectError(await u.client.resetMmp("nope"), 400, "pairName");
    const noPair = await u.client.raw("GET", "/1.0/trade/mmp", { sign: true });
    assert.equal(noPair.status, 400, noPair.text);
    // Order fields: mmp not a boolean, mmp off GTC, market; each 400 on mmp, in both languages.
    const orders: [Record<string, unknown>, string][] = [
      [{ ...limit(PAIR, "sell", "100", "0.1"), mmp: "yes" }, "MMP_INVALID"],
      [{ ...limit(PAIR, "sell", "100", "0.1"), mmp: true, timeInForce: "IOC" }, "MMP_NOT_GTC"],
      [{ ...limit(PAIR, "sell", "100", "0.1"), mmp: true, timeInForce: "FOK" }, "MMP_NOT_GTC"],
      [
        { pairName: PAIR, tradeType: "market", directionType: "sell", amount: "0.1", mmp: true },
        "MMP_NOT_GTC",
      ],
    ];
    const balances = await server.balances(u);
    for (const [body, code] of orders) {
      for (const client of [u.client, ru]) {
        const res = await client.createOrder(body as never);
        expectError(res, 400, "mmp", JSON.stringify(body));
        assert.deepEqual((res.body as { codes: object }).codes, { mmp: [code] });
        const message = errorsOf(res)!.mmp[0];
        assert.equal(/[а-яА-Я]/.test(message), client === ru, message);
      }
    }
    assert.deepEqual(await server.balances(u), balances);
    assert.deepEqual(expectOk(await u.client.openOrders(PAIR)), []);
    // false and null are "not protected" (null: not given).
    const plain = expectOk(await u.client.createOrder({ ...limit(PAIR, "sell", "100", "0.1"), mmp: false }));
    assert.equal(plain.mmp, undefined);
  });
});
