/**
 * The AsyncAPI document (issue 29): valid AsyncAPI 3.0 by @asyncapi/parser, with a sample session
 * call table as with none; every stream channel kind and session message described; served at
 * /1.0/asyncapi.json as built from the config and listed in the OpenAPI document; and the message
 * check of the e2e tests (test/e2e/asyncapi-check.ts) accepts what a real server sends and
 * really rejects what does not match.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Parser } from "@asyncapi/parser";
import { buildAsyncApi, type SessionCallSpec } from "../../src/http/asyncapi.ts";
import { buildOpenApi } from "../../src/http/openapi.ts";
import { requestSchemas } from "../../src/http/request-schemas.ts";
import { ROUTES } from "../../src/http/route-table.ts";
import { orderSchema, orderWithUpdateSchema } from "../../src/http/schemas.ts";
import { asyncApi, asyncApiChecker } from "../e2e/asyncapi-check.ts";
import { limit, market, TEST_CONFIG, TestServer } from "../e2e/harness.ts";

type Json = Record<string, unknown>;

/** A small call table shaped like the session's (method, params schema, result schema). */
const SAMPLE_CALLS: SessionCallSpec[] = [
  {
    method: "ping",
    params: { type: "object", properties: {}, additionalProperties: false },
    result: {
      type: "object",
      properties: { serverTime: { type: "integer" } },
      required: ["serverTime"],
      additionalProperties: false,
    },
  },
  { method: "order.create", params: requestSchemas(TEST_CONFIG).createOrder, result: orderWithUpdateSchema },
  {
    method: "orders.open",
    params: {
      type: "object",
      properties: { pairName: { type: "string" } },
      required: ["pairName"],
      additionalProperties: false,
    },
    result: { type: "array", items: orderSchema },
  },
];

/** Errors and warnings of @asyncapi/parser (severity 0 and 1; 2 and 3 are information and hints). */
async function problems(doc: object): Promise<string[]> {
  const { document, diagnostics } = await new Parser().parse(JSON.stringify(doc));
  const out = diagnostics
    .filter((d) => d.severity <= 1)
    .map((d) => `${d.code} at ${d.path.join(".")}: ${d.message}`);
  if (document === undefined) out.push("the parser returned no document");
  return out;
}

