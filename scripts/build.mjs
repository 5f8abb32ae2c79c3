// `npm run build`: compiles src/ and workers/ once into dist/ (JavaScript, .d.ts and source maps)
// with tsc and tsconfig.build.json, then copies what tsc does not emit: the SQL migrations and the
// worker entry (workers/ts-entry.mjs, which imports a compiled .js worker as is, without tsx).
// `npm run start:prod` then runs `node dist/src/main.js`: no tsx in the loop. Last, it writes the
// hash of the sources it compiled to dist/source-hash (scripts/source-hash.mjs).
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SOURCE_HASH_FILE, sourceHash } from "./source-hash.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

// dist/web (the page, built by `npm run build:web` into the same folder) is left alone.
rmSync(join(out, "src"), { recursive: true, force: true });
rmSync(join(out, "workers"), { recursive: true, force: true });
rmSync(join(root, SOURCE_HASH_FILE), { force: true });
// Taken before tsc reads the files: a source changed during the build leaves a hash that no longer
// matches, never a match over stale output.
const compiled = sourceHash(root);
const run = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], {
  cwd: root,
  stdio: "inherit",
});
if (run.status !== 0) process.exit(run.status ?? 1);
cpSync(join(root, "src/db/migrations"), join(out, "src/db/migrations"), { recursive: true });
cpSync(join(root, "workers/ts-entry.mjs"), join(out, "workers/ts-entry.mjs"));
chmodSync(join(out, "src/cli.js"), 0o755);
writeFileSync(join(root, SOURCE_HASH_FILE), `${compiled}\n`);
console.log(`built ${out}`);
