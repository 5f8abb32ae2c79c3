/**
 * Recovery of cancel-on-disconnect orders after a crash (docs/API.md 8.9):
 * real trading sessions log on with `cancelOnDisconnect: true` and have `order.create`,
 * `orders.create` and `quote.replace` calls in flight when the server is killed with SIGKILL. No
 * session survives the process, so at the next start every open order stored with the flag is
 * cancelled through the normal cancel path (rows committed, holds released) before /health turns
 * 200; every acknowledged order is still there; orders of a session without the flag, and REST
 * orders, stay open.
 */

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import type { Order } from "../../src/client/index.ts";
import { type Frame, SessionSocket } from "../session/helpers.ts";
import { waitFor } from "../wait.ts";
import { auditExchange } from "./audit.ts";
import { dec } from "./decimal.ts";
import { expectOk, isOpen, limit, TestServer } from "./harness.ts";

/**
 * Answers to creates and to quotes after which the server is killed; calls keep being sent until
 * it is gone. Quotes of one user and pair run one after the other (docs/API.md 8.12), so fewer
 * of them are answered.
 */
const KILL_AFTER_CREATES = 40;
const KILL_AFTER_QUOTES = 10;
/** Calls sent and not answered yet, at most (well below the session's cap of 1,000, docs/API.md 13). */
const MAX_IN_FLIGHT = 150;

/** A session that keeps sending calls and notes every order its 200 answers acknowledge. */
class Burst {
  readonly acked = new Map<number, Order>();
  readonly refused: Frame[] = [];
  sent = 0;
  answered = 0;
  private seen = 0;

  constructor(
    readonly session: SessionSocket,
    private readonly next: (n: number) => { method: string; params: object },
  ) {}

  /** Sends calls until `stop()` is true, never more than MAX_IN_FLIGHT unanswered. */
  async run(stop: () => boolean): Promise<void> {
    while (!stop()) {
      this.collect();
      if (this.sent - this.answered < MAX_IN_FLIGHT && this.session.closeCode === null) {
        const { method, params } = this.next(this.sent);
        this.session.send(JSON.stringify({ id: `b${this.sent}`, method, params }));
        this.sent++;
      } else await new Promise((r) => setTimeout(r, 1));
    }
    this.collect();
  }

  /** Takes in the answers received since the last call. */
  collect(): void {
    const frames = this.session.frames;
    for (; this.seen < frames.length; this.seen++) {
      const f = frames[this.seen];
      if (!("status" in f)) continue; // a report
      this.answered++;
      if (f.status !== 200) {
        this.refused.push(f);
        continue;
      }
      const result = f.result as
        | Order
        | readonly (Order | Frame)[]
        | { cancelled: number[]; placed: readonly (Order | Frame)[] };
      const orders = Array.isArray(result) ? result : "placed" in result ? result.placed : [result];
      for (const o of orders) if (typeof o.id === "number") this.acked.set(o.id, o as Order);
    }
  }
}

