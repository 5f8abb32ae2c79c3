/**
 * The dead-man's switch (src/core/services/dead-man.ts, docs/API.md 8.7): one switch per user that
 * fires once its timeout passes without another call; re-arming moves it, 0 disarms it, and the
 * answer is the Unix ms it fires at (0 when disarmed). Fired as src/boot.ts fires it, a real core
 * cancels every open order of the user, on a halted pair too (the safety cancels do not ask the pair
 * status, docs/API.md 11).
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { NO_REQUEST } from "../../../src/core/command.ts";
import { HALTED } from "../../../src/core/pair-status.ts";
import { DeadMansSwitch } from "../../../src/core/services/dead-man.ts";
import { BUY, SELL } from "../../../src/protocol/pair/engine.ts";
import { tempDir } from "../../db/helpers.ts";
import { sleepUntil, waitFor } from "../../wait.ts";
import { BTC, placeResting, startCore, USDT } from "../core-fixture.ts";

/** A switch whose fires are listed in `fired`, by user. */
function recording() {
  const fired: number[] = [];
  return { fired, sw: new DeadMansSwitch((user) => fired.push(user)) };
}

describe("DeadMansSwitch", () => {
  it("answers the Unix ms it fires at: now plus the timeout", () => {
    const { sw } = recording();
    assert.equal(sw.arm(1, 30, 1_700_000_000_000), 1_700_000_000_000 + 30_000);
    assert.equal(sw.arm(2, 600, 5), 5 + 600_000, "600 s, the longest timeout");
    sw.clear();
  });

  it("answers 0 when disarmed, armed before or not", () => {
    const { sw } = recording();
    assert.equal(sw.arm(1, 0, 1_000), 0);
    sw.arm(1, 10, 1_000);
    assert.equal(sw.arm(1, 0, 2_000), 0);
  });

  it("fires once for the user after its timeout, and not before", async () => {
    const { fired, sw } = recording();
    const at = sw.arm(7, 0.2);
    assert.deepEqual(fired, [], "not before the timeout");
    await waitFor(() => fired.length > 0, { what: "the switch's fire" });
    assert.ok(Date.now() >= at - 5, `fired ${at - Date.now()} ms early`);
    // A second timeout's worth later it has had every chance to fire again.
    await sleepUntil(Date.now() + 200);
    assert.deepEqual(fired, [7], "once, for that user");
  });

  it("does not fire once disarmed", async () => {
    const { fired, sw } = recording();
    const at = sw.arm(7, 0.03);
    sw.arm(7, 0);
    // The disarmed timeout had its chance to fire.
    await sleepUntil(at + 100);
    assert.deepEqual(fired, []);
  });

  it("moves the deadline when re-armed: the first timeout no longer fires", async () => {
    const { fired, sw } = recording();
    const first = sw.arm(7, 0.05);
    const second = sw.arm(7, 0.4);
    // Past the first deadline, well before the second.
    await sleepUntil(first + 100);
    assert.deepEqual(fired, [], "the first timeout was replaced");
    await waitFor(() => fired.length > 0, { what: "the re-armed switch's fire" });
    assert.ok(Date.now() >= second - 5, "at the second deadline");
    assert.deepEqual(fired, [7]);
  });

  it("keeps one switch per user: disarming one leaves the others", async () => {
    const { fired, sw } = recording();
    sw.arm(1, 0.04);
    const at = sw.arm(2, 0.04);
    sw.arm(3, 0.04);
    sw.arm(2, 0);
    await waitFor(() => fired.length >= 2, { what: "users 1 and 3's fires" });
    await sleepUntil(at + 100);
    assert.deepEqual(fired.sort(), [1, 3]);
  });

  it("fires nothing after clear (shutdown disarms every switch)", async () => {
    const { fired, sw } = recording();
    sw.arm(1, 0.03);
    const at = sw.arm(2, 0.03);
    sw.clear();
    await sleepUntil(at + 100);
    assert.deepEqual(fired, []);
  });
});

describe("DeadMansSwitch on a real core", () => {
  const tmp = tempDir("dead-man");
  after(() => tmp.cleanup());

  it("cancels every open order of its user, on a halted pair too, and no one else's", async () => {
    const core = await startCore(`${tmp.dbPath}-1`);
    try {
      const { exchange, ledger } = core;
      ledger.deposit(1, USDT, 1_000_000n);
      ledger.deposit(1, BTC, 100n);
      ledger.deposit(2, USDT, 1_000_000n);
      const a = await placeResting(core, 1, BUY, 9_000, 10);
      const b = await placeResting(core, 1, SELL, 11_000, 5);
      const other = await placeResting(core, 2, BUY, 8_000, 10);
      core.statuses.set(0, HALTED);
      // As src/boot.ts fires it: a safety cancel-all over every pair that nobody waits for.
      const sw = new DeadMansSwitch((user) => exchange.cancelAll(user, -1, NO_REQUEST, 0, true));
      sw.arm(1, 0.05);
      await waitFor(() => exchange.openOrderIds(1, 0).length === 0, {
        what: "the cancel of user 1's orders",
      });
      assert.equal(exchange.ownOpenOrder(1, a.id), undefined);
      assert.equal(exchange.ownOpenOrder(1, b.id), undefined);
      assert.deepEqual(exchange.openOrderIds(2, 0), [other.id], "another user's order stays");
      // Their holds are released.
      await waitFor(() => ledger.reserved(1, USDT) === 0n && ledger.reserved(1, BTC) === 0n, {
        what: "the release of their holds",
      });
      assert.equal(ledger.available(1, USDT), 1_000_000n);
      assert.equal(ledger.available(1, BTC), 100n);
    } finally {
      await core.close();
    }
  });
});
