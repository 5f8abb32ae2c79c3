/**
 * The checkpointer thread: copies committed WAL frames into the database file with PASSIVE
 * checkpoints from a connection of its own, every `intervalMs`. A PASSIVE checkpoint takes no lock
 * that the writer waits for, so a group commit never pays for a checkpoint (with SQLite's
 * auto-checkpoint the commit that crosses the threshold does the whole copy and its fsync while
 * every answer of that batch waits). The writer restarts the WAL from its start at its next commit
 * once a checkpoint has copied everything. This connection never writes rows, so its own
 * auto-checkpoint never fires. The journal file (src/protocol/db/journal.ts) is checkpointed the same
 * way, from a second connection.
 *
 * Messages: posts "ready" once open; on "close" it stops, closes its connection, posts "closed" and
 * ends. A failed checkpoint is reported as {t: "error"} and retried at the next interval.
 */
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "../../src/protocol/db/db-open.ts";
import { openJournal } from "../../src/protocol/db/journal.ts";
import type { CheckpointWorkerData } from "../../src/protocol/db/writer-messages.ts";

const port = parentPort!;
const data = workerData as CheckpointWorkerData;
const options = { synchronous: data.synchronous, walAutocheckpointPages: 0 };
const dbs = [openDatabase(data.path, options), openJournal(data.path, options)];
const checkpoints = dbs.map((db) => db.prepare("PRAGMA wal_checkpoint(PASSIVE)"));

const timer = setInterval(() => {
  for (const checkpoint of checkpoints) {
    try {
      checkpoint.run();
    } catch (err) {
      port.postMessage({ t: "error", message: (err as Error).message });
    }
  }
}, data.intervalMs);

port.on("message", (m: string) => {
  if (m !== "close") return;
  clearInterval(timer);
  for (const db of dbs) db.close();
  port.postMessage({ t: "closed" });
  port.close();
});

port.postMessage({ t: "ready" });
