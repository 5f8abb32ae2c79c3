/**
 * The risk stage (src/core/risk-stage.ts) through the core with real parts (test/core/core-fixture.ts):
 * R1 holds what a create or amend may cost in the ledger before the command goes to its pair's
 * queue, or refuses it with its code and nothing held; a market buy holds the user's whole
 * available quote balance while it is in the worker, and what waits for it is judged again after;
 * cancels, cancel-all and a session's cancels release the holds of what they cancel; and a user's
 * command arriving while another of theirs waits on the pair is parked behind it, so they
 * run in the order they arrived (docs/API.md 6; src/core/arrival-order.ts). Deadlines: docs/API.md
 * 8.8; pair statuses: docs/API.md 11, `POST /admin/pairs/status`.
 */
import assert from "node:assert/strict";
import { after, afterEach, describe, it } from "node:test";
import { MARKET, NEEDS_ROW } from "../../src/core/command.ts";
import type { Ledger } from "../../src/core/ledger.ts";
import { CANCEL_ONLY, HALTED } from "../../src/core/pair-status.ts";
import { Code } from "../../src/errors/catalogue.ts";
import { BUY, SELL } from "../../src/protocol/pair/engine.ts";
import { tempDir } from "../db/helpers.ts";
import { waitFor } from "../wait.ts";
import {
  BTC,
  placeResting,
  sendAmend,
  sendCancel,
  sendCancelAll,
  sendCreate,
  startCore,
  type TestCore,
  USDT,
} from "./core-fixture.ts";

/** [available, reserved] of `user` in currency `c`, in ledger units. */
function balance(ledger: Ledger, user: number, c: number): [bigint, bigint] {
  return [ledger.available(user, c), ledger.reserved(user, c)];
}

