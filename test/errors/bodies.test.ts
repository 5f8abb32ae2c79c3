import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  errorBody,
  errorDetail,
  errorField,
  errorMessage,
  errorName,
  errorStatus,
  multiErrorBody,
} from "../../src/errors/bodies.ts";
import { Code, ERROR_LIST, wireCode } from "../../src/errors/catalogue.ts";

describe("errorBody", () => {
  it("is the exact contract shape for every code and language", () => {
    for (const def of ERROR_LIST) {
      for (const lang of ["en", "ru"] as const) {
        const body = errorBody(def.code, lang);
        assert.deepEqual(JSON.parse(body), {
          errors: { [def.field]: [def[lang]] },
          codes: { [def.field]: [wireCode(def)] },
        });
        assert.equal(errorBody(def.code, lang), body);
      }
    }
  });

  it("answers the contract's example cases", () => {
    assert.equal(
      errorBody(Code.ORDER_ALREADY_CANCELLED, "en"),
      '{"errors":{"orderId":["Order already cancelled"]},"codes":{"orderId":["ORDER_ALREADY_CANCELLED"]}}',
    );
    assert.equal(
      errorBody(Code.INSUFFICIENT_FUNDS, "ru"),
      '{"errors":{"amount":["Недостаточно средств на балансе"]},"codes":{"amount":["INSUFFICIENT_FUNDS"]}}',
    );
  });

  it("appends an escaped extra to the message", () => {
    const body = errorBody(Code.AMOUNT_BELOW_MIN, "en", "0.000001");
    assert.deepEqual(JSON.parse(body), {
      errors: { amount: ["Amount is below the minimum for this pair (0.000001)"] },
      codes: { amount: ["AMOUNT_BELOW_MIN"] },
    });
    const hostile = 'a"b\\c\n</script>\u2028';
    const parsed = JSON.parse(errorBody(Code.UNKNOWN_PATH, "ru", hostile));
    assert.deepEqual(parsed, {
      errors: { path: [`Неизвестный путь (${hostile})`] },
      codes: { path: ["UNKNOWN_PATH"] },
    });
  });

  it("words the extra by the code's detail in each language: how many decimals a field takes", () => {
    assert.deepEqual(JSON.parse(errorBody(Code.AMOUNT_TOO_MANY_DECIMALS, "en", "6")).errors, {
      amount: ["Amount has too many decimal places (at most 6)"],
    });
    assert.deepEqual(JSON.parse(errorBody(Code.PRICE_TOO_MANY_DECIMALS, "ru", "2")).errors, {
      price: ["Слишком много знаков после запятой в цене (не больше 2)"],
    });
    assert.equal(errorDetail(Code.AMOUNT_BELOW_MIN, "ru", "0.1"), "0.1");
  });

  it("stays valid JSON whatever the extra text (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ERROR_LIST.map((def) => def.code)),
        fc.string({ unit: "binary" }),
        (code, extra) => {
          const parsed = JSON.parse(errorBody(code, "en", extra)) as { errors: Record<string, string[]> };
          assert.deepEqual(parsed.errors[errorField(code)], [
            `${errorMessage(code, "en")} (${errorDetail(code, "en", extra)})`,
          ]);
        },
      ),
    );
  });

  it("answers an unknown code as an internal error rather than throwing", () => {
    assert.equal(errorStatus(999), 500);
    assert.equal(errorStatus(-1), 500);
    assert.equal(errorStatus(150), 500);
    assert.equal(errorBody(150, "en"), errorBody(Code.INTERNAL, "en"));
  });
});

describe("multiErrorBody", () => {
  it("groups messages under their fields in order of appearance", () => {
    const body = multiErrorBody(
      [
        [Code.PRICE_ZERO],
        [Code.AMOUNT_REQUIRED],
        [Code.PRICE_ABOVE_MAX, "10000000"],
        [Code.TRADE_TYPE_INVALID],
      ],
      "en",
    );
    assert.equal(
      body,
      '{"errors":{"price":["Price must be greater than zero","Price is above the maximum for this pair (10000000)"],' +
        '"amount":["Amount is required"],"tradeType":["Trade type must be limit or market"]},' +
        '"codes":{"price":["PRICE_ZERO","PRICE_ABOVE_MAX"],"amount":["AMOUNT_REQUIRED"],"tradeType":["TRADE_TYPE_INVALID"]}}',
    );
    assert.deepEqual(Object.keys(JSON.parse(body).errors), ["price", "amount", "tradeType"]);
  });

  it("equals errorBody for a single entry", () => {
    assert.equal(multiErrorBody([[Code.PAGE_INVALID]], "ru"), errorBody(Code.PAGE_INVALID, "ru"));
    assert.equal(multiErrorBody([[Code.PAGE_INVALID, "x"]], "ru"), errorBody(Code.PAGE_INVALID, "ru", "x"));
  });

  it("is valid JSON of the contract shape for any entries (property)", () => {
    const codes = ERROR_LIST.map((def) => def.code);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...codes), fc.option(fc.string(), { nil: undefined })), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.constantFrom("en" as const, "ru" as const),
        (entries, lang) => {
          const parsed = JSON.parse(
            multiErrorBody(
              entries.map(([code, extra]) => (extra === undefined ? [code] : [code, extra])),
              lang,
            ),
          ) as { errors: Record<string, string[]> };
          const expected: Record<string, string[]> = {};
          const codes: Record<string, string[]> = {};
          for (const [code, extra] of entries) {
            const message =
              errorMessage(code, lang) + (extra === undefined ? "" : ` (${errorDetail(code, lang, extra)})`);
            const field = errorField(code);
            expected[field] = [...(expected[field] ?? []), message];
            codes[field] = [...(codes[field] ?? []), errorName(code)];
          }
          assert.deepEqual(parsed, { errors: expected, codes });
        },
      ),
    );
  });
});
