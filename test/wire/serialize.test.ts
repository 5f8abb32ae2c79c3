/**
 * The response serializers write some strings without JSON escaping (src/wire/schemas.ts `word`).
 * That is safe only for strings the server composes from characters JSON never escapes: these
 * tests pin which fields those are, check that what the server puts in them cannot hold anything
 * else, and that the OpenAPI document does not show the serializer's format.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { loadConfig } from "../../src/config/config-file.ts";
import { PairMarket } from "../../src/core/read-models/pair-market.ts";
import { orderView, userTradeView } from "../../src/core/views.ts";
import { buildOpenApi } from "../../src/documents/openapi.ts";
import { ROUTES } from "../../src/documents/openapi-routes.ts";
import { transferView } from "../../src/http/routes/transfers.ts";
import { formatDateTime } from "../../src/util/time.ts";
import * as schemas from "../../src/wire/schemas.ts";
import { serialize, streamSchemas } from "../../src/wire/schemas.ts";
import { TEST_CONFIG } from "../e2e/pairs.ts";

/** Names of the properties whose schema has the "unsafe" format, anywhere below `schema`. */
function unescapedFields(schema: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const s of schema) unescapedFields(s, out);
  else if (typeof schema === "object" && schema !== null) {
    const props = (schema as { properties?: Record<string, { format?: string }> }).properties;
    if (props !== undefined)
      for (const [k, v] of Object.entries(props)) if (v.format === "unsafe") out.add(k);
    for (const v of Object.values(schema)) unescapedFields(v, out);
  }
  return out;
}

/** Nothing JSON.stringify would escape, nor anything beyond printable ASCII. */
const NEEDS_NO_ESCAPE = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

