/**
 * The replication epoch of a database and where each epoch began (DECISIONS.md, "Promotion and
 * epochs"). Kept in the exchange file's `meta`, written straight to the file (never through the
 * writer: a leader's journal rows would carry them to its followers), so only a copy of the whole
 * database (src/replication/leader.ts) takes them to another box:
 *
 *   replication_epoch            the epoch (absent: 1); promotion adds one
 *   replication_epoch_start_<n>  epoch n began after this journal key of epoch n - 1 (the key of
 *                                its leader's journal the promoted follower held)
 *   replication_led              the epoch this database took changes of its own in as a leader
 *                                with a replication port, or promoted (absent: it only followed)
 *
 * A database that led epoch e counts its position in its own journal's keys; one that followed
 * counts it in its leader's (meta `replication_through`). That is what a leader compares with the
 * start of the next epoch to tell a database that holds changes it never received.
 */
import { existsSync } from "node:fs";
import { REPLICATION_SETTLED } from "../protocol/db/batch-apply.ts";
import { type Db, openDatabase } from "../protocol/db/db-open.ts";
import { appliedMark, replayJournal } from "../protocol/db/journal.ts";

const EPOCH = "replication_epoch";
const LED = "replication_led";
const START = "replication_epoch_start_";
/** The meta key of the last leader journal key a follower's database holds. */
export const REPLICATION_THROUGH = "replication_through";

export interface Epochs {
  epoch: number;
  /** Each epoch above 1 and the key of the epoch before it after which it began. */
  starts: Map<number, number>;
  /** The epoch this database led, or null. */
  led: number | null;
}

/** The epochs as `db` holds them. */
export function readEpochs(db: Db): Epochs {
  const rows = db
    .prepare<[string, string, string], { key: string; value: number }>(
      "SELECT key, value FROM meta WHERE key IN (?, ?) OR key GLOB ?",
    )
    .all(EPOCH, LED, `${START}*`);
  const out: Epochs = { epoch: 1, starts: new Map(), led: null };
  for (const r of rows) {
    if (r.key === EPOCH) out.epoch = r.value;
    else if (r.key === LED) out.led = r.value;
    else out.starts.set(Number(r.key.slice(START.length)), r.value);
  }
  return out;
}

/** A leader with a replication port takes changes of its own in its epoch from now on. */
export function markLed(db: Db, epoch: number): void {
  db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)").run(LED, epoch);
}

/**
 * What a follower's hello says of the database at `dbPath` (its own journal replayed first): its
 * epoch, whether it led that epoch, and its position (0: nothing, it takes a copy).
 */
export function storedHistory(dbPath: string): { position: number; epoch: number; led: boolean } {
  if (!existsSync(dbPath)) return { position: 0, epoch: 1, led: false };
  const db = openDatabase(dbPath);
  try {
    replayJournal(db);
    const e = readEpochs(db);
    if (e.led !== null && e.led === e.epoch) return { position: appliedMark(db), epoch: e.epoch, led: true };
    const through =
      db.prepare<[string], number>("SELECT value FROM meta WHERE key = ?").pluck().get(REPLICATION_THROUGH) ??
      0;
    return { position: through, epoch: e.epoch, led: false };
  } finally {
    db.close();
  }
}

/**
 * A copy of the leader's database just put in place of a follower's: its epochs are the leader's,
 * but it led nothing itself.
 */
export function asFollowerCopy(db: Db): void {
  db.prepare("DELETE FROM meta WHERE key = ?").run(LED);
}

/**
 * Promotion (docs/OPERATIONS.md, "Promoting a follower"), on the closed database at `dbPath`: the
 * epoch goes up by one and begins after the leader's key it holds; the database leads that epoch
 * and follows no one, so its position counts its own journal from now on. One transaction,
 * synchronous as the file is opened (FULL by default). Returns the new epoch.
 */
export function promoteDatabase(dbPath: string): { epoch: number; began: number } {
  const db = openDatabase(dbPath);
  try {
    replayJournal(db);
    const e = readEpochs(db);
    const began =
      db.prepare<[string], number>("SELECT value FROM meta WHERE key = ?").pluck().get(REPLICATION_THROUGH) ??
      0;
    const epoch = e.epoch + 1;
    const put = db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
    const del = db.prepare("DELETE FROM meta WHERE key = ?");
    db.transaction(() => {
      put.run(EPOCH, epoch);
      put.run(`${START}${epoch}`, began);
      put.run(LED, epoch);
      del.run(REPLICATION_THROUGH);
      // Nothing is in flight on a leader: the start's catch-up of the user rows goes to the end.
      del.run(REPLICATION_SETTLED);
    }).immediate();
    return { epoch, began };
  } finally {
    db.close();
  }
}
