/**
 * Child processes of the benchmark: the exchange (as `npm start` runs it, on a temp database, rate
 * limits off) and the bare uWS ceiling server. Each is started with `node <the machine's server
 * flags> [flags] --import tsx <script>` (scripts/node-flags.mjs, as scripts/start.mjs does), its
 * port read from `listening on http://127.0.0.1:<port>`, and stopped with SIGTERM (then SIGKILL
 * after a grace period). Every wait is bounded.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { serverNodeFlags } from "../../scripts/node-flags.mjs";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const LISTENING = /listening on http:\/\/127\.0\.0\.1:(\d+)/;
/** A worker's `thread <tid> <role>` line (workers/ts-entry.mjs with EXCHANGE_THREAD_LOG=1). */
const THREAD_LINE = /^thread (\d+) (\S+)$/gm;
const LOG_LIMIT = 64 * 1024;

const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

export interface ServerProcess {
  readonly name: string;
  readonly port: number;
  readonly pid: number;
  /** CPU time (user + system, all threads) used so far, ms; null where /proc is not available. */
  cpuMs(): number | null;
  /**
   * CPU time per OS thread so far (tid → name and ms); empty where /proc is not available. The name
   * is "main", a worker's role from its `thread` line (writer, pair, checkpoint, reader), or else
   * the OS name ("node": V8's platform threads, libuv's pool).
   */
  threadCpuMs(): Map<number, { name: string; ms: number }>;
  /** SIGTERM, wait up to `graceMs`, then SIGKILL. Resolves with the exit code (null when killed). */
  stop(graceMs?: number): Promise<number | null>;
  logs(): string;
}

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

export async function spawnServer(opts: SpawnOptions): Promise<ServerProcess> {
  // Workers name their threads on stderr (workers/ts-entry.mjs), so per-thread CPU has roles.
  const env: NodeJS.ProcessEnv = { ...process.env, EXCHANGE_THREAD_LOG: "1", ...opts.env };
  delete env.NODE_OPTIONS;
  // Every server starts with the flags `npm start` gives the exchange on this machine
  // (scripts/node-flags.mjs), so the exchange, the floor and the bare server run alike.
  const child = spawn(
    process.execPath,
    [
      ...serverNodeFlags(env),
      ...(opts.nodeFlags ?? []),
      "--import",
      "tsx",
      opts.script,
      ...(opts.args ?? []),
    ],
    { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  live.add(child);
  let log = "";
  const roles = new Map<number, string>();
  const logFile =
    opts.logDir === undefined
      ? undefined
      : resolve(opts.logDir, `${opts.name.replace(/\W+/g, "-")}-${child.pid}.log`);
  if (opts.logDir !== undefined) mkdirSync(opts.logDir, { recursive: true });
  const keep = (chunk: string) => {
    for (const m of chunk.matchAll(THREAD_LINE)) roles.set(Number(m[1]), m[2]);
    if (logFile !== undefined) appendFileSync(logFile, chunk);
    log += chunk;
    if (log.length > LOG_LIMIT) log = log.slice(-LOG_LIMIT);
  };
  child.stdout!.setEncoding("utf8");
  child.stderr!.setEncoding("utf8");
  const exited = new Promise<number | null>((resolveExit) => {
    child.once("exit", (code) => {
      live.delete(child);
      resolveExit(code);
    });
  });
  const port = await new Promise<number>((resolvePort, reject) => {
    let pending = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${opts.name}: no "listening on" within ${opts.startTimeoutMs ?? 30_000} ms\n${log}`));
    }, opts.startTimeoutMs ?? 30_000);
    child.stdout!.on("data", (chunk: string) => {
      keep(chunk);
      pending += chunk;
      const m = LISTENING.exec(pending);
      if (m !== null) {
        clearTimeout(timer);
        pending = "";
        resolvePort(Number(m[1]));
      }
    });
    child.stderr!.on("data", keep);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${opts.name} exited (code ${code}) before listening\n${log}`));
    });
  });
  const pid = child.pid!;
  const ticksPerSecond = 100; // USER_HZ on Linux
  return {
    name: opts.name,
    port,
    pid,
    cpuMs() {
      return statCpuMs(`/proc/${pid}/stat`, ticksPerSecond);
    },
    threadCpuMs() {
      const out = new Map<number, { name: string; ms: number }>();
      try {
        for (const tid of readdirSync(`/proc/${pid}/task`)) {
          const ms = statCpuMs(`/proc/${pid}/task/${tid}/stat`, ticksPerSecond);
          const name =
            Number(tid) === pid
              ? "main"
              : (roles.get(Number(tid)) ?? readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim());
          if (ms !== null) out.set(Number(tid), { name, ms });
        }
      } catch {
        // not Linux, or the process is gone
      }
      return out;
    },
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    logs: () => log,
  };
}

function statCpuMs(path: string, ticksPerSecond: number): number | null {
  try {
    const stat = readFileSync(path, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields[11] = utime, fields[12] = stime (fields 14 and 15 of proc(5), counted from state).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
  } catch {
    return null;
  }
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
