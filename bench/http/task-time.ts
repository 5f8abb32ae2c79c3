/**
 * Reads a finished tinybench (6.x) task's time per run in nanoseconds: its mean and median. Every
 * micro benchmark under bench/http prints its table from these.
 */
import type { Task } from "tinybench";

export function taskNs(t: Task): { mean: number; p50: number } {
  const r = t.result as { latency?: { mean: number; p50?: number } } | undefined;
  return { mean: (r?.latency?.mean ?? Number.NaN) * 1e6, p50: (r?.latency?.p50 ?? Number.NaN) * 1e6 };
}
