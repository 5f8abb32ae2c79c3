/**
 * Mass quotes (src/core/quotes.ts, docs/API.md 8.12) through the core with real parts: R1 holds only
 * what the new quote needs beyond what the caller's open quote orders hold, a quote waits behind the
 * caller's quote in flight on the pair, refusals change nothing, kept levels keep their order, and
 * whatever the quote holds that its placed orders do not need is released at its end. Without fees
 * a lot is 1 btc unit and a tick × lot 1 usdt unit.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { CANCEL_ONLY, HALTED } from "../../src/core/pair-status.ts";
import { Code } from "../../src/errors/catalogue.ts";
import { BUY, SELL } from "../../src/protocol/pair/engine.ts";
import { tempDir } from "../db/helpers.ts";
import { BTC, core, place, placedIds, quote, USDT } from "./quote-helpers.ts";

describe("quotes", () => {
  const tmp = tempDir("quotes");
  after(() => tmp.cleanup());
  let n = 0;
  const file = () => `${tmp.dbPath}-${++n}`;

  it("holds only what a new quote needs beyond what the old quote holds, and gives the old holds to the new orders", async () => {
    const { exchange, ledger } = await core(file());
    ledger.deposit(0, USDT, 90_000n);
    ledger.deposit(0, BTC, 10n);
    const first = await quote(exchange, 0, [[9_000, 10]], [[11_000, 10]]);
    assert.equal(first.err, 0);
    assert.deepEqual(placedIds(first.result), [1, 2]);
    assert.equal(ledger.available(0, USDT), 0n);
    // docs/API.md 8.12: the new quote fits in the available balance plus what the old one holds.
    ledger.deposit(0, USDT, 1_000n);
    const second = await quote(exchange, 0, [[9_100, 10]], [[11_100, 10]]);
    assert.equal(second.err, 0);
    assert.deepEqual(second.result!.cancelled, [1, 2]);
    assert.deepEqual(placedIds(second.result), [3, 4]);
    assert.equal(ledger.reserved(0, USDT), 91_000n);
    assert.equal(ledger.available(0, USDT), 0n);
    assert.equal(ledger.reserved(0, BTC), 10n);
    assert.equal(ledger.available(0, BTC), 0n);
    assert.deepEqual(exchange.openOrderIds(0, 0), [3, 4]);
  });

  it("refuses a quote that needs more than the available balance and the old quote's holds, changing nothing", async () => {
    const { exchange, ledger } = await core(file());
    ledger.deposit(0, USDT, 90_000n);
    ledger.deposit(0, BTC, 10n);
    await quote(exchange, 0, [[9_000, 10]], [[11_000, 10]]);
    // The asks' 2 more lots fit in the balance; the bids' 1_000 more do not: the whole quote goes.
    ledger.deposit(0, BTC, 2n);
    const refused = await quote(exchange, 0, [[9_100, 10]], [[11_100, 12]]);
    assert.equal(refused.err, Code.INSUFFICIENT_FUNDS);
    assert.equal(refused.result, null);
    assert.equal(ledger.reserved(0, USDT), 90_000n);
    assert.equal(ledger.available(0, USDT), 0n);
    assert.equal(ledger.reserved(0, BTC), 10n);
    assert.equal(ledger.available(0, BTC), 2n);
    assert.deepEqual(exchange.openOrderIds(0, 0), [1, 2]);
  });

  it("runs a quote sent while the caller's quote is in flight on the pair after it, crediting the orders it placed", async () => {
    const { exchange, ledger } = await core(file());
    ledger.deposit(0, USDT, 90_000n);
    // Both in one tick: judged at once, the second would find the balance held and no open order
    // to credit; quotes of one user on one pair run one after the other (docs/API.md 8.12).
    const first = quote(exchange, 0, [[9_000, 10]], []);
    const second = quote(exchange, 0, [[8_900, 10]], []);
    const [a, b] = await Promise.all([first, second]);
    assert.equal(a.err, 0);
    assert.deepEqual(placedIds(a.result), [1]);
    assert.equal(b.err, 0);
    assert.deepEqual(b.result!.cancelled, [1]);
    assert.deepEqual(placedIds(b.result), [2]);
    assert.equal(ledger.reserved(0, USDT), 89_000n);
    assert.equal(ledger.available(0, USDT), 1_000n);
  });

  it("refuses a quote with levels on a cancel-only pair but accepts a pull, and refuses both on a halted pair", async () => {
    const { exchange, ledger, statuses } = await core(file());
    ledger.deposit(0, USDT, 90_000n);
    await quote(exchange, 0, [[9_000, 10]], []);
    statuses.set(0, CANCEL_ONLY);
    const change = await quote(exchange, 0, [[8_000, 10]], []);
    assert.equal(change.err, Code.PAIR_CANCEL_ONLY);
    assert.equal(ledger.reserved(0, USDT), 90_000n);
    statuses.set(0, HALTED);
    assert.equal((await quote(exchange, 0, [], [])).err, Code.PAIR_HALTED);
    assert.deepEqual(exchange.openOrderIds(0, 0), [1]);
    statuses.set(0, CANCEL_ONLY);
    const pull = await quote(exchange, 0, [], []);
    assert.equal(pull.err, 0);
    assert.deepEqual(pull.result, { cancelled: [1], placed: [] });
    assert.equal(ledger.reserved(0, USDT), 0n);
    assert.equal(ledger.available(0, USDT), 90_000n);
  });

  it("refuses a quote of a session that ended, holding nothing", async () => {
    const { exchange, ledger } = await core(file());
    ledger.deposit(0, USDT, 90_000n);
    // docs/API.md 8.9: once a session ends its orders are cancelled; a quote under its tag after
    // that would leave orders nobody cancels.
    exchange.cancelSessionOrders(7);
    const refused = await quote(exchange, 0, [[9_000, 10]], [], 7);
    assert.equal(refused.err, Code.SESSION_ENDED);
    assert.equal(ledger.reserved(0, USDT), 0n);
    assert.equal(ledger.available(0, USDT), 90_000n);
    assert.deepEqual(exchange.openOrderIds(0, 0), []);
  });

  it("keeps the open quote order a level repeats, reports it as it stands and does not cancel it", async () => {
    const { exchange, ledger } = await core(file());
    ledger.deposit(0, USDT, 200_000n);
    const first = await quote(
      exchange,
      0,
      [
        [9_000, 10],
        [8_900, 5],
      ],
      [],
    );
    assert.deepEqual(placedIds(first.result), [1, 2]);
    const second = await quote(
      exchange,
      0,
      [
        [9_000, 10],
        [8_800, 5],
      ],
      [],
    );
    assert.equal(second.err, 0);
    assert.deepEqual(second.result!.cancelled, [2]);
    // Every level has its id (3, 4) as the quote enters the ring; the kept level's goes unused.
    assert.deepEqual(placedIds(second.result), [1, 4]);
    // Order 1 keeps its 90_000; order 4 holds 44_000.
    assert.equal(ledger.reserved(0, USDT), 134_000n);
    assert.equal(ledger.available(0, USDT), 66_000n);
    assert.deepEqual(exchange.openOrderIds(0, 0), [1, 4]);
  });

  it("releases at its end what a level that would take liquidity held, and a pull releases every hold", async () => {
    const { exchange, ledger } = await core(file());
    ledger.deposit(1, BTC, 5n);
    ledger.deposit(0, USDT, 200_000n);
    ledger.deposit(0, BTC, 10n);
    assert.equal((await place(exchange, 1, SELL, 9_500, 5)).err, 0);
    // The bid at 95.00 reaches user 1's ask: not placed (docs/API.md 8.12), its hold goes back.
    const q = await quote(
      exchange,
      0,
      [
        [9_500, 10],
        [9_000, 10],
      ],
      [[11_000, 10]],
    );
    assert.equal(q.err, 0);
    assert.deepEqual(placedIds(q.result), [`error ${Code.WOULD_TAKE_LIQUIDITY}`, 3, 4]);
    assert.equal(ledger.reserved(0, USDT), 90_000n);
    assert.equal(ledger.available(0, USDT), 110_000n);
    assert.equal(ledger.reserved(0, BTC), 10n);
    const pull = await quote(exchange, 0, [], []);
    assert.deepEqual(pull.result, { cancelled: [3, 4], placed: [] });
    assert.equal(ledger.reserved(0, USDT), 0n);
    assert.equal(ledger.available(0, USDT), 200_000n);
    assert.equal(ledger.reserved(0, BTC), 0n);
    assert.equal(ledger.available(0, BTC), 10n);
    // User 1's ask was never touched.
    assert.equal(ledger.reserved(1, BTC), 5n);
  });
  it("answers a quote with levels from a user frozen by MMP with MMP_FROZEN and releases its hold, while a pull still goes", async () => {
    const { exchange, ledger } = await core(file());
    ledger.deposit(0, BTC, 10n);
    ledger.deposit(0, USDT, 90_000n);
    ledger.deposit(1, USDT, 50_000n);
    await new Promise<void>((resolve) =>
      assert.equal(
        exchange.mmp.set(0, 0, { intervalSeconds: 10, qtyLimit: 5, frozenSeconds: 0 }, resolve, Code.BUSY),
        0,
      ),
    );
    await quote(exchange, 0, [], [[10_000, 5]]);
    // docs/API.md 8.10: the 5 lots filled reach the limit, the caller is frozen until a reset.
    assert.equal((await place(exchange, 1, BUY, 10_000, 5)).err, 0);
    const frozen = await quote(exchange, 0, [[9_000, 10]], [[11_000, 5]]);
    assert.equal(frozen.err, Code.MMP_FROZEN);
    assert.equal(ledger.reserved(0, USDT), 0n);
    assert.equal(ledger.available(0, USDT), 90_000n + 50_000n);
    assert.equal(ledger.reserved(0, BTC), 0n);
    assert.equal(ledger.available(0, BTC), 5n);
    // docs/API.md 8.12: a pull is always allowed.
    assert.deepEqual((await quote(exchange, 0, [], [])).result, { cancelled: [], placed: [] });
  });
});
