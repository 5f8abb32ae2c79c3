/**
 * Mass quotes end to end (docs/API.md 8.12) on the real server: the replace with kept orders and their
 * queue place, R1 after releasing the old quote, crossing levels, malformed ladders, pulls, pair
 * status, quote orders beside create-order orders, cancel / amend / cancel-all on quote orders, a
 * restart, and exact ledger deltas.
 *
 * One server for the file; every test uses its own users and cancels their open orders afterwards.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CreatedOrder, ErrorBody, QuoteLevelInput, QuoteResult } from "../../src/client/index.ts";
import { auditExchange } from "./audit.ts";
import {
  expectError,
  expectOk,
  limit,
  placeLimit,
  sharedServer,
  type TestServer,
  type TestUser,
} from "./harness.ts";

const RU = { headers: { "Accept-Language": "ru" } };
const PAIR = "btc_usdt";
const JSON_TYPE = { "Content-Type": "application/json" };

type Placed = CreatedOrder | ErrorBody;

function isOrder(p: Placed): p is CreatedOrder {
  return "id" in p;
}

describe("mass quotes (docs/API.md 8.12)", () => {
  let server: TestServer;
  sharedServer((s) => {
    server = s;
  });

  async function quote(u: TestUser, bids: QuoteLevelInput[], asks: QuoteLevelInput[], pair = PAIR) {
    return expectOk(
      await u.client.quote(pair, bids, asks),
      `quote ${JSON.stringify({ bids, asks })}`,
    ) as QuoteResult;
  }

  function orders(r: QuoteResult): CreatedOrder[] {
    return r.placed.map((p) => {
      assert.ok(isOrder(p), `a placed order, got ${JSON.stringify(p)}`);
      return p;
    });
  }

  async function openIds(u: TestUser, pair = PAIR): Promise<number[]> {
    return expectOk(await u.client.openOrders(pair))
      .map((o) => o.id)
      .sort((a, b) => a - b);
  }

  it("places each level as a post-only GTC quote order and holds exactly what they need", async () => {
    const u = await server.newUser({ usdt: "1000", btc: "2" });
    const r = await quote(
      u,
      [
        ["100", "1"],
        ["99.5", "2"],
      ],
      [
        ["101", "0.5"],
        ["102", "1.5"],
      ],
    );
    assert.deepEqual(r.cancelled, []);
    const placed = orders(r);
    assert.deepEqual(
      placed.map((o) => [o.directionType, o.price, o.amount, o.quote, o.postOnly, o.mmp, o.timeInForce]),
      [
        ["buy", 100, 1, true, true, true, undefined],
        ["buy", 99.5, 2, true, true, true, undefined],
        ["sell", 101, 0.5, true, true, true, undefined],
        ["sell", 102, 1.5, true, true, true, undefined],
      ],
    );
    assert.ok(placed.every((o) => typeof o.updateTime === "string"));
    // 100 × 1 + 99.5 × 2 = 299 usdt; 0.5 + 1.5 = 2 btc.
    assert.deepEqual(await server.balanceTable(u), {
      ...(await server.balanceTable(u)),
      usdt: ["701", "299"],
      btc: ["0", "2"],
    });
    // Reads show the flags too.
    for (const o of expectOk(await u.client.openOrders(PAIR))) {
      assert.equal(o.quote, true);
      assert.equal(o.mmp, true);
      assert.equal(o.postOnly, true);
    }
    const one = expectOk(await u.client.order(placed[0].id));
    assert.equal(one.quote, true);
    await auditExchange(server);
  });

  it("keeps an identical level's order and its place in the queue; replaces the others", async () => {
    const maker = await server.newUser({ usdt: "1000" });
    const other = await server.newUser({ usdt: "1000" });
    const taker = await server.newUser({ btc: "1" });
    const first = orders(
      await quote(
        maker,
        [
          ["100", "1"],
          ["99", "1"],
        ],
        [],
      ),
    );
    // Another user's order at the same price, after the quote order.
    const later = await placeLimit(other, PAIR, "buy", "100", "1");
    const again = await quote(
      maker,
      [
        ["100", "1"],
        ["98", "1"],
      ],
      [],
    );
    assert.deepEqual(again.cancelled, [first[1].id], "the 99 level is cancelled");
    const [kept, placed] = orders(again);
    assert.equal(kept.id, first[0].id, "the identical level keeps its order");
    assert.notEqual(placed.id, first[1].id);
    // The taker meets the kept order first: it kept its place ahead of `later`.
    const sold = expectOk(await taker.client.createOrder(limit(PAIR, "sell", "100", "1")));
    assert.equal(sold.amountUsed, 1);
    assert.equal(expectOk(await maker.client.order(kept.id)).amountUsed, 1);
    assert.equal(expectOk(await other.client.order(later.id)).amountUsed, 0);
    // 98 × 1 still held; the fill paid 100.
    const b = await server.balanceTable(maker);
    assert.deepEqual(
      [b.usdt, b.btc],
      [
        ["802", "98"],
        ["1", "0"],
      ],
    );
    await auditExchange(server);
  });

  it("checks the balance after releasing the old quote; not enough is a 400 with nothing changed", async () => {
    const u = await server.newUser({ usdt: "1000", btc: "1" });
    const first = orders(await quote(u, [["100", "10"]], [["200", "1"]]));
    assert.deepEqual((await server.balanceTable(u)).usdt, ["0", "1000"]);
    // The whole balance is held by the old quote: the new one fits only after releasing it.
    const second = await quote(u, [["99", "10"]], [["201", "1"]]);
    assert.deepEqual(
      second.cancelled,
      first.map((o) => o.id),
    );
    assert.deepEqual((await server.balanceTable(u)).usdt, ["10", "990"]);
    assert.deepEqual((await server.balanceTable(u)).btc, ["0", "1"]);
    const before = await server.balanceTable(u);
    const open = await openIds(u);
    const tooMuch = await u.client.quote(PAIR, [["101", "10"]], []);
    expectError(tooMuch, 400, "amount", "a quote over the balance");
    const tooMuchBase = await u.client.quote(PAIR, [], [["201", "1.000001"]], RU);
    const [ru] = expectError(tooMuchBase, 400, "amount", "a quote over the base balance");
    assert.match(ru, /[а-я]/);
    assert.deepEqual(await server.balanceTable(u), before, "nothing changed");
    assert.deepEqual(await openIds(u), open, "the old quote stays");
    await auditExchange(server);
  });

  it("refuses a level that would take liquidity alone and places the others", async () => {
    const maker = await server.newUser({ usdt: "1000", btc: "1" });
    const other = await server.newUser({ btc: "1" });
    await placeLimit(other, PAIR, "sell", "105", "1");
    const r = await quote(
      maker,
      [
        ["106", "1"],
        ["100", "1"],
      ],
      [["107", "1"]],
    );
    const [cross, bid, ask] = r.placed;
    assert.deepEqual((cross as ErrorBody).codes, { price: ["WOULD_TAKE_LIQUIDITY"] });
    assert.ok(isOrder(bid) && bid.price === 100);
    assert.ok(isOrder(ask) && ask.price === 107);
    const b = await server.balanceTable(maker);
    assert.deepEqual(
      [b.usdt, b.btc],
      [
        ["900", "100"],
        ["0", "1"],
      ],
      "only the placed levels hold",
    );
    assert.equal(expectOk(await other.client.openOrders(PAIR))[0].amountUsed, 0, "nothing traded");
    await auditExchange(server);
  });

  it("refuses a malformed ladder as a whole, in both languages, with nothing changed", async () => {
    const u = await server.newUser({ usdt: "100000", btc: "100" });
    orders(await quote(u, [["100", "1"]], [["110", "1"]]));
    const before = await server.balanceTable(u);
    const open = await openIds(u);
    const many = Array.from({ length: 21 }, (_, i): QuoteLevelInput => [String(200 - i), "1"]);
    const cases: [string, unknown, string, RegExp][] = [
      [
        "bids not decreasing",
        {
          bids: [
            ["100", "1"],
            ["100", "1"],
          ],
          asks: [],
        },
        "bids",
        /bids\[1\]/,
      ],
      [
        "bids increasing",
        {
          bids: [
            ["99", "1"],
            ["100", "1"],
          ],
          asks: [],
        },
        "bids",
        /bids\[1\]/,
      ],
      [
        "asks not increasing",
        {
          bids: [],
          asks: [
            ["110", "1"],
            ["109", "1"],
          ],
        },
        "asks",
        /asks\[1\]/,
      ],
      ["21 bids", { bids: many, asks: [] }, "bids", /bids\[20\]/],
      [
        "21 asks",
        { bids: [], asks: many.map(([p, a]) => [String(Number(p) + 100), a]).reverse() },
        "asks",
        /asks\[20\]/,
      ],
      ["too many price decimals", { bids: [["100.001", "1"]], asks: [] }, "bids", /bids\[0\]/],
      ["amount below the minimum", { bids: [], asks: [["110", "0.0000001"]] }, "asks", /asks\[0\]/],
      ["amount zero", { bids: [["100", "0"]], asks: [] }, "bids", /bids\[0\]/],
      ["price above the maximum", { bids: [], asks: [["10000001", "1"]] }, "asks", /asks\[0\]/],
      ["a level not a pair", { bids: [["100"]], asks: [] }, "bids", /bids\[0\]/],
      ["a level not an array", { bids: [], asks: [{ price: "1", amount: "1" }] }, "asks", /asks\[0\]/],
      ["best bid at the best ask", { bids: [["110", "1"]], asks: [["110", "1"]] }, "asks", /asks\[0\]/],
      ["best bid above the best ask", { bids: [["111", "1"]], asks: [["110", "1"]] }, "asks", /asks\[0\]/],
      ["bids missing", { asks: [] }, "bids", /bids/],
      ["asks not an array", { bids: [], asks: "none" }, "asks", /asks/],
    ];
    for (const [what, body, field, names] of cases) {
      const full = { pairName: PAIR, ...(body as object) };
      const en = await u.client.raw("POST", "/1.0/trade/quote", {
        body: JSON.stringify(full),
        sign: true,
        headers: JSON_TYPE,
      });
      const [enText] = expectError(en, 400, field, what);
      assert.match(enText, names, `${what}: the message names the level`);
      const ru = await u.client.raw("POST", "/1.0/trade/quote", {
        body: JSON.stringify(full),
        sign: true,
        headers: { ...JSON_TYPE, ...RU.headers },
      });
      const [ruText] = expectError(ru, 400, field, `${what} (ru)`);
      assert.match(ruText, /[а-я]/, `${what}: a Russian message`);
      assert.match(ruText, names);
    }
    expectError(await u.client.quote("nope_usdt", [], []), 400, "pairName", "an unknown pair");
    const extra = await u.client.raw("POST", "/1.0/trade/quote", {
      body: JSON.stringify({ pairName: PAIR, bids: [], asks: [], side: "buy" }),
      sign: true,
      headers: JSON_TYPE,
    });
    expectError(extra, 400, "side", "an unknown field");
    assert.deepEqual(await server.balanceTable(u), before, "nothing changed");
    assert.deepEqual(await openIds(u), open);
  });

  it("pulls the quote with both sides empty, also on a cancelOnly pair; other quotes there are refused", async () => {
    const u = await server.newUser({ usdt: "1000", btc: "1" });
    const placed = orders(
      await quote(
        u,
        [
          ["100", "1"],
          ["99", "1"],
        ],
        [["101", "1"]],
      ),
    );
    try {
      expectOk(await server.admin.setPairStatus(PAIR, "cancelOnly"));
      expectError(
        await u.client.quote(PAIR, [["100", "1"]], []),
        400,
        "pairName",
        "a quote on a cancelOnly pair",
      );
      const pulled = await quote(u, [], []);
      assert.deepEqual(pulled, { cancelled: placed.map((o) => o.id).sort((a, b) => a - b), placed: [] });
      expectOk(await server.admin.setPairStatus(PAIR, "halted"));
      expectError(await u.client.quote(PAIR, [], []), 400, "pairName", "a pull on a halted pair");
    } finally {
      expectOk(await server.admin.setPairStatus(PAIR, "trading"));
    }
    const b = await server.balanceTable(u);
    assert.deepEqual(
      [b.usdt, b.btc],
      [
        ["1000", "0"],
        ["1", "0"],
      ],
      "every hold released",
    );
    assert.deepEqual(await openIds(u), []);
    // A pull with nothing to pull.
    assert.deepEqual(await quote(u, [], []), { cancelled: [], placed: [] });
    await auditExchange(server);
  });

  it("leaves create-order orders alone, and create-order and cancel-all leave the quote as they should", async () => {
    const u = await server.newUser({ usdt: "1000", btc: "1" });
    const own = await placeLimit(u, PAIR, "buy", "90", "1");
    const q = orders(await quote(u, [["100", "1"]], [["110", "0.5"]]));
    const own2 = await placeLimit(u, PAIR, "sell", "120", "0.25");
    const again = await quote(u, [["100", "1"]], [["111", "0.5"]]);
    assert.deepEqual(again.cancelled, [q[1].id], "only the quote's own order is replaced");
    assert.deepEqual(
      await openIds(u),
      [own.id, q[0].id, own2.id, orders(again)[1].id].sort((a, b) => a - b),
    );
    // A level at the price of the user's own create-order order would take it: refused alone, while
    // the rest of the quote (here: nothing) replaces the old one.
    const cross = await quote(u, [["120", "0.1"]], []);
    assert.deepEqual((cross.placed[0] as ErrorBody).codes, { price: ["WOULD_TAKE_LIQUIDITY"] });
    assert.deepEqual(
      cross.cancelled,
      [q[0].id, orders(again)[1].id].sort((a, b) => a - b),
    );
    assert.equal(expectOk(await u.client.order(own2.id)).isCancelled, false);
    const placedAgain = orders(await quote(u, [["100", "1"]], []));
    const pulled = await quote(u, [], []);
    assert.deepEqual(pulled.cancelled, [placedAgain[0].id]);
    assert.deepEqual(await openIds(u), [own.id, own2.id]);
    const b = await server.balanceTable(u);
    assert.deepEqual(
      [b.usdt, b.btc],
      [
        ["910", "90"],
        ["0.75", "0.25"],
      ],
    );
    await auditExchange(server);
  });

  it("cancel-order, amend and cancel-all act on quote orders; an amended quote order stays one", async () => {
    const u = await server.newUser({ usdt: "1000", btc: "1" });
    const [a, b, c] = orders(
      await quote(
        u,
        [
          ["100", "1"],
          ["99", "1"],
        ],
        [["110", "1"]],
      ),
    );
    expectOk(await u.client.cancelOrder(a.id));
    const amended = expectOk(await u.client.amendOrder({ orderId: b.id, price: "98", amount: "2" }));
    assert.equal(amended.quote, true);
    assert.equal(amended.postOnly, true);
    assert.equal(amended.mmp, true);
    assert.deepEqual((await server.balanceTable(u)).usdt, ["804", "196"]);
    // The next quote replaces the amended order like any quote order.
    const next = await quote(u, [["98", "2"]], []);
    assert.deepEqual(next.cancelled, [c.id], "the amended order is kept by an identical level");
    assert.equal(orders(next)[0].id, b.id);
    const all = expectOk(await u.client.cancelAllOrders(PAIR));
    assert.deepEqual(all.cancelled, [b.id]);
    const bal = await server.balanceTable(u);
    assert.deepEqual(
      [bal.usdt, bal.btc],
      [
        ["1000", "0"],
        ["1", "0"],
      ],
    );
    await auditExchange(server);
  });

  it("keeps quote orders' flags across a restart, and the next quote replaces them", async () => {
    const u = await server.newUser({ usdt: "1000", btc: "1" });
    const q = orders(await quote(u, [["100", "1"]], [["110", "1"]]));
    await server.restart();
    const open = expectOk(await u.client.openOrders(PAIR));
    assert.deepEqual(
      open.map((o) => [o.id, o.quote, o.mmp, o.postOnly]).sort(),
      q.map((o) => [o.id, true, true, true]).sort(),
    );
    const again = await quote(u, [["100", "1"]], [["109", "1"]]);
    assert.deepEqual(again.cancelled, [q[1].id]);
    assert.equal(orders(again)[0].id, q[0].id, "kept after the restart");
    const b = await server.balanceTable(u);
    assert.deepEqual(
      [b.usdt, b.btc],
      [
        ["900", "100"],
        ["0", "1"],
      ],
    );
    await auditExchange(server);
  });

  it("keeps the ledger exact when quotes race takers, cancels and other quotes", async () => {
    const maker = await server.newUser({ usdt: "1000", btc: "1" });
    const takers = await Promise.all([0, 1, 2].map(() => server.newUser({ usdt: "100000", btc: "100" })));
    const calls: Promise<unknown>[] = [];
    const answers: { status: number; text: string }[] = [];
    for (let i = 0; i < 40; i++) {
      // Most quotes need the whole balance: their R1 depends on the old quote they replace.
      const top = i % 2 === 0 ? "100" : "99.5";
      calls.push(
        maker.client
          .quote(
            PAIR,
            [
              [top, "5"],
              ["99", "5"],
            ],
            [
              [i % 3 === 0 ? "110" : "111", "0.5"],
              ["120", "0.5"],
            ],
          )
          .then((r) => answers.push(r)),
      );
      const t = takers[i % 3];
      if (i % 4 === 1)
        calls.push(
          t.client.createOrder({ pairName: PAIR, tradeType: "market", directionType: "sell", amount: "0.7" }),
        );
      if (i % 4 === 3)
        calls.push(
          t.client.createOrder({ pairName: PAIR, tradeType: "market", directionType: "buy", amount: "0.3" }),
        );
      if (i % 10 === 5) calls.push(maker.client.cancelAllOrders(PAIR));
      if (i % 10 === 7) calls.push(t.client.createOrder(limit(PAIR, "sell", "99", "1")));
    }
    await Promise.all(calls);
    assert.equal(answers.length, 40);
    for (const a of answers)
      assert.ok(a.status === 200 || (a.status === 400 && a.text.includes("INSUFFICIENT_FUNDS")), a.text);
    assert.ok(
      answers.some((a) => a.status === 200),
      "some quotes went through",
    );
    // The server is alive and every balance, hold, order and trade agrees.
    await auditExchange(server);
    await quote(maker, [], []);
    await auditExchange(server);
  });

  it("streams every order change of a quote", async () => {
    const u = await server.newUser({ usdt: "1000" });
    const first = orders(await quote(u, [["100", "1"]], []));
    const stream = await server.stream([`user_orders:${u.uid}`], u);
    try {
      const second = await quote(u, [["99", "1"]], []);
      const placed = orders(second)[0];
      const channel = `user_orders:${u.uid}`;
      const seen: { id: number; isCancelled: boolean; quote?: true }[] = [];
      for (let i = 0; i < 2; i++)
        seen.push(
          (await stream.next<{ id: number; isCancelled: boolean; quote?: true }>((m) => m.stream === channel))
            .data,
        );
      assert.deepEqual(
        seen.map((o) => [o.id, o.isCancelled, o.quote]),
        [
          [first[0].id, true, true],
          [placed.id, false, true],
        ],
      );
    } finally {
      await stream.close();
    }
  });
});
