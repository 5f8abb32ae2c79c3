/** The likely meant name of a mistyped flag or command (src/util/nearest.ts). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { editDistance, nearest } from "../../src/util/nearest.ts";

describe("nearest", () => {
  it("counts a swap of two neighbouring characters as one edit", () => {
    assert.equal(editDistance("prot", "port"), 1);
    assert.equal(editDistance("urll", "url"), 1);
    assert.equal(editDistance("", "abc"), 3);
    assert.equal(editDistance("kitten", "sitting"), 3);
  });

  it("suggests the closest name within a third of the word's length, or the one it begins", () => {
    const flags = ["url", "token", "secret", "admin-token", "page", "page-size", "rate-limit"];
    assert.equal(nearest("urll", flags), "url");
    assert.equal(nearest("tokn", flags), "token");
    assert.equal(nearest("admin-tokne", flags), "admin-token");
    assert.equal(nearest("rate", flags), "rate-limit");
    assert.equal(nearest("pag", flags), "page");
  });

  it("suggests nothing for a word unlike every name, or the start of several", () => {
    const flags = ["url", "token", "page", "page-size"];
    assert.equal(nearest("verbose", flags), undefined);
    assert.equal(nearest("xyz", flags), undefined);
    assert.equal(nearest("pa", ["page", "page-size"]), undefined);
  });
});
