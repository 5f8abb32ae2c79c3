/**
 * docs/API.md stays in step with the code: it names every call of the OpenAPI route table, links
 * the error catalogue, and the README points at it rather than at files outside the repository.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { ROUTES } from "../../src/documents/openapi-routes.ts";
import { REPO_ROOT } from "../e2e/harness.ts";

const doc = readFileSync(join(REPO_ROOT, "docs/API.md"), "utf8");

describe("docs/API.md", () => {
  test("describes every call of the route table by its method and whole path", () => {
    // Calls are named in code spans as `METHOD /path`, REST calls mostly relative to the base
    // `/1.0` (docs/API.md section 1). The whole path must match: `/orders` is not `/orders/l3`.
    const named = new Set<string>();
    for (const m of doc.matchAll(/`(GET|POST) (\/[^`\s?]*)/g)) {
      named.add(`${m[1]} ${m[2]}`);
      if (m[2].startsWith("/1.0/")) named.add(`${m[1]} ${m[2].slice("/1.0".length)}`);
    }
    const missing = ROUTES.map((r) => {
      const path = r.path.startsWith("/1.0/") ? r.path.slice("/1.0".length) : r.path;
      return `${r.method.toUpperCase()} ${path}`;
    }).filter((call) => !named.has(call));
    assert.deepEqual(missing, [], "calls of the route table that docs/API.md does not name");
  });

  test("the README links it and refers to no file outside the repository", () => {
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    assert.ok(readme.includes("docs/API.md"));
    assert.ok(!readme.includes("../shared"), "a fresh clone has no ../shared");
    assert.ok(!doc.includes("../shared"));
    assert.ok(doc.includes("(API-errors.md)"));
  });
});
