/**
 * docs/API.md stays in step with the code: its error catalogue is the one of src/errors.ts, it
 * names every call of the OpenAPI route table, and the README points at it rather than at files
 * outside the repository.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { API_DOC, errorTable, withTable } from "../../scripts/docs-errors.ts";
import { ROUTES } from "../../src/http/openapi.ts";
import { REPO_ROOT } from "../e2e/harness.ts";

const doc = readFileSync(API_DOC, "utf8");

describe("docs/API.md", () => {
  test("holds the error catalogue of src/errors.ts (npm run docs:errors)", () => {
    assert.equal(doc, withTable(doc, errorTable()), "the catalogue changed: run `npm run docs:errors`");
  });

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
  });
});
