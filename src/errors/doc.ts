/**
 * Renders the error catalogue (src/errors/catalogue.ts) as docs/API-errors.md, the published list of wire
 * codes (docs/API.md 4). `npx tsx src/errors/doc.ts` rewrites the file; test/errors/doc.test.ts fails
 * when the file and the catalogue differ, so a new entry cannot ship undocumented.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ERROR_LIST, type ErrorDef, wireCode } from "./catalogue.ts";

export const ERRORS_DOC_PATH = fileURLToPath(new URL("../../docs/API-errors.md", import.meta.url));

function cell(text: string): string {
  return text.replaceAll("|", "\\|");
}

/** The HTTP column: a batch-only error is an element of a 200 answer, never a status of its own. */
export function statusCell(def: ErrorDef): string {
  return def.batchElementOnly === true ? "200 (batch element)" : String(def.status);
}

/** The field column: an unknown field is reported under its own name, not a fixed key. */
export function fieldCell(def: ErrorDef): string {
  return def.keyIsFieldName === true ? "the field's own name" : `\`${def.field}\``;
}

/** The message with its detail, `N` standing for the number the answer gives: `(at most N)`. */
export function messageCell(def: ErrorDef, lang: "en" | "ru"): string {
  const detail = def.detail?.[lang];
  return detail === undefined ? def[lang] : `${def[lang]} (${detail.replace("{}", "N")})`;
}

export function renderErrorCatalogue(): string {
  const lines = [
    "# Error codes",
    "",
    "<!-- Generated from src/errors/catalogue.ts by `npx tsx src/errors/doc.ts`; do not edit by hand. -->",
    "",
    "Every error answer (REST, and the stream upgrade's rejections) has the body",
    '`{"errors": {<field>: [<message>, ...]}, "codes": {<field>: [<CODE>, ...]}}`: one code per message,',
    "in the same order, the same in every language. Messages may be worded differently over time and",
    "carry a detail in parentheses (a limit, a path); a code never changes meaning. Clients should act",
    "on `codes`, and show `errors` to people.",
    "",
    "HTTP is the status of an answer that is this error. In the batch calls (`POST /1.0/trade/create-orders`,",
    "`POST /1.0/trade/cancel-orders`) the answer is HTTP 200 whatever its elements hold: an element that",
    'failed is `{"errors": ..., "codes": ...}` (a cancel\'s with its `orderId`) with a code of this list,',
    "and the status given here does not apply to it. Only an invalid batch as a whole (`ORDERS_INVALID`,",
    "`ORDER_IDS_INVALID`, an unknown field, authentication, limits) answers with its own status.",
    "",
    "| Code | HTTP | Field | Message (en) | Message (ru) |",
    "| ---- | ---- | ----- | ------------ | ------------ |",
  ];
  const seen = new Set<string>();
  for (const def of ERROR_LIST) {
    const name = wireCode(def);
    if (seen.has(name)) continue; // an internal failure listed once, as INTERNAL
    seen.add(name);
    lines.push(
      `| \`${name}\` | ${statusCell(def)} | ${fieldCell(def)} | ${cell(messageCell(def, "en"))} | ${cell(messageCell(def, "ru"))} |`,
    );
  }
  return `${lines.join("\n")}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(ERRORS_DOC_PATH, renderErrorCatalogue());
  console.log(`wrote ${ERRORS_DOC_PATH}`);
}
