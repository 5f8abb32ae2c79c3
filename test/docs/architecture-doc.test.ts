/**
 * docs/ARCHITECTURE.md names every folder a newcomer meets: each folder under src/, workers/, bench/
 * and test/ (at any depth) must appear in its folder table as `path/`, so that a folder added
 * without a line saying what it is for fails here.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { REPO_ROOT } from "../e2e/harness.ts";

/** Every folder under `dir` (relative to the repository root), at any depth. */
export function folders(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(REPO_ROOT, dir), { withFileTypes: true })) {
    if (!e.isDirectory() || e.name === "node_modules" || e.name.startsWith(".")) continue;
    const path = `${dir}/${e.name}`;
    out.push(path, ...folders(path));
  }
  return out;
}

describe("docs/ARCHITECTURE.md", () => {
  const doc = readFileSync(join(REPO_ROOT, "docs/ARCHITECTURE.md"), "utf8");

  test("has a line for every folder under src/, workers/, bench/ and test/", () => {
    const all = ["src", "workers", "bench", "test"].flatMap((d) => [d, ...folders(d)]);
    assert.ok(all.length > 10, `found only ${all.length} folders`);
    const missing = all.filter((f) => !doc.includes(`| \`${f}/\` |`));
    assert.deepEqual(missing, [], "folders without a line in docs/ARCHITECTURE.md");
  });

  test("has a limits and scope section whose figures are BENCHMARKS.md's", () => {
    const start = doc.indexOf("## Limits and scope");
    assert.ok(start >= 0, "no ## Limits and scope section");
    const section = doc.slice(start, doc.indexOf("\n## ", start + 1));
    for (const part of ["**One box.**", "**What a box sustains.**", "**What it does not do.**"])
      assert.ok(section.includes(part), `the section has no ${part}`);
    const benchmarks = readFileSync(join(REPO_ROOT, "BENCHMARKS.md"), "utf8");
    const headings = benchmarks
      .split("\n")
      .filter((l) => /^#{2,3} /.test(l))
      .map((l) => l.replace(/^#+ /, ""));
    const rows = section
      .split("\n")
      .filter((l) => l.startsWith("| ") && !l.startsWith("| what") && !l.startsWith("| --"));
    assert.ok(rows.length >= 5, `only ${rows.length} figures`);
    for (const row of rows) {
      const [, measured, cited] = row.split(" | ").map((c) => c.replace(/^\| |\|$/g, "").trim());
      for (const figure of measured.match(/\d[\d,]*(?:\.\d+)?M?/g) ?? [])
        assert.ok(
          benchmarks.includes(figure) || benchmarks.includes(figure.replaceAll(",", "")),
          `${figure} (${row}) is not a figure of BENCHMARKS.md`,
        );
      for (const name of cited.match(/"([^"]+)"/g) ?? [])
        assert.ok(headings.includes(name.slice(1, -1)), `BENCHMARKS.md has no section ${name}`);
    }
  });

  test("the README links it", () => {
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    assert.ok(readme.includes("(docs/ARCHITECTURE.md)"));
  });
});
