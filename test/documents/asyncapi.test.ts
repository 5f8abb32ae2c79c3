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
import { buildAsyncApi } from "../../src/documents/asyncapi.ts";
import { buildOpenApi } from "../../src/documents/openapi.ts";
import { ROUTES } from "../../src/documents/openapi-routes.ts";
import { DESCRIBED_SESSION_CALLS, LOGON_METHOD, SESSION_CALLS } from "../../src/session/methods.ts";
import { requestSchemas } from "../../src/wire/request-schemas.ts";
import { timeSchema } from "../../src/wire/schemas.ts";
import { asyncApi } from "../e2e/asyncapi-check.ts";
import { expectOk, limit, messagesOfEveryChannelKind, TEST_CONFIG, TestServer } from "../e2e/harness.ts";
import { SessionSocket } from "../session/helpers.ts";
import { waitFor } from "../wait.ts";

type Json = Record<string, unknown>;

/** The session's calls as the server's document lists them. */
const CALLS = DESCRIBED_SESSION_CALLS;

/** Every `nonce` property of a schema's top level and of its oneOf/anyOf branches. */
function nonces(schema: Json): string[] {
  const out: string[] = [];
  if (schema.properties !== undefined && "nonce" in (schema.properties as Json)) out.push("nonce");
  for (const k of ["oneOf", "anyOf"]) {
    for (const b of (schema[k] as Json[] | undefined) ?? []) out.push(...nonces(b).map((n) => `${k}.${n}`));
  }
  return out;
}

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
  test("is valid AsyncAPI 3.0 by @asyncapi/parser without a session call and with the session's", async () => {
    for (const calls of [[], CALLS]) {
      const doc = buildAsyncApi(TEST_CONFIG, calls);
      assert.equal(doc.asyncapi, "3.0.0");
      assert.deepEqual(await problems(doc), []);
    }
  });

  test("the parser really reports a broken document", async () => {
    const doc = buildAsyncApi(TEST_CONFIG, CALLS);
    const operations = doc.operations as Record<string, Json>;
    operations.ping.channel = { $ref: "#/channels/nowhere" };
    assert.notDeepEqual(await problems(doc), []);
  });

  test("describes every stream channel kind, every call of the session's table, its events and frame errors", () => {
    const doc = buildAsyncApi(TEST_CONFIG, CALLS);
    const channels = doc.channels as Record<string, Json>;
    assert.deepEqual(
      Object.values(channels).map((c) => c.address),
      [
        "exchanges",
        "status",
        "orders:{pair}",
        "bbo:{pair}",
        "orders_l3:{pair}",
        "history:{pair}",
        "user_orders:{uid}",
        "user_history:{uid}",
        null,
      ],
    );
    assert.deepEqual(
      ((channels.orders.parameters as Json).pair as Json).enum,
      TEST_CONFIG.pairs.map((p) => p.name),
    );
    const messages = Object.keys((doc.components as Json).messages as Json);
    for (const name of [
      "exchanges.snapshot",
      "exchanges.update",
      "status.snapshot",
      "status.update",
      "orders.snapshot",
      "orders.update",
      "bbo.snapshot",
      "bbo.update",
      "orders_l3.snapshot",
      "orders_l3.update",
      "history.update",
      "user_orders.update",
      "user_history.update",
      "event.hello",
      "event.order",
      "event.trade",
      "event.mmp",
      "event.pairStatus",
      "session.frameError",
    ]) {
      assert.ok(messages.includes(name), name);
    }
    const operations = doc.operations as Record<string, Json>;
    // The logon, then every entry of SESSION_CALLS: one receive operation each, answered by its
    // answer or its error answer.
    assert.deepEqual(
      Object.values(operations)
        .filter((op) => op.action === "receive")
        .map((op) => op.title),
      [LOGON_METHOD, ...SESSION_CALLS.map((c) => c.method)],
    );
    for (const call of CALLS) {
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
    for (const name of [
      "event.hello",
      "event.order",
      "event.trade",
      "event.pairStatus",
      "session.frameError",
    ])
      assert.equal(operations[name].action, "send", name);
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
    const byName = (doc.components as Json).messages as Record<string, Json>;
    const payload = (name: string) => byName[name].payload as Json;
    assert.deepEqual((payload("order.create.answer").properties as Json).result, {
      $ref: "#/components/schemas/OrderWithUpdate",
    });
    assert.deepEqual(((schemas.SessionOrderReport as Json).properties as Json).data, {
      $ref: "#/components/schemas/Order",
    });
  });

  test("no call's params take a nonce (docs/API.md 13), not even in the per-pair branches", () => {
    const doc = buildAsyncApi(TEST_CONFIG, CALLS);
    const byName = (doc.components as Json).messages as Record<string, Json>;
    for (const call of CALLS) {
      const params = ((byName[`${call.method}.call`].payload as Json).properties as Json).params as Json;
      assert.deepEqual(nonces(params), [], call.method);
    }
    // The REST body it comes from has one in each branch.
    assert.ok(nonces(requestSchemas(TEST_CONFIG).createOrder).length > 1);
  });

  test("a call added to the table is in the document", () => {
    const extra = { method: "x.echo", params: () => ({ type: "object" }), result: timeSchema };
    const doc = buildAsyncApi(TEST_CONFIG, [...CALLS, extra]);
    const op = (doc.operations as Record<string, Json>)["x.echo"];
    assert.equal(op.action, "receive");
    assert.deepEqual(op.messages, [{ $ref: "#/channels/session/messages/x.echo.call" }]);
  });

  test("the session check accepts the frames the contract describes and refuses others", () => {
    const check = asyncApi;
    const hello = { event: "hello", challenge: "ab".repeat(32), serverTime: 1_700_000_000_000 };
    assert.equal(check.sessionMismatch(hello), null);
    assert.notEqual(check.sessionMismatch({ ...hello, challenge: "xyz" }), null);
    assert.notEqual(check.sessionMismatch({ ...hello, extra: 1 }), null);
    assert.equal(check.answerMismatch("ping", { id: 7, status: 200, result: { serverTime: 1 } }), null);
    assert.equal(check.answerMismatch("ping", { id: "a-1", status: 200, result: { serverTime: 1 } }), null);
    assert.notEqual(check.answerMismatch("ping", { id: 7, status: 200, result: {} }), null);
    assert.notEqual(
      check.answerMismatch("ping", { id: 7, status: 200, result: { serverTime: 1 }, x: 1 }),
      null,
    );
    const logon = { uid: "u1", cancelOnDisconnect: false, heartbeatSeconds: 30, reports: true };
    assert.equal(check.answerMismatch(LOGON_METHOD, { id: 1, status: 200, result: logon }), null);
    assert.notEqual(check.answerMismatch(LOGON_METHOD, { id: 1, status: 200, result: { uid: "u1" } }), null);
    const error = { id: 7, status: 400, errors: { params: ["bad"] }, codes: { params: ["UNKNOWN_FIELD"] } };
    assert.equal(check.answerMismatch("orders.open", error), null);
    // A call's error answer carries its id; only a frame error may have none.
    assert.notEqual(check.answerMismatch("orders.open", { ...error, id: null }), null);
    assert.equal(
      check.sessionMismatch({ ...error, id: null, errors: { body: ["x"] }, codes: { body: ["X"] } }),
      null,
    );
    assert.equal(check.sessionMismatch({ ...error, status: 429, retryAfterMs: 120 }), null);
    assert.notEqual(check.sessionMismatch({ ...error, status: 200 }), null);
    assert.notEqual(check.answerMismatch("orders.open", { id: 1, status: 200, result: [{ id: 1 }] }), null);
    assert.notEqual(check.answerMismatch("order.nowhere", error), null);
    assert.notEqual(check.sessionMismatch({ event: "order", data: { id: 1 } }), null);
    const pairStatus = { event: "pairStatus", data: { pairName: "btc_usdt", status: "cancelOnly" } };
    assert.equal(check.sessionMismatch(pairStatus), null);
    assert.notEqual(check.sessionMismatch({ ...pairStatus, data: { pairName: "btc_usdt" } }), null);
    assert.notEqual(check.sessionMismatch({ event: "fill", data: {} }), null);
    assert.equal(check.hasCall("order.create"), true);
    assert.equal(check.hasCall("order.nowhere"), false);
  });

  test("the stream check refuses unknown channels, unknown pairs and wrong data", () => {
    // An empty book: its checksum is the CRC-32 of "|" (docs/API.md 12.5).
    const book = { buy: [], sell: [], seq: 3, checksum: 2343686810 };
    assert.equal(asyncApi.streamMismatch({ stream: "orders:btc_usdt", data: book }), null);
    assert.notEqual(asyncApi.streamMismatch({ stream: "orders:btc_usdt", data: { buy: [] } }), null);
    assert.notEqual(asyncApi.streamMismatch({ stream: "orders:nope_usdt", data: book }), null);
    assert.notEqual(asyncApi.streamMismatch({ stream: "orders", data: book }), null);
    assert.notEqual(asyncApi.streamMismatch({ stream: "bbo:btc_usdt", data: book }), null);
    assert.notEqual(asyncApi.streamMismatch({ stream: "history:btc_usdt", data: book }), null);
    // `status`: every pair on connect, then one pair per change; no pair in the channel name.
    const halted = { pairName: "eth_btc", status: "halted" };
    assert.equal(asyncApi.streamMismatch({ stream: "status", data: [halted] }), null);
    assert.equal(asyncApi.streamMismatch({ stream: "status", data: halted }), null);
    assert.notEqual(
      asyncApi.streamMismatch({ stream: "status", data: { ...halted, status: "paused" } }),
      null,
    );
    assert.notEqual(asyncApi.streamMismatch({ stream: "status:eth_btc", data: halted }), null);
    assert.notEqual(asyncApi.streamMismatch({ stream: "status", data: [{ pairName: "eth_btc" }] }), null);
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
    assert.deepEqual(res.body, buildAsyncApi(TEST_CONFIG, CALLS));
    // Both reads before the parser's long run: the connection they share is not left idle past
    // the server's idle timeout between them.
    const openapi = await server.public.raw("GET", "/1.0/openapi.json");
    const op = ((openapi.body as Json).paths as Record<string, Json>)["/1.0/asyncapi.json"].get as Json;
    assert.deepEqual(op.tags, ["service"]);
    assert.deepEqual(op.security, []);
    assert.deepEqual(await problems(res.body as object), []);
  });

  test("every message of every stream channel a real server sends matches the document", async () => {
    const messages = await messagesOfEveryChannelKind(server);
    assert.ok(messages.length >= 6);
    for (const m of messages) assert.equal(asyncApi.streamMismatch(m), null);
  });

  test("every frame a real session sends matches the document: hello, answers, error answers, reports", async () => {
    const [maker, taker] = await server.newUsers(2, { usdt: "10000", btc: "10" });
    const s = await SessionSocket.open(server);
    try {
      // Before logon: a call is refused (401), frames that are no call are answered with id null.
      assert.equal((await s.call("ping")).status, 401);
      assert.equal(
        (await s.call(LOGON_METHOD, { ...s.credentials(taker), heartbeatSeconds: 0 })).status,
        400,
      );
      assert.equal((await s.call(LOGON_METHOD, s.credentials(taker))).status, 200);
      s.send("not json");
      s.send(Buffer.from([1, 2]), true);
      s.send(JSON.stringify({ id: "no-method" }));
      s.send(JSON.stringify({ id: "unknown", method: "order.nowhere" }));
      await s.answer("unknown");
      assert.equal((await s.call("ping", { extra: 1 })).status, 400);
      assert.equal((await s.call(LOGON_METHOD, s.credentials(taker))).status, 400);
      expectOk(await maker.client.createOrder(limit("btc_usdt", "sell", "100", "1")));
      const created = await s.call("order.create", { ...limit("btc_usdt", "buy", "100", "0.25") });
      assert.equal(created.status, 200, JSON.stringify(created));
      const resting = await s.call("order.create", { ...limit("btc_usdt", "buy", "90", "0.1") });
      const id = (resting.result as { id: number }).id;
      for (const [method, params] of [
        ["order.get", { orderId: id }],
        ["order.amend", { orderId: id, amount: "0.2" }],
        ["orders.open", { pairName: "btc_usdt" }],
        ["orders.create", { orders: [limit("btc_usdt", "buy", "80", "0.1"), { pairName: "nope" }] }],
        ["orders.cancel", { orderIds: [id, "x"] }],
        ["orders.cancelAllAfter", { timeout: 0 }],
        ["orders.cancelAll", {}],
        ["order.cancel", { orderId: id }],
        ["balances", {}],
        ["ping", {}],
      ] as const) {
        const a = await s.call(method, params);
        assert.ok(a.status === 200 || method === "order.cancel", `${method}: ${JSON.stringify(a)}`);
      }
      await waitFor(() => s.reports().some((r) => r.event === "trade"), { what: "a trade report" });
      await waitFor(() => s.reports().filter((r) => r.event === "order").length >= 4, {
        what: "order reports",
      });
      assert.equal(s.mismatch, null);
      // Every kind of frame was seen, and each matched (the client checks each as it arrives).
      assert.equal(s.frames[0].event, "hello");
      assert.ok(s.frames.some((f) => f.id === null && f.status === 400));
      assert.ok(s.frames.some((f) => f.id === "unknown" && f.status === 400));
      for (const f of s.frames) assert.equal(asyncApi.sessionMismatch(f), null, JSON.stringify(f));
    } finally {
      s.close();
      await server.cancelOpenOrders();
    }
  });
});