describe("cancel-on-disconnect orders after a crash", () => {
  let server: TestServer;
  after(() => server?.close());

  it("are cancelled before /health answers 200, every acknowledged order kept and every hold released", async () => {
    server = await TestServer.start();
    const [maker, quoter, keeper, taker] = await Promise.all([
      server.newUser({ btc: "2", usdt: "100000" }),
      server.newUser({ eth: "100", usdt: "100000" }),
      server.newUser({ usdt: "1000" }),
      server.newUser({ usdt: "1000" }),
    ]);
    const makerSession = await SessionSocket.logon(server, maker, { cancelOnDisconnect: true });
    const quoterSession = await SessionSocket.logon(server, quoter, { cancelOnDisconnect: true });
    const keeperSession = await SessionSocket.logon(server, keeper);

    // Before the burst: a flagged sell and a flagged quote ask, each partly filled over REST, so
    // that recovery cancels remainders; and orders without the flag, from a session and from REST.
    const sell = await makerSession.call("order.create", { ...limit("btc_usdt", "sell", "100", "1") });
    assert.equal(sell.status, 200, JSON.stringify(sell));
    const partlySold = sell.result as Order;
    assert.equal(partlySold.cancelOnDisconnect, true);
    const quote = await quoterSession.call("quote.replace", {
      pairName: "eth_usdt",
      bids: [],
      asks: [["300", "1"]],
    });
    assert.equal(quote.status, 200, JSON.stringify(quote));
    const partlyQuoted = (quote.result as { placed: Order[] }).placed[0];
    assert.equal(partlyQuoted.cancelOnDisconnect, true);
    expectOk(await taker.client.createOrder(limit("btc_usdt", "buy", "100", "0.4")));
    expectOk(await taker.client.createOrder(limit("eth_usdt", "buy", "300", "0.25")));
    const kept = await keeperSession.call("order.create", { ...limit("btc_usdt", "buy", "60", "1") });
    assert.equal(kept.status, 200, JSON.stringify(kept));
    assert.equal("cancelOnDisconnect" in (kept.result as Order), false);
    const keptRest = expectOk(await keeper.client.createOrder(limit("eth_usdt", "buy", "50", "1")));
    const keptIds = [(kept.result as Order).id, keptRest.id].sort((a, b) => a - b);

    // The burst: single creates and batches of buys below every sell (none trades), and quotes
    // that replace each other, all flagged; the process is killed with calls in flight.
    const creates = new Burst(makerSession, (n) =>
      n % 4 === 3
        ? {
            method: "orders.create",
            params: {
              orders: [1, 2, 3].map((k) => limit("btc_usdt", "buy", String(1 + ((n * 3 + k) % 50)), "0.01")),
            },
          }
        : { method: "order.create", params: limit("btc_usdt", "buy", String(1 + (n % 50)), "0.01") },
    );
    const quotes = new Burst(quoterSession, (n) => ({
      method: "quote.replace",
      params: {
        pairName: "eth_usdt",
        bids: [[String(100 + (n % 7)), "0.5"]],
        asks: [
          [String(200 + (n % 5)), "0.5"],
          [String(250 + (n % 3)), "1"],
        ],
      },
    }));
    let dead = false;
    const killing = waitFor(
      () => creates.answered >= KILL_AFTER_CREATES && quotes.answered >= KILL_AFTER_QUOTES,
      {
        what: `${KILL_AFTER_CREATES} answers to creates and ${KILL_AFTER_QUOTES} to quotes`,
        timeoutMs: 30_000,
      },
    )
      .then(() => server.kill())
      .finally(() => {
        dead = true;
      });
    await Promise.all([creates.run(() => dead), quotes.run(() => dead), killing]);

    for (const b of [creates, quotes]) {
      assert.deepEqual(b.refused, [], "every call of the burst that was answered succeeded");
      assert.ok(b.answered > 0, `some ${b === creates ? "creates" : "quotes"} were answered before the kill`);
    }
    const unanswered = creates.sent - creates.answered + (quotes.sent - quotes.answered);
    assert.ok(unanswered > 0, "the kill must cut calls in flight, or it did not happen mid-burst");
    const acked = new Map<number, Order>([
      [partlySold.id, partlySold],
      [partlyQuoted.id, partlyQuoted],
      ...creates.acked,
      ...quotes.acked,
    ]);

    await server.restart(); // returns once /health answered 200
    // The very first reads after /health turned 200 already see every flagged order cancelled.
    const firstReads = await Promise.all([
      maker.client.openOrders("btc_usdt"),
      quoter.client.openOrders("eth_usdt"),
      keeper.client.openOrders("btc_usdt"),
      keeper.client.openOrders("eth_usdt"),
    ]);
    const [makerOpen, quoterOpen, keeperBtc, keeperEth] = firstReads.map((r) => expectOk(r));
    assert.deepEqual(makerOpen, [], "the maker's flagged orders are cancelled");
    assert.deepEqual(quoterOpen, [], "the quoter's flagged orders are cancelled");
    assert.deepEqual(
      [...keeperBtc, ...keeperEth].map((o) => o.id).sort((a, b) => a - b),
      keptIds,
    );

    // Every acknowledged order is there as it was acknowledged, now cancelled; so is every order
    // of the flagged sessions that was committed without its answer reaching the client.
    const stored = new Map<number, Order>();
    for (const user of [maker, quoter]) {
      for (const o of await server.allOrders(user)) stored.set(o.id, o);
    }
    for (const [id, was] of acked) {
      const now = stored.get(id);
      assert.ok(now !== undefined, `acknowledged order ${id} is missing after kill -9`);
      assert.deepEqual(
        [now.pairName, now.tradeType, now.directionType, now.price, now.amount, now.createTime],
        [was.pairName, was.tradeType, was.directionType, was.price, was.amount, was.createTime],
        `order ${id} as acknowledged`,
      );
      // Only the two orders filled over REST before the burst traded after their answer.
      const filled = id === partlySold.id || id === partlyQuoted.id;
      if (!filled) assert.equal(now.amountUsed, was.amountUsed, `order ${id} executed amount`);
    }
    assert.ok(stored.size >= acked.size);
    for (const o of stored.values()) {
      assert.equal(o.cancelOnDisconnect, true, `order ${o.id} of a flagged session carries the flag`);
      assert.equal(isOpen(o), false, `order ${o.id} of a flagged session is still open`);
    }
    assert.equal(stored.get(partlySold.id)?.isCancelled, true);
    assert.equal(stored.get(partlySold.id)?.amountUsed, 0.4);
    assert.equal(stored.get(partlyQuoted.id)?.amountUsed, 0.25);

    // Holds exact: reserved equals the open orders and totals the money put in plus trades, for
    // every user, and the books hold only the keeper's orders.
    const { states, books } = await auditExchange(server);
    for (const user of [maker, quoter]) {
      const balances = states.find((s) => s.user === user)!.balances;
      for (const [currency, b] of balances) assert.equal(b.reserved, 0n, `${currency} still reserved`);
    }
    const makerBalances = states.find((s) => s.user === maker)!.balances;
    assert.equal(makerBalances.get("btc")?.available, dec("1.6"));
    assert.equal(makerBalances.get("usdt")?.available, dec("100040"));
    assert.deepEqual(books.get("btc_usdt"), { buy: [{ price: "60", amount: "1" }], sell: [] });
    assert.deepEqual(books.get("eth_usdt"), { buy: [{ price: "50", amount: "1" }], sell: [] });

    // The cancels of the recovery stay across a further (graceful) restart; nothing came back.
    await server.restart();
    assert.deepEqual(expectOk(await maker.client.openOrders("btc_usdt")), []);
    assert.deepEqual(expectOk(await quoter.client.openOrders("eth_usdt")), []);
    const keeperAgain = [
      ...expectOk(await keeper.client.openOrders("btc_usdt")),
      ...expectOk(await keeper.client.openOrders("eth_usdt")),
    ];
    assert.deepEqual(
      keeperAgain.map((o) => o.id).sort((a, b) => a - b),
      keptIds,
    );
  });
});
