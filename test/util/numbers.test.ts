import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  expandExponent,
  floorToDouble,
  formatDecimal,
  MAX_INTEGER_DIGITS,
  mulDivRoundHalfUp,
  ParseError,
  parseDecimal,
  pow10,
  toJsonNumber,
} from "../../src/util/numbers.ts";

const scale = fc.integer({ min: 0, max: 8 });
/** A positive value with at most 15 significant digits at its scale. */
const exactValue = fc.bigInt({ min: 1n, max: 10n ** 15n - 1n });
/** The plain decimal text shape formatDecimal promises. */
const PLAIN = /^-?(0|[1-9]\d*)(\.\d*[1-9])?$/;

describe("parseDecimal", () => {
  it("reads decimal strings exactly at the requested scale", () => {
    assert.equal(parseDecimal("0.015", 3), 15n);
    assert.equal(parseDecimal("0.015", 8), 1_500_000n);
    assert.equal(parseDecimal("10", 0), 10n);
    assert.equal(parseDecimal("10", 2), 1000n);
    assert.equal(parseDecimal("123456.78", 2), 12_345_678n);
    assert.equal(parseDecimal("0.00000001", 8), 1n);
  });

  it("accepts trailing zeros beyond the allowed decimals", () => {
    assert.equal(parseDecimal("1.500", 2), 150n);
    assert.equal(parseDecimal("1.0", 0), 1n);
    assert.equal(parseDecimal("2.000000000000000000000", 0), 2n);
  });

  it("accepts leading zeros without counting them as integer digits", () => {
    assert.equal(parseDecimal("0000000000000000000000000001", 2), 100n);
    assert.equal(parseDecimal("007.5", 1), 75n);
  });

  it("reads JSON numbers through their shortest text, expanding exponents exactly", () => {
    assert.equal(parseDecimal(0.015, 3), 15n);
    assert.equal(parseDecimal(10, 2), 1000n);
    assert.equal(parseDecimal(1e-7, 7), 1n);
    assert.equal(parseDecimal(1.5e-7, 8), 15n);
    assert.equal(parseDecimal(1e-8, 8), 1n);
    assert.equal(parseDecimal(1e20, 0), 10n ** 20n);
    assert.equal(parseDecimal(123.45, 2), 12_345n);
  });

  it("refuses a float artefact instead of rounding it", () => {
    assert.equal(parseDecimal(0.1 + 0.2, 2), ParseError.TooManyDecimals);
    assert.equal(parseDecimal(0.1 + 0.2, 8), ParseError.TooManyDecimals);
  });

  it("answers NotNumber for values that are neither numbers nor strings", () => {
    for (const value of [null, undefined, true, {}, [], [1], 10n]) {
      assert.equal(parseDecimal(value, 2), ParseError.NotNumber, String(value));
    }
  });

  it("answers Malformed for strings that are not plain decimals and for non-finite numbers", () => {
    for (const value of [
      "",
      " 1",
      "1 ",
      "+1",
      ".5",
      "5.",
      "1e-3",
      "1E3",
      "0x10",
      "1,5",
      "1.2.3",
      "-",
      "-.5",
      "١",
      "Infinity",
      "NaN",
    ]) {
      assert.equal(parseDecimal(value, 8), ParseError.Malformed, JSON.stringify(value));
    }
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      assert.equal(parseDecimal(value, 8), ParseError.Malformed, String(value));
    }
  });

  it("answers Zero for any spelling of zero", () => {
    for (const value of [0, -0, "0", "0.000", "000", "-0", "-0.00"]) {
      assert.equal(parseDecimal(value, 2), ParseError.Zero, String(value));
    }
  });

  it("answers Negative for values below zero, even with too many decimals", () => {
    for (const value of [-1, -0.5, -1e-7, -1e25, "-1", "-0.001"]) {
      assert.equal(parseDecimal(value, 2), ParseError.Negative, String(value));
    }
  });

  it("answers TooManyDecimals when a non-zero digit lies beyond the scale", () => {
    assert.equal(parseDecimal("1.23", 0), ParseError.TooManyDecimals);
    assert.equal(parseDecimal("0.001", 2), ParseError.TooManyDecimals);
    assert.equal(parseDecimal("0.0010", 2), ParseError.TooManyDecimals);
    assert.equal(parseDecimal(1e-9, 8), ParseError.TooManyDecimals);
  });

  it("answers TooLarge past MAX_INTEGER_DIGITS integer digits, and for numbers printed with a positive exponent", () => {
    assert.equal(MAX_INTEGER_DIGITS, 21);
    assert.equal(parseDecimal("9".repeat(21), 0), 10n ** 21n - 1n);
    assert.equal(parseDecimal(`1${"0".repeat(21)}`, 0), ParseError.TooLarge);
    assert.equal(parseDecimal(1e21, 0), ParseError.TooLarge);
    assert.equal(parseDecimal(1.5e300, 8), ParseError.TooLarge);
    assert.equal(parseDecimal(Number.MAX_VALUE, 0), ParseError.TooLarge);
  });

  it("round-trips every formatted value up to the integer digit limit (property)", () => {
    const scaleAndValue = scale.chain((s) =>
      fc.tuple(fc.constant(s), fc.bigInt({ min: 1n, max: 10n ** BigInt(MAX_INTEGER_DIGITS + s) - 1n })),
    );
    fc.assert(
      fc.property(scaleAndValue, ([s, value]) => {
        assert.equal(parseDecimal(formatDecimal(value, s), s), value);
      }),
    );
  });

  it("round-trips JSON numbers produced by toJsonNumber for up to 15 significant digits (property)", () => {
    fc.assert(
      fc.property(scale, exactValue, (s, value) => {
        assert.equal(parseDecimal(toJsonNumber(value, s), s), value);
        // and through JSON text, as a client would send it back
        assert.equal(parseDecimal(JSON.parse(JSON.stringify({ v: toJsonNumber(value, s) })).v, s), value);
      }),
    );
  });

  it("reads every double exactly as its shortest text says, fast path or not (property)", () => {
    fc.assert(
      fc.property(fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }), scale, (n, s) => {
        const text = String(n);
        const expected = n >= 1e21 ? ParseError.TooLarge : parseDecimal(expandExponent(text), s);
        assert.equal(parseDecimal(n, s), expected, `${text} at ${s}`);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 17n }), scale, scale, (v, s, d) => {
        // decimals with few digits, the shape clients send, read at another scale
        const n = Number(formatDecimal(v, s));
        assert.equal(parseDecimal(n, d), parseDecimal(expandExponent(String(n)), d), `${n} at ${d}`);
      }),
      { numRuns: 2000 },
    );
  });

  it("never rounds: a value with one more decimal than allowed is refused (property)", () => {
    fc.assert(
      fc.property(scale, exactValue, fc.integer({ min: 1, max: 9 }), (s, value, digit) => {
        const [int, frac = ""] = formatDecimal(value, s).split(".");
        const text = `${int}.${frac.padEnd(s, "0")}${digit}`;
        assert.equal(parseDecimal(text, s), ParseError.TooManyDecimals, text);
      }),
    );
  });
});

