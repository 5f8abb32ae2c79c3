/**
 * Request bodies as JSON, with every number exactly as the client wrote it (docs/API.md 1: nothing is
 * rounded silently). JSON.parse turns `1.0000000000000001` into the double 1, so a price with more
 * decimals than the pair allows would pass as a valid one. A number of at most 15 significant digits
 * without an exponent survives the double exactly (`parseDecimal` reads it back by its shortest
 * text), so the fast path keeps JSON.parse for bodies that hold no longer run of digits and no
 * exponent; any other body is parsed by lossless-json, which hands over each number whose double
 * would lose information as a `LosslessNumber` carrying its source text.
 *
 * An object that repeats a key, at any depth, is refused whatever the values (docs/API.md 8.1: a
 * signed body must mean one thing to every reader, and readers differ on which value wins).
 * Neither parser reports it: JSON.parse keeps the last value, lossless-json refuses only a repeat
 * with a different value. So both parse as JSON.parse does, and the text is then checked: every
 * member of an object is written `"key":`, so a text with no repeated key has as many colons
 * outside its strings as its objects have keys.
 */
import { isSafeNumber, LosslessNumber, parse } from "lossless-json";
import { Code } from "../errors/catalogue.ts";

/**
 * A run of 16 digits (or digits and a point), or a digit followed by an exponent. A JSON number
 * starts with a digit (after its sign), so a run within one starts with a digit: the pattern opens
 * with `[0-9]`, which irregexp finds by a quick scan (about 100 ns less per order body than
 * `[0-9.]{16}|[0-9][eE]`, which it tried at every position).
 */
const MAY_LOSE_PRECISION = /[0-9](?:[0-9.]{15}|[eE])/;

const LOSSLESS_OPTIONS = {
  parseNumber: (text: string): number | LosslessNumber =>
    isSafeNumber(text) ? Number(text) : new LosslessNumber(text),
  // As JSON.parse: the last value stays; parseJsonBody refuses the body after.
  onDuplicateKey: (info: { newValue: unknown }) => info.newValue,
};

/** A body whose JSON is well formed but repeats a key in an object (400 BODY_DUPLICATE_KEY). */
export class DuplicateKeyError extends SyntaxError {
  constructor() {
    super("a JSON object repeats a key");
  }
}

/**
 * Parses a request body or a session frame; throws DuplicateKeyError when an object in it repeats
 * a key, SyntaxError on malformed JSON.
 */
export function parseJsonBody(text: string): unknown {
  const value = parseJsonText(text);
  if (repeatsAKey(text, value)) throw new DuplicateKeyError();
  return value;
}

/** The code that answers a body parseJsonBody refused. */
export function unreadableBodyCode(err: unknown): number {
  return err instanceof DuplicateKeyError ? Code.BODY_DUPLICATE_KEY : Code.BODY_NOT_JSON;
}

/**
 * The JSON of `text` with every number exact, the last value of a repeated key kept (as JSON.parse);
 * throws SyntaxError on malformed JSON. Requests go through parseJsonBody: this is its first step.
 */
export function parseJsonText(text: string): unknown {
  if (!MAY_LOSE_PRECISION.test(text)) return JSON.parse(text);
  return parse(text, null, LOSSLESS_OPTIONS);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/**
 * True when an object of `value`, the JSON of `text`, repeats a key. Each member of an object has
 * one colon outside strings, and the parsed objects hold one key per distinct member: with no
 * repeat, those colons number the keys. Colons are first counted with indexOf, native and faster
 * than a loop over the characters; only when strings hold colons too, which order bodies do not,
 * are the strings stepped over one character at a time. About 0.16 µs per order body, 0.4-0.5 per
 * session frame (BENCHMARKS.md "Changes kept"); a parser that tracks the names of each object costs
 * ten times as much (BENCHMARKS.md "Tried and rejected").
 */
function repeatsAKey(text: string, value: unknown): boolean {
  let colons = 0;
  for (let i = text.indexOf(":"); i !== -1; i = text.indexOf(":", i + 1)) colons++;
  if (colons === 0) return false;
  const keys = keysOf(value);
  return colons !== keys && membersOf(text) !== keys;
}

/** The members of all objects in the JSON `text`: its colons outside strings. */
function membersOf(text: string): number {
  let members = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === QUOTE) break;
        if (d === BACKSLASH) i++;
      }
    } else if (c === COLON) members++;
  }
  return members;
}

/**
 * The keys of all objects in a parsed JSON value (a LosslessNumber is a number, not an object). A
 * loop, not recursion: a 64 KiB body can nest 32,768 arrays deep. The stack is made only when a
 * nested value is met (an order body has none).
 */
function keysOf(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  let keys = 0;
  let stack: object[] | null = null;
  let v: object | undefined = value;
  while (v !== undefined) {
    let items: unknown[];
    if (Array.isArray(v)) items = v;
    else {
      items = Object.values(v);
      keys += items.length;
    }
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (typeof item !== "object" || item === null || item instanceof LosslessNumber) continue;
      if (stack === null) stack = [];
      stack.push(item);
    }
    v = stack === null ? undefined : stack.pop();
  }
  return keys;
}

export { LosslessNumber };

/**
 * True for a JSON object (what a body or a session frame must be): not null, an array, or a number
 * that lossless-json kept as a `LosslessNumber` object (`1e400`), which is a JSON value that is not
 * an object (docs/API.md 11.2).
 */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof LosslessNumber)
  );
}
