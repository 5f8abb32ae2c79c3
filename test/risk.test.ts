/** What an order holds (src/risk.ts), and the most an amend may need, against brute force. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { BUY, SELL } from "../src/protocol/engine.ts";
import { amendHold, limitHold, pairUnits } from "../src/risk.ts";

// btc_usdt: priceDecimals 2, amountDecimals 6; btc at scale 6, usdt at 8.
const U = pairUnits({ priceDecimals: 2, amountDecimals: 6 }, 6, 8);

describe("risk", () => {
  it("holds price × lots of quote for a buy and the lots of base for a sell", () => {
    assert.deepEqual(U, { baseMul: 1n, quoteMul: 1n });
    const wide = pairUnits({ priceDecimals: 2, amountDecimals: 6 }, 9, 12);
    assert.deepEqual(wide, { baseMul: 1000n, quoteMul: 10_000n });
    assert.equal(limitHold(wide, BUY, 2_500_000, 10_000), 2_500_000n * 10_000n * 10_000n);
    assert.equal(limitHold(wide, SELL, 2_500_000, 10_000), 10_000n * 1000n);
  });

  it("holds for an amend the most the new order can need over every open amount a fill may leave", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(BUY, SELL),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: -60, max: 60 }),
        (side, price, open, newPrice, delta) => {
          let most = 0n;
          for (let left = 0; left <= open; left++) {
            if (left + delta <= 0) continue; // the worker refuses the amend: nothing is needed
            const extra = limitHold(U, side, newPrice, left + delta) - limitHold(U, side, price, left);
            if (extra > most) most = extra;
          }
          const hold = amendHold(U, side, price, open, newPrice, delta);
          assert.ok(hold >= most, `hold ${hold} < ${most}`);
          // Never more than the bound at the ends (0 or `open` lots left).
          const ends = [0, open].map(
            (left) => limitHold(U, side, newPrice, left + delta) - limitHold(U, side, price, left),
          );
          assert.equal(
            hold,
            [0n, ...ends].reduce((a, b) => (b > a ? b : a)),
          );
        },
      ),
      { numRuns: 2000, seed: 7 },
    );
  });
});
