/**
 * Stop orders over FIX (docs/API.md 17.2, 18) through jspurefix against the real server: OrdType 3
 * and 4 with StopPx(99) and StopDirection(20006), the waiting order's reports (New, status) against
 * its REST record, its trigger reported as ExecType L before the fills it makes, a triggered order
 * that ends cancelled whole with its reason, a stop placed before the session, and the refusals of
 * a stop message with REST's codes.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { expectOk, placeLimit, sharedServer, type TestServer, type TestUser } from "../e2e/harness.ts";
import { assertMatchesRest, fixLogon, fixPortOf, newOrder, nextReport, now } from "./helpers.ts";
import { get, RawFix, show } from "./raw-fix.ts";

/** One trade of `amount` at `price` on `pair` between two users of their own. */
async function tradeAt(server: TestServer, pair: string, price: string, amount: string): Promise<void> {
  const [maker, taker] = await server.newUsers(2, { usdt: "100000", btc: "100", eth: "1000" });
  await placeLimit(maker, pair, "sell", price, amount);
  const buy = await placeLimit(taker, pair, "buy", price, amount);
  assert.equal(buy.amountUsed, Number(amount), `the trade at ${price} on ${pair}`);
}

/** A NewOrderSingle of a stop: `newOrder`'s fields with OrdType `ordType` and `more`. */
function stopOrder(
  clOrdId: string,
  side: "buy" | "sell",
  qty: string,
  price: string | null,
  pair: string,
  ordType: string,
  more: [number, string][],
): [number, string][] {
  return [...newOrder(clOrdId, side, qty, price, pair).filter(([t]) => t !== 40), [40, ordType], ...more];
}

async function record(user: TestUser, id: number) {
  return expectOk(await user.client.order(id), `GET /trade/orders/${id}`);
}

