/**
 * Valid and invalid values of a JSON Schema, as fast-check arbitraries, for the request schemas of
 * the OpenAPI document (src/wire/request-schemas.ts). It reads the subset the document uses: `type`
 * (one or several), `enum`, `const`, `pattern` (fc.stringMatching), `minimum` / `maximum` /
 * `exclusiveMinimum`, `minLength`, `properties` / `required` / `additionalProperties`, `oneOf` /
 * `anyOf`, `items` / `prefixItems` / `minItems` / `maxItems`, and the document's own annotations `x-decimals`,
 * `x-minimum`, `x-exclusiveMinimum`, `x-maximum` (exact decimal bounds). A JSON Schema faker from npm
 * (json-schema-faker) was not used: it knows nothing of the x- bounds, makes only valid values, and
 * would be a new dependency for a few dozen lines.
 *
 * The generators aim; `isValid` decides: every value is checked against the schema (exactly, on the
 * decimal text of numbers, `if`/`then` included) and kept only when it is valid (or invalid) by it,
 * so a generator that is rough for a cross-field rule costs retries, never a wrong case. (ajv was
 * not the judge: it reads a JSON number as a double, and 2^64 - 1 or `1.0000000000000000001` are
 * not doubles.)
 *
 * A JSON number whose text matters (an integer beyond 2^53, a decimal with many digits) is a
 * `RawNumber`: `toJson` writes its text as the JSON number.
 */
import fc from "fast-check";
import { formatDecimal } from "../../src/util/numbers.ts";

export type Schema = Record<string, unknown>;

/** A JSON number written exactly as `text`. */
export class RawNumber {
  constructor(readonly text: string) {}
}

