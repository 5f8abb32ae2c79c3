/**
 * Authentication, malformed input and error answers end to end (docs/API.md 4), the admin interface
 * (docs/API.md 11), health and metrics (docs/API.md 1), and a second server started without
 * ADMIN_TOKEN and with a rate limit.
 *
 * Decisions where the contract is silent, tested here: unknown body fields are ignored, and a
 * `__proto__` key is just another unknown field (never merged into the request).
 */

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { ApiResponse, CreatedOrder } from "../../src/client/index.ts";
import { signText } from "../../src/client/index.ts";
import { auditExchange } from "./audit.ts";
import { dec } from "./decimal.ts";
import { expectError, expectOk, limit, PAIR_NAMES, rawHttp, TestServer, type TestUser } from "./harness.ts";

const CYRILLIC = /[А-Яа-яЁё]/;
const CREATE = "/1.0/trade/create-order";
const JSON_TYPE = { "Content-Type": "application/json" };
/** A valid, cheap order: buy 0.001 btc at 1 usdt. */
const ORDER = limit("btc_usdt", "buy", "1", "0.001");
const ORDER_TEXT = JSON.stringify(ORDER);

/** A signed POST with exactly this body text. */
function post(user: TestUser, path: string, body: string, headers: Record<string, string> = JSON_TYPE) {
  return user.client.raw<CreatedOrder>("POST", path, { body, headers, sign: true });
}

/** The order body padded with an ignored field to exactly `size` bytes. */
/** A valid order body of exactly `size` bytes: white space before the closing brace. */
function paddedOrder(size: number): string {
  const head = ORDER_TEXT.slice(0, -1);
  const pad = size - head.length - 1;
  assert.ok(pad >= 0);
  return `${head}${" ".repeat(pad)}}`;
}

