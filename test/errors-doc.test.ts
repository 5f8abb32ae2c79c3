import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { ERROR_LIST, wireCode } from "../src/errors.ts";
import { ERRORS_DOC_PATH, renderErrorCatalogue } from "../src/errors-doc.ts";

describe("docs/API-errors.md", () => {
  it("is the catalogue as it stands (regenerate with `npx tsx src/errors-doc.ts`)", () => {
    assert.equal(readFileSync(ERRORS_DOC_PATH, "utf8"), renderErrorCatalogue());
  });

  it("lists every wire code with its status and field", () => {
    const doc = readFileSync(ERRORS_DOC_PATH, "utf8");
    for (const def of ERROR_LIST) {
      assert.ok(doc.includes(`| \`${wireCode(def)}\` | ${def.status} | \`${def.field}\` |`), wireCode(def));
    }
  });
});
