/**
 * Signatures bound to the request and the time (docs/API.md 3), through a real server process: the
 * bound string `<X-Timestamp>\n<METHOD>\n<path>\n<raw query or body>`, each AUTH_TIMESTAMP refusal
 * (which consumes no nonce), the window's bounds and default, and that a bound signature opens
 * nothing but its own method, path, query, body and time, on REST and on the stream upgrade.
 * Requests without X-Timestamp keep the old form.
 */

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  type ApiResponse,
  boundSigningText,
  type CreatedOrder,
  signedHeaders,
  signText,
} from "../../src/client/index.ts";
import { StreamClient, StreamRejected } from "../../src/client/stream.ts";
import { expectError, expectOk, limit, TestServer, type TestUser } from "./harness.ts";

const BALANCES = "/1.0/trade/pairs/btc_usdt/user-balances";
const HISTORY = "/1.0/trade/pairs/user-history";
const CREATE = "/1.0/trade/create-order";
const JSON_TYPE = { "Content-Type": "application/json" };
const CYRILLIC = /[А-Яа-яЁё]/;

/** Asserts a 401 on `auth` with exactly this machine-readable code. */
function expectAuth(res: ApiResponse<unknown>, code: string, what: string): string[] {
  const messages = expectError(res, 401, "auth", what);
  assert.deepEqual((res.body as { codes: unknown }).codes, { auth: [code] }, `${what}: ${res.text}`);
  return messages;
}

/** Authorization, X-Timestamp (as given, any text), X-Recv-Window (when given), X-Signature of the bound string. */
function bound(
  user: TestUser,
  method: string,
  path: string,
  payload: string,
  timestamp: string | number = Date.now(),
  recvWindow?: string | number,
): Record<string, string> {
  const headers: Record<string, string> = {
    Authorization: user.apiToken,
    "X-Timestamp": String(timestamp),
    "X-Signature": signText(user.secretKey, boundSigningText(String(timestamp), method, path, payload)),
  };
  if (recvWindow !== undefined) headers["X-Recv-Window"] = String(recvWindow);
  return headers;
}

