/**
 * Question: how much CPU does one commit cost the writer thread by itself, at synchronous FULL
 * (the default: the WAL is fsynced at every commit) and NORMAL (fsynced at checkpoints only; a
 * commit still survives kill -9, not a power loss)? Each transaction upserts one `meta` row, so
 * what is measured is the commit, not the rows. Divided by the orders a group commit carries,
 * this is the share of the writer's CPU per order that only bigger (or fewer durable) commits cut.
 *
 *   this thread: BEGIN IMMEDIATE; one upsert; COMMIT (FULL: write WAL frames + fsync)  × N
 *
 * CPU from process.cpuUsage (this process runs nothing else meanwhile). Checksum: the row's value
 * read back is the last one written.
 *
 * Run: npx tsx bench/db/commit-cost.bench.ts [--quick]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { openDatabase } from "../../src/protocol/db/db-open.ts";

const N = process.argv.includes("--quick") ? 300 : 2000;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-commit-cost-"));
try {
  console.log(
    `node ${process.version}, ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}; ${N} commits each`,
  );
  console.log("| synchronous | CPU µs per commit | of which user | of which system | wall µs per commit |");
  console.log("|---|---:|---:|---:|---:|");
  for (const sync of ["FULL", "NORMAL"] as const) {
    const db = openDatabase(path.join(dir, `${sync}.db`), { synchronous: sync });
    try {
      const st = db.prepare(
        "INSERT INTO meta (key, value) VALUES ('bench', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      );
      const tx = db.transaction((i: number) => st.run(i));
      tx.immediate(0); // warm: the statement and the pages
      const c0 = process.cpuUsage();
      const w0 = performance.now();
      for (let i = 1; i <= N; i++) tx.immediate(i);
      const c = process.cpuUsage(c0);
      const wallUs = (performance.now() - w0) * 1000;
      console.log(
        `| ${sync} | ${((c.user + c.system) / N).toFixed(1)} | ${(c.user / N).toFixed(1)} | ${(c.system / N).toFixed(1)} | ${(wallUs / N).toFixed(1)} |`,
      );
      const last = db.prepare<[], number>("SELECT value FROM meta WHERE key = 'bench'").pluck().get();
      if (last !== N) throw new Error(`checksum failed: read ${last}, wrote ${N}`);
    } finally {
      db.close();
    }
  }
  console.log("checksum: the last value read back in both databases");
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
