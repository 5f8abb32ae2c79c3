/**
 * A server as a child process, shared by the end-to-end harness (test/e2e/harness.ts) and the
 * benchmarks (bench/load/servers.ts):
 *
 *   node [node flags] [--import tsx] <script> [args]        (tsx only for a `.ts` script)
 *
 * started in the repository root with stdout and stderr piped. The port is read from the first
 * `listening on http://<host>:<port>` line on stdout (and the FIX gateway's, docs/API.md 17, when
 * that line ends with `FIX on <host>:<port>)`); a start that prints none within the timeout,
 * or exits first, kills the child and rejects with what it printed. `stop` sends SIGTERM and, past
 * its grace, SIGKILL. Every child still running when this process exits is killed, so a failed
 * test or an interrupted benchmark leaves no server behind.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const LISTENING = /listening on (https?:\/\/[^\s]+?):(\d+)\/?(?:\s|$)/;
/** The FIX gateway's listener on the same line (`--fix-port`). */
const FIX_ON = /FIX on \S+:(\d+)[)\s]/;
const REPLICATION_ON = /replication on \S+:(\d+)[)\s,]/;
/** A worker's `thread <tid> <role>` line (workers/ts-entry.mjs with EXCHANGE_THREAD_LOG=1). */
const THREAD_LINE = /^thread (\d+) (\S+)$/gm;
const DEFAULT_LOG_LIMIT = 256 * 1024;

const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServerProcessOptions {
  /** For messages and log file names. */
  name: string;
  /** The entry script, relative to the repository root or absolute; a `.ts` script runs under tsx. */
  script: string;
  args?: readonly string[];
  /** Node flags before `--import tsx` (e.g. --cpu-prof). */
  nodeFlags?: readonly string[];
  /** The child's whole environment (default this process's). */
  env?: NodeJS.ProcessEnv;
  /** How long to wait for the `listening on` line. */
  startTimeoutMs: number;
  /** Characters kept of each output stream (about; default 256 KiB). */
  logLimit?: number;
  /** Each chunk the child writes, as it arrives (echo, log files). */
  onOutput?: (stream: "stdout" | "stderr", chunk: string, pid: number) => void;
  /** The child exited without `stop` or `kill` having been called. */
  onUnexpectedExit?: (exit: Exit) => void;
}

/** The last `limit` characters (about) of one output stream. */
class Log {
  private chunks: string[] = [];
  private size = 0;

  constructor(private readonly limit: number) {}

  add(chunk: string): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.limit && this.chunks.length > 1) this.size -= this.chunks.shift()!.length;
  }

  text(): string {
    return this.chunks.join("");
  }
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** `node [flags] [--import tsx] script args`: the argument vector for a script. */
export function nodeArgs(script: string, args: readonly string[], nodeFlags: readonly string[]): string[] {
  return [...nodeFlags, ...(script.endsWith(".ts") ? ["--import", "tsx"] : []), script, ...args];
}

export class ServerProcess {
  readonly name: string;
  readonly pid: number;
  /** From the `listening on` line. */
  host = "";
  port = 0;
  /** The FIX gateway's port when the line names one, else 0. */
  fixPort = 0;
  /** The replication port named in the readiness line (docs/OPERATIONS.md, "A second box: follower"), 0: none. */
  replicationPort = 0;
  /** `https` when the server said it listens with TLS. */
  scheme = "http";
  /** Settles when the child has exited. */
  readonly exited: Promise<Exit>;
  private readonly child: ChildProcess;
  private readonly stdoutLog: Log;
  private readonly stderrLog: Log;
  /** Output of both streams in the order it came (bounded like each stream). */
  private readonly allLog: Log;
  /** Thread id → role from the workers' `thread` lines. */
  private readonly roles = new Map<number, string>();
  private expectingExit = false;

