/**
 * A resume (docs/API.md 16), shared by the trading sessions and the FIX gateway: judged at the
 * logon against the box's epoch and the user's numbers, then the user's executions in (from, cut]
 * read once every number up to the cut has committed.
 */
import { Code } from "../errors/catalogue.ts";
import type { Execution } from "../protocol/db/reader-tasks.ts";
import type { EntryContext } from "./context.ts";

/**
 * The cut of a resume from `from` (the last number given to the user now), or the refusal's code:
 * RESUME_EPOCH for another epoch than the box's (`epoch` 0: not given), RESUME_AHEAD for a number
 * above the user's last. Returned negated: a code is answered, a cut (>= 0) replayed.
 */
export function resumeCut(ctx: EntryContext, userId: number, from: number, epoch: number): number {
  if (epoch !== 0 && epoch !== ctx.execEpoch) return -Code.RESUME_EPOCH;
  const cut = ctx.exchange.execSeqs.given(userId);
  return from > cut ? -Code.RESUME_AHEAD : cut;
}

/**
 * The user's executions in (from, cut], read once the records of every number up to `cut` have
 * committed (the writer's current batch holds the last of them).
 */
export function replayRows(
  ctx: EntryContext,
  userId: number,
  from: number,
  cut: number,
): Promise<Execution[]> {
  return new Promise<void>((committed) => ctx.exchange.results.afterCommit(committed)).then(() =>
    ctx.reader.executions(userId, from, cut, Number.MAX_SAFE_INTEGER),
  );
}
