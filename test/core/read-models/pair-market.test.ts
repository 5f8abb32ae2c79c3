/** The public read models of one pair (src/core/read-models/pair-market.ts): what they hand to the writer. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  BookSide,
  type Candle,
  HISTORY_SIZE,
  PairMarket,
} from "../../../src/core/read-models/pair-market.ts";

const MINUTE_MICRO = 60_000_000;

function drained(m: PairMarket, period: string): Candle[] {
  const out: Candle[] = [];
  m.drainCandles((p, c) => {
    if (p === period) out.push([...c] as Candle);
  });
  return out;
}

describe("PairMarket candles", () => {
  it("hands over a candle closed since the last drain with its last trade, then the new one", () => {
    const m = new PairMarket("btc_usdt", 2, 6);
    const t0 = 28_000_000 * MINUTE_MICRO; // a minute boundary (2023)
    m.addTrade(0, 0, 100, 5, t0 + 1, 1);
    assert.deepEqual(drained(m, "1m"), [[t0 / 1000, 100, 100, 100, 100, 5]]);
    // Between two drains: the minute's last trade, then one in the next minute.
    m.addTrade(0, 0, 120, 2, t0 + MINUTE_MICRO - 1, 2);
    m.addTrade(1, 0, 90, 1, t0 + MINUTE_MICRO + 1, 3);
    assert.deepEqual(drained(m, "1m"), [
      [t0 / 1000, 100, 120, 100, 120, 7],
      [t0 / 1000 + 60_000, 90, 90, 90, 90, 1],
    ]);
    assert.deepEqual(drained(m, "1m"), [], "nothing changed since");
  });

  it("does not hand over again a candle already drained when the next one opens", () => {
    const m = new PairMarket("btc_usdt", 2, 6);
    const t0 = 28_000_000 * MINUTE_MICRO; // a minute boundary (2023)
    m.addTrade(0, 0, 100, 5, t0 + 1, 1);
    drained(m, "1m");
    m.addTrade(0, 0, 101, 1, t0 + MINUTE_MICRO + 1, 2);
    assert.deepEqual(drained(m, "1m"), [[t0 / 1000 + 60_000, 101, 101, 101, 101, 1]]);
  });
});

describe("PairMarket history", () => {
  it("holds the last HISTORY_SIZE trades, newest first, after any restore and any number of trades", () => {
    type T = [0 | 1, 0 | 1, number, number];
    const trade = fc.tuple(
      fc.constantFrom<0 | 1>(0, 1),
      fc.constantFrom<0 | 1>(0, 1),
      fc.integer({ min: 1, max: 10_000_000 }),
      fc.integer({ min: 1, max: 1_000_000 }),
    );
    fc.assert(
      fc.property(
        fc.array(trade, { maxLength: 2 * HISTORY_SIZE }),
        fc.array(trade, { maxLength: 3 * HISTORY_SIZE }),
        (stored: T[], live: T[]) => {
          const m = new PairMarket("btc_usdt", 2, 6);
          // The model: a list, newest first, as the history was kept before it became a ring.
          const model: ReturnType<PairMarket["publicTrade"]>[] = [];
          let micro = 1_000_000;
          // Recovery feeds stored trades newest first: the first one is the latest.
          const storedMicros = stored.map(() => micro++).reverse();
          stored.forEach(([side, type, price, amount], i) => {
            m.restoreHistory(side, type, price, amount, storedMicros[i], storedMicros[i]);
            if (model.length < HISTORY_SIZE)
              model.push(m.publicTrade(side, type, price, amount, storedMicros[i], storedMicros[i]));
          });
          assert.deepEqual(m.history, model);
          for (const [side, type, price, amount] of live) {
            micro += 1_000_000;
            m.addTrade(side, type, price, amount, micro, micro);
            model.unshift(m.publicTrade(side, type, price, amount, micro, micro));
            if (model.length > HISTORY_SIZE) model.pop();
            assert.deepEqual(m.latestTrade(), model[0]);
          }
          assert.deepEqual(m.history, model);
          assert.equal(m.history, m.history, "built once until the next trade");
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("BookSide", () => {
  it("keeps each side's prices sorted best first and their totals through any sets and removals", () => {
    const op = fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 3 }));
    fc.assert(
      fc.property(fc.boolean(), fc.array(op, { maxLength: 200 }), (descending, ops) => {
        const side = new BookSide(descending);
        const model = new Map<number, number>();
        for (const [price, total] of ops) {
          side.set(price, total);
          if (total === 0) model.delete(price);
          else model.set(price, total);
        }
        const want = [...model.keys()].sort((a, b) => (descending ? b - a : a - b));
        const got = Array.from({ length: side.size }, (_, i) => side.priceAt(i));
        assert.deepEqual(got, want);
        assert.deepEqual(new Map(got.map((p, i) => [p, side.totalAt(i)])), model);
        assert.equal(side.best(), want.length === 0 ? 0 : want[0]);
      }),
    );
  });
});

describe("PairMarket BBO and checksum (docs/API.md 7.6.1, 12.5)", () => {
  it("gives the checksums of docs/API.md 12.5: the empty book, then its four levels", () => {
    const m = new PairMarket("btc_usdt", 2, 6);
    assert.equal(m.checksumText(), "|");
    assert.equal(m.checksum(), 2343686810);
    // side, price (ticks), total (lots)
    m.applyLevels([1, 2501001, 500_000, 1, 2501100, 1_250_000, 0, 2500000, 2_000_000, 0, 2499950, 1_000]);
    assert.equal(m.checksumText(), "25010.01:0.5,25011:1.25|25000:2,24999.5:0.001");
    assert.equal(m.checksum(), 3621080957);
  });

  it("covers the best 25 levels of each side, in canonical decimals", () => {
    const m = new PairMarket("eth_btc", 6, 4);
    for (let i = 0; i < 30; i++) m.applyLevels([0, 1000 - i, 1 + i, 1, 2000 + i, 10_000]);
    const [asks, bids] = m.checksumText().split("|");
    assert.equal(asks.split(",").length, 25);
    assert.equal(bids.split(",").length, 25);
    assert.equal(asks.split(",")[0], "0.002:1");
    assert.equal(bids.split(",")[0], "0.001:0.0001");
    assert.equal(bids.split(",")[24], "0.000976:0.0025");
  });

  it("reports a change of the best bid or ask, price or amount, and nothing below it", () => {
    const m = new PairMarket("btc_usdt", 2, 6);
    assert.deepEqual(m.bbo(), { bid: 0, bidAmount: 0, ask: 0, askAmount: 0, seq: 0, eventTimeMicro: "0" });
    assert.equal(m.applyChange([1, 10100, 5], 1, 1000), true, "an ask appears");
    assert.equal(m.applyChange([1, 10200, 5], 2, 1001), false, "behind the best ask");
    assert.equal(m.applyChange([0, 9900, 7], 3, 1002), true, "a bid appears");
    assert.equal(m.applyChange([1, 10100, 8], 4, 1003), true, "the best ask's amount");
    assert.equal(m.applyChange([0, 9800, 1, 1, 10200, 0], 5, 1004), false, "below both");
    assert.equal(m.applyChange([1, 10100, 0, 0, 10100, 2], 6, 1005), true, "both at once");
    assert.deepEqual(m.bbo(), {
      bid: 101,
      bidAmount: 0.000002,
      ask: 0,
      askAmount: 0,
      seq: 6,
      eventTimeMicro: "1005",
    });
  });
});
