/**
 * `quote.replace` through a real session (docs/API.md 13, 8.12): the same validation, answer and
 * orders as `POST /trade/quote`, execution reports of every order change, and quote orders of a
 * cancelOnDisconnect session cancelled when it closes.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { QuoteResult } from "../../src/client/index.ts";
import { expectOk, sharedServer, type TestServer } from "../e2e/harness.ts";
import { waitFor } from "../wait.ts";
import { errorOf, SessionSocket } from "./helpers.ts";

describe("session quote.replace", () => {
  let server: TestServer;
  sharedServer((s) => {
    server = s;
  });

  /** An answer with the volatile fields (ids, times) taken out. */
  function shape(r: QuoteResult): unknown {
    return {
      cancelled: r.cancelled.length,
      placed: r.placed.map((p) => {
        const { id: _i, createTime: _c, updateTime: _u, ...rest } = p as unknown as Record<string, unknown>;
        return rest;
      }),
    };
  }

  it("takes expiresAt: a past deadline answers REQUEST_EXPIRED and changes nothing, a future one places", async () => {
    const u = await server.newUser({ usdt: "1000", btc: "1" });
    const s = await SessionSocket.logon(server, u);
    const before = await server.balanceTable(u);
    const levels = { pairName: "btc_usdt", bids: [["100", "1"]], asks: [["110", "0.5"]] };
    const late = await s.call("quote.replace", { ...levels, expiresAt: 1 });
    assert.deepEqual(errorOf(late), {
      status: 400,
      keys: ["expiresAt"],
      codes: { expiresAt: ["REQUEST_EXPIRED"] },
    });
    const bad = await s.call("quote.replace", { ...levels, expiresAt: "soon" });
    assert.deepEqual(errorOf(bad), {
      status: 400,
      keys: ["expiresAt"],
      codes: { expiresAt: ["EXPIRES_AT_INVALID"] },
    });
    assert.deepEqual(await server.balanceTable(u), before);
    assert.deepEqual(expectOk(await u.client.openOrders("btc_usdt")), []);
    const placed = await s.call("quote.replace", { ...levels, expiresAt: Date.now() + 60_000 });
    assert.equal(placed.status, 200, JSON.stringify(placed));
    assert.equal((placed.result as QuoteResult).placed.length, 2);
    const pulled = await s.call("quote.replace", { pairName: "btc_usdt", bids: [], asks: [], expiresAt: 1 });
    assert.deepEqual(
      errorOf(pulled).codes,
      { expiresAt: ["REQUEST_EXPIRED"] },
      "a late pull changes nothing",
    );
    assert.equal(expectOk(await u.client.openOrders("btc_usdt")).length, 2);
    s.close();
  });

  it("answers as POST /trade/quote does, and reports every order change", async () => {
    const rest = await server.newUser({ usdt: "1000", btc: "1" });
    const viaSession = await server.newUser({ usdt: "1000", btc: "1" });
    const bids = [
      ["100", "1"],
      ["99", "2"],
    ];
    const asks = [["110", "0.5"]];
    const r1 = expectOk(await rest.client.quote("btc_usdt", bids as never, asks as never));
    const s = await SessionSocket.logon(server, viaSession);
    const a1 = await s.call("quote.replace", { pairName: "btc_usdt", bids, asks });
    assert.equal(a1.status, 200, JSON.stringify(a1));
    assert.deepEqual(shape(a1.result as QuoteResult), shape(r1));
    // The second quote replaces one level; the answers agree again.
    const r2 = expectOk(await rest.client.quote("btc_usdt", [["100", "1"]], [["111", "0.5"]]));
    const a2 = await s.call("quote.replace", {
      pairName: "btc_usdt",
      bids: [["100", "1"]],
      asks: [["111", "0.5"]],
    });
    assert.equal(a2.status, 200, JSON.stringify(a2));
    assert.deepEqual(shape(a2.result as QuoteResult), shape(r2));
    assert.equal((a2.result as QuoteResult).cancelled.length, 2);
    assert.deepEqual(await server.balanceTable(viaSession), await server.balanceTable(rest));
    // Reports: 3 placed, then 2 cancelled and 1 placed, each order change once.
    await waitFor(() => s.reports().length >= 6, { what: "the six order reports" });
    const reports = s.reports().map((f) => f.data as { id: number; isCancelled: boolean; quote?: true });
    assert.equal(reports.filter((o) => o.isCancelled).length, 2);
    assert.ok(reports.every((o) => o.quote === true));

    // The same refusals, by field, in both languages.
    const bad = await s.call("quote.replace", {
      pairName: "btc_usdt",
      bids: [
        ["99", "1"],
        ["100", "1"],
      ],
      asks: [],
    });
    assert.deepEqual(errorOf(bad), { status: 400, keys: ["bids"], codes: { bids: ["QUOTE_BIDS_INVALID"] } });
    const restBad = await rest.client.quote(
      "btc_usdt",
      [
        ["99", "1"],
        ["100", "1"],
      ],
      [],
    );
    assert.deepEqual((bad.errors as object) ?? {}, (restBad.body as { errors: object }).errors);
    const nonce = await s.call("quote.replace", { pairName: "btc_usdt", bids: [], asks: [], nonce: 1 });
    assert.deepEqual(errorOf(nonce).keys, ["nonce"], "a session call takes no nonce");
    s.close();
  });

  it("runs the calls behind a waiting quote in the order they arrived (docs/API.md 6)", async () => {
    const u = await server.newUser({ usdt: "1000", btc: "1" });
    const s = await SessionSocket.logon(server, u);
    const order = (side: string, price: string) => ({
      pairName: "btc_usdt",
      tradeType: "limit",
      directionType: side,
      price,
      amount: "1",
    });
    const toCancel = await s.call("order.create", order("buy", "90"));
    const toAmend = await s.call("order.create", order("sell", "200"));
    assert.equal(toCancel.status, 200, JSON.stringify(toCancel));
    assert.equal(toAmend.status, 200, JSON.stringify(toAmend));
    const cancelId = (toCancel.result as { id: number }).id;
    const amendId = (toAmend.result as { id: number }).id;
    // One burst: the second quote waits for the first; the calls after it must wait behind it.
    const calls: [string, Record<string, unknown>][] = [
      ["quote.replace", { pairName: "btc_usdt", bids: [["100", "1"]], asks: [] }],
      ["quote.replace", { pairName: "btc_usdt", bids: [["101", "1"]], asks: [] }],
      ["order.create", order("buy", "99")],
      ["order.cancel", { orderId: cancelId }],
      ["order.amend", { orderId: amendId, price: "199" }],
      ["quote.replace", { pairName: "btc_usdt", bids: [["102", "1"]], asks: [] }],
      ["order.create", order("buy", "98")],
      ["orders.cancelAll", { pairName: "btc_usdt" }],
    ];
    const first = 1000;
    const answers = calls.map(([method, params], i) => s.call(method, params, first + i));
    const results = await Promise.all(answers);
    for (const a of results) assert.equal(a.status, 200, JSON.stringify(a));
    // Answered in the order they arrived (all on one pair).
    const answered = s.frames.filter((f) => typeof f.id === "number" && f.id >= first).map((f) => f.id);
    assert.deepEqual(
      answered,
      calls.map((_, i) => first + i),
    );
    // Run in that order: order ids follow arrival, and each quote cancelled what the one before placed.
    const placedId = (i: number) => ((results[i].result as QuoteResult).placed[0] as { id: number }).id;
    const createdId = (i: number) => (results[i].result as { id: number }).id;
    assert.ok(placedId(0) < placedId(1), "the second quote after the first");
    assert.ok(placedId(1) < createdId(2), "the create after the quote it arrived behind");
    assert.ok(createdId(2) < placedId(5) && placedId(5) < createdId(6));
    assert.deepEqual((results[1].result as QuoteResult).cancelled, [placedId(0)]);
    assert.deepEqual((results[5].result as QuoteResult).cancelled, [placedId(1)]);
    assert.equal((results[4].result as { price: string | number }).price.toString(), "199");
    // The cancel-all, last, found every order of the user open: those of the burst and the amended one.
    assert.deepEqual(results[7].result, {
      cancelled: [amendId, createdId(2), placedId(5), createdId(6)].sort((a, b) => a - b),
    });
    assert.deepEqual((await server.balanceTable(u)).usdt, ["1000", "0"]);
    s.close();
  });

  it("cancels the quote orders of a cancelOnDisconnect session when it closes", async () => {
    const u = await server.newUser({ usdt: "1000" });
    const s = await SessionSocket.logon(server, u, { cancelOnDisconnect: true });
    const a = await s.call("quote.replace", { pairName: "btc_usdt", bids: [["100", "1"]], asks: [] });
    assert.equal(a.status, 200, JSON.stringify(a));
    const placed = (a.result as QuoteResult).placed[0] as {
      id: number;
      cancelOnDisconnect?: true;
      quote?: true;
    };
    assert.equal(placed.cancelOnDisconnect, true);
    assert.equal(placed.quote, true);
    s.close();
    await waitFor(async () => expectOk(await u.client.order(placed.id)).isCancelled, {
      what: "the quote order cancelled after the close",
      intervalMs: 20,
    });
    assert.deepEqual((await server.balanceTable(u)).usdt, ["1000", "0"]);
  });
});
