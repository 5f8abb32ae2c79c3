/**
 * The language of an answer's messages (English or Russian, the two the error catalogue holds),
 * chosen from the request's `Accept-Language`.
 */

export type Lang = "en" | "ru";

/**
 * `"ru"` when `Accept-Language` prefers Russian over English by q-values, else `"en"`.
 * A language's weight is the highest q among its tags (`ru`, `ru-RU`, ...), 0 when it is not named
 * (`*` is not counted: the choice is only between the two languages we have). Russian needs a weight
 * above 0 and either a higher weight than English or the same weight and an earlier place in the list.
 * Examples: `ru-RU,ru;q=0.9,en;q=0.8` → ru; `en,ru;q=0.5` → en; `de,ru;q=0.5` → ru; `ru;q=0` → en.
 */
export function pickLanguage(acceptLanguage: string | undefined): Lang {
  // Fast path: most API clients send nothing, or nothing that mentions Russian.
  if (acceptLanguage === undefined || !/ru/i.test(acceptLanguage)) return "en";
  // Browsers repeat the same few headers; remember the answers (bounded, so hostile headers
  // cannot grow it without limit).
  let lang = languageCache.get(acceptLanguage);
  if (lang === undefined) {
    lang = parseAcceptLanguage(acceptLanguage);
    if (languageCache.size >= LANGUAGE_CACHE_SIZE) languageCache.clear();
    languageCache.set(acceptLanguage, lang);
  }
  return lang;
}

const LANGUAGE_CACHE_SIZE = 256;
const languageCache = new Map<string, Lang>();

function parseAcceptLanguage(acceptLanguage: string): Lang {
  let ruQ = 0;
  let ruAt = -1;
  let enQ = 0;
  let enAt = -1;
  const parts = acceptLanguage.split(",");
  for (let i = 0; i < parts.length; i++) {
    const [rawTag, ...params] = parts[i].split(";");
    const tag = rawTag.trim().toLowerCase();
    const primary = tag.split("-", 1)[0];
    if (primary !== "ru" && primary !== "en") continue;
    let q = 1;
    for (const param of params) {
      const eq = param.indexOf("=");
      if (eq !== -1 && param.slice(0, eq).trim().toLowerCase() === "q") {
        const text = param.slice(eq + 1).trim();
        q = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(text) ? Number(text) : 0; // malformed weight: ignore the tag
      }
    }
    if (primary === "ru") {
      if (q > ruQ) {
        ruQ = q;
        ruAt = i;
      }
    } else if (q > enQ) {
      enQ = q;
      enAt = i;
    }
  }
  return ruQ > 0 && (ruQ > enQ || (ruQ === enQ && ruAt < enAt)) ? "ru" : "en";
}
