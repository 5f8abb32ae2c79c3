import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** A fresh temporary folder, removed by the returned `cleanup`. */
export function tempDir(prefix: string): { dir: string; dbPath: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `exchange-${prefix}-`));
  return {
    dir,
    dbPath: path.join(dir, "data", "exchange.db"),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
