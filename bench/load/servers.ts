/**
 * Child processes of the benchmark: the exchange (as `npm start` runs it, on a temp database, rate
 * limits off) and the bare uWS ceiling server. Each is started with `node <the machine's server
 * flags> [flags] --import tsx <script>` (scripts/node-flags.mjs, as scripts/start.mjs does), its
 * port read from `listening on http://127.0.0.1:<port>`, and stopped with SIGTERM (then SIGKILL
 * after a grace period). Every wait is bounded.
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { serverNodeFlags } from "../../scripts/node-flags.mjs";
import { REPO_ROOT, ServerProcess } from "../../test/support/server-process.ts";

export { REPO_ROOT, ServerProcess };

const LOG_LIMIT = 64 * 1024;

export interface SpawnOptions {
  name: string;
  script: string;
  args?: readonly string[];
  /** Node flags before `--import tsx` (e.g. --cpu-prof). */
  nodeFlags?: readonly string[];
  env?: Record<string, string>;
  startTimeoutMs?: number;
  /** A folder that receives the process's stdout and stderr as `<name>-<pid>.log`. */
  logDir?: string;
}

/** A server started the benchmark's way (test/support/server-process.ts runs it). */
export async function spawnServer(opts: SpawnOptions): Promise<ServerProcess> {
  // Workers name their threads on stderr (workers/ts-entry.mjs), so per-thread CPU has roles.
  const env: NodeJS.ProcessEnv = { ...process.env, EXCHANGE_THREAD_LOG: "1", ...opts.env };
  delete env.NODE_OPTIONS;
  const logDir = opts.logDir;
  if (logDir !== undefined) mkdirSync(logDir, { recursive: true });
  return ServerProcess.start({
    name: opts.name,
    script: opts.script,
    args: opts.args,
    // Every server starts with the flags `npm start` gives the exchange on this machine
    // (scripts/node-flags.mjs), so the exchange, the floor and the bare server run alike.
    nodeFlags: [...serverNodeFlags(env), ...(opts.nodeFlags ?? [])],
    env,
    startTimeoutMs: opts.startTimeoutMs ?? 30_000,
    logLimit: LOG_LIMIT,
    onOutput:
      logDir === undefined
        ? undefined
        : (_stream, chunk, pid) =>
            appendFileSync(resolve(logDir, `${opts.name.replace(/\W+/g, "-")}-${pid}.log`), chunk),
  });
}

/** GET `/health` until 200 (bounded). */
export async function waitHealthy(port: number, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < until) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`/health on port ${port} not ok within ${timeoutMs} ms (${last})`);
}
