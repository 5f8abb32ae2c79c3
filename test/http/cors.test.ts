/**
 * CORS on the REST base (docs/API.md 10): preflights and `Access-Control-Allow-Origin` for the
 * origins of `--cors-origin` only; without the setting no answer carries a CORS header.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, test } from "node:test";
import { ConfigError } from "../../src/config/config-error.ts";
import { parseSettings } from "../../src/config/settings.ts";
import { sign, startServer, type TestServer } from "../stream/helpers.ts";

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** One request with exactly these headers (fetch would not let a test set `Origin`). */
function request(
  server: TestServer,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = "",
): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port: server.port,
        method,
        path,
        headers: { connection: "close", ...headers },
        agent: false, // a fresh socket each time: never one the server is closing
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const ALLOWED = "http://app.example";
const ALSO_ALLOWED = "http://localhost:5173";
const OTHER = "http://evil.example";

describe("CORS with allowed origins", () => {
  let server: TestServer;
  before(async () => {
    server = await startServer(1, ["--cors-origin", `${ALLOWED}, ${ALSO_ALLOWED}`]);
  });
  after(async () => {
    await server.close();
  });

  test("answers a preflight from an allowed origin with the methods and headers a signed call needs", async () => {
    for (const path of [
      "/1.0/trade/create-order",
      "/1.0/trade/pairs/btc_usdt/user-orders",
      "/1.0/anything",
    ]) {
      const r = await request(server, "OPTIONS", path, {
        origin: ALSO_ALLOWED,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, x-signature, content-type",
      });
      assert.equal(r.status, 204, path);
      assert.equal(r.headers["access-control-allow-origin"], ALSO_ALLOWED);
      assert.match(String(r.headers["access-control-allow-methods"]), /POST/);
      const allowed = String(r.headers["access-control-allow-headers"]).toLowerCase();
      for (const h of ["authorization", "x-signature", "content-type"]) assert.ok(allowed.includes(h), h);
      assert.equal(r.text, "");
    }
  });

  test("a preflight from another origin gets no CORS headers (the browser refuses the call)", async () => {
    const r = await request(server, "OPTIONS", "/1.0/trade/create-order", {
      origin: OTHER,
      "access-control-request-method": "POST",
    });
    assert.equal(r.status, 204);
    assert.equal(r.headers["access-control-allow-origin"], undefined);
    assert.equal(r.headers["access-control-allow-methods"], undefined);
  });

  test("answers of the REST base carry Access-Control-Allow-Origin for an allowed origin only", async () => {
    const ok = await request(server, "GET", "/1.0/trade/pairs", { origin: ALLOWED });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers["access-control-allow-origin"], ALLOWED);
    assert.match(String(ok.headers.vary), /Origin/);
    assert.match(String(ok.headers["access-control-expose-headers"]), /Retry-After/);

    // Errors too, or a browser script could not read why it failed.
    const unauth = await request(server, "GET", "/1.0/trade/pairs/btc_usdt/user-balances", {
      origin: ALLOWED,
    });
    assert.equal(unauth.status, 401);
    assert.equal(unauth.headers["access-control-allow-origin"], ALLOWED);

    const user = server.users[0];
    const body = "{}";
    const signed = await request(
      server,
      "POST",
      "/1.0/trade/listen-key",
      {
        origin: ALLOWED.toUpperCase(),
        "content-type": "application/json",
        authorization: user.apiToken,
        "x-signature": sign(user.secretKey, body),
      },
      body,
    );
    assert.equal(signed.status, 200);
    assert.equal(
      signed.headers["access-control-allow-origin"],
      ALLOWED.toUpperCase(),
      "origins match in any case",
    );

    const other = await request(server, "GET", "/1.0/trade/pairs", { origin: OTHER });
    assert.equal(other.status, 200);
    assert.equal(other.headers["access-control-allow-origin"], undefined);
    const none = await request(server, "GET", "/1.0/trade/pairs", {});
    assert.equal(none.headers["access-control-allow-origin"], undefined);
  });
});

describe("CORS off (the default)", () => {
  let server: TestServer;
  before(async () => {
    server = await startServer(1);
  });
  after(async () => {
    await server.close();
  });

  test("no answer carries CORS headers, whatever the origin", async () => {
    const get = await request(server, "GET", "/1.0/trade/pairs", { origin: ALLOWED });
    assert.equal(get.status, 200);
    assert.equal(get.headers["access-control-allow-origin"], undefined);
    const pre = await request(server, "OPTIONS", "/1.0/trade/create-order", {
      origin: ALLOWED,
      "access-control-request-method": "POST",
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers["access-control-allow-origin"], undefined);
  });
});

describe("--cors-origin / CORS_ORIGIN", () => {
  test("takes a comma-separated list of origins or *, a flag winning over the variable", () => {
    assert.deepEqual(parseSettings([], {}).corsOrigins, []);
    assert.deepEqual(
      parseSettings([], { CORS_ORIGIN: "https://A.example, http://b.example:8080" }).corsOrigins,
      ["https://a.example", "http://b.example:8080"],
    );
    assert.deepEqual(parseSettings(["--cors-origin", "*"], { CORS_ORIGIN: "http://x.example" }).corsOrigins, [
      "*",
    ]);
  });

  test("refuses what is not an origin, naming it", () => {
    for (const bad of ["app.example", "http://app.example/path", "http://"]) {
      assert.throws(
        () => parseSettings(["--cors-origin", bad], {}),
        (e: Error) => e instanceof ConfigError && e.message.includes("--cors-origin"),
        bad,
      );
    }
  });
});
