/**
 * The create-order shortcut (src/http/fast-order.ts) against its definition, the general path
 * (parseJsonBody, then validateOrder): over generated bodies, near-misses included, every order
 * the shortcut takes is exactly the one the general path makes of the same bytes, with no error.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { loadConfig } from "../../src/config/config-file.ts";
import { CREATE_FIELDS, type ValidOrder, validateOrder } from "../../src/entry/validate.ts";
import { fastOrderParser } from "../../src/http/fast-order.ts";
import { formatDecimal } from "../../src/util/numbers.ts";
import { parseJsonBody } from "../../src/wire/json-body.ts";

const config = loadConfig("data/config.json");
const fast = fastOrderParser(config);

/** The general path's order, or null when the body is not JSON or not an object. */
function general(text: string): ValidOrder | null {
  let body: unknown;
  try {
    body = parseJsonBody(text);
  } catch {
    return null;
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
  return validateOrder(body as Record<string, unknown>, config, CREATE_FIELDS);
}

const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9]{${min},${max}}$`));

/** Decimal texts around the valid ones: leading and trailing zeros, long runs, signs, exponents. */
const decimalText = fc.oneof(
  fc
    .tuple(digits(1, 9), fc.option(digits(1, 9), { nil: undefined }))
    .map(([a, b]) => (b === undefined ? a : `${a}.${b}`)),
  fc.tuple(digits(1, 3), digits(0, 8)).map(([a, b]) => `${a}.${b}`),
  fc.tuple(digits(0, 2), digits(1, 20)).map(([a, b]) => `${a}.${b}`),
  fc.constantFrom(
    "0",
    "00",
    "0.0",
    "01",
    "1.",
    ".5",
    "-1",
    "1e2",
    "1E-2",
    "1.5e3",
    "+1",
    "1..2",
    "",
    " 1",
    "0.100",
  ),
  fc.tuple(digits(1, 3), fc.integer({ min: 0, max: 20 })).map(([a, z]) => `${a}.${"0".repeat(z)}`),
);

/** A member value: decimals as strings or numbers, names of every kind, and other JSON values. */
const value = fc.oneof(
  decimalText.map((d) => `"${d}"`),
  decimalText,
  fc.constantFrom(...config.pairs.map((p) => `"${p.name}"`), '"BTC_USDT"', '"btc_usdt "', '"nope"', '""'),
  fc.constantFrom('"limit"', '"market"', '"Limit"', '"buy"', '"sell"', '"SELL"', '"li\\u006dit"'),
  fc.constantFrom('"abc-123_X"', '"has space"', `"${"x".repeat(37)}"`, '"é"', '"a\\"b"'),
  fc.constantFrom("true", "false", "null", "{}", "[]", '{"a":1}', "[1]"),
);

/** Member names: every one a create-order body may carry, and a few it may not. */
const name = fc.constantFrom(...CREATE_FIELDS, "x", "pair\\u004eame", "__proto__", "Amount");
const space = fc.constantFrom("", "", " ", "\n", "\t", "\r\n  ");

/** A body of the usual members with plausible values, in any order, sometimes with one changed. */
const plausible = fc
  .record({
    pair: fc.constantFrom(...config.pairs),
    type: fc.constantFrom("limit", "market"),
    side: fc.constantFrom("buy", "sell"),
    price: decimalText,
    amount: decimalText,
    quotePrice: fc.boolean(),
    quoteAmount: fc.boolean(),
    cid: fc.option(fc.stringMatching(/^[A-Za-z0-9_-]{1,38}$/), { nil: undefined }),
    order: fc.array(fc.nat(), { minLength: 7, maxLength: 7 }),
    extra: fc.option(fc.tuple(name, value), { nil: undefined }),
    drop: fc.option(fc.nat({ max: 6 }), { nil: undefined }),
    sp: space,
  })
  .map((r) => {
    const members: [string, string][] = [
      ["pairName", `"${r.pair.name}"`],
      ["tradeType", `"${r.type}"`],
      ["directionType", `"${r.side}"`],
      ["amount", r.quoteAmount ? `"${r.amount}"` : r.amount],
    ];
    if (r.type === "limit" || r.drop === 6) members.push(["price", r.quotePrice ? `"${r.price}"` : r.price]);
    if (r.cid !== undefined) members.push(["clientOrderId", `"${r.cid}"`]);
    if (r.extra !== undefined) members.push(r.extra);
    if (r.drop !== undefined && r.drop < members.length && r.drop !== 6) members.splice(r.drop, 1);
    const sorted = members.map((m, k) => [r.order[k] ?? 0, m] as const).sort((a, b) => a[0] - b[0]);
    return `${r.sp}{${sorted.map(([, [k, v]]) => `${r.sp}"${k}"${r.sp}:${r.sp}${v}`).join(",")}${r.sp}}${r.sp}`;
  });

/** A valid body: amount and price drawn within the pair's bounds, written as strings or numbers. */
const valid = fc
  .record({
    pair: fc.constantFrom(...config.pairs),
    market: fc.boolean(),
    side: fc.constantFrom("buy", "sell"),
    a: fc.double({ min: 0, max: 1, noNaN: true }),
    p: fc.double({ min: 0, max: 1, noNaN: true }),
    quote: fc.boolean(),
    sp: space,
  })
  .map((r) => {
    const span = (lo: bigint, hi: bigint, f: number) => lo + BigInt(Math.floor(Number(hi - lo) * f));
    const amount = formatDecimal(span(r.pair.minAmount, r.pair.maxAmount, r.a), r.pair.amountDecimals);
    const price = formatDecimal(span(1n, r.pair.maxPrice, r.p), r.pair.priceDecimals);
    const q = (d: string) => (r.quote ? `"${d}"` : d);
    const members = [
      `"pairName":"${r.pair.name}"`,
      `"tradeType":"${r.market ? "market" : "limit"}"`,
      `"directionType":"${r.side}"`,
      `"amount":${q(amount)}`,
      ...(r.market ? [] : [`"price":${q(price)}`]),
    ];
    return `{${members.join(`,${r.sp}`)}}`;
  });

/** Anything made of member-like pieces: unknown shapes, repeated members, broken syntax. */
const arbitrary = fc
  .array(fc.tuple(name, value, space), { maxLength: 8 })
  .chain((ms) =>
    fc
      .constantFrom(",", ",", ",", ";", ",,")
      .map((sep) => `{${ms.map(([k, v, s]) => `${s}"${k}"${s}:${v}`).join(sep)}}`),
  );

function check(text: string): "fast" | "general" {
  const got = fast(Buffer.from(text, "utf8"));
  if (got === null) return "general";
  const want = general(text);
  assert.ok(want !== null, `taken but not JSON for the general path: ${text}`);
  assert.deepEqual(want.errors, [], `taken but the general path refuses it: ${text}`);
  assert.deepEqual(got, want, text);
  return "fast";
}

describe("the create-order shortcut", () => {
  it("takes only bodies the general path accepts, as the same order (property)", () => {
    const taken = { fast: 0, general: 0 };
    fc.assert(
      fc.property(fc.oneof(valid, plausible, arbitrary), (text) => {
        taken[check(text)]++;
      }),
      { numRuns: 20_000 },
    );
    // Both paths are exercised: the generator is not all near-misses.
    assert.ok(taken.fast > 5000, `shortcut taken ${taken.fast} times`);
    assert.ok(taken.general > 5000, `general path ${taken.general} times`);
  });

  it("takes the bodies clients usually send", () => {
    for (const text of [
      '{"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":"10000.12","amount":"0.012345"}',
      '{"pairName":"eth_usdt","tradeType":"market","directionType":"sell","amount":"1.5"}',
      '{ "pairName": "eth_btc", "tradeType": "limit", "directionType": "sell", "price": 0.051234, "amount": 2 }',
      '{"amount":"3","price":"1.50","directionType":"buy","tradeType":"limit","pairName":"btc_usdt","clientOrderId":"mm-1"}',
    ])
      assert.equal(check(text), "fast", text);
  });

  it("leaves everything else to the general path", () => {
    for (const text of [
      '{"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":"1","amount":"1","nonce":5}',
      '{"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":"1","amount":"1","postOnly":true}',
      '{"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":"1","amount":"1","mmp":true}',
      '{"pairName":"btc_usdt","tradeType":"market","directionType":"buy","amount":"1","selfTradePrevention":"cancelBoth"}',
      '{"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":"1","amount":"1","amount":"2"}',
      '{"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":"0","amount":"1"}',
      '{"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":"1.001","amount":"1"}',
      '{"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":"1","amount":"100000"}',
      '{"pairName":"btc_usdt","tradeType":"market","directionType":"buy","price":"1","amount":"1"}',
      '{"pairName":"btc\\u005fusdt","tradeType":"limit","directionType":"buy","price":"1","amount":"1"}',
      '{"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":1e2,"amount":"1"}',
      '{"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":"1","amount":"1"} x',
      '\ufeff{"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":"1","amount":"1"}',
      "[]",
      "",
    ])
      assert.equal(check(text), "general", text);
  });
});
