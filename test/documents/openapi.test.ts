/**
 * The OpenAPI document: valid OpenAPI 3.1 by a standard validator, served at /1.0/openapi.json as
 * built from the route table, covering every call of docs/API.md 7-11; and the e2e
 * response check (test/e2e/openapi-check.ts) really rejects answers that do not match it.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import type { ResponseInfo } from "../../src/client/index.ts";
import { validateConfig } from "../../src/config/config-file.ts";
import { buildOpenApi } from "../../src/documents/openapi.ts";
import { ROUTES } from "../../src/documents/openapi-routes.ts";
import { requestSchemas } from "../../src/wire/request-schemas.ts";
import { messagesOfEveryChannelKind, TEST_CONFIG, TestServer } from "../e2e/harness.ts";
import { openApiMismatch, streamMismatch } from "../e2e/openapi-check.ts";
import { isValid, RawNumber } from "../e2e/schema-arbitrary.ts";

type Json = Record<string, Record<string, Record<string, unknown>>>;

/** Every call the interface document and the contract define, as `METHOD path`. */
const EXPECTED = [
  // docs/API.md 7.1-7.10
  "post /1.0/trade/create-order",
  "post /1.0/trade/cancel-order",
  "get /1.0/trade/pairs",
  "get /1.0/trade/pairs/{pairName}",
  "get /1.0/trade/pairs/{pairName}/chart/{period}",
  "get /1.0/trade/pairs/{pairName}/orders",
  "get /1.0/trade/pairs/{pairName}/history",
  "get /1.0/trade/pairs/{pairName}/user-balances",
  "get /1.0/trade/pairs/{pairName}/user-orders",
  "get /1.0/trade/pairs/user-history",
  // docs/API.md 1, 11
  "get /health",
  "get /metrics",
  "post /admin/users",
  "post /admin/api-keys",
  "post /admin/api-keys/revoke",
  "post /admin/deposit",
  "post /admin/withdraw",
  // docs/API.md 8
  "post /1.0/trade/amend-order",
  "post /1.0/trade/cancel-all-orders",
  "post /1.0/trade/create-orders",
  "post /1.0/trade/cancel-orders",
  "get /1.0/trade/orders/{orderId}",
  "get /1.0/trade/orders",
  "get /1.0/trade/pairs/{pairName}/open-orders",
  "post /1.0/trade/cancel-all-after",
  // docs/API.md 9
  "get /1.0/time",
  "get /1.0/info",
  "get /admin/fees",
  // docs/API.md 10
  "post /1.0/trade/listen-key",
  "post /1.0/trade/listen-key/close",
];

function answer(method: string, pathAndQuery: string, status: number, body: unknown): ResponseInfo {
  const text = JSON.stringify(body);
  return { method, pathAndQuery, status, headers: new Headers(), text, body };
}

