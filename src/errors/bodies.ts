/**
 * What the HTTP and stream edge answers for a code of the catalogue (src/errors/catalogue.ts): its status,
 * its key under `errors`, its wire code, its message, and the error body, one error or several
 * (docs/API.md 4). Bodies are serialised once at start-up, per code and language, into arrays
 * indexed by code; the hot path only indexes them.
 */
import { ERROR_LIST, ERRORS, wireCode } from "./catalogue.ts";
import type { Lang } from "./language.ts";

const MAX_CODE = 699;
const STATUS: number[] = new Array(MAX_CODE + 1).fill(0);
const FIELD: string[] = new Array(MAX_CODE + 1).fill("");
/** The plain message, per language. */
const MESSAGE: Record<Lang, string[]> = { en: [], ru: [] };
/** `"<message>"` as a JSON string literal, per language. */
const MESSAGE_JSON: Record<Lang, string[]> = { en: [], ru: [] };
/** The wire code of each code (docs/API.md 4), e.g. `INSUFFICIENT_FUNDS`. */
const NAME: string[] = new Array(MAX_CODE + 1).fill("");
/** `{"errors":{"<field>":["<message>"]},"codes":{"<field>":["<NAME>"]}}` per language. */
const BODY: Record<Lang, string[]> = { en: [], ru: [] };
/** The body up to (not including) the closing quote of the message, and the rest (TAIL). */
const HEAD: Record<Lang, string[]> = { en: [], ru: [] };
/** `"]},"codes":{"<field>":["<NAME>"]}}`: closes the message and adds the code. */
const TAIL: string[] = new Array(MAX_CODE + 1).fill("");
/** The text around a detail (the catalogue's `detail`, split at `{}`), per language; unset: none. */
const DETAIL: Record<Lang, (readonly [string, string])[]> = { en: [], ru: [] };

for (const def of ERROR_LIST) {
  if (def.code < 100 || def.code > MAX_CODE || STATUS[def.code] !== 0) {
    throw new Error(`error-bodies.ts: bad or duplicate code ${def.code}`);
  }
  STATUS[def.code] = def.status;
  FIELD[def.code] = def.field;
  NAME[def.code] = wireCode(def);
  TAIL[def.code] = `"]},"codes":{${JSON.stringify(def.field)}:[${JSON.stringify(NAME[def.code])}]}}`;
  for (const lang of ["en", "ru"] as const) {
    const message = JSON.stringify(def[lang]);
    MESSAGE[lang][def.code] = def[lang];
    MESSAGE_JSON[lang][def.code] = message;
    HEAD[lang][def.code] = `{"errors":{${JSON.stringify(def.field)}:[${message.slice(0, -1)}`;
    BODY[lang][def.code] = `${HEAD[lang][def.code]}${TAIL[def.code]}`;
    const detail = def.detail?.[lang];
    if (detail !== undefined) {
      const at = detail.indexOf("{}");
      if (at < 0) throw new Error(`error-bodies.ts: the detail of code ${def.code} has no {}`);
      DETAIL[lang][def.code] = [detail.slice(0, at), detail.slice(at + 2)];
    }
  }
}

/** `extra` worded by the code's detail in `lang` (`at most 6`), or as it is when it has none. */
export function errorDetail(code: number, lang: Lang, extra: string): string {
  const around = DETAIL[lang][known(code)];
  return around === undefined ? extra : `${around[0]}${extra}${around[1]}`;
}

/** ` (<extra>)` as JSON string text, worded by the code's detail in `lang` when it has one. */
function extraText(code: number, lang: Lang, extra: string): string {
  return ` (${escapeJsonText(errorDetail(code, lang, extra))})`;
}

/** A code the catalogue does not hold (a bug elsewhere) answers as INTERNAL rather than crash. */
function known(code: number): number {
  return code >= 0 && code <= MAX_CODE && STATUS[code] !== 0 ? code : ERRORS.INTERNAL.code;
}

/** HTTP status of a code (500 for a code not in the catalogue). */
export function errorStatus(code: number): number {
  return STATUS[known(code)];
}

/** Key under `errors` for a code. */
export function errorField(code: number): string {
  return FIELD[known(code)];
}

/** The wire code (`codes` in error bodies) of a code. */
export function errorName(code: number): string {
  return NAME[known(code)];
}

/** The plain message text of a code. */
export function errorMessage(code: number, lang: Lang): string {
  return MESSAGE[lang][known(code)];
}

/**
 * `{"errors":{"<field>":["<message>"]},"codes":{"<field>":["<NAME>"]}}` for one code. Without `extra` this is a pre-built string.
 * `extra` (a limit, a path, the offending channel) is appended to the message in parentheses,
 * JSON-escaped: `"Amount is below the minimum for this pair (0.000001)"`; worded by the code's
 * `detail` when it has one: `"Amount has too many decimal places (at most 6)"`.
 */
export function errorBody(code: number, lang: Lang, extra?: string): string {
  const c = known(code);
  if (extra === undefined) return BODY[lang][c];
  return `${HEAD[lang][c]}${extraText(c, lang, extra)}${TAIL[c]}`;
}

/**
 * One error of a validation: its code, an optional text appended to the message, and the key under
 * `errors` when it is not the code's own (an unknown field is reported under its own name).
 */
export type ErrorEntry = readonly [code: number, extra?: string, field?: string];

/**
 * One body reporting several errors: messages are grouped under their fields, fields in order of
 * first appearance, messages in the order given. The status is the caller's choice (normally
 * `errorStatus` of the first entry; validation errors are all 400).
 */
export function multiErrorBody(entries: readonly ErrorEntry[], lang: Lang): string {
  if (entries.length === 1 && entries[0][2] === undefined)
    return errorBody(entries[0][0], lang, entries[0][1]);
  const fields: string[] = [];
  const messages: string[][] = [];
  const names: string[][] = [];
  for (const [code, extra, fieldOverride] of entries) {
    const c = known(code);
    const field = fieldOverride ?? FIELD[c];
    let i = fields.indexOf(field);
    if (i === -1) {
      i = fields.push(field) - 1;
      messages.push([]);
      names.push([]);
    }
    names[i].push(`"${NAME[c]}"`);
    const message = MESSAGE_JSON[lang][c];
    messages[i].push(extra === undefined ? message : `${message.slice(0, -1)}${extraText(c, lang, extra)}"`);
  }
  let body = '{"errors":{';
  let codes = '},"codes":{';
  for (let i = 0; i < fields.length; i++) {
    const sep = i > 0 ? "," : "";
    body += `${sep}${JSON.stringify(fields[i])}:[${messages[i].join(",")}]`;
    codes += `${sep}${JSON.stringify(fields[i])}:[${names[i].join(",")}]`;
  }
  return `${body}${codes}}}`;
}

function escapeJsonText(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}
