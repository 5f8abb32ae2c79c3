/**
 * docs/API.md stays in step with the code: it names every call of the OpenAPI route table, links
 * the error catalogue, and the README points at it rather than at files outside the repository.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { ROUTES } from "../../src/http/route-table.ts";
import { REPO_ROOT } from "../e2e/harness.ts";

const doc = readFileSync(join(REPO_ROOT, "docs/API.md"), "utf8");

describe("docs/API.md", () => {
  test("describes every call of the route table", () => {
    for (const r of ROUTES) {
      const path = r.path.startsWith("/1.0/") ? r.path.slice("/1.0".length) : r.path;
      assert.ok(doc.includes(path), `${r.method.toUpperCase()} ${r.path} is not in docs/API.md`);
    }
  });

  test("the README links it and refers to no file outside the repository", () => {
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    assert.ok(readme.includes("docs/API.md"));
    assert.ok(!readme.includes("../shared"), "a fresh clone has no ../shared");
    assert.ok(!doc.includes("../shared"));
    assert.ok(doc.includes("(API-errors.md)"));
  });
});
