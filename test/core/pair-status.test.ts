/**
 * Pair status (src/core/pair-status.ts, docs/API.md 9 and 11): `trading`, `cancelOnly` or
 * `halted`; creates and amends go on only while trading, cancels on every pair that is not halted.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CANCEL_ONLY,
  HALTED,
  PAIR_STATUS_NAMES,
  PairStatuses,
  pairStatusKey,
  pairStatusOf,
  TRADING,
} from "../../src/core/pair-status.ts";
import { Code } from "../../src/errors/catalogue.ts";

describe("pair status names", () => {
  it("numbers the wire names trading 0, cancelOnly 1, halted 2, as the meta rows store them", () => {
    assert.equal(pairStatusOf("trading"), TRADING);
    assert.equal(pairStatusOf("cancelOnly"), CANCEL_ONLY);
    assert.equal(pairStatusOf("halted"), HALTED);
    assert.deepEqual([TRADING, CANCEL_ONLY, HALTED], [0, 1, 2]);
    for (const name of PAIR_STATUS_NAMES) assert.equal(PAIR_STATUS_NAMES[pairStatusOf(name)], name);
  });

  it("knows no other name, whatever its case or type", () => {
    for (const v of [
      "Trading",
      "cancel_only",
      "HALTED",
      "",
      " halted",
      0,
      1,
      null,
      undefined,
      {},
      ["halted"],
    ])
      assert.equal(pairStatusOf(v), -1, `${JSON.stringify(v)}`);
  });

  it("keeps a pair's status under the meta key pair_status:<pair>", () => {
    assert.equal(pairStatusKey("btc_usdt"), "pair_status:btc_usdt");
    assert.notEqual(pairStatusKey("eth_usdt"), pairStatusKey("btc_usdt"));
  });
});

describe("PairStatuses", () => {
  it("has every pair trading until set", () => {
    const s = new PairStatuses();
    for (const pair of [0, 1, 65_535]) {
      assert.equal(s.get(pair), TRADING);
      assert.equal(s.refuseChange(pair), 0);
      assert.equal(s.refuseCancel(pair), 0);
    }
  });

  it("refuses creates and amends on a cancel-only pair but lets cancels through", () => {
    const s = new PairStatuses();
    s.set(1, CANCEL_ONLY);
    assert.equal(s.refuseChange(1), Code.PAIR_CANCEL_ONLY);
    assert.equal(s.refuseCancel(1), 0);
    assert.equal(s.refuseChange(0), 0, "another pair is not touched");
  });

  it("refuses creates, amends and cancels on a halted pair", () => {
    const s = new PairStatuses();
    s.set(2, HALTED);
    assert.equal(s.refuseChange(2), Code.PAIR_HALTED);
    assert.equal(s.refuseCancel(2), Code.PAIR_HALTED);
    assert.equal(s.get(0), TRADING, "a pair below it, never set, is trading");
    assert.equal(s.get(1), TRADING);
  });

  it("lets everything through again once the pair is back to trading", () => {
    const s = new PairStatuses();
    s.set(0, HALTED);
    s.set(0, TRADING);
    assert.equal(s.refuseChange(0), 0);
    assert.equal(s.refuseCancel(0), 0);
  });

  it("refuses with two distinct catalogue codes", () => {
    assert.ok(Code.PAIR_CANCEL_ONLY > 0 && Code.PAIR_HALTED > 0);
    assert.notEqual(Code.PAIR_CANCEL_ONLY, Code.PAIR_HALTED);
  });
});