/** The JSON text of a value (RawNumber written as its text). */
export function toJson(value: unknown): string {
  if (value instanceof RawNumber) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

// ---------------------------------------------------------------- exact decimals

/** A JSON number text or decimal string as [digits, scale] (value = digits / 10^scale), or null. */
function exact(text: string): [bigint, number] | null {
  const m = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(text);
  if (m === null) return null;
  const frac = m[3] ?? "";
  let digits = BigInt(m[2] + frac) * (m[1] === "-" ? -1n : 1n);
  let scale = frac.length - Number(m[4] ?? 0);
  if (scale < 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return [digits, scale];
}

/** a - b compared: -1, 0, 1. */
function compare(a: [bigint, number], b: [bigint, number]): number {
  const scale = Math.max(a[1], b[1]);
  const x = a[0] * 10n ** BigInt(scale - a[1]);
  const y = b[0] * 10n ** BigInt(scale - b[1]);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The significant decimals of a value (trailing zeros not counted). */
function decimalsOf(e: [bigint, number]): number {
  let [digits, scale] = e;
  while (scale > 0 && digits % 10n === 0n) {
    digits /= 10n;
    scale--;
  }
  return scale;
}

/** The exact value of a JSON number (a double or a RawNumber), or null for anything else. */
function numberValue(v: unknown): [bigint, number] | null {
  if (v instanceof RawNumber) return exact(v.text);
  if (typeof v === "number" && Number.isFinite(v)) return exact(String(v));
  return null;
}

// ---------------------------------------------------------------- the judge

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof RawNumber);

function hasType(v: unknown, t: string): boolean {
  switch (t) {
    case "null":
      return v === null;
    case "boolean":
      return typeof v === "boolean";
    case "string":
      return typeof v === "string";
    case "number":
      return numberValue(v) !== null;
    case "integer": {
      const n = numberValue(v);
      return n !== null && decimalsOf(n) === 0;
    }
    case "array":
      return Array.isArray(v);
    case "object":
      return isObject(v);
    default:
      return false;
  }
}

/** Bound keywords: the JSON Schema ones on numbers, the x- ones (exact text) on numbers and strings. */
function withinBounds(s: Schema, v: unknown): boolean {
  const n = numberValue(v);
  const value = n ?? (typeof v === "string" ? exact(v) : null);
  if (value === null) return true;
  const cmp = (bound: unknown) => compare(value, exact(String(bound))!);
  if (n !== null) {
    if (s.minimum !== undefined && cmp(s.minimum) < 0) return false;
    // With an exact `x-maximum`, `maximum` is only its nearest double below (a literal between the
    // two is valid: the server reads literals exactly).
    if (s.maximum !== undefined && s["x-maximum"] === undefined && cmp(s.maximum) > 0) return false;
    if (s.exclusiveMinimum !== undefined && cmp(s.exclusiveMinimum) <= 0) return false;
  }
  if (s["x-minimum"] !== undefined && cmp(s["x-minimum"]) < 0) return false;
  if (s["x-maximum"] !== undefined && cmp(s["x-maximum"]) > 0) return false;
  if (s["x-exclusiveMinimum"] !== undefined && cmp(s["x-exclusiveMinimum"]) <= 0) return false;
  if (s["x-decimals"] !== undefined && decimalsOf(value) > (s["x-decimals"] as number)) return false;
  return true;
}

/** Whether `v` is valid by `s`, for the subset of JSON Schema 2020-12 the document uses. */
/** `v` is `c`; a number by its value (-0 and 0.0 are the const 0, as any JSON Schema validator judges). */
function sameAsConst(v: unknown, c: unknown): boolean {
  if (typeof c !== "number") return v === c;
  const n = numberValue(v);
  const k = numberValue(c);
  return n !== null && k !== null && n[0] * 10n ** BigInt(k[1]) === k[0] * 10n ** BigInt(n[1]);
}

export function isValid(s: Schema, v: unknown): boolean {
  if ("const" in s && !sameAsConst(v, s.const)) return false;
  if (Array.isArray(s.enum) && !s.enum.includes(v)) return false;
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    if (!types.some((t) => hasType(v, t))) return false;
  }
  if (!withinBounds(s, v)) return false;
  if (typeof v === "string") {
    if (typeof s.pattern === "string" && !new RegExp(s.pattern).test(v)) return false;
    if (s.minLength !== undefined && v.length < (s.minLength as number)) return false;
  }
  if (Array.isArray(v)) {
    if (s.minItems !== undefined && v.length < (s.minItems as number)) return false;
    if (s.maxItems !== undefined && v.length > (s.maxItems as number)) return false;
    if (s.items !== undefined && !v.every((x) => isValid(s.items as Schema, x))) return false;
    const prefix = s.prefixItems as Schema[] | undefined;
    if (prefix !== undefined && !prefix.every((p, i) => i >= v.length || isValid(p, v[i]))) return false;
  }
  if (isObject(v)) {
    const props = (s.properties ?? {}) as Record<string, Schema>;
    for (const k of (s.required ?? []) as string[]) if (!Object.hasOwn(v, k)) return false;
    for (const [k, x] of Object.entries(v)) {
      if (Object.hasOwn(props, k)) {
        if (!isValid(props[k], x)) return false;
      } else if (s.additionalProperties === false) return false;
    }
  }
  if (Array.isArray(s.oneOf) && (s.oneOf as Schema[]).filter((b) => isValid(b, v)).length !== 1) return false;
  if (Array.isArray(s.anyOf) && !(s.anyOf as Schema[]).some((b) => isValid(b, v))) return false;
  if (Array.isArray(s.allOf) && !(s.allOf as Schema[]).every((b) => isValid(b, v))) return false;
  if (
    s.if !== undefined &&
    s.then !== undefined &&
    isValid(s.if as Schema, v) &&
    !isValid(s.then as Schema, v)
  )
    return false;
  return true;
}

// ---------------------------------------------------------------- valid values

const MAX_ITEMS_TRIED = 6;

function scaled(text: string, decimals: number): bigint {
  const [digits, scale] = exact(text)!;
  return decimals >= scale
    ? digits * 10n ** BigInt(decimals - scale)
    : digits / 10n ** BigInt(scale - decimals);
}

/** A decimal with at most `decimals` decimals within the x- bounds, as text. */
function decimalText(s: Schema): fc.Arbitrary<string> {
  const d = s["x-decimals"] as number;
  const lo =
    s["x-minimum"] !== undefined
      ? scaled(String(s["x-minimum"]), d)
      : s.minimum !== undefined
        ? scaled(String(s.minimum), d)
        : 1n;
  const hiText = (s["x-maximum"] as string | undefined) ?? String(s.maximum);
  const hi = scaled(hiText, d);
  return fc
    .oneof(
      fc.constantFrom(lo, hi),
      fc.bigInt({ min: lo, max: hi }),
      fc.bigInt({ min: lo, max: lo + 1000n > hi ? hi : lo + 1000n }),
    )
    .map((v) => formatDecimal(v, d));
}

/** An integer within the bounds (x-maximum may pass 2^53). */
function integerValue(s: Schema): fc.Arbitrary<bigint> {
  const lo = BigInt(String(s["x-minimum"] ?? s.minimum ?? 0));
  const hi = BigInt(String(s["x-maximum"] ?? s.maximum ?? Number.MAX_SAFE_INTEGER));
  return fc.oneof(
    fc.constantFrom(lo, hi),
    fc.bigInt({ min: lo, max: hi }),
    fc.bigInt({ min: lo, max: lo + 100n > hi ? hi : lo + 100n }),
  );
}

/** Valid values of `schema` (rough: filter with `isValid`). */
export function validOf(schema: Schema): fc.Arbitrary<unknown> {
  const s = schema;
  if ("const" in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const branches = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
  if (branches !== undefined) {
    const { oneOf: _o, anyOf: _a, ...rest } = s;
    return fc.oneof(...branches.map((b) => validOf({ ...rest, ...b })));
  }
  const type = s.type;
  if (Array.isArray(type)) return fc.oneof(...type.map((t) => validOf({ ...s, type: t })));
  switch (type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return integerValue(s).map((v) =>
        v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : new RawNumber(String(v)),
      );
    case "number":
      if (s["x-decimals"] !== undefined) {
        // As written, or with an exponent (`100e-2`): a JSON number either way.
        const d = s["x-decimals"] as number;
        return fc
          .tuple(decimalText(s), fc.boolean())
          .map(([t, e]) => new RawNumber(e ? `${scaled(t, d)}e-${d}` : t));
      }
      return fc.double({
        noNaN: true,
        noDefaultInfinity: true,
        min: Number(s.minimum ?? -1e9),
        max: Number(s.maximum ?? 1e9),
      });
    case "string": {
      if (s["x-decimals"] !== undefined) {
        // Leading zeros and trailing zeros beyond the decimals are part of the pattern.
        return fc
          .tuple(decimalText(s), fc.constantFrom("", "0", "00"), fc.constantFrom("", "0"))
          .map(([t, lead, trail]) => lead + t + (trail === "" ? "" : t.includes(".") ? trail : `.${trail}`));
      }
      if (s["x-minimum"] !== undefined || s["x-maximum"] !== undefined) {
        return fc.tuple(integerValue(s), fc.constantFrom("", "0")).map(([v, lead]) => lead + String(v));
      }
      if (typeof s.pattern === "string") {
        const min = (s.minLength as number | undefined) ?? 0;
        return fc.stringMatching(new RegExp(s.pattern as string)).filter((t) => t.length >= min);
      }
      return fc.string({ minLength: (s.minLength as number | undefined) ?? 0, maxLength: 20 });
    }
    case "array": {
      // A tuple (`prefixItems`, JSON Schema 2020-12): each place its own schema.
      if (Array.isArray(s.prefixItems)) return fc.tuple(...(s.prefixItems as Schema[]).map(validOf));
      const items = (s.items as Schema | undefined) ?? {};
      const min = (s.minItems as number | undefined) ?? 0;
      const max = (s.maxItems as number | undefined) ?? MAX_ITEMS_TRIED;
      const item = validOf(items);
      return fc.oneof(
        {
          arbitrary: fc.array(item, { minLength: min, maxLength: Math.min(max, min + MAX_ITEMS_TRIED) }),
          weight: 4,
        },
        { arbitrary: fc.array(item, { minLength: max, maxLength: max }), weight: 1 },
      );
    }
    case "object": {
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const required = (s.required ?? []) as string[];
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) model[k] = validOf(v);
      return fc.record(model, { requiredKeys: required });
    }
    default:
      // No constraint: any JSON value.
      return fc.jsonValue({ maxDepth: 1, depthSize: "xsmall" });
  }
}

// ---------------------------------------------------------------- invalid values

/** Values that break the common integer and decimal rules, and the wrong types. */
const ODD_VALUES: readonly unknown[] = [
  null,
  true,
  false,
  {},
  [],
  "",
  " 30",
  "30 ",
  "3e1",
  "1.5",
  "-1",
  "-0",
  "+1",
  ".5",
  "5.",
  "0x10",
  "abc",
  0,
  -1,
  1.5,
  new RawNumber("1e400"),
  new RawNumber("-0"),
  new RawNumber("1.0000000000000000001"),
];

/** Candidates around the bounds of a schema: one past each bound, one decimal too many, too many digits. */
function nearBounds(s: Schema): unknown[] {
  const out: unknown[] = [];
  for (const branch of [s, ...(((s.oneOf ?? s.anyOf) as Schema[] | undefined) ?? [])]) {
    const d = branch["x-decimals"] as number | undefined;
    const hi = (branch["x-maximum"] ?? branch.maximum) as string | number | undefined;
    const lo = (branch["x-minimum"] ?? branch.minimum) as string | number | undefined;
    const asString = branch.type === "string";
    const wrap = (t: string) => (asString ? t : new RawNumber(t));
    if (d !== undefined) {
      if (hi !== undefined) out.push(wrap(formatDecimal(scaled(String(hi), d) + 1n, d)));
      if (lo !== undefined) out.push(wrap(formatDecimal(scaled(String(lo), d) - 1n, d)));
      out.push(wrap(`1.${"0".repeat(d)}1`), wrap("0"), wrap(`1${"0".repeat(22)}`));
    } else {
      if (hi !== undefined) out.push(wrap(String(BigInt(String(hi)) + 1n)));
      if (lo !== undefined) out.push(wrap(String(BigInt(String(lo)) - 1n)));
    }
  }
  return out;
}

/** Values that `validate` refuses, aimed at the schema's rules. */
export function invalidOf(schema: Schema): fc.Arbitrary<unknown> {
  const aimed = [...ODD_VALUES, ...nearBounds(schema)];
  if (Array.isArray(schema.enum) || "const" in schema) aimed.push("nope", "BTC_USDT", "Limit");
  return fc
    .oneof(
      { arbitrary: fc.constantFrom(...aimed), weight: 4 },
      { arbitrary: fc.string({ maxLength: 12 }), weight: 1 },
      { arbitrary: fc.integer({ min: -5, max: 5 }), weight: 1 },
    )
    .filter((v) => !isValid(schema, v));
}

// ---------------------------------------------------------------- bodies with one wrong field

export interface Mutated {
  body: Record<string, unknown>;
  /** The field made invalid: the key its 400 must name. */
  field: string;
}

/** The object branch a body came from (first whose const/enum keys it matches), or the schema itself. */
export function branchOf(schema: Schema, body: Record<string, unknown>): Schema {
  const branches = schema.oneOf as Schema[] | undefined;
  if (branches === undefined) return schema;
  return branches.find((b) => isValid(b, body)) ?? branches[0];
}

/**
 * A valid body made invalid in one field: a documented field given an invalid value (null included
 * where not nullable), a required field taken out, or an unknown field added.
 */
export function mutate(schema: Schema, valid: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<Mutated> {
  return valid
    .chain((body) => {
      const branch = branchOf(schema, body);
      const props = (branch.properties ?? {}) as Record<string, Schema>;
      const required = (branch.required ?? []) as string[];
      const names = Object.keys(props).filter((k) => Object.keys(props[k]).some((x) => x !== "description"));
      const options: fc.Arbitrary<Mutated>[] = [
        fc.constantFrom("extra", "pairname", "Amount").map((k) => ({ body: { ...body, [k]: 1 }, field: k })),
      ];
      if (required.length > 0) {
        options.push(
          fc.constantFrom(...required).map((k) => {
            const { [k]: _, ...rest } = body;
            return { body: rest, field: k };
          }),
        );
      }
      if (names.length > 0) {
        options.push(
          fc
            .constantFrom(...names)
            .chain((k) => invalidOf(props[k]).map((v) => ({ body: { ...body, [k]: v }, field: k }))),
        );
      }
      return fc.oneof(...options);
    })
    .filter((m) => !isValid(schema, m.body));
}