describe("FIX stop orders", () => {
  let server: TestServer;
  sharedServer(
    (s) => {
      server = s;
    },
    { args: ["--fix-port", "0"] },
  );

  it("takes a stop-limit (OrdType 4) that waits, reports its trigger as ExecType L, then its fill", async () => {
    const u = await server.newUser({ usdt: "10000" });
    const [seller] = await server.newUsers(1, { btc: "10" });
    await placeLimit(seller, "btc_usdt", "sell", "115", "0.5");
    const c = await fixLogon(server, u);
    c.send(
      "D",
      stopOrder("stp-1", "buy", "0.5", "120", "btc_usdt", "4", [
        [99, "110"],
        [20006, "U"],
      ]),
    );
    const nw = await nextReport(c, "0", "stp-1");
    assert.deepEqual([nw.get(40), nw.get(99), nw.get(44), nw.get(39)], ["4", "110", "120", "0"]);
    const waiting = await assertMatchesRest(u, nw);
    assert.equal(waiting.triggered, false);
    // A trade at 110 meets the stop: it arrives as a buy at 120 and takes the 0.5 at 115.
    await tradeAt(server, "btc_usdt", "110", "0.1");
    const trig = await nextReport(c, "L", "stp-1");
    assert.deepEqual([trig.get(39), trig.get(14), trig.get(151)], ["0", "0", "0.5"]);
    const fill = await nextReport(c, "F", "stp-1");
    assert.deepEqual([fill.get(32), fill.get(31), fill.get(39), fill.get(851)], ["0.5", "115", "2", "2"]);
    const done = await assertMatchesRest(u, fill);
    assert.equal(done.triggered, true);
    assert.equal(done.amountUsed, 0.5);
    // The trigger carries no fill; no Replaced report was made of it.
    assert.equal(trig.get(32), undefined);
    assert.equal(c.received.filter((m) => m.get(11) === "stp-1" && m.get(150) === "5").length, 0);
    await c.logout();
  });

  it("reports a triggered stop-market (OrdType 3) that finds no liquidity as L, then cancelled with its reason", async () => {
    const u = await server.newUser({ eth: "10" });
    const c = await fixLogon(server, u);
    c.send(
      "D",
      stopOrder("stp-2", "sell", "1", null, "eth_usdt", "3", [
        [99, "60"],
        [20006, "D"],
      ]),
    );
    const nw = await nextReport(c, "0", "stp-2");
    assert.deepEqual([nw.get(40), nw.get(99), nw.get(44)], ["3", "60", undefined]);
    await assertMatchesRest(u, nw);
    // The trade at 50 takes the only bid: the triggered market sell has none left.
    await tradeAt(server, "eth_usdt", "50", "0.1");
    const trig = await nextReport(c, "L", "stp-2");
    assert.equal(trig.get(39), "0");
    const cx = await nextReport(c, "4", "stp-2");
    assert.deepEqual([cx.get(39), cx.get(14), cx.get(58)], ["4", "0", "NO_LIQUIDITY"]);
    const o = await assertMatchesRest(u, cx);
    assert.equal(o.cancelReason, "NO_LIQUIDITY");
    await c.logout();
  });

  it("tells the trigger of a stop placed before the session, answers its status and cancels it", async () => {
    const u = await server.newUser({ eth: "10" });
    const placed = expectOk(
      await u.client.createOrder({
        pairName: "eth_btc",
        tradeType: "limit",
        directionType: "sell",
        price: "0.04",
        amount: "1",
        stopPrice: "0.05",
        stopDirection: "down",
        clientOrderId: "before-1",
      }),
    );
    const c = await fixLogon(server, u);
    c.send("H", [
      [37, String(placed.id)],
      [55, "eth_btc"],
      [54, "2"],
    ]);
    const st = await nextReport(c, "I", "before-1");
    assert.deepEqual([st.get(40), st.get(99), st.get(44), st.get(39)], ["4", "0.05", "0.04", "0"]);
    await assertMatchesRest(u, st);
    // The trigger makes it a resting sell at 0.04 (no bid): Triggered, and no Replaced.
    await tradeAt(server, "eth_btc", "0.05", "0.1");
    const trig = await nextReport(c, "L", "before-1");
    assert.equal(trig.get(39), "0");
    assert.equal((await record(u, placed.id)).triggered, true);
    c.send("F", [
      [41, "before-1"],
      [11, "cx-1"],
      [55, "eth_btc"],
      [54, "2"],
      [60, now()],
    ]);
    const cx = await nextReport(c, "4", "cx-1");
    assert.equal(cx.get(41), "before-1");
    assert.equal(c.received.filter((m) => m.get(37) === String(placed.id) && m.get(150) === "5").length, 0);
    await c.logout();
  });

  it("replaces a waiting stop's quantity and StopPx with G (ExecType 5), and refuses a StopPx the last trade meets", async () => {
    const u = await server.newUser({ btc: "10" });
    await tradeAt(server, "btc_usdt", "110", "0.1");
    const c = await fixLogon(server, u);
    c.send(
      "D",
      stopOrder("stp-am", "sell", "1", "89", "btc_usdt", "4", [
        [99, "90"],
        [20006, "D"],
      ]),
    );
    const nw = await nextReport(c, "0", "stp-am");
    const id = Number(nw.get(37));
    c.send("G", [
      [41, "stp-am"],
      [11, "stp-am-2"],
      [55, "btc_usdt"],
      [54, "2"],
      [40, "4"],
      [38, "0.5"],
      [99, "92"],
      [60, now()],
    ]);
    const rep = await nextReport(c, "5", "stp-am-2");
    assert.deepEqual([rep.get(99), rep.get(38), rep.get(44), rep.get(39)], ["92", "0.5", "89", "0"]);
    const amended = await assertMatchesRest(u, rep);
    assert.equal(amended.triggered, false);
    assert.equal(amended.stopPrice, 92);
    c.send("G", [
      [41, "stp-am-2"],
      [11, "stp-am-3"],
      [55, "btc_usdt"],
      [54, "2"],
      [40, "4"],
      [99, "110"],
      [60, now()],
    ]);
    const rej = await c.next((m) => m.msgType === "9" && m.get(11) === "stp-am-3");
    assert.match(rej.get(58) ?? "", /^STOP_WOULD_TRIGGER: /);
    assert.equal((await record(u, id)).stopPrice, 92);
    await c.logout();
  });

  it("takes a trailing stop with TrailingDelta(20007), reports its current StopPx, and replaces its delta with G", async () => {
    const u = await server.newUser({ btc: "10" });
    await tradeAt(server, "btc_usdt", "110", "0.1");
    const c = await fixLogon(server, u);
    c.send(
      "D",
      stopOrder("trl-1", "sell", "0.5", null, "btc_usdt", "3", [
        [20007, "5"],
        [20006, "D"],
      ]),
    );
    const nw = await nextReport(c, "0", "trl-1");
    assert.deepEqual([nw.get(40), nw.get(99), nw.get(39)], ["3", "105", "0"]);
    const waiting = await assertMatchesRest(u, nw);
    assert.equal(waiting.trailingDelta, 5);
    // A trade at 112 moves the stop to 107, unreported; the replace of the delta reports it.
    await tradeAt(server, "btc_usdt", "112", "0.1");
    c.send("G", [
      [41, "trl-1"],
      [11, "trl-2"],
      [55, "btc_usdt"],
      [54, "2"],
      [40, "3"],
      [20007, "4"],
      [60, now()],
    ]);
    const rep = await nextReport(c, "5", "trl-2");
    assert.deepEqual([rep.get(99), rep.get(39)], ["108", "0"]);
    assert.equal(c.received.filter((m) => m.get(11) === "trl-1" && m.get(150) === "5").length, 0);
    const amended = await assertMatchesRest(u, rep);
    assert.equal(amended.trailingDelta, 4);
    await c.logout();
  });

  it("reports both legs of an OCO with ListID(66) and the sibling's cancel with Text(58) OCO", async () => {
    const u = await server.newUser({ btc: "1" });
    const c = await fixLogon(server, u);
    const last = expectOk(await server.public.history("btc_usdt", { limit: 1 }))[0]?.price ?? 100;
    const oco = expectOk(
      await u.client.createOco({
        pairName: "btc_usdt",
        directionType: "sell",
        amount: "0.1",
        price: String(Math.ceil(last * 2)),
        stopPrice: String(Math.floor(last / 2)),
        clientOrderId: "fix-oco-1",
      }),
    );
    const [limitId, stopId] = oco.orders.map((o) => String(o.id));
    const nw = await nextReport(c, "0", "fix-oco-1");
    assert.deepEqual([nw.get(37), nw.get(66), nw.get(40)], [limitId, String(oco.ocoId), "2"]);
    const stopNew = await c.next((m) => m.msgType === "8" && m.get(150) === "0" && m.get(37) === stopId);
    assert.deepEqual([stopNew.get(66), stopNew.get(40), stopNew.get(11)], [String(oco.ocoId), "3", "NONE"]);
    expectOk(await u.client.cancelOrder(oco.ocoId));
    const gone = await c.next((m) => m.msgType === "8" && m.get(150) === "4" && m.get(37) === stopId);
    assert.deepEqual([gone.get(66), gone.get(58), gone.get(39)], [String(oco.ocoId), "OCO", "4"]);
    await c.logout();
  });

  it("refuses a stop message as REST refuses the order, and a StopPx that is no price with Reject(3)", async () => {
    const u = await server.newUser({ usdt: "10000" });
    const c = await RawFix.logon(fixPortOf(server), u, "STOPREF");
    const cases: [string, [number, string][], RegExp][] = [
      ["no stop", [[40, "3"]], /^STOP_PRICE_REQUIRED: /],
      [
        "no direction",
        [
          [40, "4"],
          [99, "90"],
        ],
        /^STOP_DIRECTION_REQUIRED: /,
      ],
      [
        "another direction",
        [
          [40, "4"],
          [99, "90"],
          [20006, "X"],
        ],
        /^STOP_DIRECTION_INVALID: /,
      ],
      [
        "met by the last trade (110, up 100)",
        [
          [40, "4"],
          [99, "100"],
          [20006, "U"],
        ],
        /^STOP_WOULD_TRIGGER: /,
      ],
      [
        "post-only",
        [
          [40, "4"],
          [99, "200"],
          [20006, "U"],
          [18, "6"],
        ],
        /^POST_ONLY_WITH_STOP: /,
      ],
    ];
    for (const [i, [what, more, text]] of cases.entries()) {
      const fields = newOrder(`ref-${i}`, "buy", "0.1", "100", "btc_usdt").filter(([t]) => t !== 40);
      c.write([...c.header("D"), ...fields, ...more]);
      const r = await c.next(what);
      assert.equal(get(r, 150), "8", `${what}: ${show(r)}`);
      assert.match(get(r, 58)!, text, what);
    }
    c.write([
      ...c.header("D"),
      ...newOrder("ref-px", "buy", "0.1", "100", "btc_usdt").filter(([t]) => t !== 40),
      [40, "4"],
      [99, "abc"],
      [20006, "U"],
    ]);
    const rej = await c.next("a StopPx that is no price");
    assert.deepEqual([get(rej, 35), get(rej, 371), get(rej, 373)], ["3", "99", "6"]);
    const open = expectOk(await u.client.openOrders("btc_usdt"));
    assert.equal(open.length, 0, "nothing was created");
    c.destroy();
  });
});
