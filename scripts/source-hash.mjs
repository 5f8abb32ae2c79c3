// The content hash of what scripts/build.mjs compiles: every file under src/ and workers/, and the
// tsconfig files. The build writes it to dist/source-hash once dist/ holds its output; the tests
// run servers from dist/ only while that file matches the checkout (test/support/built.ts), so a
// build older than the sources is never what a test checks.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";

/** Where the build writes the hash of the sources it compiled, relative to the repository root. */
export const SOURCE_HASH_FILE = join("dist", "source-hash");

/** The hash of the build's sources in the checkout at `root`, as hex. */
export function sourceHash(root) {
  const files = [join(root, "tsconfig.json"), join(root, "tsconfig.build.json")];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.push(path);
    }
  };
  walk(join(root, "src"));
  walk(join(root, "workers"));
  const hash = createHash("sha256");
  for (const name of files.map((f) => relative(root, f).split(sep).join("/")).sort()) {
    hash.update(`${name}\0`);
    hash.update(readFileSync(join(root, name)));
    hash.update("\0");
  }
  return hash.digest("hex");
}
