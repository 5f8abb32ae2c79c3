/**
 * Which server the tests run: the build in dist/ (`npm run build`, what `npm run start:prod` runs)
 * when it was compiled from the sources as they are now, else src/main.ts under tsx. `npm test`
 * builds first; a test file run on its own after an edit finds the build stale and takes the
 * sources. Both are the same code: tsx and tsc compile the same files, and a server under tsx
 * spends about a second more CPU starting (every module through tsx's hooks, in every thread);
 * DECISIONS.md, "The tests run the build".
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SOURCE_HASH_FILE, sourceHash } from "../../scripts/source-hash.mjs";
import { REPO_ROOT } from "./server-process.ts";

let fresh: boolean | undefined;

/** Whether dist/ holds the build of this checkout's sources as they are now (checked once a process). */
export function builtIsFresh(): boolean {
  if (fresh === undefined) {
    let stamp = "";
    try {
      stamp = readFileSync(join(REPO_ROOT, SOURCE_HASH_FILE), "utf8").trim();
    } catch {}
    fresh = stamp !== "" && stamp === sourceHash(REPO_ROOT);
  }
  return fresh;
}

/** The server's entry script: `E2E_SERVER_ENTRY` when set, else the fresh build's or the sources'. */
export function serverEntry(): string {
  return process.env.E2E_SERVER_ENTRY ?? (builtIsFresh() ? "dist/src/main.js" : "src/main.ts");
}