describe("OpenAPI document", () => {
  test("is valid OpenAPI 3.1 according to @seriousme/openapi-schema-validator", async () => {
    const validator = new Validator();
    const result = await validator.validate(buildOpenApi(TEST_CONFIG, ROUTES) as never);
    assert.equal(validator.version, "3.1");
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  });

  test("covers every call of the interface document and the contract", () => {
    const doc = buildOpenApi(TEST_CONFIG, ROUTES) as unknown as { paths: Json };
    const have = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths))
      for (const method of Object.keys(item)) have.add(`${method} ${path}`);
    for (const call of EXPECTED) assert.ok(have.has(call), `missing ${call}`);
  });

  test("documents a response schema per status, and the error body for every error status", () => {
    const doc = buildOpenApi(TEST_CONFIG, ROUTES) as unknown as { paths: Json };
    for (const r of ROUTES) {
      const responses = doc.paths[r.path][r.method].responses as Record<string, { content?: object }>;
      assert.ok(responses["200"]?.content !== undefined, `${r.method} ${r.path}: no 200 body`);
      for (const status of r.errors) {
        assert.deepEqual(
          (responses[String(status)] as { content?: object }).content,
          { "application/json": { schema: { $ref: "#/components/schemas/ErrorBody" } } },
          `${r.method} ${r.path} ${status}`,
        );
      }
    }
  });

  test("refers to the schemas the server serialises with, by name", () => {
    const doc = buildOpenApi(TEST_CONFIG, ROUTES) as unknown as { paths: Json };
    const ok = (path: string, method: string) =>
      (doc.paths[path][method].responses as Record<string, unknown>)["200"];
    assert.deepEqual(ok("/1.0/trade/create-order", "post"), {
      description: "OK",
      content: { "application/json": { schema: { $ref: "#/components/schemas/OrderWithUpdate" } } },
    });
    assert.deepEqual(ok("/1.0/trade/pairs/{pairName}", "get"), {
      description: "OK",
      content: { "application/json": { schema: { $ref: "#/components/schemas/PairPage" } } },
    });
  });

  test("describes requests by the config: pair and currency names, each pair's decimals and bounds", () => {
    const config = validateConfig({
      pairs: [
        {
          name: "abc_xyz",
          priceDecimals: 3,
          amountDecimals: 2,
          minAmount: "0.05",
          maxAmount: "500",
          maxPrice: "99.5",
        },
      ],
    });
    const doc = buildOpenApi(config, ROUTES) as unknown as { paths: Json; components: { schemas: Json } };
    const order = doc.components.schemas.CreateOrderRequest as unknown as { oneOf: Json[] };
    assert.deepEqual(
      order.oneOf.map((b) => b.title),
      ["abc_xyz limit", "abc_xyz market"],
    );
    const limitProps = order.oneOf[0].properties as unknown as Record<string, { oneOf: object[] }>;
    assert.deepEqual(limitProps.amount.oneOf, [
      { type: "number", minimum: 0.05, maximum: 500, "x-decimals": 2, "x-maximum": "500" },
      {
        type: "string",
        pattern: "^0*[0-9]{1,3}(\\.[0-9]{1,2}0*)?$",
        "x-decimals": 2,
        "x-minimum": "0.05",
        "x-maximum": "500",
      },
    ]);
    assert.deepEqual(limitProps.price.oneOf, [
      { type: "number", exclusiveMinimum: 0, maximum: 99.5, "x-decimals": 3, "x-maximum": "99.5" },
      {
        type: "string",
        pattern: "^0*[0-9]{1,2}(\\.[0-9]{1,3}0*)?$",
        "x-decimals": 3,
        "x-exclusiveMinimum": "0",
        "x-maximum": "99.5",
      },
    ]);
    const pairParam = (doc.paths["/1.0/trade/pairs/{pairName}"].get.parameters as { schema: Json }[])[0];
    assert.deepEqual(pairParam.schema.enum, ["abc_xyz"]);
    const deposit = doc.paths["/admin/deposit"].post.requestBody as {
      content: { "application/json": { schema: { oneOf: { properties: Json }[] } } };
    };
    assert.deepEqual(
      deposit.content["application/json"].schema.oneOf.map((b) => b.properties.currency),
      [{ const: "abc" }, { const: "xyz" }],
    );
  });

  test("bounds a decimal number by its exact text too: a literal past the bound's nearest double is valid", () => {
    const branches = (requestSchemas(TEST_CONFIG).adminDeposit.oneOf as Record<string, unknown>[]).map(
      (b) =>
        (
          (b.properties as Record<string, Record<string, unknown>>).amount.oneOf as Record<string, unknown>[]
        )[0],
    );
    for (const n of branches) {
      const d = n["x-decimals"] as number;
      const exact = n["x-maximum"] as string;
      assert.equal(exact, `${"9".repeat(21)}${d > 0 ? `.${"9".repeat(d)}` : ""}`);
      // 999999999999999900000 + one unit: above `maximum` (999999999999999868928) as text, within the
      // bound; the server takes it exactly (found by the request generator against a real server).
      const literal = new RawNumber(`999999999999999900000${d > 0 ? `.${"0".repeat(d - 1)}1` : ""}`);
      assert.ok(Number(literal.text) <= (n.maximum as number) + 131072);
      assert.equal(isValid(n, literal), true, `${literal.text} at ${d} decimals`);
      assert.equal(isValid(n, new RawNumber(`1${"0".repeat(21)}`)), false);
    }
  });

  test("judges a number literal against a numeric const by its value, as JSON Schema does", () => {
    // The MMP zero (docs/API.md 8.10): the number 0, written 0, 0.0 or -0, is the const 0 to any
    // JSON Schema validator (and the server takes it); the string "-0" is not the pattern's zero.
    const branch = (requestSchemas(TEST_CONFIG).mmpSet.oneOf as Record<string, unknown>[])[0];
    const zero = (branch.properties as Record<string, Record<string, unknown>>).qtyLimit;
    for (const literal of ["0", "0.0", "-0"])
      assert.equal(isValid(zero, new RawNumber(literal)), true, literal);
    assert.equal(isValid(zero, 0), true);
    assert.equal(isValid(zero, "-0"), false);
    assert.equal(isValid(zero, new RawNumber("-1")), false);
  });

  test("is built from the route list it is given, and its builder imports no route file", () => {
    const create = ROUTES.find((r) => r.operationId === "createOrder");
    const fees = ROUTES.find((r) => r.path === "/admin/fees");
    assert.ok(create !== undefined && fees !== undefined);
    const doc = buildOpenApi(TEST_CONFIG, [create, fees]) as unknown as { paths: Json };
    assert.deepEqual(Object.keys(doc.paths).sort(), ["/1.0/trade/create-order", "/admin/fees"]);
    assert.deepEqual(Object.keys(buildOpenApi(TEST_CONFIG, []).paths as object), []);
    const source = readFileSync(new URL("../../src/documents/openapi.ts", import.meta.url), "utf8");
    const imported = [...source.matchAll(/\bfrom\s*"(\.[^"]+)"/g)].map((m) => m[1]);
    assert.ok(imported.includes("../http/route-types.ts"), `the scanner found ${imported.join(", ")}`);
    assert.deepEqual(
      imported.filter((s) => /route(s\/|-list|-steps|-table|\.ts)/.test(s)),
      [],
    );
  });

  test("names where each call is defined, and every call is served (none left from the contract text)", () => {
    const doc = buildOpenApi(TEST_CONFIG, ROUTES) as unknown as { paths: Json };
    for (const r of ROUTES) {
      const op = doc.paths[r.path][r.method];
      assert.equal(typeof op["x-source"], "string", `${r.method} ${r.path}`);
      assert.equal(op["x-from-contract-text"], undefined, `${r.method} ${r.path}`);
    }
  });
});