  private constructor(options: ServerProcessOptions) {
    this.name = options.name;
    const limit = options.logLimit ?? DEFAULT_LOG_LIMIT;
    this.stdoutLog = new Log(limit);
    this.stderrLog = new Log(limit);
    this.allLog = new Log(limit);
    const child = spawn(
      process.execPath,
      nodeArgs(options.script, options.args ?? [], options.nodeFlags ?? []),
      { cwd: REPO_ROOT, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] },
    );
    this.child = child;
    this.pid = child.pid ?? 0;
    live.add(child);
    this.exited = new Promise<Exit>((resolveExit) => {
      child.once("exit", (code, signal) => {
        live.delete(child);
        const exit = { code, signal };
        if (!this.expectingExit) options.onUnexpectedExit?.(exit);
        resolveExit(exit);
      });
    });
    child.stdout!.setEncoding("utf8");
    child.stderr!.setEncoding("utf8");
    const keep = (stream: "stdout" | "stderr", chunk: string) => {
      (stream === "stdout" ? this.stdoutLog : this.stderrLog).add(chunk);
      this.allLog.add(chunk);
      for (const m of chunk.matchAll(THREAD_LINE)) this.roles.set(Number(m[1]), m[2]);
      options.onOutput?.(stream, chunk, this.pid);
    };
    child.stdout!.on("data", (chunk: string) => keep("stdout", chunk));
    child.stderr!.on("data", (chunk: string) => keep("stderr", chunk));
  }

  /**
   * Starts the script and resolves once it printed `listening on`; otherwise kills it and rejects
   * within `startTimeoutMs` with its output.
   */
  static async start(options: ServerProcessOptions): Promise<ServerProcess> {
    const server = new ServerProcess(options);
    const listening = new Promise<void>((resolveListening, reject) => {
      let pending = "";
      const onData = (chunk: string) => {
        pending += chunk;
        let nl = pending.indexOf("\n");
        while (nl !== -1) {
          const line = pending.slice(0, nl);
          const m = LISTENING.exec(line);
          pending = pending.slice(nl + 1);
          if (m !== null) {
            const url = new URL(m[1]);
            server.host = url.hostname;
            server.scheme = url.protocol.slice(0, -1);
            server.port = Number(m[2]);
            server.fixPort = Number(FIX_ON.exec(line)?.[1] ?? 0);
            server.replicationPort = Number(REPLICATION_ON.exec(line)?.[1] ?? 0);
            server.child.stdout!.off("data", onData);
            resolveListening();
            return;
          }
          nl = pending.indexOf("\n");
        }
      };
      server.child.stdout!.on("data", onData);
      void server.exited.then((exit) =>
        reject(
          new Error(
            `${options.name} exited (code ${exit.code}, signal ${exit.signal}) before printing "listening on ..."`,
          ),
        ),
      );
    });
    try {
      await withTimeout(
        listening,
        options.startTimeoutMs,
        `${options.name} start (waiting for 'listening on')`,
      );
    } catch (error) {
      await server.kill().catch(() => {});
      throw new Error(`${(error as Error).message}\n${server.logs()}`);
    }
    return server;
  }

  /** Still running (not yet exited). */
  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last part of what the child printed: stdout, then stderr. */
  logs(maxChars = 4000): string {
    const cut = (text: string) => (text.length > maxChars ? `...${text.slice(-maxChars)}` : text);
    return `--- ${this.name} stdout ---\n${cut(this.stdoutLog.text())}\n--- ${this.name} stderr ---\n${cut(this.stderrLog.text())}`;
  }

  /** Each stream on its own (each bounded by `logLimit`). */
  streams(): { stdout: string; stderr: string } {
    return { stdout: this.stdoutLog.text(), stderr: this.stderrLog.text() };
  }

  /** Both streams in the order they came (bounded by `logLimit`). */
  output(): string {
    return this.allLog.text();
  }

  /**
   * SIGTERM, then SIGKILL when the child has not exited within `graceMs`. `killed` says whether
   * SIGKILL was needed.
   */
  async terminate(graceMs: number): Promise<Exit & { killed: boolean }> {
    this.expectingExit = true;
    if (!this.running) return { ...(await this.exited), killed: false };
    this.child.kill("SIGTERM");
    try {
      return {
        ...(await withTimeout(this.exited, graceMs, `${this.name} stop after SIGTERM`)),
        killed: false,
      };
    } catch {
      this.child.kill("SIGKILL");
      return { ...(await withTimeout(this.exited, 5000, `${this.name} exit after SIGKILL`)), killed: true };
    }
  }

  /** `terminate`, resolving with the exit code (null when killed). */
  async stop(graceMs = 10_000): Promise<number | null> {
    return (await this.terminate(graceMs)).code;
  }

  /** SIGKILL (`kill -9`) and wait for the process to be gone. */
  async kill(): Promise<Exit> {
    this.expectingExit = true;
    if (this.running) this.child.kill("SIGKILL");
    return withTimeout(this.exited, 5000, `${this.name} exit after SIGKILL`);
  }

  /** CPU time (user + system, all threads) used so far, ms; null where /proc is not available. */
  cpuMs(): number | null {
    return statCpuMs(`/proc/${this.pid}/stat`);
  }

  /**
   * CPU time per OS thread so far (tid → name and ms); empty where /proc is not available. The name
   * is "main", a worker's role from its `thread` line (writer, pair, checkpoint, reader), or else
   * the OS name ("node": V8's platform threads, libuv's pool).
   */
  threadCpuMs(): Map<number, { name: string; ms: number }> {
    const out = new Map<number, { name: string; ms: number }>();
    const pid = this.pid;
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const ms = statCpuMs(`/proc/${pid}/task/${tid}/stat`);
        const name =
          Number(tid) === pid
            ? "main"
            : (this.roles.get(Number(tid)) ?? readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim());
        if (ms !== null) out.set(Number(tid), { name, ms });
      }
    } catch {
      // not Linux, or the process is gone
    }
    return out;
  }
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function statCpuMs(path: string): number | null {
  try {
    const stat = readFileSync(path, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields[11] = utime, fields[12] = stime (fields 14 and 15 of proc(5), counted from state).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/**
 * Runs a script to its exit (for servers expected to refuse to start); one still running after
 * `timeoutMs` is killed and the promise rejects with its output.
 */
export function runToExit(
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, nodeArgs(script, args, []), {
    cwd: REPO_ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolveExit) =>
    child.once("close", (code) => {
      live.delete(child);
      resolveExit({ code, stdout, stderr });
    }),
  );
  return withTimeout(exited, timeoutMs, `${script} ${args.join(" ")} to exit`).catch((error) => {
    child.kill("SIGKILL");
    throw new Error(`${(error as Error).message}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`);
  });
}
