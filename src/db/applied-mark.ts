/**
 * The applied mark of the database writer (src/db/writer.ts) and the reads waiting on it. The ack
 * of a batch says its journal row is committed; its rows reach their tables later, in a bulk apply
 * of the apply thread (workers/db/apply-worker.ts). A read of those tables from another connection
 * waits here until every batch acknowledged before it is applied (docs/ARCHITECTURE.md,
 * "Durability and recovery": reads wait on `applied()`).
 */

const APPLIED = Promise.resolve();

export class AppliedMark {
  /** Seq of the last acknowledged batch. */
  private ackedSeq = 0;
  /** Every batch up to this seq has its rows committed to their tables, not only its journal row. */
  private appliedThrough = 0;
  /** The writer closed, which applied everything first. */
  private allApplied = false;
  /** `wait()` calls waiting, in `need` order (the seq acknowledged when each was made). */
  private readonly waiters: { need: number; resolve: () => void; reject: (err: Error) => void }[] = [];
  /** An "apply" message is out and not answered yet. */
  private asked = false;

  /**
   * @param requestApply posts an "apply" request to the writer thread, which hands every batch
   *   journaled so far to the apply thread; returns false, posting nothing, once the writer's close
   *   is sent (the close applies everything before it answers).
   */
  constructor(private readonly requestApply: () => boolean) {}

  /**
   * Resolves once every batch acknowledged before the call has its rows applied: at once when they
   * are, otherwise after the apply thread, asked now, has applied what was journaled.
   */
  wait(): Promise<void> {
    const need = this.ackedSeq;
    if (this.appliedThrough >= need || this.allApplied) return APPLIED;
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ need, resolve, reject });
      this.askApply();
    });
  }

  /** The writer thread acknowledged batch `seq`, which held `records` records. */
  acked(seq: number, records: number): void {
    this.ackedSeq = seq;
    // A batch of callbacks only has no rows: applied as soon as every batch before it is.
    if (records === 0 && this.appliedThrough === seq - 1) this.appliedThrough = seq;
  }

  /** The apply thread applied every batch through `through`; `answered`: the answer to a request. */
  applied(through: number, answered: boolean): void {
    if (through > this.appliedThrough) this.appliedThrough = through;
    if (answered) this.asked = false;
    this.release(false);
  }

  /** The writer closed: the close applied everything before it closed. */
  closed(): void {
    this.allApplied = true;
    this.release(true);
  }

  /** The writer failed: every waiting read rejects with `err`. */
  failed(err: Error): void {
    for (const w of this.waiters.splice(0)) w.reject(err);
  }

  /** Asks the apply thread to apply what was journaled, unless a request is already out. */
  private askApply(): void {
    if (this.asked) return;
    // After every batch sent: the writer thread hands them all to the apply thread.
    if (this.requestApply()) this.asked = true;
  }

  /** Resolves the waiters the applied mark now covers; asks again for those it does not. */
  private release(all: boolean): void {
    const waiters = this.waiters;
    let n = 0;
    while (n < waiters.length && (all || waiters[n].need <= this.appliedThrough)) n++;
    for (const w of waiters.splice(0, n)) w.resolve();
    // A request already out when they came may have been read before their batches.
    if (waiters.length > 0) this.askApply();
  }
}
