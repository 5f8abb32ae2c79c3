/**
 * HTTP edges and input readings through the real server: client text that names a built-in object
 * property (`constructor`, `__proto__`), `null` where absence has a meaning (docs/API.md 1), the one
 * reading of integers (docs/API.md 1, src/util/integers.ts), nonce values (docs/API.md 1, 3), 405 with `Allow`
 * on every known path, 414 / 431 over the request-head limits, and the malformed requests that
 * uWebSockets.js refuses before the application sees them (raw sockets: the server stays up).
 */

import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { type ApiResponse, errorsOf } from "../../src/client/index.ts";
import { StreamClient, StreamRejected } from "../../src/client/stream.ts";
import { openRaw } from "../support/raw-http.ts";
import {
  expectError,
  expectOk,
  limit,
  rawHttp,
  sharedServer,
  type TestServer,
  type TestUser,
} from "./harness.ts";

const JSON_TYPE = { "Content-Type": "application/json" };

/** A signed POST of exactly this body text. */
function post(user: TestUser, path: string, body: string): Promise<ApiResponse<unknown>> {
  return user.client.raw("POST", `/1.0${path}`, { body, headers: JSON_TYPE, sign: true });
}

/** Integer texts and values that docs/API.md 1 refuses on every unsigned integer field. */
const NOT_INTEGERS: readonly unknown[] = [
  "",
  "1.5",
  " 30",
  "30 ",
  "3e1",
  "+3",
  "0x1e",
  1.5,
  true,
  false,
  [],
  {},
  -1,
  "-1",
];

