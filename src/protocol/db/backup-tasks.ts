/**
 * What the main thread (src/db/backup.ts) and a backup thread (workers/db/backup-worker.ts)
 * exchange. Types only.
 */

export interface BackupWorkerData {
  /** URL of the worker module, loaded by workers/ts-entry.mjs. */
  entry: string;
  /** The exchange file. */
  path: string;
}

/** One backup: where the copy goes (absolute; its folder exists). */
export interface BackupTask {
  file: string;
}

/** What the copy holds: its size and the last ids in it (0: none). */
export interface BackupCopy {
  bytes: number;
  lastOrderId: number;
  lastTradeId: number;
}

/** "ready" once the thread runs, then one answer per task, in order. */
export type FromBackup = { t: "ready" } | ({ t: "done" } & BackupCopy) | { t: "error"; message: string };

/**
 * The meta key a backup copy carries (docs/API.md 16): the first start on the copy begins a new
 * execution epoch and drops it (src/db/recovery.ts resolveExecEpoch).
 */
export const EXEC_EPOCH_BUMP = "exec_epoch_bump";