describe("authentication and errors", () => {
  let server: TestServer;
  /** Sends only bad requests; its balances must end unchanged. */
  let victim: TestUser;
  /** Sends valid requests where a test needs a success. */
  let worker: TestUser;

  before(async () => {
    server = await TestServer.start();
    victim = await server.newUser({ usdt: "100", btc: "1" });
    worker = await server.newUser({ usdt: "1000" });
  });
  after(async () => {
    await server?.close();
  });

  describe("authentication", () => {
    it("refuses every authenticated endpoint without auth headers with 401 errors.auth", async () => {
      const anon = server.public;
      expectError(await anon.createOrder(ORDER), 401, "auth", "create-order");
      expectError(await anon.cancelOrder(1), 401, "auth", "cancel-order");
      expectError(await anon.balances("btc_usdt"), 401, "auth", "user-balances");
      expectError(await anon.userOrders("btc_usdt"), 401, "auth", "user-orders");
      expectError(await anon.userHistory(), 401, "auth", "user-history");
    });

    it("refuses a request that has the token but no signature", async () => {
      const res = await server.public.raw("POST", CREATE, {
        body: ORDER_TEXT,
        headers: { ...JSON_TYPE, Authorization: worker.apiToken },
      });
      expectError(res, 401, "auth");
      const signatureOnly = await server.public.raw("POST", CREATE, {
        body: ORDER_TEXT,
        headers: { ...JSON_TYPE, "X-Signature": signText(worker.secretKey, ORDER_TEXT) },
      });
      expectError(signatureOnly, 401, "auth");
    });

    it("refuses a signature made with another secret and an unknown token", async () => {
      const wrongSecret = server.client({ apiToken: worker.apiToken, secretKey: victim.secretKey });
      expectError(await wrongSecret.createOrder(ORDER), 401, "auth", "wrong secret");
      expectError(await wrongSecret.balances("btc_usdt"), 401, "auth", "wrong secret GET");
      const unknown = server.client({ apiToken: "f".repeat(32), secretKey: worker.secretKey });
      expectError(await unknown.createOrder(ORDER), 401, "auth", "unknown token");
      const garbage = await worker.client.raw("POST", CREATE, {
        body: ORDER_TEXT,
        headers: { ...JSON_TYPE, Authorization: worker.apiToken, "X-Signature": "zz".repeat(32) },
      });
      expectError(garbage, 401, "auth", "non-hex signature");
    });

    it("verifies the body bytes as sent, not their JSON meaning", async () => {
      const compact = ORDER_TEXT;
      const spaced = JSON.stringify(ORDER, null, 1);
      assert.deepEqual(JSON.parse(spaced), JSON.parse(compact));
      const mismatch = await worker.client.raw("POST", CREATE, {
        body: spaced,
        headers: JSON_TYPE,
        sign: compact,
      });
      expectError(mismatch, 401, "auth", "signed compact, sent spaced");
      const { amount, ...rest } = ORDER;
      const reordered = JSON.stringify({ amount, ...rest });
      const mismatch2 = await worker.client.raw("POST", CREATE, {
        body: reordered,
        headers: JSON_TYPE,
        sign: compact,
      });
      expectError(mismatch2, 401, "auth", "signed one key order, sent another");
      const o = expectOk(await post(worker, CREATE, spaced), "spaced body signed as sent");
      assert.equal(o.amount, 0.001);
    });

    it("signs the raw query string: a reordered or re-encoded query is refused", async () => {
      const ok = await worker.client.raw("GET", "/1.0/trade/pairs/user-history", {
        query: "page=1&pageSize=5",
        sign: true,
      });
      expectOk(ok, "signed as sent");
      const reordered = await worker.client.raw("GET", "/1.0/trade/pairs/user-history", {
        query: "pageSize=5&page=1",
        sign: "page=1&pageSize=5",
      });
      expectError(reordered, 401, "auth", "reordered");
      const encoded = await worker.client.raw("GET", "/1.0/trade/pairs/user-history", {
        query: "page=%31",
        sign: "page=1",
      });
      expectError(encoded, 401, "auth", "percent-encoded after signing");
    });

    it("signs the empty string for a GET without a query string", async () => {
      const path = "/1.0/trade/pairs/btc_usdt/user-balances";
      expectOk(await worker.client.raw("GET", path, { sign: "" }), "empty string signed");
      expectError(await worker.client.raw("GET", path, { sign: "?" }), 401, "auth", "something else signed");
    });

    it("accepts the token as Bearer <token>", async () => {
      const bearer = server.client(worker, { bearer: true });
      expectOk(await bearer.balances("btc_usdt"), "GET with Bearer");
      expectOk(await bearer.createOrder(ORDER), "POST with Bearer");
    });

    it("accepts the signature in uppercase hex", async () => {
      const res = await worker.client.raw("POST", CREATE, {
        body: ORDER_TEXT,
        headers: {
          ...JSON_TYPE,
          Authorization: worker.apiToken,
          "X-Signature": signText(worker.secretKey, ORDER_TEXT).toUpperCase(),
        },
      });
      expectOk(res, "uppercase signature");
    });

    it("refuses a revoked key while the user's other key keeps working", async () => {
      const user = await server.newUser({ usdt: "10" });
      const second = expectOk(await server.admin.createApiKey(user.uid), "second key");
      assert.match(second.apiToken, /^[0-9a-f]{32,}$/);
      assert.match(second.secretKey, /^[0-9a-f]{32,}$/);
      const other = server.client(second);
      expectOk(await other.balances("btc_usdt"), "second key works");
      assert.deepEqual(expectOk(await server.admin.revokeApiKey(user.apiToken), "revoke"), []);
      expectError(await user.client.balances("btc_usdt"), 401, "auth", "revoked key GET");
      expectError(await user.client.createOrder(ORDER), 401, "auth", "revoked key POST");
      const balances = expectOk(await other.balances("btc_usdt"), "second key still works");
      assert.equal(balances.find((b) => b.currency === "usdt")?.balance, "10");
      // Later audits read this user through the key that still works.
      Object.assign(user, { apiToken: second.apiToken, secretKey: second.secretKey, client: other });
    });

    it("refuses a replayed or lower nonce and accepts a higher one", async () => {
      const user = await server.newUser({ usdt: "10" });
      const c = user.client;
      expectOk(await c.balances("btc_usdt", { nonce: 1000 }), "nonce 1000");
      expectError(await c.balances("btc_usdt", { nonce: 1000 }), 401, "auth", "nonce 1000 again");
      expectError(await c.balances("btc_usdt", { nonce: 999 }), 401, "auth", "lower nonce");
      expectOk(await c.balances("btc_usdt", { nonce: 1001 }), "nonce 1001");
      expectOk(await c.balances("btc_usdt"), "no nonce at all is allowed");

      // The very same signed request sent twice.
      const body = JSON.stringify({ ...ORDER, nonce: 2000 });
      expectOk(await post(user, CREATE, body), "first send");
      expectError(await post(user, CREATE, body), 401, "auth", "replay");
      assert.equal(expectOk(await c.userOrders("btc_usdt")).total, 1, "the replay created nothing");
    });

    it("consumes a nonce of a correctly signed request even when it fails validation", async () => {
      const user = await server.newUser({ usdt: "10" });
      const c = user.client;
      expectError(await c.createOrder({ ...ORDER, amount: "abc" }, { nonce: 3000 }), 400, "amount");
      expectError(
        await c.createOrder(ORDER, { nonce: 3000 }),
        401,
        "auth",
        "nonce used by the invalid request",
      );
      // A wrongly signed request does not consume its nonce.
      const wrong = server.client({ apiToken: user.apiToken, secretKey: "wrong-secret" });
      expectError(await wrong.createOrder(ORDER, { nonce: 5000 }), 401, "auth");
      expectOk(await c.createOrder(ORDER, { nonce: 5000 }), "nonce 5000 still free");
    });
  });

  describe("malformed input", () => {
    it("answers 400 errors.body to a body that is not JSON", async () => {
      for (const text of ['{"pairName":', "{pairName: 'btc_usdt'}", "", "{}}", '{"price":NaN}']) {
        expectError(await post(victim, CREATE, text), 400, "body", JSON.stringify(text));
      }
    });

    it("answers 400 errors.body to JSON that is not an object", async () => {
      // `1e400` is a number no double holds, read exactly (docs/API.md 2.1), and still not an object.
      for (const text of ["[]", '"order"', "1", "null", "true", "1e400", "-1E+400", `[${ORDER_TEXT}]`]) {
        expectError(await post(victim, CREATE, text), 400, "body", text);
        expectError(await post(victim, "/1.0/trade/cancel-order", text), 400, "body", `cancel ${text}`);
      }
    });

    it("answers 400 on the field of each wrong value in create-order", async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ pairName: 1 }, "pairName"],
        [{ pairName: null }, "pairName"],
        [{ pairName: undefined }, "pairName"],
        [{ pairName: "BTC_USDT" }, "pairName"],
        [{ pairName: "doge_usdt" }, "pairName"],
        [{ pairName: "btc_usdt " }, "pairName"],
        [{ tradeType: "stop" }, "tradeType"],
        [{ tradeType: "LIMIT" }, "tradeType"],
        [{ tradeType: 1 }, "tradeType"],
        [{ tradeType: undefined }, "tradeType"],
        [{ directionType: "long" }, "directionType"],
        [{ directionType: true }, "directionType"],
        [{ directionType: undefined }, "directionType"],
        [{ price: undefined }, "price"],
        [{ price: null }, "price"],
        [{ price: true }, "price"],
        [{ price: [] }, "price"],
        [{ price: {} }, "price"],
        [{ price: "" }, "price"],
        [{ price: "abc" }, "price"],
        [{ price: "NaN" }, "price"],
        [{ price: "Infinity" }, "price"],
        [{ price: "1e3" }, "price"],
        [{ price: "0x10" }, "price"],
        [{ price: " 1" }, "price"],
        [{ price: "1." }, "price"],
        [{ price: ".5" }, "price"],
        [{ price: "-5" }, "price"],
        [{ price: -5 }, "price"],
        [{ price: "0" }, "price"],
        [{ price: 0 }, "price"],
        [{ price: "1.001" }, "price"],
        [{ price: 1.001 }, "price"],
        [{ price: "10000000.01" }, "price"],
        [{ price: "10000001" }, "price"],
        [{ price: "123456789012345678901234567890" }, "price"],
        [{ amount: undefined }, "amount"],
        [{ amount: null }, "amount"],
        [{ amount: false }, "amount"],
        [{ amount: [] }, "amount"],
        [{ amount: "" }, "amount"],
        [{ amount: "NaN" }, "amount"],
        [{ amount: "-0.5" }, "amount"],
        [{ amount: 0 }, "amount"],
        [{ amount: "0.0000001" }, "amount"],
        [{ amount: 0.0000001 }, "amount"],
        [{ amount: "10000.000001" }, "amount"],
        [{ amount: 1e21 }, "amount"],
        [{ amount: "99999999999999999999999999" }, "amount"],
      ];
      for (const [patch, field] of cases) {
        const body = JSON.stringify({ ...ORDER, ...patch });
        expectError(await post(victim, CREATE, body), 400, field, body);
      }
      const literals: [string, string][] = [
        [ORDER_TEXT.replace('"amount":"0.001"', '"amount":1e400'), "amount"],
        [ORDER_TEXT.replace('"amount":"0.001"', '"amount":-0'), "amount"],
        [ORDER_TEXT.replace('"amount":"0.001"', '"amount":1e-7'), "amount"],
        [ORDER_TEXT.replace('"price":"1"', '"price":1e400'), "price"],
        [ORDER_TEXT.replace('"price":"1"', '"price":123456789012345678901234567890'), "price"],
      ];
      for (const [body, field] of literals) {
        assert.notEqual(body, ORDER_TEXT);
        expectError(await post(victim, CREATE, body), 400, field, body);
      }
    });

    it("answers 400 orderId to a cancel whose id is not a positive integer", async () => {
      for (const orderId of ['"abc"', "-1", "0", "1.5", "null", "true", "[]", '"1e3"']) {
        const body = `{"orderId":${orderId}}`;
        expectError(await post(victim, "/1.0/trade/cancel-order", body), 400, "orderId", body);
      }
      expectError(await post(victim, "/1.0/trade/cancel-order", "{}"), 400, "orderId", "missing");
    });

    it("answers 400 under each unknown field, __proto__ and constructor included, and creates nothing", async () => {
      const before = (await worker.client.userOrders("btc_usdt")).body as { total: number };
      const extra = `${ORDER_TEXT.slice(0, -1)},"foo":1,"isAdmin":true,"__proto__":{"amount":"5"}}`;
      const res = await post(worker, CREATE, extra);
      assert.equal(res.status, 400, res.text);
      const errors = (res.body as { errors: Record<string, string[]> }).errors;
      assert.deepEqual(Object.keys(errors).sort(), ["__proto__", "foo", "isAdmin"]);
      for (const k of ["foo", "isAdmin", "__proto__"]) assert.deepEqual(errors[k], ["Unknown field"]);
      const { amount: _a, ...noAmount } = ORDER;
      const polluted = `{"__proto__":{"amount":"0.001"},${JSON.stringify(noAmount).slice(1)}`;
      const p = await post(worker, CREATE, polluted);
      expectError(p, 400, "amount", "amount only via __proto__", false);
      expectError(p, 400, "__proto__", "__proto__ is an unknown field", false);
      const ctor = `${ORDER_TEXT.slice(0, -1)},"constructor":{"prototype":{"amount":"5"}}}`;
      expectError(await post(worker, CREATE, ctor), 400, "constructor");
      const after = (await worker.client.userOrders("btc_usdt")).body as { total: number };
      assert.equal(after.total, before.total, "no order was created");
      expectOk(await worker.client.createOrder(ORDER), "an ordinary order afterwards");
    });

    it("answers 413 errors.body to a body over 64 KiB and accepts exactly 64 KiB", async () => {
      const exact = paddedOrder(64 * 1024);
      assert.equal(Buffer.byteLength(exact), 65536);
      const accepted = await rawHttp(
        server,
        "POST",
        CREATE,
        {
          ...JSON_TYPE,
          Authorization: worker.apiToken,
          "X-Signature": signText(worker.secretKey, exact),
        },
        Buffer.from(exact),
      );
      assert.equal(accepted.status, 200, `64 KiB body: ${accepted.text.slice(0, 300)}`);

      for (const size of [64 * 1024 + 1, 1024 * 1024]) {
        const body = paddedOrder(size);
        const res = await rawHttp(
          server,
          "POST",
          CREATE,
          {
            ...JSON_TYPE,
            Authorization: victim.apiToken,
            "X-Signature": signText(victim.secretKey, body),
          },
          Buffer.from(body),
        );
        expectError(asResponse(res), 413, "body", `${size} bytes`);
      }
    });

    it("answers 415 to a POST without Content-Type or with another media type", async () => {
      expectError(
        await victim.client.raw("POST", CREATE, { body: ORDER_TEXT, sign: true }),
        415,
        "body",
        "none",
      );
      for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/jsonp"]) {
        const res = await post(victim, CREATE, ORDER_TEXT, { "Content-Type": type });
        expectError(res, 415, "body", type);
      }
      const withCharset = await post(worker, CREATE, ORDER_TEXT, {
        "Content-Type": "application/json; charset=utf-8",
      });
      expectOk(withCharset, "parameters are fine");
    });

    it("answers 404 errors.path to an unknown path", async () => {
      const c = server.public;
      expectError(await c.raw("GET", "/1.0/trade/nothing"), 404, "path", "GET /1.0/trade/nothing");
      expectError(await c.raw("GET", "/nothing"), 404, "path", "GET /nothing");
      expectError(await c.raw("GET", "/2.0/trade/pairs"), 404, "path", "other version");
      expectError(await c.raw("GET", "/1.0/trade/pairs/btc_usdt/nothing"), 404, "path", "under a pair");
      const postUnknown = await victim.client.raw("POST", "/1.0/trade/create-everything", {
        body: ORDER_TEXT,
        headers: JSON_TYPE,
        sign: true,
      });
      expectError(postUnknown, 404, "path", "POST /1.0/trade/create-everything");
    });

    it("answers the first of 404, 413, 415, 401 and 400 when several apply", async () => {
      const huge = Buffer.from(paddedOrder(1024 * 1024));
      const unknownPath = await rawHttp(
        server,
        "POST",
        "/1.0/trade/nothing",
        { "Content-Type": "text/plain" },
        huge,
      );
      expectError(asResponse(unknownPath), 404, "path", "404 before 413 and 415");

      const tooLarge = await rawHttp(server, "POST", CREATE, { "Content-Type": "text/plain" }, huge);
      expectError(asResponse(tooLarge), 413, "body", "413 before 415 and 401");

      const badType = await server.public.raw("POST", CREATE, {
        body: "{not json",
        headers: { "Content-Type": "text/plain" },
      });
      expectError(badType, 415, "body", "415 before 401 and 400");

      const badAuth = await victim.client.raw("POST", CREATE, {
        body: "{not json",
        headers: JSON_TYPE,
        sign: "x",
      });
      expectError(badAuth, 401, "auth", "401 before 400");

      expectError(await post(victim, CREATE, "{not json"), 400, "body", "400 when signed");

      expectError(await server.public.balances("doge_usdt"), 404, "pairName", "unknown pair before 401");
      const unknownPairPage = await server
        .client({ apiToken: "nobody-token", secretKey: "x" })
        .pairPage("doge_usdt");
      expectError(unknownPairPage, 404, "pairName", "unknown pair before failed auth");
    });

    it("answers in Russian when Accept-Language prefers ru and in English otherwise", async () => {
      const en = expectError(await server.public.createOrder(ORDER, { lang: "en" }), 401, "auth");
      const ru = expectError(await server.public.createOrder(ORDER, { lang: "ru" }), 401, "auth");
      assert.notDeepEqual(ru, en);
      assert.match(ru.join(" "), CYRILLIC);
      assert.doesNotMatch(en.join(" "), CYRILLIC);
      const none = expectError(await server.public.createOrder(ORDER), 401, "auth");
      assert.deepEqual(none, en, "English by default");
      const preferred = expectError(
        await server.public.createOrder(ORDER, { lang: "ru-RU,ru;q=0.9,en;q=0.8" }),
        401,
        "auth",
      );
      assert.match(preferred.join(" "), CYRILLIC);
      const second = expectError(
        await server.public.createOrder(ORDER, { lang: "en,ru;q=0.5" }),
        401,
        "auth",
      );
      assert.doesNotMatch(second.join(" "), CYRILLIC);

      const poor = await server.newUser();
      const big = limit("btc_usdt", "buy", "100", "1");
      const enFunds = expectError(await poor.client.createOrder(big, { lang: "en" }), 400, "amount");
      const ruFunds = expectError(await poor.client.createOrder(big, { lang: "ru" }), 400, "amount");
      assert.match(ruFunds.join(" "), CYRILLIC);
      assert.doesNotMatch(enFunds.join(" "), CYRILLIC);
    });

    it("keeps serving after all the bad input and leaves the sender's balances unchanged", async () => {
      assert.deepEqual(expectOk(await server.public.health()), { status: "ok" });
      assert.deepEqual(await server.balanceTable(victim), {
        btc: ["1", "0"],
        usdt: ["100", "0"],
        eth: ["0", "0"],
      });
      assert.equal(expectOk(await victim.client.userOrders("btc_usdt")).total, 0);
      assert.equal(expectOk(await server.public.pairs()).length, PAIR_NAMES.length);
      expectOk(await victim.client.createOrder(ORDER), "the victim can still trade");
      await server.cancelOpenOrders();
      await auditExchange(server);
    });
  });

  describe("admin interface", () => {
    it("refuses admin calls with a wrong or missing admin token with 401 errors.auth", async () => {
      const wrong = server.admin.with({ adminToken: "not-the-admin-token" });
      expectError(await wrong.createUser(), 401, "auth", "wrong token");
      expectError(await wrong.deposit(worker.uid, "usdt", "1000000"), 401, "auth", "wrong token deposit");
      const missing = server.admin.with({ adminToken: undefined });
      expectError(await missing.createUser(), 401, "auth", "missing token");
      expectError(await missing.withdraw(worker.uid, "usdt", "1"), 401, "auth", "missing token withdraw");
      const userKey = await server.admin.raw("POST", "/admin/users", {
        body: "{}",
        headers: { ...JSON_TYPE, Authorization: `Bearer ${worker.apiToken}` },
      });
      expectError(userKey, 401, "auth", "a user's API token is not the admin token");
    });

    it("answers 400 errors.body to an admin body that is JSON but not an object", async () => {
      for (const text of ["[]", "1", "null", "1e400"]) {
        const res = await server.admin.raw("POST", "/admin/deposit", {
          body: text,
          headers: { ...JSON_TYPE, Authorization: `Bearer ${server.adminToken}` },
        });
        expectError(res, 400, "body", text);
      }
    });

    it("creates a user with a given uid and fresh hex secrets that work at once", async () => {
      const uid = randomUUID();
      const created = expectOk(await server.admin.createUser(uid), "create with uid");
      assert.equal(created.uid, uid);
      assert.match(created.apiToken, /^[0-9a-f]{32,}$/);
      assert.match(created.secretKey, /^[0-9a-f]{32,}$/);
      const anonymous = expectOk(await server.admin.createUser(), "create without uid");
      assert.match(anonymous.uid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
      assert.notEqual(anonymous.apiToken, created.apiToken);
      const balances = expectOk(await server.client(created).balances("eth_btc"));
      assert.deepEqual(balances.map((b) => [b.currency, b.balance, b.reserved]).sort(), [
        ["btc", "0", "0"],
        ["eth", "0", "0"],
      ]);
    });

    it("deposits and withdraws exactly and refuses to withdraw more than available", async () => {
      const user = await server.newUser();
      assert.deepEqual(expectOk(await server.admin.deposit(user.uid, "usdt", "10.5")), {
        currency: "usdt",
        balance: "10.5",
      });
      assert.deepEqual(expectOk(await server.admin.deposit(user.uid, "usdt", "0.25")), {
        currency: "usdt",
        balance: "10.75",
      });
      // Deposited around the harness: keep its books of money in step for the audits.
      user.net.set("usdt", dec("10.75"));
      server.totals.set("usdt", (server.totals.get("usdt") ?? 0n) + dec("10.75"));
      expectOk(await user.client.createOrder(limit("btc_usdt", "buy", "100", "0.04")), "reserve 4");
      expectError(await server.withdraw(user, "usdt", "7"), 400, "amount", "more than available");
      const res = await server.withdraw(user, "usdt", "6.75");
      assert.deepEqual(expectOk(res as ApiResponse<unknown>), { currency: "usdt", balance: "0" });
      assert.deepEqual((await server.balanceTable(user)).usdt, ["0", "4"]);
      expectError(await server.admin.deposit(user.uid, "doge", "1"), 400, "currency", "unknown currency");
      expectError(await server.admin.deposit(user.uid, "usdt", "-1"), 400, "amount", "negative deposit");
      expectError(await server.admin.deposit(user.uid, "usdt", "abc"), 400, "amount", "not a number");
      expectError(
        await server.admin.deposit(user.uid, "usdt", "0.000000001"),
        400,
        "amount",
        "below usdt scale",
      );
      assert.deepEqual((await server.balanceTable(user)).usdt, ["0", "4"]);
      await server.cancelOpenOrders([user]);
    });
  });

  describe("health and metrics", () => {
    it("answers /health with 200 {status: ok}", async () => {
      const res = await server.public.health();
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { status: "ok" });
    });

    it("exposes Prometheus text whose request counters grow with requests", async () => {
      const before = await server.public.metrics();
      assert.equal(before.status, 200);
      assert.match(before.headers.get("content-type") ?? "", /^text\/plain/);
      const counters = requestCounters(before.text);
      assert.ok(counters.size > 0, `no request counter in /metrics:\n${before.text.slice(0, 2000)}`);
      for (let i = 0; i < 5; i++) expectOk(await server.public.pairs());
      const afterText = (await server.public.metrics()).text;
      const grown = [...requestCounters(afterText)].some(
        ([name, value]) => value - (counters.get(name) ?? 0) >= 5,
      );
      assert.ok(grown, "some request counter must count the 5 requests");
      assert.match(before.text, /^# TYPE \S+ histogram$/m, "latency histograms");
    });

    it("counts the writer's committed transactions and records", async () => {
      const sample = (text: string, name: string): number => {
        const m = new RegExp(`^${name} (\\d+)$`, "m").exec(text);
        assert.ok(m !== null, `${name} missing from /metrics`);
        return Number(m[1]);
      };
      const before = (await server.public.metrics()).text;
      const [seller, buyer] = await server.newUsers(2, { usdt: "100000", btc: "10" });
      expectOk(await server.client(seller).createOrder(limit("btc_usdt", "sell", "30000", "0.01")));
      expectOk(await server.client(buyer).createOrder(limit("btc_usdt", "buy", "30000", "0.01")));
      const after = (await server.public.metrics()).text;
      const transactions =
        sample(after, "exchange_db_transactions_total") - sample(before, "exchange_db_transactions_total");
      const records =
        sample(after, "exchange_db_records_total") - sample(before, "exchange_db_records_total");
      // Two answered orders were each committed before their answer: at least their order rows,
      // the trade, and the users and deposits made above.
      assert.ok(transactions >= 2, `${transactions} transactions`);
      assert.ok(records >= 5, `${records} records`);
    });
  });
});