describe("expandExponent", () => {
  it("rewrites JavaScript exponent notation as plain decimals", () => {
    assert.equal(expandExponent("1e-7"), "0.0000001");
    assert.equal(expandExponent("1.5e-7"), "0.00000015");
    assert.equal(expandExponent("-2.25e-8"), "-0.0000000225");
    assert.equal(expandExponent("1e+21"), "1000000000000000000000");
    assert.equal(expandExponent("1.2345e+25"), "12345000000000000000000000");
    assert.equal(expandExponent("1.2345e+2"), "123.45");
    assert.equal(expandExponent("123.45"), "123.45");
  });

  it("agrees with String for every double printed with an exponent (property)", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        const text = String(n);
        if (!text.includes("e")) return;
        assert.equal(Number(expandExponent(text)), n, text);
        assert.match(expandExponent(text), /^-?\d+(\.\d+)?$/);
      }),
    );
  });
});

describe("formatDecimal", () => {
  it("prints plain decimals with trailing zeros trimmed", () => {
    assert.equal(formatDecimal(0n, 8), "0");
    assert.equal(formatDecimal(0n, 0), "0");
    assert.equal(formatDecimal(1n, 8), "0.00000001");
    assert.equal(formatDecimal(150n, 2), "1.5");
    assert.equal(formatDecimal(100n, 2), "1");
    assert.equal(formatDecimal(12_345n, 0), "12345");
    assert.equal(formatDecimal(-1n, 2), "-0.01");
    assert.equal(formatDecimal(-12_300n, 2), "-123");
    assert.equal(formatDecimal(10n ** 30n, 8), `1${"0".repeat(22)}`);
  });

  it("always produces the plain shape: no exponent, no trailing zeros, no leading zeros (property)", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }),
        fc.integer({ min: 0, max: 20 }),
        (v, s) => {
          assert.match(formatDecimal(v, s), PLAIN);
        },
      ),
    );
  });
});