describe("RiskStage", () => {
  const tmp = tempDir("risk-stage");
  after(() => tmp.cleanup());
  let opened: TestCore | null = null;
  afterEach(async () => {
    await opened?.close();
    opened = null;
  });
  let files = 0;
  async function core(): Promise<TestCore> {
    opened = await startCore(`${tmp.dir}/risk-${files++}.db`);
    return opened;
  }

  it("holds a limit buy's price × amount in quote and a limit sell's amount in base before the command reaches the worker", async () => {
    const c = await core();
    c.ledger.deposit(1, USDT, 1_000_000n);
    c.ledger.deposit(2, BTC, 50n);
    const buy = sendCreate(c, 1, BUY, 10_000, 30);
    assert.equal(buy.code, 0);
    // Held synchronously, at R1: the worker has not answered yet.
    assert.deepEqual(balance(c.ledger, 1, USDT), [700_000n, 300_000n]);
    const sell = sendCreate(c, 2, SELL, 20_000, 7);
    assert.equal(sell.code, 0);
    assert.deepEqual(balance(c.ledger, 2, BTC), [43n, 7n]);
    assert.equal((await buy.answer).err, 0);
    assert.equal((await sell.answer).err, 0);
    // Resting orders keep their holds.
    assert.deepEqual(balance(c.ledger, 1, USDT), [700_000n, 300_000n]);
    assert.deepEqual(balance(c.ledger, 2, BTC), [43n, 7n]);
  });

  it("refuses a create whose hold exceeds the available balance with INSUFFICIENT_FUNDS and holds nothing", async () => {
    const c = await core();
    c.ledger.deposit(1, USDT, 299_999n);
    const inFlight = c.exchange.inFlight(0);
    const buy = sendCreate(c, 1, BUY, 10_000, 30);
    assert.equal(buy.code, Code.INSUFFICIENT_FUNDS);
    assert.deepEqual(balance(c.ledger, 1, USDT), [299_999n, 0n]);
    assert.equal(c.exchange.inFlight(0), inFlight, "nothing was sent to the pair");
    // The exact cost is enough.
    c.ledger.deposit(1, USDT, 1n);
    await placeResting(c, 1, BUY, 10_000, 30);
    assert.deepEqual(balance(c.ledger, 1, USDT), [0n, 300_000n]);
  });

  it("refuses a create on a cancel-only pair with PAIR_CANCEL_ONLY and on a halted pair with PAIR_HALTED, holding nothing", async () => {
    const c = await core();
    c.ledger.deposit(1, USDT, 1_000_000n);
    c.exchange.statuses.set(0, CANCEL_ONLY);
    assert.equal(sendCreate(c, 1, BUY, 10_000, 1).code, Code.PAIR_CANCEL_ONLY);
    c.exchange.statuses.set(0, HALTED);
    assert.equal(sendCreate(c, 1, BUY, 10_000, 1).code, Code.PAIR_HALTED);
    assert.deepEqual(balance(c.ledger, 1, USDT), [1_000_000n, 0n]);
  });

  it("refuses a create past its deadline with REQUEST_EXPIRED and holds nothing", async () => {
    const c = await core();
    c.ledger.deposit(1, USDT, 1_000_000n);
    const late = sendCreate(c, 1, BUY, 10_000, 1, { expiresAt: Date.now() - 1_000 });
    assert.equal(late.code, Code.REQUEST_EXPIRED);
    assert.deepEqual(balance(c.ledger, 1, USDT), [1_000_000n, 0n]);
    // A deadline still ahead lets it through.
    const inTime = sendCreate(c, 1, BUY, 10_000, 1, { expiresAt: Date.now() + 3_600_000 });
    assert.equal(inTime.code, 0);
    assert.equal((await inTime.answer).err, 0);
    assert.deepEqual(balance(c.ledger, 1, USDT), [990_000n, 10_000n]);
  });

  it("holds the whole available quote balance for a market buy while it is in the worker and releases what it did not spend", async () => {
    const c = await core();
    c.ledger.deposit(2, BTC, 10n);
    await placeResting(c, 2, SELL, 10_000, 10);
    c.ledger.deposit(1, USDT, 1_000_000n);
    const buy = sendCreate(c, 1, BUY, 0, 4, { type: MARKET });
    assert.equal(buy.code, 0);
    assert.deepEqual(balance(c.ledger, 1, USDT), [0n, 1_000_000n]);
    const { err, order } = await buy.answer;
    assert.equal(err, 0);
    assert.equal(order!.amountUsed, 0.000004);
    // 4 lots at 10_000 ticks cost 40_000 units (no fee is set on this pair); the rest is free again.
    assert.deepEqual(balance(c.ledger, 1, USDT), [960_000n, 0n]);
    assert.deepEqual(balance(c.ledger, 1, BTC), [4n, 0n]);
    assert.deepEqual(balance(c.ledger, 2, USDT), [40_000n, 0n]);
    assert.deepEqual(balance(c.ledger, 2, BTC), [0n, 6n]);
  });

  it("judges a create refused for funds during the user's market buy again once the buy ends: placed if what the buy left covers it, else INSUFFICIENT_FUNDS", async () => {
    const c = await core();
    c.ledger.deposit(2, BTC, 10n);
    await placeResting(c, 2, SELL, 10_000, 10);
    c.ledger.deposit(1, USDT, 1_000_000n);
    const market = sendCreate(c, 1, BUY, 0, 4, { type: MARKET });
    assert.equal(market.code, 0);
    // Nothing is available while the buy is in the worker: these wait for it instead of being refused.
    const fits = sendCreate(c, 1, BUY, 5_000, 100);
    assert.equal(fits.code, 0);
    const tooBig = sendCreate(c, 1, BUY, 5_000, 100);
    assert.equal(tooBig.code, 0);
    assert.equal((await market.answer).err, 0);
    assert.equal((await fits.answer).err, 0);
    // 1_000_000 - 40_000 spent - 500_000 held by `fits` leaves 460_000: short of another 500_000.
    assert.equal((await tooBig.answer).err, Code.INSUFFICIENT_FUNDS);
    assert.deepEqual(balance(c.ledger, 1, USDT), [460_000n, 500_000n]);
  });

  it("holds an amend's extra cost (the most over every open quantity still possible) at R1 and settles it to the order's new cost", async () => {
    const c = await core();
    c.ledger.deposit(1, USDT, 1_000_000n);
    const o = await placeResting(c, 1, BUY, 10_000, 10);
    assert.deepEqual(balance(c.ledger, 1, USDT), [900_000n, 100_000n]);
    // 10 lots at 10_000 to 12 lots at 5_000: were all 10 to fill first, the 2 new lots need 10_000.
    const amend = sendAmend(c, 1, o.id, 5_000, 12);
    assert.equal(amend.code, 0);
    assert.deepEqual(balance(c.ledger, 1, USDT), [890_000n, 110_000n]);
    assert.equal((await amend.answer).err, 0);
    // Settled: 12 lots at 5_000 hold 60_000.
    assert.deepEqual(balance(c.ledger, 1, USDT), [940_000n, 60_000n]);
  });

  it("refuses an amend whose extra hold exceeds the available balance with INSUFFICIENT_FUNDS and the order keeps its hold", async () => {
    const c = await core();
    c.ledger.deposit(2, BTC, 10n);
    const o = await placeResting(c, 2, SELL, 10_000, 8);
    assert.equal(sendAmend(c, 2, o.id, 10_000, 11).code, Code.INSUFFICIENT_FUNDS);
    assert.deepEqual(balance(c.ledger, 2, BTC), [2n, 8n]);
    assert.equal(c.exchange.ownOpenOrder(2, o.id)!.amount, 8);
  });

  it("refuses an amend to no more than the order's executed amount with AMEND_NOT_ABOVE_EXECUTED before it reaches the worker", async () => {
    const c = await core();
    c.ledger.deposit(2, BTC, 10n);
    c.ledger.deposit(1, USDT, 1_000_000n);
    const o = await placeResting(c, 2, SELL, 10_000, 10);
    await placeResting(c, 1, BUY, 10_000, 4);
    const inFlight = c.exchange.inFlight(0);
    assert.equal(sendAmend(c, 2, o.id, 10_000, 4).code, Code.AMEND_NOT_ABOVE_EXECUTED);
    assert.equal(c.exchange.inFlight(0), inFlight, "nothing was sent to the pair");
    assert.deepEqual(balance(c.ledger, 2, BTC), [0n, 6n]);
  });

  it("refuses an amend past its deadline with REQUEST_EXPIRED and on a pair that is not trading with its status code, the order keeping its hold", async () => {
    const c = await core();
    c.ledger.deposit(1, USDT, 1_000_000n);
    const o = await placeResting(c, 1, BUY, 10_000, 10);
    assert.equal(sendAmend(c, 1, o.id, 10_000, 20, Date.now() - 1_000).code, Code.REQUEST_EXPIRED);
    c.exchange.statuses.set(0, CANCEL_ONLY);
    assert.equal(sendAmend(c, 1, o.id, 10_000, 20).code, Code.PAIR_CANCEL_ONLY);
    c.exchange.statuses.set(0, HALTED);
    assert.equal(sendAmend(c, 1, o.id, 10_000, 20).code, Code.PAIR_HALTED);
    assert.deepEqual(balance(c.ledger, 1, USDT), [900_000n, 100_000n]);
    assert.equal(c.exchange.ownOpenOrder(1, o.id)!.amount, 10);
  });

  it("holds a second amend of an order only once the first, still in the worker, has settled, and then against the amended order", async () => {
    const c = await core();
    c.ledger.deposit(1, USDT, 1_000_000n);
    const o = await placeResting(c, 1, BUY, 10_000, 10);
    const first = sendAmend(c, 1, o.id, 10_000, 15);
    const second = sendAmend(c, 1, o.id, 10_000, 20);
    assert.equal(first.code, 0);
    assert.equal(second.code, 0);
    // Only the first's 5 extra lots are held: the second waits for it.
    assert.deepEqual(balance(c.ledger, 1, USDT), [850_000n, 150_000n]);
    assert.equal((await first.answer).err, 0);
    const { err, order } = await second.answer;
    assert.equal(err, 0);
    assert.equal(order!.amount, 0.00002);
    assert.deepEqual(balance(c.ledger, 1, USDT), [800_000n, 200_000n]);
  });

  it("cancels only the user's own order: another user's is ORDER_NOT_FOUND, an id it does not know is left to the committed row (NEEDS_ROW), and the cancel releases the hold", async () => {
    const c = await core();
    c.ledger.deposit(1, USDT, 1_000_000n);
    const o = await placeResting(c, 1, BUY, 10_000, 10);
    assert.equal(sendCancel(c, 2, o.id).code, Code.ORDER_NOT_FOUND);
    // The core cannot tell an unknown id from an order closed long ago: the edge reads the row.
    assert.equal(sendCancel(c, 1, o.id + 1000).code, NEEDS_ROW);
    assert.deepEqual(balance(c.ledger, 1, USDT), [900_000n, 100_000n]);
    const cancel = sendCancel(c, 1, o.id);
    assert.equal(cancel.code, 0);
    assert.equal(await cancel.answer, 0);
    assert.deepEqual(balance(c.ledger, 1, USDT), [1_000_000n, 0n]);
    // Its final row committed before the answer: the recently closed orders answer for it.
    assert.equal(sendCancel(c, 1, o.id).code, Code.ORDER_ALREADY_CANCELLED);
  });

  it("refuses a cancel past its deadline with REQUEST_EXPIRED and on a halted pair with PAIR_HALTED, but lets it through on a cancel-only pair", async () => {
    const c = await core();
    c.ledger.deposit(1, USDT, 1_000_000n);
    const o = await placeResting(c, 1, BUY, 10_000, 10);
    assert.equal(sendCancel(c, 1, o.id, Date.now() - 1_000).code, Code.REQUEST_EXPIRED);
    c.exchange.statuses.set(0, HALTED);
    assert.equal(sendCancel(c, 1, o.id).code, Code.PAIR_HALTED);
    assert.deepEqual(balance(c.ledger, 1, USDT), [900_000n, 100_000n]);
    assert.ok(c.exchange.ownOpenOrder(1, o.id) !== undefined);
    c.exchange.statuses.set(0, CANCEL_ONLY);
    const cancel = sendCancel(c, 1, o.id);
    assert.equal(cancel.code, 0);
    assert.equal(await cancel.answer, 0);
    assert.deepEqual(balance(c.ledger, 1, USDT), [1_000_000n, 0n]);
  });

  it("cancels every open order of the user on the pair with a cancel-all, answers their ids ascending and releases their holds, leaving other users' orders", async () => {
    const c = await core();
    c.ledger.deposit(1, USDT, 1_000_000n);
    c.ledger.deposit(1, BTC, 5n);
    c.ledger.deposit(2, USDT, 1_000_000n);
    const a = await placeResting(c, 1, BUY, 10_000, 10);
    const b = await placeResting(c, 1, SELL, 20_000, 5);
    const other = await placeResting(c, 2, BUY, 9_000, 10);
    const all = sendCancelAll(c, 1, 0);
    assert.equal(all.code, 0);
    assert.deepEqual(await all.answer, [a.id, b.id]);
    assert.deepEqual(balance(c.ledger, 1, USDT), [1_000_000n, 0n]);
    assert.deepEqual(balance(c.ledger, 1, BTC), [5n, 0n]);
    assert.ok(c.exchange.ownOpenOrder(2, other.id) !== undefined);
    assert.deepEqual(balance(c.ledger, 2, USDT), [910_000n, 90_000n]);
  });

  it("refuses a cancel-all naming a halted pair with PAIR_HALTED, skips the halted pair when it names none, and refuses past its deadline", async () => {
    const c = await core();
    c.ledger.deposit(1, USDT, 1_000_000n);
    const o = await placeResting(c, 1, BUY, 10_000, 10);
    assert.equal(sendCancelAll(c, 1, 0, Date.now() - 1_000).code, Code.REQUEST_EXPIRED);
    c.exchange.statuses.set(0, HALTED);
    assert.equal(sendCancelAll(c, 1, 0).code, Code.PAIR_HALTED);
    const everyPair = sendCancelAll(c, 1, -1);
    assert.equal(everyPair.code, 0);
    assert.deepEqual(await everyPair.answer, []);
    assert.ok(c.exchange.ownOpenOrder(1, o.id) !== undefined);
    assert.deepEqual(balance(c.ledger, 1, USDT), [900_000n, 100_000n]);
  });

  it("cancels an ended session's open orders and releases their holds, keeps other sessions' orders, and refuses that session's later creates with SESSION_ENDED", async () => {
    const c = await core();
    c.ledger.deposit(1, USDT, 1_000_000n);
    const tagged = sendCreate(c, 1, BUY, 10_000, 10, { session: 7 });
    const kept = sendCreate(c, 1, BUY, 10_000, 20, { session: 8 });
    const a = (await tagged.answer).order!;
    const b = (await kept.answer).order!;
    assert.deepEqual(balance(c.ledger, 1, USDT), [700_000n, 300_000n]);
    c.exchange.cancelSessionOrders(7);
    await waitFor(() => c.exchange.ownOpenOrder(1, a.id) === undefined, { what: "the session's cancel" });
    assert.ok(c.exchange.ownOpenOrder(1, b.id) !== undefined);
    assert.deepEqual(balance(c.ledger, 1, USDT), [800_000n, 200_000n]);
    assert.equal(sendCreate(c, 1, BUY, 10_000, 1, { session: 7 }).code, Code.SESSION_ENDED);
    assert.deepEqual(balance(c.ledger, 1, USDT), [800_000n, 200_000n]);
  });

  it("cancels an ended session's create that was still in the worker once it rests, and releases its hold", async () => {
    const c = await core();
    c.ledger.deposit(1, USDT, 1_000_000n);
    const create = sendCreate(c, 1, BUY, 10_000, 10, { session: 9 });
    assert.equal(create.code, 0);
    // The session ends before the worker has answered the create.
    c.exchange.cancelSessionOrders(9);
    const { err, order } = await create.answer;
    assert.equal(err, 0);
    await waitFor(() => c.exchange.ownOpenOrder(1, order!.id) === undefined, {
      what: "the cancel behind the create",
    });
    assert.deepEqual(balance(c.ledger, 1, USDT), [1_000_000n, 0n]);
  });

  it("parks a user's cancel behind their create waiting for a market buy, so the create is judged without the funds the cancel frees", async () => {
    const c = await core();
    c.ledger.deposit(2, BTC, 10n);
    await placeResting(c, 2, SELL, 10_000, 10);
    c.ledger.deposit(1, USDT, 1_000_000n);
    const resting = await placeResting(c, 1, BUY, 5_000, 100);
    assert.deepEqual(balance(c.ledger, 1, USDT), [500_000n, 500_000n]);
    const market = sendCreate(c, 1, BUY, 0, 4, { type: MARKET });
    assert.equal(market.code, 0);
    // Waits for the market buy (nothing is available now); needs more than the buy will leave.
    const waiting = sendCreate(c, 1, BUY, 4_000, 125);
    assert.equal(waiting.code, 0);
    const inFlight = c.exchange.inFlight(0);
    const cancel = sendCancel(c, 1, resting.id);
    assert.equal(cancel.code, 0);
    assert.equal(c.exchange.inFlight(0), inFlight, "the cancel is parked, not sent");
    assert.equal((await market.answer).err, 0);
    // Judged before the cancel ran: 1_000_000 - 40_000 - 500_000 leaves 460_000 < 500_000.
    assert.equal((await waiting.answer).err, Code.INSUFFICIENT_FUNDS);
    assert.equal(await cancel.answer, 0);
    assert.deepEqual(balance(c.ledger, 1, USDT), [960_000n, 0n]);
  });

  it("runs a cancel-all sent after a create waiting for a market buy behind that create, so it cancels it and releases its hold", async () => {
    const c = await core();
    c.ledger.deposit(2, BTC, 10n);
    await placeResting(c, 2, SELL, 10_000, 10);
    c.ledger.deposit(1, USDT, 1_000_000n);
    const market = sendCreate(c, 1, BUY, 0, 4, { type: MARKET });
    const waiting = sendCreate(c, 1, BUY, 5_000, 100);
    assert.equal(market.code, 0);
    assert.equal(waiting.code, 0);
    const all = sendCancelAll(c, 1, 0);
    assert.equal(all.code, 0);
    const placed = await waiting.answer;
    assert.equal(placed.err, 0);
    // docs/API.md 6: "a cancel-all sent after a waiting order cancels it".
    assert.deepEqual(await all.answer, [placed.order!.id]);
    assert.deepEqual(balance(c.ledger, 1, USDT), [960_000n, 0n]);
  });
});
