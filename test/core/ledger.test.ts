import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Ledger } from "../../src/core/ledger.ts";

type Drained = [user: number, currency: string, available: bigint, reserved: bigint];

function drain(ledger: Ledger): Drained[] {
  const out: Drained[] = [];
  ledger.drainDirty((user, c, available, reserved) =>
    out.push([user, ledger.currencies[c], available, reserved]),
  );
  return out;
}

describe("Ledger.drainDirty", () => {
  it("reports each changed balance once, in the order it first changed, with its values now", () => {
    const ledger = new Ledger(["btc", "usdt"]);
    ledger.deposit(1, 1, 1000n);
    ledger.deposit(0, 0, 5n);
    assert.ok(ledger.reserve(1, 1, 400n));
    ledger.transfer(1, 0, 1, 100n);
    assert.deepEqual(drain(ledger), [
      [1, "usdt", 600n, 300n],
      [0, "btc", 5n, 0n],
      [0, "usdt", 100n, 0n],
    ]);
    assert.deepEqual(drain(ledger), [], "a drained balance is not reported again until it changes");
    ledger.release(1, 1, 300n);
    assert.deepEqual(drain(ledger), [[1, "usdt", 900n, 0n]]);
  });

  it("lists what the callback changes for the next drain", () => {
    const ledger = new Ledger(["btc"]);
    ledger.deposit(0, 0, 10n);
    ledger.deposit(1, 0, 10n);
    const seen: number[] = [];
    ledger.drainDirty((user) => {
      seen.push(user);
      if (user === 0) ledger.deposit(0, 0, 1n);
    });
    assert.deepEqual(seen, [0, 1]);
    assert.deepEqual(drain(ledger), [[0, "btc", 11n, 0n]]);
  });

  it("tracks users added after others changed, and balances marked by recovery", () => {
    const ledger = new Ledger(["btc", "eth", "usdt"]);
    ledger.deposit(0, 2, 1n);
    ledger.load(300, 1, 7n, 3n);
    ledger.markDirty(300, 1);
    ledger.deposit(299, 0, 2n);
    ledger.markDirty(300, 1);
    assert.deepEqual(drain(ledger), [
      [0, "usdt", 1n, 0n],
      [300, "eth", 7n, 3n],
      [299, "btc", 2n, 0n],
    ]);
  });
});

describe("Ledger.sum", () => {
  it("keeps each currency's total over users through loads, deposits, withdrawals and trades", () => {
    const ledger = new Ledger(["btc", "usdt"]);
    const big = 2n ** 126n;
    ledger.load(0, 1, big, 5n);
    ledger.deposit(1, 1, big - 6n);
    ledger.load(0, 1, big, 6n); // a load replaces: the total follows
    assert.equal(ledger.sum(1), 2n ** 127n);
    assert.ok(ledger.reserve(1, 1, 10n));
    ledger.transferWithFee(1, 0, 0, 1, 10n, 1n);
    ledger.release(0, 1, 6n);
    assert.ok(ledger.withdraw(0, 1, 7n));
    assert.equal(ledger.sum(1), 2n ** 127n - 7n);
    assert.equal(ledger.sum(0), 0n);
    assert.deepEqual(ledger.totals(), [ledger.sum(0), ledger.sum(1)]);
  });
});
