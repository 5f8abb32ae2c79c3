/**
 * Summarises the `.cpuprofile` files that `node --cpu-prof` wrote (one per thread: the main thread
 * and each worker): self time per function (name + file:line), optionally only the samples taken
 * inside a time window (the measured part of a run, in the monotonic clock of `process.hrtime`,
 * which is the clock of V8's profile timestamps on Linux).
 *
 * tsx runs our TypeScript through esbuild with `minifyWhitespace`, so V8 reports every function of
 * src/ at line 1 of the transformed code. To name the source line, each .ts file is transformed
 * again here with tsx's options and the column is mapped back through that source map (when
 * esbuild is not importable, or the mapping fails, `file:1:col` of the transformed code is shown).
 *
 * Note: a thread blocked in `Atomics.wait` is sampled as running the JS function that called it,
 * so a worker that sleeps waiting for work shows 100% "busy" in that function; the per-thread CPU
 * from /proc (run.ts) tells real CPU apart.
 *
 *   npx tsx bench/load/profile.ts <dir> [--top 15]
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { REPO_ROOT } from "./servers.ts";

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}

interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface FunctionTime {
  function: string;
  location: string;
  selfMs: number;
  /** Share of this thread's busy (non-idle) samples in the window. */
  pctBusy: number;
}

export interface ThreadProfile {
  file: string;
  /** "main" for the main thread (thread id 0 in the file name), else "worker <tid>". */
  thread: string;
  windowMs: number;
  busyMs: number;
  idleMs: number;
  gcMs: number;
  top: FunctionTime[];
}

export interface ProfileSummary {
  dir: string;
  /** True when the samples were cut to the window; false when the window missed (all samples used). */
  windowed: boolean;
  threads: ThreadProfile[];
}

type Resolve = (url: string, line: number, column: number) => number | null;

