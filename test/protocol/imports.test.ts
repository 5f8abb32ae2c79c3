/**
 * The thread boundary in the import graph (issue 13): what the main thread (src/) and the worker
 * threads (workers/) both need lives in src/protocol/, and nothing else crosses.
 * - a file under workers/ imports from src/ only src/protocol/**;
 * - a file under src/ imports nothing from workers/ (starting a worker by URL is not an import);
 * - a file under src/protocol/ imports only src/protocol/ (and packages, node: modules).
 * Every static `import`/`export ... from`, side-effect `import "x"` and `import("x")` with a literal
 * specifier of every .ts file under src/ and workers/ is checked.
 *
 * And no file under src/ or workers/ is part of an import cycle, counting `import type` too: a
 * cycle of type-only imports costs nothing at run time, but it means two modules each own part of
 * the other's job (move the shared type to the module that owns it).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...tsFiles(path));
    else if (e.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** Every module specifier a source text names, static or dynamic (literal strings only). */
export function specifiers(text: string): string[] {
  // Comments could name a path in a sentence; they are not imports.
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1");
  const found: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^;"'`]*?\bfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const re of patterns) for (const m of code.matchAll(re)) found.push(m[1]);
  return found;
}

/** The violation of importing `spec` from `file` (both repository-relative), or undefined. */
export function violation(file: string, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined; // a package or node: module
  const to = target(file, spec);
  const inProtocol = to.startsWith("src/protocol/");
  if (file.startsWith("src/protocol/")) {
    return inProtocol ? undefined : `${file} imports ${to}: src/protocol/ imports only itself`;
  }
  if (file.startsWith("workers/") && to.startsWith("src/") && !inProtocol) {
    return `${file} imports ${to}: workers/ may import from src/ only src/protocol/`;
  }
  if (file.startsWith("src/") && to.startsWith("workers/")) {
    return `${file} imports ${to}: src/ imports nothing from workers/ (share it through src/protocol/)`;
  }
  return undefined;
}

/** The repository-relative file `spec` names from `file` (a relative specifier). */
function target(file: string, spec: string): string {
  return relative(ROOT, resolve(ROOT, dirname(file), spec))
    .split(sep)
    .join("/");
}

/**
 * The import cycles of a graph (file to the files it imports): each strongly connected component
 * of more than one file, or a file that imports itself, sorted (Tarjan's algorithm).
 */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("imports across the thread boundary", () => {
  test("no file under src/ or workers/ imports across it other than through src/protocol/", () => {
    const files = [...tsFiles("src"), ...tsFiles("workers")];
    assert.ok(files.length > 50, `scanned only ${files.length} files`);
    const bad: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const spec of specifiers(readFileSync(join(ROOT, file), "utf8"))) {
        checked++;
        const v = violation(file, spec);
        if (v !== undefined) bad.push(v);
      }
    }
    assert.ok(checked > 100, `found only ${checked} imports: the scanner is broken`);
    assert.deepEqual(bad, []);
  });

  test("the scanner finds each form of import and flags each kind of crossing", () => {
    const text = [
      'import { a } from "../workers/x.ts";',
      "import {",
      "  b,",
      '} from "./y.ts";',
      'import type { C } from "../../src/z.ts";',
      'export { d } from "./w.ts";',
      'import "./side-effect.ts";',
      'const m = await import("./lazy.ts");',
      '// import { e } from "./commented.ts";',
      '/* import { f } from "./also-commented.ts"; */',
      'const url = new URL("../workers/pair/pair-worker.ts", import.meta.url);',
    ].join("\n");
    assert.deepEqual(specifiers(text).sort(), [
      "../../src/z.ts",
      "../workers/x.ts",
      "./lazy.ts",
      "./side-effect.ts",
      "./w.ts",
      "./y.ts",
    ]);
    assert.match(
      violation("src/core/exchange.ts", "../../workers/matching/order-book.ts") ?? "",
      /src\/ imports nothing/,
    );
    assert.match(
      violation("workers/pair/pair-worker.ts", "../../src/core/exchange.ts") ?? "",
      /only src\/protocol/,
    );
    assert.match(
      violation("src/protocol/pair/records.ts", "../../core/exchange.ts") ?? "",
      /imports only itself/,
    );
    assert.equal(violation("workers/pair/pair-worker.ts", "../../src/protocol/pair/ring.ts"), undefined);
    assert.match(
      violation("workers/db/writer-worker.ts", "../../src/db/writer.ts") ?? "",
      /only src\/protocol/,
    );
    assert.equal(
      violation("workers/db/writer-worker.ts", "../../src/protocol/db/writer-batch.ts"),
      undefined,
    );
    assert.equal(violation("src/protocol/db/db-open.ts", "better-sqlite3"), undefined);
    assert.equal(violation("src/core/exchange.ts", "../protocol/pair/records.ts"), undefined);
  });
});

describe("import cycles", () => {
  test("no file under src/ or workers/ is in an import cycle, type-only imports included", () => {
    const graph = new Map<string, string[]>();
    for (const file of [...tsFiles("src"), ...tsFiles("workers")]) {
      const specs = specifiers(readFileSync(join(ROOT, file), "utf8")).filter((s) => s.startsWith("."));
      graph.set(
        file,
        specs.map((s) => target(file, s)),
      );
    }
    assert.ok(graph.size > 50, `scanned only ${graph.size} files`);
    assert.deepEqual(cycles(graph), []);
  });

  test("a cycle of type-only imports is found like any other", () => {
    const sources = new Map([
      ["src/a.ts", 'import type { B } from "./b.ts";\nexport type A = { b: B };'],
      ["src/b.ts", 'import type { C } from "./c.ts";\nexport type B = C;'],
      ["src/c.ts", 'import type { A } from "./a.ts";\nexport type C = A[];'],
      ["src/d.ts", 'import type { A } from "./a.ts";\nimport "./d.ts";'],
      ["src/e.ts", 'import { a } from "./a.ts";'],
    ]);
    const graph = new Map<string, string[]>();
    for (const [file, text] of sources)
      graph.set(
        file,
        specifiers(text).map((s) => target(file, s)),
      );
    assert.deepEqual(cycles(graph).sort(), [["src/a.ts", "src/b.ts", "src/c.ts"], ["src/d.ts"]]);
    graph.set("src/c.ts", []);
    assert.deepEqual(cycles(graph), [["src/d.ts"]]);
  });
});
