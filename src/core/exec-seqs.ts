/**
 * Each user's execution sequence (docs/API.md 16): 1, 2, 3, ... with no gap, one number per change
 * a command makes to one of the user's orders (the state it left the order in) and one per side of
 * each of the user's trades, given as the results stage records them (src/core/results.ts), which
 * is the order they commit in. A fill's trade takes a lower number than the order change it makes:
 * trades are recorded as the fills come, the orders' changes when the command ends.
 *
 * `given` is the last number handed out, where a resume's replay is cut (src/session/session-hub.ts:
 * the replay is read once the records of the numbers up to it have committed); `committed` the last
 * one whose batch has committed, where the executions read is cut.
 */
export class ExecSeqs {
  private readonly handed: number[] = [];
  private readonly done: number[] = [];

  /** The next number of `user`. */
  next(user: number): number {
    const n = (this.handed[user] ?? 0) + 1;
    this.handed[user] = n;
    return n;
  }

  /** `user`'s last number as stored (a start). */
  restore(user: number, last: number): void {
    this.handed[user] = last;
    this.done[user] = last;
  }

  /** Number `seq` of `user` has committed (numbers commit in order). */
  commit(user: number, seq: number): void {
    if (seq > (this.done[user] ?? 0)) this.done[user] = seq;
  }

  /** `user`'s last number given (0: none); its records may not have committed yet. */
  given(user: number): number {
    return this.handed[user] ?? 0;
  }

  /** `user`'s last committed number (0: none). */
  committed(user: number): number {
    return this.done[user] ?? 0;
  }
}