/** Sum of samples per counter whose name mentions requests (names are the server's choice). */
function requestCounters(text: string): Map<string, number> {
  const counters = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) counter$/gm)) {
    if (/request/i.test(m[1])) counters.add(m[1]);
  }
  const sums = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})? (\S+)/.exec(line);
    if (m === null) continue;
    const name = counters.has(m[1])
      ? m[1]
      : counters.has(m[1].replace(/_total$/, ""))
        ? m[1].replace(/_total$/, "")
        : null;
    if (name !== null) sums.set(name, (sums.get(name) ?? 0) + Number(m[2]));
  }
  return sums;
}

function asResponse(answer: { status: number; text: string; body: unknown }): ApiResponse<unknown> {
  return { status: answer.status, text: answer.text, body: answer.body as never, headers: new Headers() };
}

describe("a server without ADMIN_TOKEN and with a rate limit", () => {
  // No test waits for the window to pass: each spends the budget of its own key, and the tests
  // before it leave that key enough for a first request (a restart starts the limiter afresh; signed
  // calls count against the token only, public ones against the address; a 401 counts nowhere).
  // c1: 2 reads since the restart, then one burst; the address: one burst; c2: 2 reads, then the
  // unauthenticated burst (not counted) and one burst.
  let server: TestServer;
  let c1: TestUser;
  let c2: TestUser;
  const RATE = 20;

  before(async () => {
    server = await TestServer.start({
      adminToken: null,
      rateLimit: RATE,
      configUsers: [{ btc: "2", usdt: "1000" }, { eth: "3" }],
    });
    [c1, c2] = server.users;
  });
  after(async () => {
    await server?.close();
  });

  it("answers 404 errors.path on every admin path", async () => {
    const admin = server.admin.with({ adminToken: "anything" });
    expectError(await admin.createUser(), 404, "path", "users");
    expectError(await admin.createApiKey(c1.uid), 404, "path", "api-keys");
    expectError(await admin.revokeApiKey(c1.apiToken), 404, "path", "revoke");
    expectError(await admin.deposit(c1.uid, "usdt", "1"), 404, "path", "deposit");
    expectError(await admin.withdraw(c1.uid, "usdt", "1"), 404, "path", "withdraw");
  });

  it("credits the users of the config file once, also across a restart", async () => {
    const expected1 = { btc: ["2", "0"], usdt: ["1000", "0"], eth: ["0", "0"] };
    const expected2 = { btc: ["0", "0"], usdt: ["0", "0"], eth: ["3", "0"] };
    assert.deepEqual(await server.balanceTable(c1), expected1);
    assert.deepEqual(await server.balanceTable(c2), expected2);
    expectOk(await c1.client.createOrder(limit("btc_usdt", "sell", "500", "1")), "config user trades");
    await server.restart();
    assert.deepEqual(await server.balanceTable(c1), {
      btc: ["1", "1"],
      usdt: ["1000", "0"],
      eth: ["0", "0"],
    });
    assert.deepEqual(await server.balanceTable(c2), expected2);
  });

  it("answers 429 with Retry-After and errors.rate once a token goes over the limit", async () => {
    const answers = await Promise.all(Array.from({ length: RATE * 3 }, () => c1.client.balances("btc_usdt")));
    const limited = answers.filter((a) => a.status === 429);
    assert.ok(limited.length > 0, "some requests must be limited");
    assert.ok(
      answers.some((a) => a.status === 200),
      "the first ones pass",
    );
    for (const a of answers)
      assert.ok(a.status === 200 || a.status === 429, `unexpected ${a.status} ${a.text}`);
    for (const a of limited) {
      expectError(a, 429, "rate");
      const retry = a.headers.get("retry-after");
      assert.match(retry ?? "", /^\d+$/, "Retry-After in seconds");
    }
  });

  it("limits public calls per client address", async () => {
    const answers = await Promise.all(Array.from({ length: RATE * 3 }, () => server.public.pairs()));
    assert.ok(
      answers.some((a) => a.status === 429),
      "some public calls must be limited",
    );
    for (const a of answers.filter((x) => x.status === 429)) expectError(a, 429, "rate");
  });

  it("checks authentication before the rate limit and the rate limit before validation", async () => {
    const wrong = server.client({ apiToken: c2.apiToken, secretKey: "wrong-secret" });
    const unauthenticated = await Promise.all(
      Array.from({ length: RATE * 3 }, () => wrong.createOrder(limit("eth_usdt", "sell", "1", "0.1"))),
    );
    for (const a of unauthenticated) expectError(a, 401, "auth", "401 comes before 429");
    const invalid = await Promise.all(
      Array.from({ length: RATE * 3 }, () => c2.client.createOrder(limit("eth_usdt", "sell", "1", "abc"))),
    );
    assert.ok(
      invalid.some((a) => a.status === 429),
      "some are limited",
    );
    assert.ok(
      invalid.some((a) => a.status === 400),
      "the first ones reach validation",
    );
    for (const a of invalid) {
      if (a.status === 429) expectError(a, 429, "rate", "429 comes before 400");
      else expectError(a, 400, "amount", "validation");
    }
  });
});
