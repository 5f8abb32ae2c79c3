import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { openDatabase, type Synchronous } from "../../src/protocol/db/db-open.ts";
import { replayJournal } from "../../src/protocol/db/journal.ts";
import { tempDir } from "./helpers.ts";

const tmp = tempDir("durability");
after(tmp.cleanup);

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const FIXTURE = fileURLToPath(new URL("./fixtures/kill-writer.ts", import.meta.url));
const BURST = 100; // as in the fixture
/** Kill once this many orders are acknowledged. */
const KILL_AFTER = 3000;

/** Runs the fixture until KILL_AFTER orders are acked, SIGKILLs it, returns the last acked id. */
function writeAndKill(file: string, mode: Synchronous): Promise<number> {
  return new Promise((resolve, reject) => {
    // `node --import tsx` runs the fixture in this one process: the tsx CLI would spawn a
    // grandchild that a SIGKILL of its parent leaves running.
    const child = spawn(process.execPath, ["--import", "tsx", FIXTURE, file, mode], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let acked = 0;
    let buffered = "";
    let stderr = "";
    let killed = false;
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout.on("data", (d: Buffer) => {
      buffered += d.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) {
        const m = /^acked (\d+)$/.exec(line);
        if (m) acked = Math.max(acked, Number(m[1]));
      }
      if (!killed && acked >= KILL_AFTER) {
        killed = true;
        child.kill("SIGKILL"); // mid-stream: the next batches are being written right now
      }
    });
    child.on("exit", (code, signal) => {
      if (signal === "SIGKILL" && killed) resolve(acked);
      else reject(new Error(`fixture ended with code ${code} signal ${signal}: ${stderr}`));
    });
  });
}

// The two modes run at once: each waits mostly on its child process.
describe("durability", { concurrency: true }, () => {
  for (const mode of ["FULL", "NORMAL"] as const) {
    it(`keeps every acknowledged record after kill -9 (synchronous ${mode})`, async () => {
      const file = `${tmp.dir}/${mode}.db`;
      const acked = await writeAndKill(file, mode);
      assert.ok(acked >= KILL_AFTER);
      const db = openDatabase(file); // recovers from the WAL left behind
      replayJournal(db); // and writes the batches only journaled, as the server's start does
      assert.equal(db.pragma("integrity_check", { simple: true }), "ok");
      const count = db.prepare<[number], { n: number }>("SELECT COUNT(*) AS n FROM orders WHERE id <= ?");
      assert.equal(count.get(acked)!.n, acked, "an acknowledged order is missing");
      const updated = db.prepare<[number], { n: number }>(
        "SELECT COUNT(*) AS n FROM orders WHERE id <= ? AND amount_used = 1",
      );
      assert.equal(updated.get(acked - BURST)!.n, acked - BURST, "an acknowledged update is missing");
      const balance = db.prepare<[], { a: string }>("SELECT available AS a FROM balances").get()!;
      assert.ok(BigInt(balance.a) >= BigInt(acked), "the acknowledged balance went back");
      db.close();
    });
  }
});
