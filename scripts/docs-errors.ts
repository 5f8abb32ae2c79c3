/**
 * `npm run docs:errors`: writes the error catalogue of src/errors.ts into docs/API.md (section 14,
 * between the `errors:begin` / `errors:end` markers). test/docs/api-doc.test.ts fails when the
 * table in the document differs from what this generates.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ERRORS } from "../src/errors.ts";

export const API_DOC = fileURLToPath(new URL("../docs/API.md", import.meta.url));
const BEGIN = "<!-- errors:begin -->";
const END = "<!-- errors:end -->";

/** The markdown table of every catalogue entry, in catalogue order. */
export function errorTable(): string {
  const rows = Object.entries(ERRORS).map(
    ([name, e]) => `| ${e.status} | \`${e.field}\` | \`${name}\` | ${e.en.replaceAll("|", "\\|")} |`,
  );
  return ["| Status | Key | Name | Message (English) |", "|---|---|---|---|", ...rows].join("\n");
}

/** The document with its catalogue section replaced by `table`. */
export function withTable(doc: string, table: string): string {
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a === -1 || b < a) throw new Error(`docs/API.md: markers ${BEGIN} ... ${END} not found`);
  return `${doc.slice(0, a + BEGIN.length)}\n${table}\n${doc.slice(b)}`;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(API_DOC, withTable(readFileSync(API_DOC, "utf8"), errorTable()));
  console.log(`updated ${API_DOC}`);
}