describe("toJsonNumber", () => {
  it("gives numbers whose text is the exact decimal", () => {
    assert.equal(toJsonNumber(30n, 2), 0.3);
    assert.equal(String(toJsonNumber(30n, 2)), "0.3");
    assert.equal(toJsonNumber(1_500_000n, 6), 1.5);
    assert.equal(toJsonNumber(0n, 8), 0);
    assert.equal(toJsonNumber(-1n, 2), -0.01);
    assert.equal(toJsonNumber(999_999_999_999_999n, 2), 9_999_999_999_999.99);
  });

  it("prints tiny amounts in exponent form with the exact value, which JSON allows", () => {
    // Our smallest amount is 10^-8 (amountDecimals <= 8). JSON.stringify uses exponent form below
    // 10^-6; the text is still a JSON number whose value is exactly the decimal.
    assert.equal(JSON.stringify(toJsonNumber(1n, 8)), "1e-8");
    assert.equal(JSON.stringify(toJsonNumber(15n, 8)), "1.5e-7");
    assert.equal(JSON.stringify(toJsonNumber(1n, 6)), "0.000001");
    assert.equal(expandExponent(JSON.stringify(toJsonNumber(1n, 8))), "0.00000001");
  });

  it("prints back exactly for every value of up to 15 significant digits (property)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }), scale, (v, s) => {
        const n = toJsonNumber(v, s);
        assert.equal(expandExponent(String(n)), formatDecimal(v, s));
        assert.equal(expandExponent(JSON.stringify(n)), formatDecimal(v, s));
      }),
    );
  });

  it("equals parsing the decimal text, so the division shortcut is exact (property)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n - 1n }), fc.integer({ min: 0, max: 22 }), (v, s) => {
        assert.equal(toJsonNumber(v, s), Number(formatDecimal(v, s)));
      }),
    );
  });

  it("never produces an inexact float for values beyond 15 digits: exact or a RangeError (property)", () => {
    let threw = 0;
    fc.assert(
      fc.property(fc.bigInt({ min: 10n ** 15n, max: 10n ** 20n }), scale, (v, s) => {
        let n: number;
        try {
          n = toJsonNumber(v, s);
        } catch (error) {
          assert.ok(error instanceof RangeError);
          threw++;
          return;
        }
        assert.equal(expandExponent(String(n)), formatDecimal(v, s));
      }),
      { numRuns: 500 },
    );
    assert.ok(threw > 0, "expected some 16-21 digit values to be refused");
    assert.throws(() => toJsonNumber(1_234_567_890_123_456_789n, 2), RangeError);
    assert.equal(toJsonNumber(12_345_678_901_234_567n, 2), 123_456_789_012_345.67); // 17 digits that happen to print back
    assert.equal(toJsonNumber(2n ** 53n, 0), 2 ** 53);
  });
});

