/**
 * What the matching benchmarks time with (order-book.bench.ts, stops.bench.ts): a forced full GC
 * between replays, the CPU time of one replay, and a median.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** A forced full GC between iterations, so one engine's garbage is not collected on the other's clock. */
function exposeGc(): (() => void) | undefined {
  try {
    setFlagsFromString("--expose-gc");
    return runInNewContext("gc") as () => void;
  } catch {
    return undefined;
  }
}
export const gc = exposeGc();

/**
 * CPU milliseconds (user + system, this process) of one replay on a fresh, prefilled book. CPU time
 * rather than wall time: on this shared 2-core machine a replay waits for a core as long as it
 * runs, and that wait says nothing about either book.
 */
export function timeReplay(run: { prepare(): void; replay(): void }): number {
  gc?.();
  run.prepare();
  const t0 = process.cpuUsage();
  run.replay();
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / 1000;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
