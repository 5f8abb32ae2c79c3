/**
 * FIX order entry (docs/API.md 17.2) through jspurefix against the real server: each order message,
 * its answer and reports, their fields against the REST record of the same order, refusals with
 * REST's code and message, and the unsolicited reports of changes made elsewhere.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { expectOk, sharedServer, type TestServer } from "../e2e/harness.ts";
import { assertMatchesRest, fixLogon, fixPortOf, newOrder, nextReport, now } from "./helpers.ts";
import { type Field, get, RawFix, show } from "./raw-fix.ts";

describe("FIX order entry", () => {
  let server: TestServer;
  sharedServer(
    (s) => {
      server = s;
    },
    { args: ["--fix-port", "0"] },
  );

  it("answers a resting limit order with ExecType=0 after its commit, as REST records it", async () => {
    const u = await server.newUser({ usdt: "10000" });
    const c = await fixLogon(server, u);
    c.send("D", newOrder("rest-1", "buy", "0.5", "100.25"));
    const r = await nextReport(c, "0", "rest-1");
    assert.equal(r.get(39), "0");
    assert.equal(r.get(14), "0");
    assert.equal(r.get(151), "0.5");
    assert.equal(r.get(6), "0");
    assert.equal(r.get(44), "100.25");
    assert.match(r.get(60)!, /^\d{8}-\d{2}:\d{2}:\d{2}\.\d{3}$/);
    assert.ok(Number(r.get(20002)) > 0);
    const o = await assertMatchesRest(u, r);
    assert.equal(o.execSeq, Number(r.get(20002)));
    await c.logout();
  });

  it("reports each fill of a taker with ExecType=F, then the cancelled remainder of an IOC", async () => {
    const [maker, taker] = await server.newUsers(2, { usdt: "100000", btc: "10" });
    const m = await fixLogon(server, maker);
    const t = await fixLogon(server, taker);
    m.send("D", newOrder("mk-1", "sell", "0.3", "101"));
    m.send("D", newOrder("mk-2", "sell", "0.2", "102"));
    await nextReport(m, "0", "mk-1");
    await nextReport(m, "0", "mk-2");
    t.send("D", newOrder("tk-1", "buy", "1", "102", "btc_usdt", [[59, "3"]]));
    const nw = await nextReport(t, "0", "tk-1");
    const f1 = await nextReport(t, "F", "tk-1");
    const f2 = await nextReport(t, "F", "tk-1");
    const cx = await nextReport(t, "4", "tk-1");
    assert.equal(nw.get(14), "0");
    assert.deepEqual(
      [f1.get(32), f1.get(31), f1.get(14), f1.get(39), f1.get(851)],
      ["0.3", "101", "0.3", "1", "2"],
    );
    assert.deepEqual([f2.get(32), f2.get(31), f2.get(14), f2.get(39)], ["0.2", "102", "0.5", "1"]);
    // (0.3 x 101 + 0.2 x 102) / 0.5 = 101.4
    assert.equal(f2.get(6), "101.4");
    assert.equal(f1.get(479), "btc");
    assert.equal(f1.get(12), "0");
    assert.ok(Number(f1.get(880)) > 0);
    assert.ok(Number(f1.get(20002)) < Number(f2.get(20002)));
    assert.ok(Number(f2.get(20002)) < Number(cx.get(20002)));
    assert.equal(cx.get(39), "4");
    assert.equal(cx.get(151), "0");
    await assertMatchesRest(taker, cx);
    const mf = await nextReport(m, "F", "mk-1");
    assert.equal(mf.get(851), "1");
    assert.equal(mf.get(39), "2");
    await assertMatchesRest(maker, mf);
    const execIds = [nw, f1, f2, cx, mf].map((r) => r.get(17));
    assert.equal(new Set(execIds).size, execIds.length);
    await m.logout();
    await t.logout();
  });

  it("maps the order options onto REST's: post-only, time in force, self-trade prevention, MMP", async () => {
    const u = await server.newUser({ usdt: "10000" });
    const c = await fixLogon(server, u);
    c.send(
      "D",
      newOrder("opt-1", "buy", "0.5", "20", "btc_usdt", [
        [59, "1"],
        [18, "6"],
        [20003, "cancelBoth"],
        [20004, "Y"],
        [20005, String(Date.now() + 60_000)],
      ]),
    );
    const r = await nextReport(c, "0", "opt-1");
    assert.equal(r.get(59), "1");
    const o = await assertMatchesRest(u, r);
    assert.deepEqual(
      [o.timeInForce, o.postOnly, o.selfTradePrevention, o.mmp],
      ["GTC", true, "cancelBoth", true],
    );
    // An option REST refuses is refused the same way.
    c.send(
      "D",
      newOrder("opt-2", "buy", "0.5", "20", "btc_usdt", [
        [59, "3"],
        [18, "6"],
      ]),
    );
    const x = await nextReport(c, "8", "opt-2");
    assert.match(x.get(58)!, /^POST_ONLY_NOT_GTC: /);
    c.send("D", newOrder("opt-3", "buy", "0.5", null, "btc_usdt", [[59, "4"]]));
    assert.match((await nextReport(c, "8", "opt-3")).get(58)!, /^TIME_IN_FORCE_NOT_LIMIT: /);
    c.send("D", newOrder("opt-4", "buy", "0.5", "20", "btc_usdt", [[20005, "1"]]));
    assert.match((await nextReport(c, "8", "opt-4")).get(58)!, /^REQUEST_EXPIRED: /);
    await c.logout();
  });

  it("refuses an order as REST does: ExecType=8, OrderID NONE, the code and English message", async () => {
    const u = await server.newUser({ usdt: "10" });
    const c = await fixLogon(server, u);
    c.send("D", newOrder("poor-1", "buy", "1", "100"));
    const r = await nextReport(c, "8", "poor-1");
    assert.equal(r.get(37), "NONE");
    assert.equal(r.get(39), "8");
    assert.equal(r.get(103), "3");
    assert.equal(r.get(58), "INSUFFICIENT_FUNDS: Insufficient funds on balance");
    c.send("D", newOrder("nopair", "buy", "1", "100", "xxx_yyy"));
    const p = await nextReport(c, "8", "nopair");
    assert.equal(p.get(103), "1");
    assert.match(p.get(58)!, /^PAIR_UNKNOWN: /);
    c.send("D", newOrder("decimals", "buy", "0.1234567", "1"));
    const d = await nextReport(c, "8", "decimals");
    assert.equal(d.get(103), "99");
    assert.equal(d.get(58), "AMOUNT_TOO_MANY_DECIMALS: Amount has too many decimal places (at most 6)");
    await c.logout();
  });

  it("takes `-1` and `1.` as FIX numbers: refused with REST's code (ExecType=8, OrderCancelReject), no Reject", async () => {
    const u = await server.newUser({ usdt: "10000" });
    const c = await fixLogon(server, u);
    const refusals: [string, string, string | null][] = [
      ["neg-qty", "-1", "10"],
      ["dot-qty", "1.", "10"],
      ["neg-px", "1", "-1"],
      ["dot-px", "1", "10."],
    ];
    const texts: string[] = [];
    for (const [clOrdId, qty, price] of refusals) {
      c.send("D", newOrder(clOrdId, "buy", qty, price));
      const r = await c.next((m) => m.msgType === "8" && m.get(11) === clOrdId);
      assert.deepEqual([r.get(150), r.get(39), r.get(37), r.get(103)], ["8", "8", "NONE", "99"], clOrdId);
      assert.equal(r.get(38), qty);
      texts.push(r.get(58)!);
    }
    assert.deepEqual(
      texts.map((t) => t.split(":")[0]),
      ["AMOUNT_NEGATIVE", "AMOUNT_MALFORMED", "PRICE_NEGATIVE", "PRICE_MALFORMED"],
    );
    c.send("D", newOrder("dot-ok", "buy", "1", "10"));
    await nextReport(c, "0", "dot-ok");
    c.send("G", [
      [41, "dot-ok"],
      [11, "dot-g"],
      [55, "btc_usdt"],
      [54, "1"],
      [40, "2"],
      [38, "-1"],
      [60, now()],
    ]);
    const g = await c.next((m) => m.msgType === "9" && m.get(11) === "dot-g");
    assert.match(g.get(58)!, /^AMOUNT_NEGATIVE: /);
    assert.equal(g.get(102), "99");
    assert.equal(
      c.received.some((m) => m.msgType === "3"),
      false,
    );
    await c.logout();
  });

  it("cancels by OrigClOrdID or OrderID, and refuses an unknown order with OrderCancelReject", async () => {
    const u = await server.newUser({ usdt: "10000" });
    const c = await fixLogon(server, u);
    c.send("D", newOrder("cx-1", "buy", "1", "10"));
    const n = await nextReport(c, "0", "cx-1");
    c.send("F", [
      [41, "cx-1"],
      [11, "cancel-1"],
      [55, "btc_usdt"],
      [54, "1"],
      [60, now()],
    ]);
    const r = await nextReport(c, "4", "cancel-1");
    assert.equal(r.get(41), "cx-1");
    assert.equal(r.get(37), n.get(37));
    assert.equal(r.get(39), "4");
    await assertMatchesRest(u, r);
    c.send("F", [
      [37, n.get(37)!],
      [11, "cancel-2"],
      [55, "btc_usdt"],
      [54, "1"],
      [60, now()],
    ]);
    const rej = await c.next("9");
    assert.equal(rej.get(11), "cancel-2");
    assert.equal(rej.get(434), "1");
    assert.equal(rej.get(102), "1");
    assert.equal(rej.get(39), "4");
    assert.match(rej.get(58)!, /^ORDER_ALREADY_CANCELLED: /);
    await c.logout();
  });

  it("rejects F, G and q without a tag FIX 4.4 requires of them (60 included) with 373=1, the order untouched", async () => {
    const u = await server.newUser({ usdt: "10000" });
    const c = await RawFix.logon(fixPortOf(server), u, "REQ60");
    c.write([...c.header("D"), ...newOrder("rq-1", "buy", "1", "10")]);
    const n = await c.next("the New");
    assert.equal(get(n, 150), "0", show(n));
    const orderId = get(n, 37)!;
    const cancel: Field[] = [
      [41, "rq-1"],
      [11, "rq-c"],
      [55, "btc_usdt"],
      [54, "1"],
      [60, now()],
    ];
    const replace: Field[] = [
      [37, orderId],
      [11, "rq-r"],
      [55, "btc_usdt"],
      [54, "1"],
      [40, "2"],
      [38, "2"],
      [60, now()],
    ];
    const mass: Field[] = [
      [11, "rq-q"],
      [530, "7"],
      [60, now()],
    ];
    const cases: [string, Field[], number][] = [
      ["F", cancel, 60],
      ["F", cancel, 11],
      ["F", cancel, 54],
      ["F", cancel, 55],
      ["G", replace, 60],
      ["G", replace, 11],
      ["G", replace, 54],
      ["G", replace, 55],
      ["G", replace, 40],
      ["q", mass, 60],
      ["q", mass, 530],
    ];
    for (const [type, body, missing] of cases) {
      const header = c.header(type);
      c.write([...header, ...body.filter(([t]) => t !== missing)]);
      const r = await c.next(`the Reject of ${type} without ${missing}`);
      assert.equal(get(r, 35), "3", show(r));
      assert.deepEqual(
        [get(r, 45), get(r, 371), get(r, 372), get(r, 373)],
        [get(header, 34), String(missing), type, "1"],
        show(r),
      );
    }
    const o = expectOk(await u.client.order(Number(orderId)));
    assert.deepEqual([o.isCancelled, o.amount], [false, 1]);
    c.destroy();
  });

  it("refuses F, G and H whose Symbol, Side or OrdType are not the order's as naming an unknown order", async () => {
    const u = await server.newUser({ usdt: "10000", eth: "10" });
    const c = await fixLogon(server, u);
    c.send("D", newOrder("mm-1", "buy", "1", "10"));
    const n = await nextReport(c, "0", "mm-1");
    const orderId = n.get(37)!;
    const wrong: [string, [number, string][]][] = [
      ["F", [[55, "eth_usdt"]]],
      ["F", [[54, "2"]]],
      ["G", [[55, "eth_usdt"]]],
      ["G", [[54, "2"]]],
      ["G", [[40, "1"]]],
    ];
    let i = 0;
    for (const [type, change] of wrong) {
      const clOrdId = `mm-x${++i}`;
      const fields: [number, string][] = [
        [41, "mm-1"],
        [11, clOrdId],
        [55, "btc_usdt"],
        [54, "1"],
      ];
      if (type === "G") fields.push([40, "2"], [38, "2"]);
      fields.push([60, now()]);
      c.send(
        type,
        fields.map(([t, v]): [number, string] => [t, change.find(([ct]) => ct === t)?.[1] ?? v]),
      );
      const rej = await c.next((m) => m.msgType === "9" && m.get(11) === clOrdId);
      const what = `${type} with ${JSON.stringify(change)}`;
      assert.equal(rej.get(434), type === "F" ? "1" : "2", what);
      assert.equal(rej.get(102), "1", what);
      assert.equal(rej.get(58), "ORDER_NOT_FOUND: Order not found", what);
      assert.equal(rej.get(37), "NONE", what);
      assert.equal(rej.get(39), undefined, what);
    }
    for (const [tag, value] of [
      [55, "eth_usdt"],
      [54, "2"],
    ] as const) {
      const fields: [number, string][] = [
        [37, orderId],
        [55, "btc_usdt"],
        [54, "1"],
      ];
      c.send(
        "H",
        fields.map(([t, v]): [number, string] => [t, t === tag ? value : v]),
      );
      const nf = await nextReport(c, "I");
      assert.deepEqual([nf.get(39), nf.get(103), nf.get(58)], ["8", "5", "ORDER_NOT_FOUND: Order not found"]);
    }
    // Nothing changed; the right Symbol and Side cancel it.
    const o = expectOk(await u.client.order(Number(orderId)));
    assert.deepEqual([o.isCancelled, o.amount, o.price], [false, 1, 10]);
    c.send("F", [
      [37, orderId],
      [11, "mm-cancel"],
      [55, "btc_usdt"],
      [54, "1"],
      [60, now()],
    ]);
    await nextReport(c, "4", "mm-cancel");
    await c.logout();
  });

  it("gives OrdStatus 0 or 1 on an OrderCancelReject of an open order", async () => {
    const [u, other] = await server.newUsers(2, { usdt: "10000", btc: "10" });
    const c = await fixLogon(server, u);
    c.send("D", newOrder("os-1", "buy", "1", "10"));
    const n = await nextReport(c, "0", "os-1");
    const amend = (clOrdId: string, more: [number, string][]) =>
      c.send("G", [
        [41, "os-1"],
        [11, clOrdId],
        [55, "btc_usdt"],
        [54, "1"],
        [40, "2"],
        ...more,
        [60, now()],
      ]);
    amend("os-a", []);
    const r0 = await c.next((m) => m.msgType === "9" && m.get(11) === "os-a");
    assert.match(r0.get(58)!, /^AMEND_NOTHING: /);
    assert.deepEqual([r0.get(39), r0.get(102), r0.get(37)], ["0", "99", n.get(37)]);
    expectOk(
      await other.client.createOrder({
        pairName: "btc_usdt",
        tradeType: "market",
        directionType: "sell",
        amount: "0.4",
      }),
    );
    await nextReport(c, "F", "os-1");
    amend("os-b", [[38, "0.2"]]);
    const r1 = await c.next((m) => m.msgType === "9" && m.get(11) === "os-b");
    assert.match(r1.get(58)!, /^AMEND_NOT_ABOVE_EXECUTED: /);
    assert.deepEqual([r1.get(39), r1.get(102)], ["1", "99"]);
    await c.logout();
  });

  it("replaces an order by a chain of ClOrdIDs, keeping its id and clientOrderId", async () => {
    const u = await server.newUser({ usdt: "10000" });
    const c = await fixLogon(server, u);
    c.send("D", newOrder("rp-1", "buy", "1", "10"));
    const n = await nextReport(c, "0", "rp-1");
    c.send("G", [
      [41, "rp-1"],
      [11, "rp-2"],
      [55, "btc_usdt"],
      [54, "1"],
      [40, "2"],
      [38, "2"],
      [44, "11"],
      [60, now()],
    ]);
    const r1 = await nextReport(c, "5", "rp-2");
    assert.equal(r1.get(41), "rp-1");
    assert.equal(r1.get(37), n.get(37));
    assert.equal(r1.get(38), "2");
    assert.equal(r1.get(44), "11");
    c.send("G", [
      [41, "rp-2"],
      [11, "rp-3"],
      [55, "btc_usdt"],
      [54, "1"],
      [40, "2"],
      [38, "1.5"],
      [60, now()],
    ]);
    const r2 = await nextReport(c, "5", "rp-3");
    assert.equal(r2.get(38), "1.5");
    const o = expectOk(await u.client.order(Number(n.get(37))));
    assert.equal(o.clientOrderId, "rp-1");
    assert.equal(o.amount, 1.5);
    assert.equal(o.price, 11);
    c.send("G", [
      [41, "nothing"],
      [11, "rp-4"],
      [55, "btc_usdt"],
      [54, "1"],
      [40, "2"],
      [38, "1"],
      [60, now()],
    ]);
    const rej = await c.next("9");
    assert.equal(rej.get(434), "2");
    assert.equal(rej.get(102), "1");
    await c.logout();
    // The chain holds across a reconnect: the last ClOrdID still names the order.
    const again = await fixLogon(server, u);
    again.send("F", [
      [41, "rp-3"],
      [11, "rp-cancel"],
      [55, "btc_usdt"],
      [54, "1"],
      [60, now()],
    ]);
    const x = await nextReport(again, "4", "rp-cancel");
    assert.equal(x.get(37), n.get(37));
    assert.equal(x.get(41), "rp-1");
    await assertMatchesRest(u, x);
    await again.logout();
  });

  it("mass cancels a pair with OrderMassCancelReport, then one ExecType=4 per order", async () => {
    const u = await server.newUser({ usdt: "10000", eth: "10" });
    const c = await fixLogon(server, u);
    c.send("D", newOrder("mc-1", "buy", "1", "10"));
    c.send("D", newOrder("mc-2", "buy", "1", "11"));
    c.send("D", newOrder("mc-3", "sell", "1", "5000", "eth_usdt"));
    await nextReport(c, "0", "mc-1");
    await nextReport(c, "0", "mc-2");
    await nextReport(c, "0", "mc-3");
    c.send("q", [
      [11, "mass-1"],
      [530, "1"],
      [55, "btc_usdt"],
      [60, now()],
    ]);
    const rep = await c.next("r");
    assert.equal(rep.get(531), "1");
    assert.equal(rep.get(533), "2");
    const idx = c.received.indexOf(rep);
    const cancels = await Promise.all([nextReport(c, "4", "mc-1"), nextReport(c, "4", "mc-2")]);
    for (const x of cancels) assert.ok(c.received.indexOf(x) > idx);
    c.send("q", [
      [11, "mass-2"],
      [530, "1"],
      [55, "nope_pair"],
      [60, now()],
    ]);
    const refused = await c.next("r");
    assert.equal(refused.get(531), "0");
    assert.equal(refused.get(532), "1");
    await c.logout();
  });

  it("answers an OrderStatusRequest with ExecType=I, and ORDER_NOT_FOUND for another user's order", async () => {
    const [u, other] = await server.newUsers(2, { usdt: "10000" });
    const c = await fixLogon(server, u);
    c.send("D", newOrder("st-1", "buy", "1", "10"));
    const n = await nextReport(c, "0", "st-1");
    c.send("H", [
      [37, n.get(37)!],
      [11, "st-1"],
      [55, "btc_usdt"],
      [54, "1"],
    ]);
    const s = await nextReport(c, "I");
    assert.equal(s.get(39), "0");
    assert.equal(s.get(20002), undefined);
    await assertMatchesRest(u, s);
    const theirs = expectOk(
      await other.client.createOrder({
        pairName: "btc_usdt",
        tradeType: "limit",
        directionType: "buy",
        price: "5",
        amount: "1",
      }),
    );
    c.send("H", [
      [37, String(theirs.id)],
      [11, "x"],
      [55, "btc_usdt"],
      [54, "1"],
    ]);
    const nf = await nextReport(c, "I");
    assert.equal(nf.get(39), "8");
    assert.equal(nf.get(103), "5");
    assert.equal(nf.get(58), "ORDER_NOT_FOUND: Order not found");
    await c.logout();
  });

  it("gives AvgPx as executedQuote / amountUsed rounded half-up, for fills made before the logon", async () => {
    const [maker, taker] = await server.newUsers(2, { usdt: "100000", btc: "10" });
    const lim = (price: string) =>
      maker.client.createOrder({
        pairName: "btc_usdt",
        tradeType: "limit",
        directionType: "sell",
        price,
        amount: "0.3",
      });
    expectOk(await lim("101"));
    expectOk(await lim("102.01"));
    const o = expectOk(
      await taker.client.createOrder({
        pairName: "btc_usdt",
        tradeType: "market",
        directionType: "buy",
        amount: "0.6",
      }),
    );
    assert.equal(o.executedQuote, 60.903);
    const c = await fixLogon(server, taker);
    c.send("H", [
      [37, String(o.id)],
      [11, "NONE"],
      [55, "btc_usdt"],
      [54, "1"],
    ]);
    const s = await nextReport(c, "I");
    // 60.903 / 0.6 = 101.505, half-up to 2 decimals
    assert.equal(s.get(6), "101.51");
    assert.equal(s.get(14), "0.6");
    assert.equal(s.get(39), "2");
    await assertMatchesRest(taker, s);
    await c.logout();
  });

  it("reports changes made elsewhere: a REST order, its cancel, without a request", async () => {
    const u = await server.newUser({ usdt: "10000" });
    const c = await fixLogon(server, u);
    const o = expectOk(
      await u.client.createOrder({
        pairName: "btc_usdt",
        tradeType: "limit",
        directionType: "buy",
        price: "7",
        amount: "1",
        clientOrderId: "rest-made",
      }),
    );
    const n = await nextReport(c, "0", "rest-made");
    assert.equal(Number(n.get(37)), o.id);
    expectOk(await u.client.cancelOrder(o.id));
    const x = await nextReport(c, "4", "rest-made");
    await assertMatchesRest(u, x);
    await c.logout();
  });

  it("answers an unhandled application message with BusinessMessageReject 380=3", async () => {
    const u = await server.newUser();
    const c = await fixLogon(server, u);
    c.send("R", [[131, "q1"]]);
    const j = await c.next("j");
    assert.equal(j.get(372), "R");
    assert.equal(j.get(380), "3");
    await c.logout();
  });
});
