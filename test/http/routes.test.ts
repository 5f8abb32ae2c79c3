/**
 * The route list (src/http/route-list.ts): each route file is an entry of the OpenAPI table, its
 * allowed body fields are its documented request schema, and the server mounts every one at its
 * path, with its steps, and answers 405 for another method on it.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ROUTES } from "../../src/documents/openapi-routes.ts";
import { REST_ROUTES } from "../../src/http/route-list.ts";
import type { Route } from "../../src/http/route-types.ts";
import { requestSchemas } from "../../src/wire/request-schemas.ts";
import { sharedServer, TEST_CONFIG, type TestServer } from "../e2e/harness.ts";

/** The properties a body schema names, over every branch of its `oneOf`. */
function documentedFields(schema: unknown): Set<string> {
  const s = schema as { properties?: object; oneOf?: unknown[] };
  const out = new Set(Object.keys(s.properties ?? {}));
  for (const branch of s.oneOf ?? []) for (const k of documentedFields(branch)) out.add(k);
  return out;
}

/** The route's path with its parameters filled: a configured pair, a known period, an order id. */
function concretePath(route: Route): string {
  return route.path.replace("{pairName}", "btc_usdt").replace("{period}", "1m").replace("{orderId}", "1");
}

/**
 * What a request without credentials answers on a mounted route: a signed POST stops at the media
 * type step (415), a signed GET at the auth step (401), every other GET answers 200.
 */
function expectedStatus(route: Route): number {
  if (route.kind === "signedPost") return 415;
  if (route.auth === "signedQuery") return 401;
  return 200;
}

describe("the route list", () => {
  test("every route is an entry of the OpenAPI table, and no two share an operation or a path", () => {
    const specs = new Set<object>(ROUTES);
    for (const r of REST_ROUTES) assert.ok(specs.has(r), `${r.method} ${r.path} is not in ROUTES`);
    const ops = ROUTES.map((r) => r.operationId);
    assert.equal(new Set(ops).size, ops.length, "operationIds are unique");
    const calls = ROUTES.map((r) => `${r.method} ${r.path}`);
    assert.equal(new Set(calls).size, calls.length, "method + path are unique");
  });

  test("a signed POST allows exactly the body fields its request schema documents", () => {
    let posts = 0;
    for (const r of REST_ROUTES) {
      if (r.kind !== "signedPost") continue;
      posts++;
      const documented = [...documentedFields(r.body(requestSchemas(TEST_CONFIG)))].sort();
      assert.deepEqual([...r.fields].sort(), documented, r.path);
      assert.ok(r.fields.has("nonce"), `${r.path}: nonce is defined for every authenticated call`);
    }
    assert.ok(posts >= 9, "the order, batch, amend, cancel-all, dead-man and listen-key POSTs are listed");
  });

  describe("served", () => {
    let server: TestServer;
    sharedServer((s) => {
      server = s;
    });

    test("every route answers at its path with its own steps (no listed route is left unmounted)", async () => {
      for (const r of REST_ROUTES) {
        const url = server.origin + concretePath(r);
        const res =
          r.method === "post"
            ? await fetch(url, { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" })
            : await fetch(url);
        const text = await res.text();
        assert.equal(res.status, expectedStatus(r), `${r.method} ${r.path}: ${text}`);
        if (res.status !== 200) assert.ok(!text.includes('"path"'), `${r.path}: answered as an unknown path`);
      }
    });

    test("another method on every path of the REST base answers 405", async () => {
      for (const r of REST_ROUTES) {
        if (!r.path.startsWith("/1.0/")) continue;
        const res = await fetch(server.origin + concretePath(r), { method: "DELETE" });
        const text = await res.text();
        assert.equal(res.status, 405, `DELETE ${r.path}: ${text}`);
      }
    });

    test("a path that no route serves answers 404 `path`", async () => {
      const res = await fetch(`${server.origin}/1.0/trade/no-such-route`);
      assert.equal(res.status, 404);
      assert.ok(((await res.json()) as { errors: Record<string, unknown> }).errors.path !== undefined);
    });
  });
});