describe("strings written without escaping", () => {
  test("are only the fields the server composes itself, never client text", () => {
    const all = new Set<string>();
    for (const s of Object.values(schemas)) unescapedFields(s, all);
    unescapedFields(streamSchemas, all);
    assert.deepEqual([...all].sort(), [
      "amount", // of a transfer (a decimal), not of an order (a number)
      "createTime",
      "currency",
      "directionType",
      "eventTimeMicro",
      "feeCurrency",
      "pairName",
      "time",
      "tradeTime",
      "tradeType",
      "triggerTime",
      "type",
      "updateTime",
    ]);
  });

  test("hold nothing that needs escaping, and the bodies parse back to the views", () => {
    const config = loadConfig("data/config.json");
    for (const p of config.pairs) {
      assert.match(p.name, NEEDS_NO_ESCAPE);
      assert.match(p.base, NEEDS_NO_ESCAPE);
      assert.match(p.quote, NEEDS_NO_ESCAPE);
      for (const micro of [0, 1_795_000_000_123_456, 4_102_444_799_999_999]) {
        for (const side of [0, 1] as const) {
          for (const type of [0, 1] as const) {
            const order = orderView(
              p,
              {
                id: 7,
                type,
                side,
                price: 12345,
                amount: 100,
                used: 50,
                cancelled: false,
                createMicro: micro,
                updateMicro: micro,
                flags: 0,
                clientOrderId: 'a"b\\c',
                execSeq: 3,
                executed: 12345n * 50n,
                stopPrice: 0,
                stopDirection: 0,
                triggerMicro: 0,
                cancelReason: 0,
                trailingDelta: 0,
                ocoId: 0,
              },
              true,
            );
            for (const k of ["pairName", "tradeType", "directionType", "createTime", "updateTime"] as const) {
              assert.match(String(order[k]), NEEDS_NO_ESCAPE, k);
            }
            // executedQuote travels as a JSON number with the view's exact digits.
            assert.deepEqual(
              JSON.parse(serialize.order(order)),
              JSON.parse(JSON.stringify({ ...order, executedQuote: Number(order.executedQuote) })),
            );
            const trade = userTradeView(p, {
              id: 9,
              side,
              type,
              price: 12345,
              amount: 100,
              timeMicro: micro,
              feeRate: 1000,
              execSeq: 4,
              orderId: 8,
              maker: side,
            });
            for (const k of ["pairName", "tradeType", "directionType", "tradeTime", "feeCurrency"] as const) {
              assert.match(String(trade[k]), NEEDS_NO_ESCAPE, k);
            }
            const market = new PairMarket(p.name, p.priceDecimals, p.amountDecimals);
            const pub = market.publicTrade(side, type, 12345, 100, micro, 9);
            assert.match(pub.eventTimeMicro, /^[0-9]+$/);
            assert.deepEqual(JSON.parse(serialize.history([pub])), [JSON.parse(JSON.stringify(pub))]);
          }
        }
      }
    }
    for (const currency of config.currencies.keys()) {
      for (const [amount, kind] of [
        ["123456789012345678901234567890", "deposit"],
        ["-1", "withdraw"],
      ] as const) {
        const t = transferView({ id: 3, currency, amount, kind, timeMicro: 1_795_000_000_123_456 }, config);
        for (const k of ["type", "currency", "amount", "time"] as const)
          assert.match(t[k], NEEDS_NO_ESCAPE, k);
        const page = { total: 1, items: [t] };
        assert.deepEqual(JSON.parse(serialize.transfersPage(page)), JSON.parse(JSON.stringify(page)));
      }
    }
    assert.match(formatDateTime(Date.now() * 1000), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  });

  test("a client's text is still escaped", () => {
    const config = loadConfig("data/config.json");
    const view = orderView(
      config.pairs[0],
      {
        id: 1,
        type: 0,
        side: 0,
        price: 1,
        amount: 1,
        used: 0,
        cancelled: false,
        createMicro: 0,
        updateMicro: 0,
        flags: 0,
        clientOrderId: 'a"b\\c',
        execSeq: 1,
        executed: 0n,
        stopPrice: 0,
        stopDirection: 0,
        triggerMicro: 0,
        cancelReason: 0,
        trailingDelta: 0,
        ocoId: 0,
      },
      true,
    );
    assert.equal(JSON.parse(serialize.order(view)).clientOrderId, 'a"b\\c');
  });

  test("an order's executedQuote is a JSON number with every digit, and a client's look-alike stays text", () => {
    const config = loadConfig("data/config.json");
    const btc = config.pairsByName.get("btc_usdt")!;
    // 9,999,999.99 usdt × 9,999.999999 btc at once: 19 significant digits, past any double.
    const executed = 999_999_999n * 9_999_999_999n;
    const cid = '"executedQuote":"1"';
    const view = orderView(
      btc,
      {
        id: 1,
        type: 0,
        side: 0,
        price: 999_999_999,
        amount: 9_999_999_999,
        used: 9_999_999_999,
        cancelled: false,
        createMicro: 0,
        updateMicro: 0,
        flags: 0,
        clientOrderId: cid,
        execSeq: 1,
        executed,
        stopPrice: 0,
        stopDirection: 0,
        triggerMicro: 0,
        cancelReason: 0,
        trailingDelta: 0,
        ocoId: 0,
      },
      true,
    );
    assert.equal(view.executedQuote, "99999999890.00000001");
    for (const body of [
      serialize.order(view),
      serialize.orderItem(view),
      serialize.orders([view, view]),
      serialize.ordersPage({ total: 2, items: [view, view] }),
      serialize.streamOrder({ stream: "user_orders:x", data: view, execSeq: 1 }),
    ]) {
      assert.equal(body.split('"executedQuote":99999999890.00000001').length - 1, body.includes("[") ? 2 : 1);
      assert.ok(body.includes(JSON.stringify(cid).slice(1, -1)), body);
      assert.doesNotThrow(() => JSON.parse(body));
    }
  });

  test("the OpenAPI document does not show how the server writes them", () => {
    assert.doesNotMatch(JSON.stringify(buildOpenApi(TEST_CONFIG, ROUTES)), /unsafe/);
  });
});
