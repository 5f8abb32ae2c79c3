import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { pickLanguage } from "../../src/errors/language.ts";

describe("pickLanguage", () => {
  const cases: Array<[string | undefined, "en" | "ru"]> = [
    [undefined, "en"],
    ["", "en"],
    ["en", "en"],
    ["ru", "ru"],
    ["RU", "ru"],
    ["ru-RU,ru;q=0.9,en;q=0.8", "ru"],
    ["en,ru;q=0.5", "en"],
    ["en-US,en;q=0.9,ru;q=0.8", "en"],
    ["ru;q=0.5,en;q=0.9", "en"],
    ["en;q=0.5,ru;q=0.9", "ru"],
    ["de,ru;q=0.5", "ru"],
    ["de,fr", "en"],
    ["ru, en", "ru"],
    ["en, ru", "en"],
    ["ru;q=0", "en"],
    ["ru;q=0, en;q=0", "en"],
    ["ru;q=abc", "en"],
    ["ru;q=2", "en"],
    [" ru-RU ; q=1.0 , en ; q=0.999", "ru"],
    ["*", "en"],
    ["rus", "en"],
    ["run,en;q=0.1", "en"],
    ["ru-RU", "ru"],
  ];
  for (const [header, lang] of cases) {
    it(`picks ${lang} for ${JSON.stringify(header)}`, () => {
      assert.equal(pickLanguage(header), lang);
    });
  }

  it("never throws on arbitrary headers (property)", () => {
    fc.assert(
      fc.property(fc.string(), (header) => {
        const lang = pickLanguage(header);
        assert.ok(lang === "en" || lang === "ru");
      }),
    );
  });
});
