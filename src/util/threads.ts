/**
 * Starting worker threads whose module is TypeScript. On Node 20 a worker does not apply the ESM
 * hooks of `execArgv: ["--import", "tsx"]` to its entry (nodejs/node#47747), so every worker starts
 * from one small entry file that registers tsx inside the thread and then imports the real module
 * named in `workerData.entry` (see workers/ts-entry.mjs).
 */
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { isMainThread, Worker, type WorkerOptions } from "node:worker_threads";

// `--initial-old-space-size` (scripts/node-flags.mjs) is meant for the main thread's heap, which
// was sized when the process started; V8 flags are process-wide and every isolate created later
// reads them, so it is reset before any worker (pair, writer, apply, reader pool) starts: worker
// heaps keep V8's defaults instead of each growing to the main thread's floor before collecting.
if (isMainThread) setFlagsFromString("--initial-old-space-size=0");

/** The entry file of every TypeScript worker (also the piscina task file of the reader pool). */
export const TS_ENTRY = fileURLToPath(new URL("../../workers/ts-entry.mjs", import.meta.url));

/** Starts a worker on the module at `url`; its `workerData` also carries `entry: url.href`. */
export function startWorker(url: URL, options: WorkerOptions = {}): Worker {
  const data = (options.workerData ?? {}) as Record<string, unknown>;
  return new Worker(TS_ENTRY, { ...options, workerData: { ...data, entry: url.href } });
}
