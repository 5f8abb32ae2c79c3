import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  amountParseError,
  Code,
  ERROR_LIST,
  ERRORS,
  errorBody,
  errorField,
  errorMessage,
  errorName,
  errorStatus,
  multiErrorBody,
  pickLanguage,
  priceParseError,
  wireCode,
} from "../src/errors.ts";
import { ParseError } from "../src/numbers.ts";
import {
  ERR_DUPLICATE_ID,
  ERR_INSUFFICIENT_FUNDS,
  ERR_NO_LIQUIDITY,
  ERR_ORDER_NOT_FOUND,
} from "../src/protocol/engine.ts";

const STATUSES = new Set([400, 401, 403, 404, 405, 413, 414, 415, 426, 429, 431, 500, 503]);
const CYRILLIC = /[а-яё]/i;

describe("error catalogue", () => {
  it("gives every message one stable upper-snake wire code, distinct messages distinct codes", () => {
    const byName = new Map<string, (typeof ERROR_LIST)[number]>();
    for (const def of ERROR_LIST) {
      const name = wireCode(def);
      assert.match(name, /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/, `${def.code}`);
      assert.equal(errorName(def.code), name);
      const seen = byName.get(name);
      if (seen !== undefined) {
        // A shared code is only allowed for the same message (the internal error).
        assert.deepEqual(
          [seen.status, seen.field, seen.en, seen.ru],
          [def.status, def.field, def.en, def.ru],
        );
      } else byName.set(name, def);
    }
    assert.equal(wireCode(ERRORS.INSUFFICIENT_FUNDS), "INSUFFICIENT_FUNDS");
    assert.equal(wireCode(ERRORS.ORDER_ALREADY_CANCELLED), "ORDER_ALREADY_CANCELLED");
    assert.equal(errorName(Code.DUPLICATE_ORDER_ID), "INTERNAL");
    // Every key is its own code unless it names one explicitly.
    for (const [key, def] of Object.entries(ERRORS)) {
      if (!("name" in def)) assert.equal(wireCode(def), key);
    }
  });

  it("has unique codes", () => {
    const codes = ERROR_LIST.map((def) => def.code);
    assert.equal(new Set(codes).size, codes.length);
  });

  it("keeps every code inside the range of its kind", () => {
    for (const def of ERROR_LIST) {
      assert.ok(def.code >= 101 && def.code <= 699, `${def.code}`);
      if (def.field === "auth") assert.ok(def.code >= 300 && def.code < 400, `${def.code}`);
      if (def.field === "server") assert.ok(def.code === ERR_DUPLICATE_ID || def.code >= 500, `${def.code}`);
      // Validation: 2xx, and 6xx for the fields of the market-maker controls (CONTRACT 8).
      if (def.status === 400 && def.code >= 200) assert.ok(def.code < 300 || def.code >= 600, `${def.code}`);
      if (def.code >= 600) assert.equal(def.status, 400, `${def.code}`);
    }
  });

  it("reuses the matching engine's numbers", () => {
    assert.equal(Code.NO_LIQUIDITY, ERR_NO_LIQUIDITY);
    assert.equal(Code.INSUFFICIENT_FUNDS, ERR_INSUFFICIENT_FUNDS);
    assert.equal(Code.ORDER_NOT_FOUND, ERR_ORDER_NOT_FOUND);
    assert.equal(Code.DUPLICATE_ORDER_ID, ERR_DUPLICATE_ID);
    assert.equal(errorStatus(ERR_DUPLICATE_ID), 500);
  });

  it("gives every code an English and a Russian message and a valid status", () => {
    for (const def of ERROR_LIST) {
      assert.ok(STATUSES.has(def.status), `${def.code} status ${def.status}`);
      assert.ok(def.en.length > 0 && !CYRILLIC.test(def.en), `${def.code} en`);
      assert.ok(CYRILLIC.test(def.ru), `${def.code} ru`);
      assert.equal(errorStatus(def.code), def.status);
      assert.equal(errorField(def.code), def.field);
      assert.equal(errorMessage(def.code, "en"), def.en);
      assert.equal(errorMessage(def.code, "ru"), def.ru);
    }
  });

  it("covers the statuses and keys the contract names", () => {
    const expect: Array<[number, number, string]> = [
      [Code.INSUFFICIENT_FUNDS, 400, "amount"],
      [Code.NO_LIQUIDITY, 400, "amount"],
      [Code.ORDER_NOT_FOUND, 400, "orderId"],
      [Code.ORDER_ALREADY_CANCELLED, 400, "orderId"],
      [Code.ORDER_ALREADY_EXECUTED, 400, "orderId"],
      [Code.PAIR_UNKNOWN, 400, "pairName"],
      [Code.PAIR_UNKNOWN_IN_PATH, 404, "pairName"],
      [Code.UNKNOWN_PATH, 404, "path"],
      [Code.METHOD_NOT_ALLOWED, 405, "path"],
      [Code.BODY_TOO_LARGE, 413, "body"],
      [Code.UNSUPPORTED_MEDIA_TYPE, 415, "body"],
      [Code.BODY_NOT_JSON, 400, "body"],
      [Code.BODY_NOT_OBJECT, 400, "body"],
      [Code.AUTH_SIGNATURE_INVALID, 401, "auth"],
      [Code.AUTH_NONCE_REPLAY, 401, "auth"],
      [Code.AUTH_ADMIN_INVALID, 401, "auth"],
      [Code.AUTH_FORBIDDEN_CHANNEL, 403, "auth"],
      [Code.RATE_LIMITED, 429, "rate"],
      [Code.INTERNAL, 500, "server"],
      [Code.BUSY, 503, "server"],
      [Code.PERIOD_UNKNOWN, 400, "period"],
      [Code.PAGE_SIZE_OUT_OF_RANGE, 400, "pageSize"],
      [Code.STREAMS_TOO_MANY, 400, "streams"],
      [Code.NONCE_INVALID, 400, "nonce"],
    ];
    for (const [code, status, field] of expect) {
      assert.equal(errorStatus(code), status, `${code}`);
      assert.equal(errorField(code), field, `${code}`);
    }
    const fields = new Set(ERROR_LIST.map((def) => def.field));
    for (const field of [
      "tradeType",
      "directionType",
      "price",
      "amount",
      "orderId",
      "page",
      "pageSize",
      "period",
      "limit",
      "from",
      "to",
      "uid",
      "currency",
      "nonce",
      "apiToken",
      "streams",
    ]) {
      assert.ok(fields.has(field), field);
    }
  });

  it("maps each decimal parse failure of price and amount to its own code", () => {
    const cases: Array<[ParseError, string, string]> = [
      [ParseError.NotNumber, "PRICE_NOT_NUMBER", "AMOUNT_NOT_NUMBER"],
      [ParseError.Malformed, "PRICE_MALFORMED", "AMOUNT_MALFORMED"],
      [ParseError.Zero, "PRICE_ZERO", "AMOUNT_ZERO"],
      [ParseError.Negative, "PRICE_NEGATIVE", "AMOUNT_NEGATIVE"],
      [ParseError.TooManyDecimals, "PRICE_TOO_MANY_DECIMALS", "AMOUNT_TOO_MANY_DECIMALS"],
      [ParseError.TooLarge, "PRICE_TOO_LARGE", "AMOUNT_TOO_LARGE"],
    ];
    for (const [error, price, amount] of cases) {
      assert.equal(priceParseError(error), ERRORS[price as keyof typeof ERRORS].code);
      assert.equal(amountParseError(error), ERRORS[amount as keyof typeof ERRORS].code);
      assert.equal(errorField(priceParseError(error)), "price");
      assert.equal(errorField(amountParseError(error)), "amount");
    }
  });
});

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

  it("stays valid JSON whatever the extra text (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ERROR_LIST.map((def) => def.code)),
        fc.string({ unit: "binary" }),
        (code, extra) => {
          const parsed = JSON.parse(errorBody(code, "en", extra)) as { errors: Record<string, string[]> };
          assert.deepEqual(parsed.errors[errorField(code)], [`${errorMessage(code, "en")} (${extra})`]);
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
            const message = errorMessage(code, lang) + (extra === undefined ? "" : ` (${extra})`);
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

describe("pickLanguage", () => {
  const cases: Array<[string | undefined, "en" | "ru"]> = [
    [undefined, "en"],
    ["", "en"],
    ["en", "en"],
    ["ru", "ru"],
    ["RU", "ru"],
    ["ru-RU,ru;q=0.9,en;q=0.8", "ru"],
    ["en,ru;q=0.5", "en"],
    ["en-US,en;q=0.9,ru;q=0.8", "en"],
    ["ru;q=0.5,en;q=0.9", "en"],
    ["en;q=0.5,ru;q=0.9", "ru"],
    ["de,ru;q=0.5", "ru"],
    ["de,fr", "en"],
    ["ru, en", "ru"],
    ["en, ru", "en"],
    ["ru;q=0", "en"],
    ["ru;q=0, en;q=0", "en"],
    ["ru;q=abc", "en"],
    ["ru;q=2", "en"],
    [" ru-RU ; q=1.0 , en ; q=0.999", "ru"],
    ["*", "en"],
    ["rus", "en"],
    ["run,en;q=0.1", "en"],
    ["ru-RU", "ru"],
  ];
  for (const [header, lang] of cases) {
    it(`picks ${lang} for ${JSON.stringify(header)}`, () => {
      assert.equal(pickLanguage(header), lang);
    });
  }

  it("never throws on arbitrary headers (property)", () => {
    fc.assert(
      fc.property(fc.string(), (header) => {
        const lang = pickLanguage(header);
        assert.ok(lang === "en" || lang === "ru");
      }),
    );
  });
});
