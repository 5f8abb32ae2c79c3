/** What an order holds (src/core/risk.ts), and the most an amend may need, against brute force. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Ledger } from "../../src/core/ledger.ts";
import { amendHold, fillTotals, limitHold, pairUnits, settleFill } from "../../src/core/risk.ts";
import { BUY, SELL } from "../../src/protocol/pair/engine.ts";

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

  it("replays a fill into the totals exactly as settling it moved them, fees included", () => {
    // Recovery (fillTotals) and settlement (settleFill) write the same legs twice: they must agree.
    const BASE = 0;
    const QUOTE = 1;
    const [SELLER, BUYER, FEES] = [0, 1, 2];
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 0, max: 40 }),
        fc.constantFrom(0n, 1000n, 2500n),
        fc.constantFrom(0n, 500n, 1000n),
        fc.boolean(),
        fc.boolean(),
        (price, qty, improvement, makerFee, takerFee, buyerIsTaker, buyerIsLimit) => {
          // Scales with room for 10^-6 fee rates (config.ts ledgerScale: 6 more than the pair needs).
          const units = pairUnits({ priceDecimals: 2, amountDecimals: 6 }, 12, 14);
          const p = {
            ...units,
            base: BASE,
            quote: QUOTE,
            hasFees: makerFee !== 0n || takerFee !== 0n,
            makerFee,
            takerFee,
          };
          const ledger = new Ledger(["btc", "usdt"]);
          const limit = price + improvement;
          const sellerHold = limitHold(p, SELL, price, qty);
          const buyerHold = buyerIsLimit ? limitHold(p, BUY, limit, qty) : limitHold(p, BUY, price, qty);
          ledger.deposit(SELLER, BASE, sellerHold);
          ledger.deposit(BUYER, QUOTE, buyerHold);
          ledger.deposit(FEES, BASE, 0n);
          assert.ok(ledger.reserve(SELLER, BASE, sellerHold));
          assert.ok(ledger.reserve(BUYER, QUOTE, buyerHold));
          const total = (u: number, c: number) => ledger.available(u, c) + ledger.reserved(u, c);
          const before = [SELLER, BUYER, FEES].map((u) => [total(u, BASE), total(u, QUOTE)]);
          settleFill(
            ledger,
            p,
            FEES,
            { user: BUYER, type: buyerIsLimit ? 0 : 1, price: limit, budget: buyerHold },
            { user: SELLER, type: 0, price, budget: 0n },
            buyerIsTaker,
            price,
            qty,
          );
          const replayed = before.map((row) => [...row]);
          fillTotals(
            p,
            BUYER,
            SELLER,
            FEES,
            buyerIsTaker ? takerFee : makerFee,
            buyerIsTaker ? makerFee : takerFee,
            price,
            qty,
            (u, c, amount) => {
              replayed[u][c] += amount;
            },
          );
          const settled = [SELLER, BUYER, FEES].map((u) => [total(u, BASE), total(u, QUOTE)]);
          assert.deepEqual(replayed, settled);
        },
      ),
    );
  });
});
