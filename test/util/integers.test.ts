/** docs/API.md 1: the one reading of an integer a client sends (src/util/integers.ts). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { LosslessNumber } from "lossless-json";
import { MAX_NONCE, readInteger, readSmallInteger } from "../../src/util/integers.ts";

describe("readInteger", () => {
  test("takes a JSON integer, a long JSON integer kept exact, or a string of digits", () => {
    assert.equal(readInteger(30, 0n, 600n), 30n);
    assert.equal(readInteger("30", 0n, 600n), 30n);
    assert.equal(readInteger("030", 0n, 600n), 30n);
    assert.equal(readInteger(new LosslessNumber("18446744073709551615"), 0n, MAX_NONCE), MAX_NONCE);
    assert.equal(readInteger(-0, 0n, 600n), 0n);
  });

  test("refuses a string that is not digits only, a sign included, on an unsigned field", () => {
    for (const text of ["", " 30", "30 ", "1.5", "3e1", "+1", "-1", "-0", "-00", "0x10"]) {
      assert.equal(readInteger(text, 0n, 600n), null, JSON.stringify(text));
      assert.equal(readSmallInteger(text, 0, 600), -1, JSON.stringify(text));
    }
  });

  test("refuses values outside the range and text of more than 40 digits", () => {
    assert.equal(readInteger(601, 0n, 600n), null);
    assert.equal(readInteger(new LosslessNumber("18446744073709551616"), 0n, MAX_NONCE), null);
    assert.equal(readInteger(`${"0".repeat(40)}1`, 0n, 600n), null);
  });
});
