import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { ERROR_LIST, wireCode } from "../../src/errors/catalogue.ts";
import { ERRORS_DOC_PATH, fieldCell, renderErrorCatalogue, statusCell } from "../../src/errors/doc.ts";

describe("docs/API-errors.md", () => {
  it("is the catalogue as it stands (regenerate with `npx tsx src/errors/doc.ts`)", () => {
    assert.equal(readFileSync(ERRORS_DOC_PATH, "utf8"), renderErrorCatalogue());
  });

  it("lists every wire code with its status and field", () => {
    const doc = readFileSync(ERRORS_DOC_PATH, "utf8");
    for (const def of ERROR_LIST) {
      assert.ok(
        doc.includes(`| \`${wireCode(def)}\` | ${statusCell(def)} | ${fieldCell(def)} |`),
        wireCode(def),
      );
    }
  });

  it("gives UNKNOWN_FIELD under the field's own name and a batch element's error inside a 200 answer", () => {
    const doc = readFileSync(ERRORS_DOC_PATH, "utf8");
    assert.ok(doc.includes("| `UNKNOWN_FIELD` | 400 | the field's own name |"));
    assert.ok(doc.includes("| `ORDER_NOT_OBJECT` | 200 (batch element) | `body` |"));
    assert.match(doc, /batch calls .* the answer is HTTP 200 whatever its elements hold/s);
  });
});
