// `npm run build:client`: the client library as a package of its own (docs/API.md 13), with no
// server file and no native module: src/client/ and the exchange command (src/cli.ts, with what it
// imports) compiled by tsc (tsconfig.client.json), laid out as under src/ (cli.js, client/...), into
// dist/client-package/ (or the folder given as the argument), beside its own package.json
// (src/client/package.json: the name, the exports, the `exchange` command and `ws`, its one
// dependency). `npm run pack:client` packs it into exchange-client-<version>.tgz.
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = resolve(root, process.argv[2] ?? "dist/client-package");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

rmSync(out, { recursive: true, force: true });
const run = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.client.json"), "--outDir", out], {
  cwd: root,
  stdio: "inherit",
});
if (run.status !== 0) process.exit(run.status ?? 1);
for (const file of ["package.json", "README.md"])
  copyFileSync(join(root, "src/client", file), join(out, file));
chmodSync(join(out, "cli.js"), 0o755);
console.log(`built ${out}`);
