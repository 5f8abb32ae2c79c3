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

  test("the README links it", () => {
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    assert.ok(readme.includes("(docs/ARCHITECTURE.md)"));
  });
});