describe("HTTP edges and input", () => {
  let server: TestServer;
  let user: TestUser;
  sharedServer((s) => {
    server = s;
  });
  before(async () => {
    user = await server.newUser({ usdt: "1000", eth: "10" });
  });

  describe("client text never reads a prototype", () => {
    for (const entry of ["constructor:x", "__proto__:x", "toString:1", "hasOwnProperty:a", "valueOf:b"]) {
      it(`refuses the stream channel ${entry} at the upgrade with 400 errors.streams`, async () => {
        const rejected = await StreamClient.connect({ baseUrl: server.origin, streams: [entry] }).then(
          (client) => {
            client.close();
            return null;
          },
          (error: unknown) => error,
        );
        assert.ok(rejected instanceof StreamRejected, `${entry}: upgrade accepted`);
        assert.equal(rejected.status, 400);
        assert.deepEqual(Object.keys(JSON.parse(rejected.text).errors), ["streams"]);
      });
    }

    it("gives the client library's errors map no prototype", async () => {
      const errors = errorsOf(await post(user, "/trade/cancel-order", "{}"));
      assert.ok(errors !== undefined);
      assert.deepEqual(Object.keys(errors), ["orderId"]);
      assert.equal(errors.constructor, undefined);
      assert.equal(errors.toString, undefined);
    });
  });

  describe("null is not absent (docs/API.md 1)", () => {
    it("refuses cancel-all-orders with a null, numeric or unknown pairName and cancels nothing", async () => {
      const order = expectOk(await user.client.createOrder(limit("eth_usdt", "buy", "1", "1")));
      for (const body of [
        '{"pairName":null}',
        '{"pairName":5}',
        '{"pairName":""}',
        '{"pairName":"constructor"}',
      ]) {
        expectError(await post(user, "/trade/cancel-all-orders", body), 400, "pairName", body);
      }
      const still = expectOk(await user.client.order(order.id)) as { isCancelled: boolean };
      assert.equal(still.isCancelled, false, "an order was cancelled by a refused cancel-all");
      const all = expectOk(await post(user, "/trade/cancel-all-orders", "{}")) as { cancelled: number[] };
      assert.deepEqual(all.cancelled, [order.id]);
    });

    it("refuses POST /admin/users with a null uid and creates no user", async () => {
      const res = await server.admin.raw("POST", "/admin/users", {
        body: '{"uid":null}',
        headers: { ...JSON_TYPE, Authorization: `Bearer ${server.adminToken}` },
      });
      expectError(res, 400, "uid");
    });

    it("refuses an amend with a null amount or price", async () => {
      const order = expectOk(await user.client.createOrder(limit("eth_usdt", "buy", "1", "1")));
      const amount = await post(user, "/trade/amend-order", `{"orderId":${order.id},"amount":null}`);
      expectError(amount, 400, "amount", "amount null");
      const price = await post(
        user,
        "/trade/amend-order",
        `{"orderId":${order.id},"price":null,"amount":"0.5"}`,
      );
      expectError(price, 400, "price", "price null");
      const still = expectOk(await user.client.order(order.id)) as { amount: number };
      assert.equal(still.amount, 1, "a refused amend changed the order");
    });

    it("keeps the documented nullable order options (clientOrderId, timeInForce, postOnly) as absent", async () => {
      const body = JSON.stringify({
        ...limit("eth_usdt", "buy", "1", "1"),
        clientOrderId: null,
        timeInForce: null,
        postOnly: null,
      });
      expectOk(await post(user, "/trade/create-order", body));
    });
  });

  describe("integers (docs/API.md 1)", () => {
    it("reads orderId as a JSON integer or a string of digits and refuses anything else", async () => {
      const order = expectOk(await user.client.createOrder(limit("eth_usdt", "buy", "1", "1")));
      for (const id of [
        ...NOT_INTEGERS,
        0,
        "0",
        2 ** 53,
        "9007199254740992",
        "123456789012345678901234567890",
      ]) {
        const body = `{"orderId":${JSON.stringify(id)}}`;
        expectError(await post(user, "/trade/cancel-order", body), 400, "orderId", body);
      }
      expectOk(await post(user, "/trade/cancel-order", `{"orderId":"${order.id}"}`), "string id");
    });

    it("reads each element of orderIds by the same rule", async () => {
      const order = expectOk(await user.client.createOrder(limit("eth_usdt", "buy", "1", "1")));
      const ids = ["1.5", " 3", -1, true, `${order.id}`];
      const answer = expectOk(
        await post(user, "/trade/cancel-orders", JSON.stringify({ orderIds: ids })),
      ) as { orderId: unknown; errors?: Record<string, string[]> }[];
      assert.equal(answer.length, ids.length);
      for (let i = 0; i < ids.length - 1; i++) {
        assert.ok(
          answer[i].errors?.orderId !== undefined,
          `element ${i} (${JSON.stringify(ids[i])}) accepted`,
        );
      }
      assert.deepEqual(answer[ids.length - 1], { orderId: order.id });
    });

    it("reads timeout as an integer 0..600 and refuses anything else", async () => {
      for (const t of [...NOT_INTEGERS, 601, "601", null]) {
        const body = `{"timeout":${JSON.stringify(t)}}`;
        expectError(await post(user, "/trade/cancel-all-after", body), 400, "timeout", body);
      }
      const armed = expectOk(await post(user, "/trade/cancel-all-after", '{"timeout":"030"}')) as {
        triggerTime: number;
      };
      assert.ok(armed.triggerTime > Date.now());
      expectOk(await post(user, "/trade/cancel-all-after", '{"timeout":0}'), "disarm");
    });

    it("refuses a negative, fractional, malformed or over-64-bit nonce in a body with 400 errors.nonce", async () => {
      for (const n of [...NOT_INTEGERS, null, "18446744073709551616", 1e30]) {
        const body = `{"timeout":0,"nonce":${JSON.stringify(n)}}`;
        expectError(await post(user, "/trade/cancel-all-after", body), 400, "nonce", body);
      }
    });

    it("refuses nonce=-1 and other non-integers in a query with 400 errors.nonce", async () => {
      for (const n of ["-1", "1.5", "", "3e1", "%2030", "18446744073709551616"]) {
        const bal = await user.client.raw("GET", "/1.0/trade/pairs/eth_usdt/user-balances", {
          query: `nonce=${n}`,
          sign: true,
        });
        expectError(bal, 400, "nonce", `nonce=${n}`);
      }
    });

    it("accepts a nonce up to 2^64 - 1, as a long JSON number or a string, and still refuses a replay", async () => {
      const fresh = await server.newUser();
      const big = "18446744073709551614";
      expectOk(await post(fresh, "/trade/cancel-all-after", `{"timeout":0,"nonce":${big}}`), "JSON number");
      expectOk(
        await post(fresh, "/trade/cancel-all-after", '{"timeout":0,"nonce":"18446744073709551615"}'),
        "string",
      );
      expectError(
        await post(fresh, "/trade/cancel-all-after", '{"timeout":0,"nonce":"18446744073709551615"}'),
        401,
        "auth",
        "replay",
      );
    });
  });

  describe("405 with Allow on every known path", () => {
    const cases: [string, string, string][] = [
      ["DELETE", "/health", "GET"],
      ["POST", "/metrics", "GET"],
      ["POST", "/1.0/openapi.json", "GET, OPTIONS"],
      ["GET", "/1.0/trade/create-order", "POST, OPTIONS"],
      ["DELETE", "/1.0/trade/pairs/btc_usdt/orders", "GET, OPTIONS"],
      ["POST", "/stream", "GET"],
      ["PUT", "/", "GET"],
      ["GET", "/admin/users", "POST"],
      ["DELETE", "/admin/deposit", "POST"],
      ["POST", "/admin/fees", "GET"],
    ];
    for (const [method, path, allow] of cases) {
      it(`answers ${method} ${path} with 405 and Allow: ${allow}`, async () => {
        const res = await rawHttp(server, method, path, {});
        assert.equal(res.status, 405, res.text);
        assert.equal(res.headers.allow, allow);
        assert.deepEqual(Object.keys((res.body as { errors: object }).errors), ["path"]);
      });
    }

    it("still answers 404 for an unknown pair before 405", async () => {
      const res = await rawHttp(server, "DELETE", "/1.0/trade/pairs/nope_nope/orders", {});
      assert.equal(res.status, 404);
    });

    it("keeps answering CORS preflights on the REST base", async () => {
      const res = await rawHttp(server, "OPTIONS", "/1.0/trade/create-order", {
        Origin: "http://example.test",
        "Access-Control-Request-Method": "POST",
      });
      assert.equal(res.status, 204);
    });
  });

  describe("limits of the request head", () => {
    it("answers a request target over 4 KiB with 414 errors.path", async () => {
      const res = await rawHttp(server, "GET", `/1.0/trade/pairs?x=${"a".repeat(9000)}`, {});
      assert.equal(res.status, 414, res.text);
      assert.deepEqual(Object.keys((res.body as { errors: object }).errors), ["path"]);
      const post414 = await rawHttp(
        server,
        "POST",
        `/1.0/trade/create-order?x=${"a".repeat(9000)}`,
        JSON_TYPE,
      );
      assert.equal(post414.status, 414, post414.text);
    });

    it("answers a header the server reads that makes the head pass 4 KiB with 431 errors.headers", async () => {
      const res = await rawHttp(server, "GET", "/1.0/trade/pairs", { Authorization: "a".repeat(9000) });
      assert.equal(res.status, 431, res.text);
      assert.deepEqual(Object.keys((res.body as { errors: object }).errors), ["headers"]);
    });

    const refused: [string, string][] = [
      ["an unknown method QUERY", "QUERY /health HTTP/1.1\r\nHost: x\r\n\r\n"],
      ["an unknown method FOO", "FOO /health HTTP/1.1\r\nHost: x\r\n\r\n"],
      ["a header name with _", "GET /health HTTP/1.1\r\nHost: x\r\nX-a_b: v\r\n\r\n"],
      ["a header name with .", "GET /health HTTP/1.1\r\nHost: x\r\nX-a.b: v\r\n\r\n"],
      ["a request head over 64 KiB", `GET /health?${"a".repeat(200_000)} HTTP/1.1\r\nHost: x\r\n\r\n`],
    ];
    for (const [what, request] of refused) {
      it(`stays up and serves the next connection at once after ${what} (refused by uWS)`, async () => {
        const first = openRaw(server, request);
        try {
          // The next connection is served while the refused one is closed or still held.
          const health = expectOk(await server.public.health(), "health after a refused request");
          assert.equal(health.status, "ok");
          assert.equal(first.received(), "", `${what}: answered ${first.received().slice(0, 80)}`);
        } finally {
          first.destroy();
        }
      });
    }
  });
});
