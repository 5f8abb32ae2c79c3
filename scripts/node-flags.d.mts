/** Threads of V8's background pool for a machine of `cores` cores, or null for Node's default. */
export function v8PoolSizeFor(cores: number): number | null;
/** The main thread's initial old generation, MB, on a machine of 8 GiB or more. */
export const OLD_SPACE_MB: number;
/** The main thread's initial old generation (MB) on a machine of `bytes` of memory, or null for V8's default. */
export function oldSpaceMbFor(bytes: number): number | null;
/** TurboFan's cumulative inlining budget (bytes of bytecode) on a machine of one or two cores. */
export const INLINING_BUDGET: number;
/** The cumulative inlining budget for a machine of `cores` cores, or null for V8's default. */
export function inliningBudgetFor(cores: number): number | null;
/** The flags to give `node` before the server's entry (see node-flags.mjs). */
export function serverNodeFlags(
  env?: Record<string, string | undefined>,
  cores?: number,
  memory?: number,
): string[];
