/**
 * `quote.replace` through a real session (CONTRACT 11.2, 12.1): the same validation, answer and
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
