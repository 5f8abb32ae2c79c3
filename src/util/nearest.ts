/**
 * The name someone most likely meant when they typed one that does not exist (a flag, a command):
 * `--prot` is `--port`, `--urll` is `--url`, `--rate` is `--rate-limit`. Used by the server's flags
 * (src/config/settings.ts) and the `exchange` command (src/cli.ts), so that a typo is answered with the fix.
 */

/**
 * Edits between `a` and `b`: insertions, deletions, substitutions and swaps of two neighbouring
 * characters (the optimal string alignment distance).
 */
export function editDistance(a: string, b: string): number {
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, before[j - 2] + 1);
      current.push(d);
    }
    before = previous;
    previous = current;
  }
  return previous[b.length];
}

/**
 * The candidate `word` is most likely a typo of: the closest one within a third of its length in
 * edits (at least one edit), else the only one that starts with it (three characters or more);
 * undefined when none is close.
 */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  const all = [...candidates];
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(word.length / 3));
  for (const c of all) {
    const d = editDistance(word, c);
    if (d <= bestDistance && (best === undefined || d < bestDistance)) {
      best = c;
      bestDistance = d;
    }
  }
  if (best !== undefined || word.length < 3) return best;
  const longer = all.filter((c) => c.startsWith(word));
  return longer.length === 1 ? longer[0] : undefined;
}

/**
 * The option name of node's `parseArgs` unknown-option error (`Unknown option '--prot'. To
 * specify ...`), or undefined for any other error.
 */
export function unknownOptionOf(error: unknown): string | undefined {
  if ((error as { code?: unknown }).code !== "ERR_PARSE_ARGS_UNKNOWN_OPTION") return undefined;
  return /'([^']+)'/.exec((error as Error).message)?.[1];
}
