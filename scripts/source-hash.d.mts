/** Where the build writes the hash of the sources it compiled, relative to the repository root. */
export const SOURCE_HASH_FILE: string;
/** The hash of the build's sources in the checkout at `root`, as hex. */
export function sourceHash(root: string): string;