describe("the AsyncAPI document", () => {
  test("is valid AsyncAPI 3.0 by @asyncapi/parser without a session call and with a sample table", async () => {
    for (const calls of [[], SAMPLE_CALLS]) {
      const doc = buildAsyncApi(TEST_CONFIG, calls);
      assert.equal(doc.asyncapi, "3.0.0");
      assert.deepEqual(await problems(doc), []);
    }
  });

  test("the parser really reports a broken document", async () => {
    const doc = buildAsyncApi(TEST_CONFIG, SAMPLE_CALLS);
    const operations = doc.operations as Record<string, Json>;
    operations.ping.channel = { $ref: "#/channels/nowhere" };
    assert.notDeepEqual(await problems(doc), []);
  });

  test("describes every stream channel kind and every session call, answer, error answer and report", () => {
    const doc = buildAsyncApi(TEST_CONFIG, SAMPLE_CALLS);
    const channels = doc.channels as Record<string, Json>;
    assert.deepEqual(
      Object.values(channels).map((c) => c.address),
      ["exchanges", "orders:{pair}", "history:{pair}", "user_orders:{uid}", "user_history:{uid}", null],
    );
    assert.deepEqual(
      ((channels.orders.parameters as Json).pair as Json).enum,
      TEST_CONFIG.pairs.map((p) => p.name),
    );
    const messages = Object.keys((doc.components as Json).messages as Json);
    for (const name of [
      "exchanges.snapshot",
      "exchanges.update",
      "orders.snapshot",
      "orders.update",
      "history.update",
      "user_orders.update",
      "user_history.update",
      "session.hello",
      "session.frameError",
      "session.report.order",
      "session.report.trade",
    ]) {
      assert.ok(messages.includes(name), name);
    }
    const operations = doc.operations as Record<string, Json>;
    for (const call of SAMPLE_CALLS) {
      for (const part of ["call", "answer", "error"]) assert.ok(messages.includes(`${call.method}.${part}`));
      const op = operations[call.method];
      assert.equal(op.action, "receive");
      assert.deepEqual(
        ((op.reply as Json).messages as Json[]).map((m) => m.$ref),
        [
          `#/channels/session/messages/${call.method}.answer`,
          `#/channels/session/messages/${call.method}.error`,
        ],
      );
    }
    // The same schema objects as the OpenAPI document, under the same names.
    const schemas = (doc.components as Json).schemas as Json;
    const openSchemas = (buildOpenApi(TEST_CONFIG, ROUTES).components as Json).schemas as Json;
    for (const name of [
      "StreamOrdersMessage",
      "Order",
      "UserTrade",
      "OrderWithUpdate",
      "CreateOrderRequest",
    ]) {
      assert.deepEqual(schemas[name], openSchemas[name], name);
    }
    const createCall = (messages.includes("order.create.call") &&
      ((doc.components as Json).messages as Record<string, Json>)["order.create.call"]) as Json;
    assert.deepEqual(((createCall.payload as Json).properties as Json).params, {
      $ref: "#/components/schemas/CreateOrderRequest",
    });
  });

  test("the session check accepts the frames the contract describes and refuses others", () => {
    const check = asyncApiChecker(SAMPLE_CALLS);
    const hello = { event: "hello", challenge: "ab".repeat(32), serverTime: 1_700_000_000_000 };
    assert.equal(check.sessionMismatch(hello), null);
    assert.notEqual(check.sessionMismatch({ ...hello, challenge: "xyz" }), null);
    assert.equal(check.answerMismatch("ping", { id: 7, status: 200, result: { serverTime: 1 } }), null);
    assert.equal(check.answerMismatch("ping", { id: "a-1", status: 200, result: { serverTime: 1 } }), null);
    assert.notEqual(check.answerMismatch("ping", { id: 7, status: 200, result: {} }), null);
    assert.notEqual(
      check.answerMismatch("ping", { id: 7, status: 200, result: { serverTime: 1 }, x: 1 }),
      null,
    );
    const error = { id: 7, status: 400, errors: { params: ["bad"] }, codes: { params: ["UNKNOWN_FIELD"] } };
    assert.equal(check.answerMismatch("orders.open", error), null);
    assert.equal(
      check.sessionMismatch({ ...error, id: null, errors: { body: ["x"] }, codes: { body: ["X"] } }),
      null,
    );
    assert.equal(check.sessionMismatch({ ...error, status: 429, retryAfterMs: 120 }), null);
    assert.notEqual(check.sessionMismatch({ ...error, status: 200 }), null);
    assert.notEqual(check.answerMismatch("orders.open", { id: 1, status: 200, result: [{ id: 1 }] }), null);
    assert.notEqual(check.answerMismatch("order.nowhere", error), null);
    assert.notEqual(check.sessionMismatch({ event: "order", data: { id: 1 } }), null);
    assert.notEqual(check.sessionMismatch({ event: "fill", data: {} }), null);
  });

  test("the stream check refuses unknown channels, unknown pairs and wrong data", () => {
    const book = { buy: [], sell: [], seq: 3 };
    assert.equal(asyncApi.streamMismatch({ stream: "orders:btc_usdt", data: book }), null);
    assert.notEqual(asyncApi.streamMismatch({ stream: "orders:btc_usdt", data: { buy: [] } }), null);
    assert.notEqual(asyncApi.streamMismatch({ stream: "orders:nope_usdt", data: book }), null);
    assert.notEqual(asyncApi.streamMismatch({ stream: "orders", data: book }), null);
    assert.notEqual(asyncApi.streamMismatch({ stream: "bbo:btc_usdt", data: book }), null);
    assert.notEqual(asyncApi.streamMismatch({ stream: "history:btc_usdt", data: book }), null);
  });
});

describe("GET /1.0/asyncapi.json", () => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start();
  });
  after(async () => {
    await server?.close();
  });

  test("serves the document built from the server's config, public, listed in the OpenAPI document", async () => {
    const res = await server.public.raw("GET", "/1.0/asyncapi.json");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /application\/json/);
    assert.deepEqual(res.body, buildAsyncApi(TEST_CONFIG, []));
    assert.deepEqual(await problems(res.body as object), []);
    const openapi = await server.public.raw("GET", "/1.0/openapi.json");
    const op = ((openapi.body as Json).paths as Record<string, Json>)["/1.0/asyncapi.json"].get as Json;
    assert.deepEqual(op.tags, ["service"]);
    assert.deepEqual(op.security, []);
  });

  test("every message of every stream channel a real server sends matches the document", async () => {
    const [maker, taker] = await server.newUsers(2, { usdt: "10000", btc: "10" });
    const channels = [
      "exchanges",
      "orders:btc_usdt",
      "history:btc_usdt",
      `user_orders:${taker.uid}`,
      `user_history:${taker.uid}`,
    ];
    const stream = await server.stream(channels, taker);
    try {
      await maker.client.createOrder(limit("btc_usdt", "sell", "100", "1"));
      await taker.client.createOrder(market("btc_usdt", "buy", "0.4"));
      const last = await taker.client.createOrder(limit("btc_usdt", "buy", "99", "0.1"));
      await taker.client.cancelOrder((last.body as { id: number }).id);
      for (const kind of ["exchanges", "orders:", "history:", "user_orders:", "user_history:"]) {
        await stream.next((m) => m.stream.startsWith(kind));
      }
      await stream.next(
        (m) => m.stream.startsWith("user_orders:") && (m.data as { isCancelled: boolean }).isCancelled,
      );
      assert.ok(stream.messages.length >= 6);
      for (const m of stream.messages) assert.equal(asyncApi.streamMismatch(m), null);
    } finally {
      await stream.close();
      await server.cancelOpenOrders();
    }
  });
});
