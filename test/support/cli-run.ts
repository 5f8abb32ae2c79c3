/** The `exchange` command run in this process (src/cli.ts `run`), its output captured. */
import { run } from "../../src/cli.ts";

/** Runs the command; its exit code and what it printed. */
export async function cli(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(
    argv,
    env,
    (l) => out.push(l),
    (l) => err.push(l),
  );
  return { code, out: out.join("\n"), err: err.join("\n") };
}