describe("signatures bound to the request and the time (docs/API.md 3)", () => {
  let server: TestServer;
  let user: TestUser;
  /** The balances `user` must keep: every refused order below changes nothing. */
  let balancesBefore: Record<string, [string, string]>;

  before(async () => {
    server = await TestServer.start();
    user = await server.newUser({ usdt: "1000", btc: "1" });
    balancesBefore = await server.balanceTable(user);
  });
  after(async () => {
    await server?.close();
  });

  /** A signed GET with exactly these headers. */
  const get = (path: string, headers: Record<string, string>, query?: string) =>
    user.client.raw("GET", path, { query, headers });
  /** A signed POST of `body` with exactly these headers. */
  const post = (path: string, body: string, headers: Record<string, string>) =>
    user.client.raw<CreatedOrder>("POST", path, { body, headers: { ...JSON_TYPE, ...headers } });

  describe("the bound form", () => {
    it("is what the client library sends by default, on GET and POST", async () => {
      expectOk(await user.client.balances("btc_usdt"), "bound GET");
      const order = expectOk(
        await user.client.createOrder(limit("btc_usdt", "buy", "1", "0.001")),
        "bound POST",
      );
      expectOk(await user.client.cancelOrder(order.id), "bound cancel");
      expectOk(await user.client.pairPage("btc_usdt"), "bound optionally signed GET");
      // Proof that the default really is bound: a clock ten minutes behind is refused.
      const late = server.client(user).with({ clock: () => Date.now() - 600_000 });
      expectAuth(await late.balances("btc_usdt"), "AUTH_TIMESTAMP", "a client whose clock is 10 min behind");
      expectOk(
        await late.balances("btc_usdt", { signatureForm: "legacy" }),
        "the same client in the old form",
      );
    });

    it("accepts a hand-made bound GET and POST (the string of the contract, byte for byte)", async () => {
      const query = "page=1&pageSize=5";
      expectOk(await get(HISTORY, bound(user, "GET", HISTORY, query), query), "GET with a query");
      expectOk(await get(BALANCES, bound(user, "GET", BALANCES, "")), "GET without a query");
      const body = JSON.stringify(limit("btc_usdt", "buy", "1", "0.001"));
      const order = expectOk(await post(CREATE, body, bound(user, "POST", CREATE, body)), "POST");
      expectOk(await user.client.cancelOrder(order.id));
    });

    it("checks a nonce as before", async () => {
      const query = `nonce=${Date.now()}`;
      expectOk(await get(BALANCES, bound(user, "GET", BALANCES, query), query), "first use");
      expectAuth(
        await get(BALANCES, bound(user, "GET", BALANCES, query), query),
        "AUTH_NONCE_REPLAY",
        "the same nonce, freshly timed and signed",
      );
    });
  });

  describe("AUTH_TIMESTAMP", () => {
    it("refuses an X-Timestamp that is empty or not an integer, GET and POST", async () => {
      const now = Date.now();
      const body = JSON.stringify(limit("btc_usdt", "buy", "1", "0.001"));
      for (const ts of ["", "abc", `${now}.0`, "1.7e12", `+${now}`, `-${now}`, `${now}ms`, "0x1"]) {
        expectAuth(
          await get(BALANCES, bound(user, "GET", BALANCES, "", ts)),
          "AUTH_TIMESTAMP",
          `GET X-Timestamp ${JSON.stringify(ts)}`,
        );
        expectAuth(
          await post(CREATE, body, bound(user, "POST", CREATE, body, ts)),
          "AUTH_TIMESTAMP",
          `POST X-Timestamp ${JSON.stringify(ts)}`,
        );
      }
      assert.deepEqual(await server.balanceTable(user), balancesBefore, "no refused order changed anything");
    });

    it("refuses an X-Recv-Window that is not an integer from 1 to 60000, however fresh the timestamp", async () => {
      for (const w of ["0", "60001", "-5", "1.5", "abc", "5e3", "100000"]) {
        const headers = bound(user, "GET", BALANCES, "", Date.now(), w);
        expectAuth(await get(BALANCES, headers), "AUTH_TIMESTAMP", `X-Recv-Window ${JSON.stringify(w)}`);
      }
    });

    it("refuses a timestamp more than the default 5000 ms away, in the past or the future", async () => {
      // One second of margin on each side for the time the request takes.
      expectOk(await get(BALANCES, bound(user, "GET", BALANCES, "", Date.now() - 4000)), "4 s old");
      expectOk(await get(BALANCES, bound(user, "GET", BALANCES, "", Date.now() + 4000)), "4 s ahead");
      expectAuth(
        await get(BALANCES, bound(user, "GET", BALANCES, "", Date.now() - 6000)),
        "AUTH_TIMESTAMP",
        "6 s old",
      );
      expectAuth(
        await get(BALANCES, bound(user, "GET", BALANCES, "", Date.now() + 6000)),
        "AUTH_TIMESTAMP",
        "6 s ahead",
      );
      const body = JSON.stringify(limit("btc_usdt", "buy", "1", "0.001"));
      const stale = bound(user, "POST", CREATE, body, Date.now() - 6000);
      expectAuth(await post(CREATE, body, stale), "AUTH_TIMESTAMP", "a POST 6 s old");
      assert.deepEqual(await server.balanceTable(user), balancesBefore);
    });

    it("takes X-Recv-Window up to 60000 ms", async () => {
      expectOk(
        await get(BALANCES, bound(user, "GET", BALANCES, "", Date.now() - 30_000, 60_000)),
        "30 s old, window 60 s",
      );
      expectOk(
        await get(BALANCES, bound(user, "GET", BALANCES, "", Date.now() + 59_000, 60_000)),
        "59 s ahead, window 60 s",
      );
      expectAuth(
        await get(BALANCES, bound(user, "GET", BALANCES, "", Date.now() - 61_000, 60_000)),
        "AUTH_TIMESTAMP",
        "61 s old, window 60 s",
      );
      expectOk(
        await get(BALANCES, bound(user, "GET", BALANCES, "", Date.now() - 7000, "10000")),
        "7 s old, window 10 s",
      );
    });

    it("takes X-Recv-Window down to 1 ms", async () => {
      expectAuth(
        await get(BALANCES, bound(user, "GET", BALANCES, "", Date.now() - 1000, 1)),
        "AUTH_TIMESTAMP",
        "1 s old, window 1 ms",
      );
      // A timestamp lands within 1 ms of the server's clock only by luck of the request's own
      // latency: aim a little ahead of the clock, by each offset in turn, until one lands. A window
      // of 1 refused as malformed would refuse them all.
      const refusals = new Set<string>();
      let accepted = false;
      for (let attempt = 0; attempt < 200 && !accepted; attempt++) {
        const res = await get(BALANCES, bound(user, "GET", BALANCES, "", Date.now() + (attempt % 8), 1));
        if (res.status === 200) accepted = true;
        else refusals.add(JSON.stringify((res.body as { codes: unknown }).codes));
      }
      assert.ok(accepted, "no request landed within a 1 ms window in 200 attempts");
      assert.deepEqual(
        [...refusals].filter((r) => r !== '{"auth":["AUTH_TIMESTAMP"]}'),
        [],
      );
    });

    it("consumes no nonce: the same nonce is accepted once the timestamp is good", async () => {
      const query = `nonce=${Date.now()}`;
      expectAuth(
        await get(BALANCES, bound(user, "GET", BALANCES, query, Date.now() - 6000), query),
        "AUTH_TIMESTAMP",
        "stale",
      );
      expectAuth(
        await get(BALANCES, bound(user, "GET", BALANCES, query, "x"), query),
        "AUTH_TIMESTAMP",
        "malformed",
      );
      expectAuth(
        await get(BALANCES, bound(user, "GET", BALANCES, query, Date.now(), 0), query),
        "AUTH_TIMESTAMP",
        "bad window",
      );
      expectOk(await get(BALANCES, bound(user, "GET", BALANCES, query), query), "the nonce is still unused");
      expectAuth(
        await get(BALANCES, bound(user, "GET", BALANCES, query), query),
        "AUTH_NONCE_REPLAY",
        "and now used",
      );

      const body = JSON.stringify({ ...limit("btc_usdt", "buy", "1", "0.001"), nonce: Date.now() + 1 });
      expectAuth(
        await post(CREATE, body, bound(user, "POST", CREATE, body, Date.now() + 6000)),
        "AUTH_TIMESTAMP",
        "POST ahead",
      );
      const order = expectOk(
        await post(CREATE, body, bound(user, "POST", CREATE, body)),
        "the POST's nonce is unused",
      );
      expectOk(await user.client.cancelOrder(order.id));
      expectAuth(
        await post(CREATE, body, bound(user, "POST", CREATE, body)),
        "AUTH_NONCE_REPLAY",
        "POST replayed",
      );
    });

    it("is checked before the signature, and says so in Russian too", async () => {
      const stale = { ...bound(user, "GET", BALANCES, "", Date.now() - 6000), "X-Signature": "0".repeat(64) };
      const en = expectAuth(await get(BALANCES, stale), "AUTH_TIMESTAMP", "stale and wrongly signed");
      assert.match(en[0], /X-Timestamp/);
      const ru = expectAuth(
        await get(BALANCES, { ...stale, "Accept-Language": "ru" }),
        "AUTH_TIMESTAMP",
        "ru",
      );
      assert.match(ru[0], CYRILLIC);
    });
  });

  describe("what a bound signature opens", () => {
    it("only its own path: not another pair's read, not another read without a query", async () => {
      const headers = bound(user, "GET", BALANCES, "");
      const other = "/1.0/trade/pairs/eth_usdt/user-balances";
      expectAuth(await get(other, headers), "AUTH_SIGNATURE_INVALID", "balances of another pair");
      expectAuth(await get(HISTORY, headers), "AUTH_SIGNATURE_INVALID", "user history");
      expectOk(await get(BALANCES, headers), "its own path");
      // The old form's signature of "" opens every query-less read: the hole this closes.
      const old = { Authorization: user.apiToken, "X-Signature": signText(user.secretKey, "") };
      expectOk(await get(other, old), "old form, another pair");
      expectOk(await get(HISTORY, old), "old form, another read");
    });

    it("the path as sent, not decoded", async () => {
      const order = expectOk(await user.client.createOrder(limit("btc_usdt", "buy", "1", "0.001")));
      const plain = `/1.0/trade/orders/${order.id}`;
      // `%3N` decodes to the digit N: the same id, written another way.
      const digits = String(order.id);
      const encoded = `/1.0/trade/orders/%3${digits[0]}${digits.slice(1)}`;
      expectOk(await get(plain, bound(user, "GET", plain, "")), "the order by its id");
      expectAuth(
        await get(encoded, bound(user, "GET", plain, "")),
        "AUTH_SIGNATURE_INVALID",
        "signed decoded, sent encoded",
      );
      const asSent = await get(encoded, bound(user, "GET", encoded, ""));
      assert.notEqual(asSent.status, 401, `signed as sent, it passes authentication: ${asSent.text}`);
      expectOk(await user.client.cancelOrder(order.id));
    });

    it("only its own method", async () => {
      // Signed as a POST of an empty payload, sent as the GET of the same path.
      expectAuth(
        await get(HISTORY, bound(user, "POST", HISTORY, "")),
        "AUTH_SIGNATURE_INVALID",
        "POST-signed GET",
      );
      const body = JSON.stringify(limit("btc_usdt", "buy", "1", "0.001"));
      expectAuth(
        await post(CREATE, body, bound(user, "GET", CREATE, body)),
        "AUTH_SIGNATURE_INVALID",
        "GET-signed POST",
      );
      expectAuth(
        await post(CREATE, body, bound(user, "post", CREATE, body)),
        "AUTH_SIGNATURE_INVALID",
        "lower-case method",
      );
      assert.deepEqual(await server.balanceTable(user), balancesBefore);
    });

    it("only its own query", async () => {
      const headers = bound(user, "GET", HISTORY, "page=1&pageSize=5");
      expectOk(await get(HISTORY, headers, "page=1&pageSize=5"), "as signed");
      expectAuth(await get(HISTORY, headers, "page=2&pageSize=5"), "AUTH_SIGNATURE_INVALID", "another page");
      expectAuth(await get(HISTORY, headers, "pageSize=5&page=1"), "AUTH_SIGNATURE_INVALID", "reordered");
      expectAuth(await get(HISTORY, headers), "AUTH_SIGNATURE_INVALID", "no query");
    });

    it("only its own body", async () => {
      const body = JSON.stringify(limit("btc_usdt", "buy", "1", "0.001"));
      const headers = bound(user, "POST", CREATE, body);
      const bigger = JSON.stringify(limit("btc_usdt", "buy", "1", "0.002"));
      expectAuth(await post(CREATE, bigger, headers), "AUTH_SIGNATURE_INVALID", "another amount");
      expectAuth(
        await post(CREATE, JSON.stringify(JSON.parse(body), null, 1), headers),
        "AUTH_SIGNATURE_INVALID",
        "re-spaced",
      );
      assert.deepEqual(await server.balanceTable(user), balancesBefore);
    });

    it("only its own time: another X-Timestamp with the same signature is refused", async () => {
      const ts = Date.now();
      const headers = bound(user, "GET", BALANCES, "", ts);
      expectAuth(
        await get(BALANCES, { ...headers, "X-Timestamp": String(ts + 1) }),
        "AUTH_SIGNATURE_INVALID",
        "ts + 1",
      );
      expectAuth(
        await get(BALANCES, { ...headers, "X-Timestamp": `0${ts}` }),
        "AUTH_SIGNATURE_INVALID",
        "leading zero",
      );
      expectOk(await get(BALANCES, headers), "as signed");
    });

    it("not the old form: an old-form signature with X-Timestamp is refused", async () => {
      const headers = {
        Authorization: user.apiToken,
        "X-Timestamp": String(Date.now()),
        "X-Signature": signText(user.secretKey, ""),
      };
      expectAuth(await get(BALANCES, headers), "AUTH_SIGNATURE_INVALID", "old-form signature, bound request");
    });
  });

  describe("requests without X-Timestamp", () => {
    it("are signed and checked as before, and X-Recv-Window alone is ignored", async () => {
      const legacy = server.client(user).with({ signatureForm: "legacy" });
      expectOk(await legacy.balances("btc_usdt"), "old-form GET");
      const order = expectOk(
        await legacy.createOrder(limit("btc_usdt", "buy", "1", "0.001")),
        "old-form POST",
      );
      expectOk(await legacy.cancelOrder(order.id), "old-form cancel");
      for (const w of ["abc", "0", "1"]) {
        const headers = {
          Authorization: user.apiToken,
          "X-Signature": signText(user.secretKey, ""),
          "X-Recv-Window": w,
        };
        expectOk(await get(BALANCES, headers), `X-Recv-Window ${w} without X-Timestamp`);
      }
      expectAuth(
        await get(BALANCES, { Authorization: user.apiToken, "X-Signature": "0".repeat(64) }),
        "AUTH_SIGNATURE_INVALID",
        "a wrong old-form signature",
      );
    });
  });

  describe("the stream upgrade", () => {
    /** Opens `user_orders` of the user with these headers; the 401 or 403 body when refused. */
    const upgrade = async (headers: Record<string, string>, query = `streams=user_orders:${user.uid}`) => {
      const answer = await StreamClient.connect({
        baseUrl: () => server.origin,
        streams: [],
        rawQuery: query,
        headers,
      }).then(
        async (stream) => {
          await stream.close();
          return null;
        },
        (error: unknown) => error,
      );
      if (answer === null) return null;
      assert.ok(answer instanceof StreamRejected, String(answer));
      return { status: answer.status, codes: JSON.parse(answer.text).codes };
    };

    it("takes the bound form with GET and /stream, refuses it for another path, method or time", async () => {
      const query = `streams=user_orders:${user.uid}`;
      assert.equal(await upgrade(bound(user, "GET", "/stream", query), query), null, "bound upgrade");
      const refusedWith = (code: string) => ({ status: 401, codes: { auth: [code] } });
      assert.deepEqual(
        await upgrade(bound(user, "GET", "/1.0/stream", query), query),
        refusedWith("AUTH_SIGNATURE_INVALID"),
      );
      assert.deepEqual(
        await upgrade(bound(user, "POST", "/stream", query), query),
        refusedWith("AUTH_SIGNATURE_INVALID"),
      );
      assert.deepEqual(
        await upgrade(bound(user, "GET", "/stream", `${query},exchanges`), query),
        refusedWith("AUTH_SIGNATURE_INVALID"),
      );
      assert.deepEqual(
        await upgrade(bound(user, "GET", "/stream", query, Date.now() - 6000), query),
        refusedWith("AUTH_TIMESTAMP"),
      );
      assert.deepEqual(
        await upgrade(bound(user, "GET", "/stream", query, ""), query),
        refusedWith("AUTH_TIMESTAMP"),
      );
      assert.deepEqual(
        await upgrade(bound(user, "GET", "/stream", query, Date.now(), 60_001), query),
        refusedWith("AUTH_TIMESTAMP"),
      );
      // The old form is still accepted.
      const old = { Authorization: user.apiToken, "X-Signature": signText(user.secretKey, query) };
      assert.equal(await upgrade(old, query), null, "old-form upgrade");
    });

    it("consumes no nonce on AUTH_TIMESTAMP, and the stream client signs the bound form", async () => {
      const query = `streams=user_orders:${user.uid}&nonce=${Date.now()}`;
      assert.deepEqual(await upgrade(bound(user, "GET", "/stream", query, Date.now() + 6000), query), {
        status: 401,
        codes: { auth: ["AUTH_TIMESTAMP"] },
      });
      assert.equal(await upgrade(bound(user, "GET", "/stream", query), query), null, "the nonce is unused");
      assert.deepEqual(await upgrade(bound(user, "GET", "/stream", query), query), {
        status: 401,
        codes: { auth: ["AUTH_NONCE_REPLAY"] },
      });
      const signer = {
        apiToken: user.apiToken,
        secretKey: user.secretKey,
        clock: () => Date.now() - 600_000,
      };
      const late = signedHeaders(signer, "GET", "/stream", `streams=user_orders:${user.uid}`);
      assert.deepEqual(await upgrade(late), { status: 401, codes: { auth: ["AUTH_TIMESTAMP"] } });
      const stream = await StreamClient.connect({
        baseUrl: () => server.origin,
        streams: [`user_orders:${user.uid}`],
        apiToken: user.apiToken,
        secretKey: user.secretKey,
      });
      await stream.close();
    });
  });
});
