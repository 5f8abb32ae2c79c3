/**
 * The built page (dist/web) for the tests that serve it. `npm test` builds it first; a test file
 * run on its own builds it when it is missing, with the project's own build (`npm run build:web`).
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_WEB_DIR } from "../../src/http/static.ts";
import { REPO_ROOT } from "../e2e/harness.ts";

export function ensureWebBuilt(): string {
  if (!existsSync(join(DEFAULT_WEB_DIR, "index.html"))) {
    execFileSync(
      process.execPath,
      [join(REPO_ROOT, "node_modules/vite/bin/vite.js"), "build", "--config", "web/vite.config.ts"],
      {
        cwd: REPO_ROOT,
        stdio: ["ignore", "ignore", "inherit"],
      },
    );
  }
  return DEFAULT_WEB_DIR;
}
