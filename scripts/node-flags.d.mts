/** Threads of V8's background pool for a machine of `cores` cores, or null for Node's default. */
export function v8PoolSizeFor(cores: number): number | null;
/** The flags to give `node` before the server's entry (see node-flags.mjs). */
export function serverNodeFlags(env?: Record<string, string | undefined>, cores?: number): string[];
