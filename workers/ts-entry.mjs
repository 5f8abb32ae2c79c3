// Entry of every worker thread whose real module is TypeScript (`workerData.entry`, a file URL):
// the pair workers and the writer thread (started by `startWorker` in src/util/threads.ts), and the
// piscina task file of the reader pool (src/db/reader.ts), which calls the default export
// re-exported here.
//
// Why this file exists: on Node 20 a worker does not apply the ESM hooks passed through `execArgv`
// (`--import tsx`) to its entry file (nodejs/node#47747), so `new Worker("x.ts")` fails with
// ERR_UNKNOWN_FILE_EXTENSION even under `tsx`. Piscina can load a .ts file only through tsx's
// CommonJS hook, which compiles the module as CommonJS (no top-level await, emulated
// import.meta). Registering tsx from inside the worker loads the module graph as real ESM,
// exactly as on the main thread. A compiled `.js` entry is imported as is.
import { workerData } from "node:worker_threads";

const entry = workerData?.entry;
if (typeof entry !== "string") throw new Error("ts-entry.mjs: workerData.entry (module URL) is required");
if (entry.endsWith(".ts")) {
  const { register } = await import("tsx/esm/api");
  register();
}
// Benchmarks name each thread's CPU (bench/load): with EXCHANGE_THREAD_LOG=1 a worker says which
// Linux thread it is and what it runs.
if (process.env.EXCHANGE_THREAD_LOG === "1") {
  const { readlinkSync } = await import("node:fs");
  const tid = readlinkSync("/proc/thread-self").split("/").pop();
  const role = entry.slice(entry.lastIndexOf("/") + 1).replace(/(-worker)?\.[jt]s$/, "");
  process.stderr.write(`thread ${tid} ${role}\n`);
}
const mod = await import(entry);

export default mod.default;
