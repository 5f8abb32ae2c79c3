/**
 * A mass quote's level orders (src/core/quote-orders.ts, docs/API.md 8.12): the QUOTE_LEVEL records
 * the sequencer writes, one post-only quote order per level with consecutive ids, and the engine
 * flags a stored open order rests with again after a restart.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CMD_QUOTE, LIMIT, newCommand, type QuoteLevel } from "../../src/core/command.ts";
import {
  engineFlags,
  FLAG_CANCEL_ON_DISCONNECT,
  FLAG_POST_ONLY,
  FLAG_QUOTE_ORDER,
  ORDER_MMP,
  STP_CANCEL_BOTH,
  TIF_FOK,
  TIF_GIVEN,
  TIF_IOC,
} from "../../src/core/order-options.ts";
import {
  newQuoteWork,
  quoteLevelOrders,
  quoteLevelRecords,
  restoreFlags,
} from "../../src/core/quote-orders.ts";
import { BUY, FLAG_MMP, FLAG_QUOTE, SELL, TIF_GTC, TIF_MASK } from "../../src/protocol/pair/engine.ts";

/** Bids then asks, as the engine numbers them. */
const LEVELS: QuoteLevel[] = [
  { side: BUY, price: 9_990, amount: 3 },
  { side: BUY, price: 9_980, amount: 5 },
  { side: SELL, price: 10_010, amount: 7 },
];

describe("newQuoteWork", () => {
  it("starts with its levels and session, nothing held, placed or cancelled, and no answer", () => {
    const w = newQuoteWork(LEVELS, 4);
    assert.equal(w.levels, LEVELS);
    assert.equal(w.session, 4);
    assert.deepEqual([w.orders, w.outcome, w.kept, w.cancelled], [[], [], [], []]);
    assert.deepEqual([w.holdBase, w.holdQuote], [0n, 0n]);
    assert.equal(w.result, null);
  });
});

describe("quoteLevelRecords", () => {
  it("writes `orderId, side, price, amount` per level, the ids consecutive from the first", () => {
    const r = quoteLevelRecords(newQuoteWork(LEVELS, 0), 500);
    assert.deepEqual(Array.from(r), [500, BUY, 9_990, 3, 501, BUY, 9_980, 5, 502, SELL, 10_010, 7]);
  });

  it("writes nothing for a quote that pulls both sides", () => {
    assert.equal(quoteLevelRecords(newQuoteWork([], 0), 500).length, 0);
  });
});

describe("quoteLevelOrders", () => {
  function quoteCommand(session: number, firstId: number) {
    const cmd = newCommand(CMD_QUOTE, 12, 3, 1);
    cmd.quote = newQuoteWork(LEVELS, session);
    cmd.orderId = firstId;
    return cmd;
  }

  it("makes one open limit order per level with the next ids and returns the id after them", () => {
    const cmd = quoteCommand(0, 200);
    assert.equal(quoteLevelOrders(cmd, 1_764_201_600_000_000), 200 + LEVELS.length);
    const w = cmd.quote!;
    assert.deepEqual(
      w.orders.map((o) => [o.id, o.user, o.pair, o.side, o.type, o.price, o.amount]),
      LEVELS.map((l, i) => [200 + i, 3, 1, l.side, LIMIT, l.price, l.amount]),
    );
    for (const o of w.orders) {
      assert.equal(o.used, 0);
      assert.equal(o.cancelled, false);
      assert.equal(o.createMicro, 1_764_201_600_000_000);
      assert.equal(o.updateMicro, o.createMicro);
      assert.equal(o.rowSent, false);
      assert.equal(o.userSlot, -1, "not an open order until it rests");
      assert.equal(o.restSeq, 0);
      assert.equal(o.clientOrderId, undefined);
      assert.equal(o.session, 0);
    }
    // No level's outcome is known before its `quoted` event.
    assert.deepEqual(w.outcome, [-1, -1, -1]);
    assert.deepEqual(w.kept, [undefined, undefined, undefined]);
  });

  it("makes quote orders post-only quote orders, and cancel-on-disconnect only under a session (docs/API.md 5.1, 8.9)", () => {
    const plain = quoteCommand(0, 1);
    quoteLevelOrders(plain, 0);
    for (const o of plain.quote!.orders) {
      assert.equal(o.flags & FLAG_POST_ONLY, FLAG_POST_ONLY);
      assert.equal(o.flags & FLAG_QUOTE_ORDER, FLAG_QUOTE_ORDER);
      assert.equal(o.flags & FLAG_CANCEL_ON_DISCONNECT, 0);
    }
    const session = quoteCommand(9, 1);
    quoteLevelOrders(session, 0);
    for (const o of session.quote!.orders) {
      assert.equal(o.flags & FLAG_CANCEL_ON_DISCONNECT, FLAG_CANCEL_ON_DISCONNECT);
      assert.equal(o.session, 9);
    }
  });

  it("returns its first id for a quote without levels, making no order", () => {
    const cmd = newCommand(CMD_QUOTE, 1, 3, 0);
    cmd.quote = newQuoteWork([], 0);
    cmd.orderId = 77;
    assert.equal(quoteLevelOrders(cmd, 0), 77);
    assert.deepEqual(cmd.quote.orders, []);
  });
});

describe("restoreFlags", () => {
  it("rests a stored quote order again as a GTC quote and protected order, so the next quote replaces it and MMP counts it", () => {
    const f = restoreFlags(FLAG_QUOTE_ORDER | FLAG_POST_ONLY);
    assert.equal(f & TIF_MASK, TIF_GTC);
    assert.equal(f & FLAG_QUOTE, FLAG_QUOTE);
    assert.equal(f & FLAG_MMP, FLAG_MMP);
    assert.equal(f & FLAG_POST_ONLY, 0, "a resting order no longer asks post-only");
  });

  it("rests a stored order as GTC, whatever time in force it was created with, without post-only", () => {
    for (const tif of [TIF_GTC, TIF_IOC | TIF_GIVEN, TIF_FOK | TIF_GIVEN]) {
      const f = restoreFlags(tif | FLAG_POST_ONLY);
      assert.equal(f & TIF_MASK, TIF_GTC, `time in force ${tif}`);
      assert.equal(f & FLAG_POST_ONLY, 0);
      assert.equal(f & FLAG_QUOTE, 0, "not a quote order");
    }
  });

  it("keeps a stored order's protection and self-trade prevention mode as the engine's bits", () => {
    const stored = ORDER_MMP | STP_CANCEL_BOTH | TIF_GIVEN | FLAG_CANCEL_ON_DISCONNECT;
    const f = restoreFlags(stored);
    assert.equal(f, engineFlags(stored));
    assert.equal(f & FLAG_MMP, FLAG_MMP);
    assert.equal(f & STP_CANCEL_BOTH, STP_CANCEL_BOTH);
    assert.equal(restoreFlags(0), TIF_GTC, "a plain order rests as a plain GTC order");
  });
});
