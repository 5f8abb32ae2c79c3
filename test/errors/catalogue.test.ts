import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { errorField, errorMessage, errorName, errorStatus } from "../../src/errors/bodies.ts";
import {
  amountParseError,
  Code,
  ERROR_LIST,
  ERRORS,
  priceParseError,
  wireCode,
} from "../../src/errors/catalogue.ts";
import {
  ERR_DUPLICATE_ID,
  ERR_INSUFFICIENT_FUNDS,
  ERR_MMP_FROZEN,
  ERR_NO_LIQUIDITY,
  ERR_ORDER_NOT_FOUND,
  ERR_QUOTE_LEVELS,
} from "../../src/protocol/pair/engine.ts";
import { ParseError } from "../../src/util/numbers.ts";

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
      // Engine codes that only a caller bug produces are internal errors too.
      const callerBug = def.code === ERR_DUPLICATE_ID || def.code === ERR_QUOTE_LEVELS;
      if (def.field === "server") assert.ok(callerBug || def.code >= 500, `${def.code}`);
      // Validation: 2xx, and 6xx for the fields of the market-maker controls (docs/API.md 8).
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
    assert.equal(Code.MMP_FROZEN, ERR_MMP_FROZEN);
    assert.equal(errorStatus(ERR_MMP_FROZEN), 400);
    assert.equal(errorStatus(ERR_QUOTE_LEVELS), 500);
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
