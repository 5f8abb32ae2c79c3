/**
 * What the repository tracks: never a database (a data file, a backup, a WAL) and never
 * node_modules, whatever a test or a run left in the checkout.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

test("no database, backup or node_modules file is tracked", () => {
  const files = execFileSync("git", ["ls-files"], { cwd: ROOT, encoding: "utf8" }).split("\n");
  assert.ok(files.length > 100, `git ls-files listed ${files.length} files`);
  const bad = files.filter(
    (f) => /\.(db|sqlite)(-wal|-shm|-journal)?$/.test(f) || f.startsWith("node_modules/"),
  );
  assert.deepEqual(bad, []);
});
