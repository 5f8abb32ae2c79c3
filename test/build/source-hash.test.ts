/**
 * The build's source hash (scripts/source-hash.mjs): the tests run servers from dist/ only while
 * dist/source-hash matches the checkout (test/support/built.ts), so the hash must change with any
 * change to what the build compiles, and only then.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { sourceHash } from "../../scripts/source-hash.mjs";
import { builtIsFresh, serverEntry } from "../support/built.ts";

describe("the build's source hash", () => {
  const root = mkdtempSync(join(tmpdir(), "exchange-source-hash-"));
  after(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write("tsconfig.json", "{}");
  write("tsconfig.build.json", "{}");
  write("src/main.ts", "export const a = 1;\n");
  write("src/db/migrations/001.sql", "CREATE TABLE t (x);\n");
  write("workers/entry.mjs", "export {};\n");

  it("changes with a file's content, a new file, a renamed one and a tsconfig, and with nothing else", () => {
    const first = sourceHash(root);
    assert.match(first, /^[0-9a-f]{64}$/);
    assert.equal(sourceHash(root), first, "the same tree, the same hash");
    write("README.md", "not compiled");
    write("test/x.test.ts", "not compiled either");
    assert.equal(sourceHash(root), first, "files outside src/, workers/ and the tsconfigs do not count");

    const seen = new Set([first]);
    const changed = (what: string) => {
      const h = sourceHash(root);
      assert.ok(!seen.has(h), `${what} left the hash as it was`);
      seen.add(h);
    };
    write("src/main.ts", "export const a = 2;\n");
    changed("an edit");
    write("src/db/migrations/002.sql", "");
    changed("a new, empty file");
    renameSync(join(root, "workers/entry.mjs"), join(root, "workers/entry2.mjs"));
    changed("a rename");
    write("tsconfig.build.json", '{"compilerOptions":{}}');
    changed("a tsconfig");
    // A name and a content are kept apart: moving bytes from one into the other is a change.
    write("src/ab", "");
    const before = sourceHash(root);
    rmSync(join(root, "src/ab"));
    write("src/a", "b");
    assert.notEqual(sourceHash(root), before);
  });

  it("under CI, npm test has built dist/ from these sources, and the servers come from it", () => {
    // .ci/run sets CI and runs npm test, which builds before the tests; were the stamp never to
    // match, every server would quietly run under tsx again.
    if (process.env.CI === undefined) return;
    assert.equal(builtIsFresh(), true);
    assert.equal(serverEntry(), process.env.E2E_SERVER_ENTRY ?? "dist/src/main.js");
  });
});