describe("the e2e response check", () => {
  const order = {
    id: 1,
    pairName: "btc_usdt",
    tradeType: "limit",
    directionType: "buy",
    price: 1.5,
    amount: 2,
    amountUsed: 0,
    isCancelled: false,
    createTime: "2026-11-23 10:00:00",
    updateTime: "2026-11-23 10:00:00",
    execSeq: 1,
    executedQuote: 0,
  };

  test("accepts an answer that matches its operation and status", () => {
    assert.equal(openApiMismatch(answer("POST", "/1.0/trade/create-order", 200, order)), null);
    assert.equal(
      openApiMismatch(
        answer("GET", "/1.0/trade/pairs/btc_usdt/orders?limit=5", 200, {
          buy: [],
          sell: [],
          seq: 0,
          checksum: 2343686810,
          time: 0,
        }),
      ),
      null,
    );
    assert.equal(
      openApiMismatch(
        answer("POST", "/1.0/trade/cancel-order", 400, {
          errors: { orderId: ["x"] },
          codes: { orderId: ["ORDER_NOT_FOUND"] },
        }),
      ),
      null,
    );
  });

  test("rejects a body that misses a field, has an extra one or a wrong type", () => {
    const { updateTime: _, ...noUpdate } = order;
    assert.match(
      openApiMismatch(answer("POST", "/1.0/trade/create-order", 200, noUpdate)) ?? "",
      /updateTime/,
    );
    assert.notEqual(
      openApiMismatch(answer("POST", "/1.0/trade/create-order", 200, { ...order, extra: 1 })),
      null,
    );
    assert.notEqual(
      openApiMismatch(answer("POST", "/1.0/trade/create-order", 200, { ...order, price: "1.5" })),
      null,
    );
  });

  test("rejects an undocumented status, a malformed error body and an unknown 200 route", () => {
    assert.match(
      openApiMismatch(answer("GET", "/1.0/trade/pairs", 418, { errors: { x: ["y"] } })) ?? "",
      /not documented/,
    );
    assert.notEqual(
      openApiMismatch(answer("POST", "/1.0/trade/cancel-order", 400, { errors: { orderId: "x" } })),
      null,
    );
    assert.match(openApiMismatch(answer("GET", "/1.0/trade/nothing", 200, {})) ?? "", /no operation/);
  });

  test("leaves CORS preflights and the web page's files alone, but not a 200 from an unknown API path", () => {
    const blank = { method: "OPTIONS", pathAndQuery: "/1.0/trade/create-order", status: 204 };
    assert.equal(openApiMismatch({ ...blank, headers: new Headers(), text: "", body: undefined }), null);
    const page = { method: "GET", pathAndQuery: "/app.js", status: 200, headers: new Headers() };
    assert.equal(openApiMismatch({ ...page, text: "x", body: undefined }), null);
    assert.match(openApiMismatch(answer("GET", "/admin/nothing", 200, {})) ?? "", /no operation/);
  });

  test("matches a literal path before a template (user-history is not a pair)", () => {
    const page = { total: 0, items: [] };
    assert.equal(openApiMismatch(answer("GET", "/1.0/trade/pairs/user-history", 200, page)), null);
  });
});