describe("pow10", () => {
  it("gives exact powers of ten, cached or computed", () => {
    assert.equal(pow10(0), 1n);
    assert.equal(pow10(8), 100_000_000n);
    assert.equal(pow10(64), 10n ** 64n);
    assert.equal(pow10(100), 10n ** 100n);
    assert.equal(pow10(3), pow10(3));
  });

  it("refuses negative and fractional exponents", () => {
    assert.throws(() => pow10(-1), RangeError);
    assert.throws(() => pow10(1.5), RangeError);
  });
});

describe("mulDivRoundHalfUp", () => {
  it("rounds halves up and everything else to nearest", () => {
    assert.equal(mulDivRoundHalfUp(5n, 1n, 2n), 3n); // 2.5 -> 3
    assert.equal(mulDivRoundHalfUp(7n, 1n, 2n), 4n); // 3.5 -> 4
    assert.equal(mulDivRoundHalfUp(1n, 1n, 3n), 0n); // 0.33 -> 0
    assert.equal(mulDivRoundHalfUp(2n, 1n, 3n), 1n); // 0.67 -> 1
    assert.equal(mulDivRoundHalfUp(10n, 3n, 5n), 6n); // exact
    assert.equal(mulDivRoundHalfUp(0n, 3n, 5n), 0n);
  });

  it("computes a market order's average price", () => {
    // 1 lot at 10001 ticks and 2 lots at 10000 ticks: 30001 / 3 = 10000.33 -> 10000
    assert.equal(mulDivRoundHalfUp(10_001n + 2n * 10_000n, 1n, 3n), 10_000n);
    // 1 lot at 3 and 1 lot at 4: 3.5 -> 4
    assert.equal(mulDivRoundHalfUp(7n, 1n, 2n), 4n);
  });

  it("refuses negative operands and a non-positive divisor", () => {
    assert.throws(() => mulDivRoundHalfUp(-1n, 1n, 1n), RangeError);
    assert.throws(() => mulDivRoundHalfUp(1n, -1n, 1n), RangeError);
    assert.throws(() => mulDivRoundHalfUp(1n, 1n, 0n), RangeError);
  });

  it("is the nearest integer with halves rounded up (property)", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 30n }),
        fc.bigInt({ min: 0n, max: 10n ** 10n }),
        fc.bigInt({ min: 1n, max: 10n ** 20n }),
        (a, b, d) => {
          const r = mulDivRoundHalfUp(a, b, d);
          // r - 1/2 <= ab/d < r + 1/2
          assert.ok((2n * r - 1n) * d <= 2n * a * b);
          assert.ok(2n * a * b < (2n * r + 1n) * d);
        },
      ),
    );
  });
});

describe("floorToDouble", () => {
  it("keeps every integer below 2^53 and every integer a double holds", () => {
    for (const v of [0n, 1n, 2n ** 52n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 54n + 4n, 2n ** 127n]) {
      assert.equal(floorToDouble(v), v);
    }
  });

  it("rounds down to the double below where Number() would round up", () => {
    assert.equal(Number(2n ** 53n + 1n), 2 ** 53); // down already
    assert.equal(floorToDouble(2n ** 53n + 1n), 2n ** 53n);
    assert.equal(Number(2n ** 54n + 3n), 2 ** 54 + 4); // up
    assert.equal(floorToDouble(2n ** 54n + 3n), 2n ** 54n);
    // Just below a power of two the doubles are twice as dense: 2^127 − 1 → 2^127 − 2^74.
    assert.equal(floorToDouble(2n ** 127n - 1n), 2n ** 127n - 2n ** 74n);
  });

  it("answers the largest double-held integer at most the value (property)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 128n }), (v) => {
        const f = floorToDouble(v);
        assert.ok(f <= v, `${f} > ${v}`);
        assert.equal(BigInt(Number(f)), f, "a double holds it");
        // The next double above it is above the value.
        const next = Number(f) === 0 ? 5e-324 : Number(f) * (1 + 2 ** -52);
        assert.ok(next >= Number(f) && BigInt(Math.ceil(next)) > v, `${next} <= ${v}`);
      }),
    );
  });
});
