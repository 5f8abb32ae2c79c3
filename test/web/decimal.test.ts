/**
 * The page's exact decimal arithmetic (web/src/decimal.ts): what it computes from money (the order
 * total, the spread, the 24 h change) comes out as exact decimal text, never through floating point.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { formatDecimal, multiply, parseDecimal, percentChange, subtract } from "../../web/src/decimal.ts";

const d = (text: string) => {
  const v = parseDecimal(text);
  assert.ok(v !== null, text);
  return v;
};

test("reads decimal texts as typed, and refuses what is not one", () => {
  assert.deepEqual(parseDecimal("25000.01"), { units: 2500001n, scale: 2 });
  assert.deepEqual(parseDecimal(" .5 "), { units: 5n, scale: 1 });
  assert.deepEqual(parseDecimal("7."), { units: 7n, scale: 0 });
  for (const bad of ["", ".", "-1", "1e3", "1.2.3", "0x10", "1,5", "Infinity"])
    assert.equal(parseDecimal(bad), null, bad);
});

test("multiplies exactly and writes the product without trailing zeros below the decimals asked for", () => {
  // In floating point 25000.01 × 0.3 is 7500.002999999999.
  assert.equal(formatDecimal(multiply(d("25000.01"), d("0.3")), 2), "7500.003");
  assert.equal(formatDecimal(multiply(d("25000"), d("0.3")), 2), "7500.00");
  assert.equal(formatDecimal(multiply(d("0.000001"), d("0.01")), 0), "0.00000001");
  assert.equal(formatDecimal(multiply(d("123456789012345678"), d("1000")), 0), "123456789012345678000");
});

test("subtracts at the larger scale", () => {
  assert.equal(formatDecimal(subtract(d("24999"), d("24000.5")), 2), "998.50");
  assert.equal(formatDecimal(subtract(d("0.1"), d("0.25")), 0), "-0.15");
});

test("gives the change in percent with two decimals, rounded half away from zero, signed", () => {
  assert.equal(percentChange(d("25000"), d("24000")), "-4.00%");
  assert.equal(percentChange(d("100"), d("100")), "+0.00%");
  assert.equal(percentChange(d("3"), d("4")), "+33.33%");
  assert.equal(percentChange(d("3"), d("2")), "-33.33%");
  assert.equal(percentChange(d("8"), d("8.0001")), "+0.00%");
  assert.equal(percentChange(d("200000"), d("200001")), "+0.00%");
  // A fall that rounds to nothing is "+0.00%", never "-0.00%".
  assert.equal(percentChange(d("200000"), d("199999")), "+0.00%");
  assert.equal(percentChange(d("1"), d("1.00005")), "+0.01%");
  assert.equal(percentChange(d("1"), d("0.99995")), "-0.01%");
  assert.equal(percentChange(d("0"), d("1")), null);
});