describe("GET /1.0/openapi.json", () => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start();
  });
  after(async () => {
    await server?.close();
  });

  test("serves the document built from the route table", async () => {
    const res = await server.public.raw("GET", "/1.0/openapi.json");
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers.get("content-type") ?? "", /application\/json/);
    assert.deepEqual(res.body, buildOpenApi(TEST_CONFIG, ROUTES));
  });

  test("every stream message of every channel kind matches its Stream*Message schema", async () => {
    const messages = await messagesOfEveryChannelKind(server);
    assert.ok(messages.length >= 6);
    for (const m of messages) assert.equal(streamMismatch(m), null);
    assert.notEqual(streamMismatch({ stream: "orders:btc_usdt", data: { buy: [] } }), null);
  });

  test("the venue, fee and listen-key answers match the document (checked by the client hook)", async () => {
    const [user] = await server.newUsers(1);
    assert.equal((await server.public.time()).status, 200);
    assert.equal((await server.public.info()).status, 200);
    assert.equal((await server.admin.fees()).status, 200);
    const key = await user.client.listenKey();
    assert.equal(key.status, 200, key.text);
    const listenKey = (key.body as { listenKey: string }).listenKey;
    assert.equal((await user.client.listenKey(listenKey)).status, 200);
    const closed = await user.client.closeListenKey(listenKey);
    assert.equal(closed.status, 200, closed.text);
    assert.equal((await user.client.closeListenKey(listenKey)).status >= 400, true);
  });

  test("answers 405 to another method, as the other known paths do", async () => {
    const res = await server.public.raw("POST", "/1.0/openapi.json", {
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    assert.equal(res.status, 405, res.text);
  });
});