function shortLocation(url: string, line: number, column: number, resolve: Resolve): string {
  if (url === "") return "(native)";
  let u = url;
  const root = pathToFileURL(REPO_ROOT).href;
  if (u.startsWith(root)) u = u.slice(root.length + 1);
  const nm = u.lastIndexOf("node_modules/");
  if (nm !== -1) u = u.slice(nm + "node_modules/".length);
  const mapped = resolve(url, line, column);
  if (mapped !== null) return `${u}:${mapped}`;
  return line === 0 && url.endsWith(".ts") ? `${u}:1:${column + 1}` : `${u}:${line + 1}`;
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** Source map `mappings` → per generated line, sorted [generatedColumn, sourceLine] pairs. */
function decodeMappings(mappings: string): number[][] {
  const lines: number[][] = [];
  let srcLine = 0;
  for (const lineText of mappings.split(";")) {
    const segs: number[] = [];
    let genCol = 0;
    for (const seg of lineText.split(",")) {
      if (seg === "") continue;
      const fields: number[] = [];
      let value = 0;
      let shift = 0;
      for (const ch of seg) {
        const digit = B64.indexOf(ch);
        value += (digit & 31) << shift;
        if (digit & 32) shift += 5;
        else {
          fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      genCol += fields[0];
      if (fields.length >= 4) {
        srcLine += fields[2];
        segs.push(genCol, srcLine);
      }
    }
    lines.push(segs);
  }
  return lines;
}

/** Maps (url, line, column) of tsx-transformed TypeScript back to the 1-based source line. */
async function tsResolver(): Promise<Resolve> {
  let transformSync: ((code: string, options: Record<string, unknown>) => { map: string }) | null = null;
  try {
    const esbuild = (await import("esbuild" as string)) as { transformSync: typeof transformSync };
    transformSync = esbuild.transformSync;
  } catch {
    return () => null;
  }
  const maps = new Map<string, number[][] | null>();
  return (url, line, column) => {
    if (!url.startsWith("file://") || !url.endsWith(".ts") || url.includes("/node_modules/")) return null;
    let map = maps.get(url);
    if (map === undefined) {
      try {
        const file = fileURLToPath(url);
        const out = transformSync!(readFileSync(file, "utf8"), {
          loader: "ts",
          format: "esm",
          target: `node${process.versions.node}`,
          sourcemap: "external",
          sourcefile: file,
          minifyWhitespace: true,
          keepNames: true,
        });
        map = decodeMappings((JSON.parse(out.map) as { mappings: string }).mappings);
      } catch {
        map = null;
      }
      maps.set(url, map);
    }
    const segs = map?.[line];
    if (segs === undefined || segs.length === 0) return null;
    let best = -1;
    for (let i = 0; i < segs.length && segs[i] <= column; i += 2) best = segs[i + 1];
    return best < 0 ? null : best + 1;
  };
}

/** Window in µs of the monotonic clock; undefined: every sample. */
export async function summariseProfiles(
  dir: string,
  topN = 15,
  window?: { fromUs: number; toUs: number },
): Promise<ProfileSummary> {
  const resolve = await tsResolver();
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile"))
    .sort();
  let windowed = window !== undefined;
  const threads: ThreadProfile[] = [];
  const parsed = files.map((file) => ({
    file,
    profile: JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile,
  }));
  // If no file has a sample in the window, the clocks disagree: fall back to every sample.
  if (window !== undefined) {
    const overlaps = parsed.some(
      ({ profile }) => profile.startTime < window.toUs && profile.endTime > window.fromUs,
    );
    if (!overlaps) windowed = false;
  }
  for (const { file, profile } of parsed) {
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const self = new Map<string, { fn: string; loc: string; us: number }>();
    let idle = 0;
    let gc = 0;
    let busy = 0;
    let t = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      t += profile.timeDeltas[i] ?? 0;
      // A sample stands for the time until the next one.
      const dur = profile.timeDeltas[i + 1] ?? 0;
      if (windowed && window !== undefined && (t < window.fromUs || t >= window.toUs)) continue;
      const node = byId.get(profile.samples[i]);
      if (node === undefined) continue;
      const name = node.callFrame.functionName;
      if (name === "(idle)") {
        idle += dur;
        continue;
      }
      busy += dur;
      if (name === "(garbage collector)") gc += dur;
      const fn = name === "" ? "(anonymous)" : name;
      const cf = node.callFrame;
      const loc = name.startsWith("(") ? "" : shortLocation(cf.url, cf.lineNumber, cf.columnNumber, resolve);
      const key = `${fn}\u0000${loc}`;
      const entry = self.get(key);
      if (entry === undefined) self.set(key, { fn, loc, us: dur });
      else entry.us += dur;
    }
    const m = /\.(\d+)\.(\d+)\.\d+\.cpuprofile$/.exec(file);
    const tid = m === null ? "?" : m[2];
    const top = [...self.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, topN)
      .map((e) => ({
        function: e.fn,
        location: e.loc,
        selfMs: Math.round(e.us / 100) / 10,
        pctBusy: busy > 0 ? Math.round((e.us / busy) * 1000) / 10 : 0,
      }));
    threads.push({
      file,
      thread: tid === "0" ? "main" : `worker ${tid}`,
      windowMs: Math.round((busy + idle) / 1000),
      busyMs: Math.round(busy / 1000),
      idleMs: Math.round(idle / 1000),
      gcMs: Math.round(gc / 1000),
      top,
    });
  }
  threads.sort((a, b) => (a.thread === "main" ? -1 : b.thread === "main" ? 1 : b.busyMs - a.busyMs));
  return { dir, windowed, threads };
}

/** A markdown rendering: one table for the main thread, one line per worker thread. */
export function profileMarkdown(summary: ProfileSummary, topN = 15): string {
  const lines: string[] = [];
  for (const th of summary.threads) {
    const head = `**${th.thread}** (${th.file}): busy ${th.busyMs} ms of ${th.windowMs} ms sampled, GC ${th.gcMs} ms`;
    if (th.thread !== "main") {
      const top = th.top
        .slice(0, 5)
        .map((f) => `${f.function} ${f.location} ${f.pctBusy}%`)
        .join("; ");
      lines.push(`- ${head}. Top: ${top}`);
      continue;
    }
    lines.push(head, "", "| # | self ms | % of busy | function | location |", "|---:|---:|---:|---|---|");
    th.top.slice(0, topN).forEach((f, i) => {
      lines.push(`| ${i + 1} | ${f.selfMs} | ${f.pctBusy} | \`${f.function}\` | ${f.location} |`);
    });
    lines.push("", "Other threads:", "");
  }
  return lines.join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const dir = process.argv[2];
  if (dir === undefined) {
    console.error("usage: tsx bench/load/profile.ts <dir> [--top N]");
    process.exit(2);
  }
  const at = process.argv.indexOf("--top");
  const top = at === -1 ? 15 : Number(process.argv[at + 1]);
  console.log(profileMarkdown(await summariseProfiles(dir, top), top));
}
