/**
 * Request bodies keep every number exactly as written (src/wire/json-body.ts): whichever path
 * parses a body, the decimal read from a number is the decimal of its source text.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ParseError, parseDecimal } from "../../src/util/numbers.ts";
import { DuplicateKeyError, LosslessNumber, parseJsonBody } from "../../src/wire/json-body.ts";
import { isJsonMediaType } from "../../src/wire/request.ts";

/** A JSON number literal: sign, integer part, fraction, exponent, each optional where JSON allows. */
const jsonNumber = fc
  .tuple(
    fc.boolean(),
    fc.oneof(fc.constant("0"), fc.stringMatching(/^[1-9][0-9]{0,20}$/)),
    fc.option(fc.stringMatching(/^[0-9]{1,20}$/), { nil: undefined }),
    fc.option(fc.tuple(fc.constantFrom("e", "E", "e+", "e-", "E-"), fc.integer({ min: 0, max: 30 })), {
      nil: undefined,
    }),
  )
  .map(
    ([neg, int, frac, exp]) =>
      `${neg ? "-" : ""}${int}${frac === undefined ? "" : `.${frac}`}${exp === undefined ? "" : `${exp[0]}${exp[1]}`}`,
  );

/** A JSON value with its text written by hand, and whether an object in it repeats a key. */
interface Written {
  text: string;
  repeats: boolean;
}

/** Keys that collide often, hold colons, quotes and backslashes, or name prototype properties. */
const jsonKey = fc.constantFrom("a", "b", "a:b", ':"', "\\", "__proto__", "constructor", "");

/** A key as JSON may write it: plainly, or with its first character as a \u escape. */
const keyText = (key: string, escaped: boolean): string =>
  escaped && key !== ""
    ? `"\\u${key.charCodeAt(0).toString(16).padStart(4, "0")}${JSON.stringify(key.slice(1)).slice(1)}`
    : JSON.stringify(key);

/** Whitespace JSON allows between tokens. */
const space = fc.constantFrom("", " ", "\n\t ");

const { value: writtenValue } = fc.letrec<{ value: Written }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc
      .oneof(
        jsonNumber,
        fc.constantFrom("true", "false", "null", '"x:y"', '"\\":"', '"{\\"a\\":1,\\"a\\":2}"'),
      )
      .map((text) => ({ text, repeats: false })),
    fc.array(tie("value"), { maxLength: 4 }).map((items) => ({
      text: `[${items.map((i) => i.text).join(",")}]`,
      repeats: items.some((i) => i.repeats),
    })),
    fc.array(fc.tuple(jsonKey, fc.boolean(), space, tie("value")), { maxLength: 5 }).map((members) => {
      const keys = members.map(([k]) => k);
      return {
        text: `{${members.map(([k, esc, ws, v]) => `${ws}${keyText(k, esc)}${ws}:${ws}${v.text}`).join(",")}}`,
        repeats: new Set(keys).size !== keys.length || members.some(([, , , v]) => v.repeats),
      };
    }),
  ),
}));

describe("parseJsonBody", () => {
  it("refuses a text in which an object repeats a key, at any depth, whatever the values (property)", () => {
    fc.assert(
      fc.property(writtenValue, ({ text, repeats }) => {
        let refused = false;
        try {
          parseJsonBody(text);
        } catch (err) {
          assert.ok(err instanceof DuplicateKeyError, `${text}: ${err}`);
          refused = true;
        }
        assert.equal(refused, repeats, text);
      }),
      { numRuns: 3000 },
    );
  });

  it("tells a repeated key from a malformed text: a text that is not JSON is a SyntaxError, not a repeat", () => {
    for (const text of ['{"a":1,"a":}', '{"a":1,"a":1', '{"a":1e400,"a"}', "{nope"]) {
      assert.throws(
        () => parseJsonBody(text),
        (err) => err instanceof SyntaxError && !(err instanceof DuplicateKeyError),
        text,
      );
    }
    assert.deepEqual(parseJsonBody('{"a":"1:2","b":{"a":1},"c":[{"a":1},{"a":1}]}'), {
      a: "1:2",
      b: { a: 1 },
      c: [{ a: 1 }, { a: 1 }],
    });
  });

  it("reads every number as the decimal its text writes, at any scale (property)", () => {
    fc.assert(
      fc.property(jsonNumber, fc.integer({ min: 0, max: 18 }), fc.boolean(), (text, scale, padded) => {
        // Other fields around it, as a real body has them.
        const body = padded ? `{"pairName":"btc_usdt", "amount": ${text},"n":12}` : `{"amount":${text}}`;
        const parsed = parseJsonBody(body) as { amount: unknown };
        assert.deepEqual(
          parseDecimal(parsed.amount, scale),
          parseDecimal(new LosslessNumber(text), scale),
          `${text} at scale ${scale}`,
        );
      }),
      { numRuns: 3000 },
    );
  });

  it("keeps the text of numbers a double would round, and parses the rest as JSON.parse does", () => {
    const exact = parseJsonBody('{"a":1.0000000000000001,"b":"12345678901234567","c":1e2,"d":0.5}') as Record<
      string,
      unknown
    >;
    assert.ok(exact.a instanceof LosslessNumber);
    assert.equal((exact.a as LosslessNumber).value, "1.0000000000000001");
    assert.equal(exact.b, "12345678901234567");
    assert.equal(exact.d, 0.5);
    const plain = '{"pairName":"btc_usdt","tradeType":"limit","price":"10000.12","amount":0.012345}';
    assert.deepEqual(parseJsonBody(plain), JSON.parse(plain));
    assert.throws(() => parseJsonBody('{"a":'), SyntaxError);
  });

  it("judges a number with an exponent out of range by its digits: zero, negative, then its size", () => {
    const cases: [string, number][] = [
      ["0e22", ParseError.Zero],
      ["-0.0E-99", ParseError.Zero],
      ["-1e22", ParseError.Negative],
      ["-5e-70", ParseError.Negative],
      ["1e22", ParseError.TooLarge],
      ["1.5e99999999999999999999", ParseError.TooLarge],
      ["5e-70", ParseError.TooManyDecimals],
      ["1e-99999999999999999999", ParseError.TooManyDecimals],
    ];
    for (const [text, error] of cases) {
      const { amount } = parseJsonBody(`{"amount":${text}}`) as { amount: unknown };
      assert.equal(parseDecimal(amount, 8), error, text);
      assert.equal(parseDecimal(new LosslessNumber(text), 8), error, `${text} (lossless)`);
    }
  });

  it("takes a body as JSON by its media type alone: parameters and case do not matter", () => {
    for (const t of [
      "application/json",
      "application/json; charset=utf-8",
      " Application/JSON ",
      "APPLICATION/JSON;x=1",
    ])
      assert.equal(isJsonMediaType(t), true, t);
    for (const t of ["", "text/plain", "application/jsonx", "application/x-www-form-urlencoded", "json"])
      assert.equal(isJsonMediaType(t), false, t);
  });
});
