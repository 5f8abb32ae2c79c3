/**
 * Main-thread side of the database writer.
 *
 *   main thread                          writer thread (workers/db/writer-worker.ts)
 *   record methods append to `cur` ──┐
 *   afterCommit(cb) adds to `cur`    │ setImmediate / ack
 *                                    └─ postMessage(batch: one slot buffer) ──▶ BEGIN; journal row; COMMIT
 *   callbacks of that batch run  ◀──────────────────────────── {ack, seq} ◀──┘  (the journal file)
 *                                                                              │ the batch
 *                                        apply thread (workers/db/apply-worker.ts)  ▼
 *   applied() resolves  ◀────────────── {applied, through} ◀── every 16 batches, handed over at once:
 *   (a read asks the writer thread with {apply} when it must wait)  BEGIN; their rows; applied mark;
 *                                                               COMMIT (the exchange file)
 *
 * Group commit: at most one batch is in flight. While it is, every new record and callback
 * accumulates in the next batch, which is sent the moment the ack arrives; so under load each
 * transaction carries everything that arrived during the previous fsync, and at rest a lone record
 * waits one setImmediate. A callback registered with `afterCommit` runs only after the transaction
 * holding every record added before it has committed (its batch or an earlier one).
 *
 * Committed means journaled (src/protocol/db/journal.ts): the ack follows the commit of one row holding
 * the batch in the journal file, and the batch's rows (orders, trades, balances...) reach their
 * tables in the exchange file in a later transaction of the apply thread, which the start-up replay
 * redoes if the process dies first. The two files have two write locks, so a bulk apply never
 * holds up a journal commit (BENCHMARKS.md, "Changes kept").
 * Other connections therefore see a batch's rows only once `applied()` says so: every read of
 * those tables waits for it (src/db/reader.ts `before`, wired in src/boot.ts).
 *
 * With `--replication sync` a release gate (setReleaseGate, src/replication/leader.ts) stands between
 * the ack and the callbacks: a committed batch's callbacks (answers, reports, stream messages) are
 * held, in order, until the gate says a follower has that batch's journal key durable too, or
 * that the leader goes on alone (docs/OPERATIONS.md, "A second box: follower").
 *
 * On any writer error the writer is failed for good: no further callback ever runs (nothing more
 * may be reported durable), `onFatal` listeners are told, and records are dropped.
 *
 * The parts: batch-builder.ts builds the batch (the record methods, inherited), applied-mark.ts
 * keeps the applied mark and the reads waiting on it, writer-threads.ts starts the threads; this
 * class sends batches, runs their callbacks, and closes or fails the writer.
 */
import type { Worker } from "node:worker_threads";
import type { RecordSink, WriterStats } from "../core/record-sink.ts";
import type { FromApplier, FromWriter, ToWriter } from "../protocol/db/writer-messages.ts";
import { AppliedMark } from "./applied-mark.ts";
import { type Batch, BatchBuilder } from "./batch-builder.ts";
import { startWriterThreads, type WriterOptions } from "./writer-threads.ts";

/** A committed journal row as the replication protocol's BATCH frame (DbWriter.shipFrames). */
export interface ShippedFrame {
  /** Its journal key, and the key of the row before it (this run's or the journal's last). */
  key: number;
  prev: number;
  /** The id of the first symbol it added to the journal's table, and those symbols. */
  symFrom: number;
  syms: readonly string[];
  frame: Buffer;
}

/** Says whether the callbacks of a committed batch may run (`--replication sync`). */
export interface ReleaseGate {
  /** True when the batches up to journal key `key` may be reported. */
  released(key: number): boolean;
}

export class DbWriter extends BatchBuilder implements RecordSink {
  private inFlight: Batch | null = null;
  private scheduled = false;
  private seq = 0;
  private failure: Error | null = null;
  private readonly fatalListeners: ((err: Error) => void)[] = [];
  private readonly sendHooks: (() => void)[] = [];
  private readonly flushRejects = new Set<(err: Error) => void>();
  private closing: Promise<void> | null = null;
  /** The close message has been posted: nothing more may be sent. */
  private closeSent = false;
  private closedAck = false;
  /** What `applied()` waits on. */
  private readonly appliedMark = new AppliedMark(() => {
    // Once the close is sent, the writer applies everything before it answers "closed".
    if (this.closeSent) return false;
    this.post({ t: "apply" });
    return true;
  });
  private committedBatches = 0;
  private committedRecords = 0;
  /** Told after each ack, before its callbacks (the replication listener reads the journal then). */
  private readonly ackListeners: (() => void)[] = [];
  /** The applied mark at start: this run's batch `seq` is journal key `base + seq`. */
  base = 0;
  /**
   * The journal key of the last committed batch that wrote a row (a batch of callbacks only writes
   * none: what it reports is in the rows before it).
   */
  lastRowKey = 0;
  private gate: ReleaseGate | null = null;
  private frameListener: ((f: ShippedFrame) => void) | null = null;
  /** Committed batches' callbacks the gate holds, in commit order, with when they were held. */
  private readonly held: { key: number; at: number; callbacks: (() => void)[] }[] = [];

  private constructor(
    /** The writer (journal) thread: the ack path. */
    private readonly worker: Worker,
    /** The apply thread: the batches' rows. */
    private readonly applier: Worker,
    private readonly checkpointer: Worker | null,
  ) {
    super();
    worker.on("message", this.onMessage);
    applier.on("message", this.onMessage);
    for (const [w, what] of [
      [worker, "database writer"],
      [applier, "database apply"],
    ] as const) {
      w.on("error", (err) => this.fail(new Error(`${what} thread crashed: ${err.message}`)));
      w.on("exit", (code) => {
        // On close the apply thread ends first, then the writer thread says "closed".
        const expected = w === applier ? this.closeSent : this.closedAck;
        if (!expected) this.fail(new Error(`${what} thread exited unexpectedly (code ${code})`));
      });
    }
  }

  /** Starts the writer's threads (writer-threads.ts); resolves once they are ready. */
  static async start(file: string, opts: WriterOptions = {}): Promise<DbWriter> {
    const { worker, applier, checkpointer, base } = await startWriterThreads(file, opts);
    const w = new DbWriter(worker, applier, checkpointer);
    w.base = base;
    w.lastRowKey = base;
    return w;
  }

  // ---- commit notification ---------------------------------------------------------------------

  /**
   * Runs `cb` once every record added so far is committed. Callbacks run in registration order.
   * Never runs if the writer fails.
   */
  afterCommit(cb: () => void): void {
    this.cur.callbacks.push(cb);
    this.touch();
  }

  /**
   * Runs `fn` just before each batch is sealed and sent; records it adds join that batch. State
   * of which only the latest value is persisted (balances, candles) is handed over here once per
   * transaction instead of once per change (the writer keeps the last of repeated keys anyway, so
   * this saves the encoding and the copy, not SQLite work): every callback already in the batch
   * sees its changes committed, and later changes go with a later batch.
   */
  beforeSend(fn: () => void): void {
    this.sendHooks.push(fn);
  }

  /** Sends what is pending now (if nothing is in flight); resolves once all of it is committed. */
  flush(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closeSent) return Promise.reject(new Error("database writer is closed"));
    const done = new Promise<void>((resolve, reject) => {
      this.flushRejects.add(reject);
      this.afterCommit(() => {
        this.flushRejects.delete(reject);
        resolve();
      });
    });
    if (this.inFlight === null) this.send();
    return done;
  }

  /**
   * Resolves once every batch acknowledged before the call has its rows committed to their tables
   * (orders, trades, balances, user rows...), not only its journal row: at once when they are,
   * otherwise after the apply thread, asked now, has applied what was journaled. Every read of
   * those tables from another connection waits on it first, so that a read right after an answer
   * sees what the answer reported (docs/ARCHITECTURE.md, "Durability and recovery"). Rejects if the writer has failed.
   */
  applied(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return this.appliedMark.wait();
  }

  /** `fn` runs after every commit (a batch's journal row is readable from then on). */
  onAck(fn: () => void): void {
    this.ackListeners.push(fn);
  }

  /**
   * From now on `fn` gets each committed journal row as a BATCH frame that the writer thread
   * built from what it journaled (src/replication/leader.ts ships it without reading the journal
   * back), before the ack listeners run.
   */
  shipFrames(fn: (f: ShippedFrame) => void): void {
    this.frameListener = fn;
    this.post({ t: "frames" });
  }

  /**
   * From now on the callbacks of each committed batch wait for `gate` (null: none; whatever is held
   * runs now).
   */
  setReleaseGate(gate: ReleaseGate | null): void {
    this.gate = gate;
    this.releaseHeld();
  }

  /** Runs the held callbacks the gate now releases, in commit order. */
  releaseHeld(): void {
    while (this.held.length > 0 && (this.gate === null || this.gate.released(this.held[0].key)))
      runAll(this.held.shift()!.callbacks);
  }

  /** When the oldest held batch was committed (performance.now()), or null when none is held. */
  heldSince(): number | null {
    return this.held.length === 0 ? null : this.held[0].at;
  }

  /** `cb` is told once, when the writer fails; from then on nothing is written or acknowledged. */
  onFatal(cb: (err: Error) => void): void {
    this.fatalListeners.push(cb);
    if (this.failure) cb(this.failure);
  }

  /** The error that failed the writer, or null. */
  get failed(): Error | null {
    return this.failure;
  }

  get stats(): WriterStats {
    return { batches: this.committedBatches, records: this.committedRecords };
  }

  /**
   * Commits everything recorded so far (and whatever the callbacks it releases record), then
   * checkpoints the WAL, closes the connection and ends the thread. Records added after it
   * resolves are dropped. Rejects if the writer has failed.
   */
  close(): Promise<void> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    if (this.failure) {
      await this.checkpointer?.terminate();
      await this.worker.terminate();
      await this.applier.terminate();
      throw this.failure;
    }
    // Empty the pipeline, including what callbacks add meanwhile: afterwards nothing is in flight
    // and no record or callback is pending.
    do await this.flush();
    while (this.inFlight !== null || !this.cur.empty);
    // The checkpointer stops first, so the writer's final TRUNCATE checkpoint has the WAL alone.
    if (this.checkpointer !== null) {
      const cp = this.checkpointer;
      const cpExited = new Promise<void>((resolve) => cp.once("exit", () => resolve()));
      cp.postMessage("close");
      await cpExited;
    }
    // The writer thread passes the close on to the apply thread and closes after it.
    const exited = Promise.all(
      [this.worker, this.applier].map((w) => new Promise<void>((resolve) => w.once("exit", () => resolve()))),
    );
    this.closeSent = true;
    this.post({ t: "close" });
    await exited;
    if (this.failure) throw this.failure;
  }

  /** The current batch got its first record or callback. */
  protected batchStarted(): void {
    // With a batch in flight, the ack sends this one; otherwise send it after this turn's work.
    if (this.inFlight === null && !this.scheduled) {
      this.scheduled = true;
      setImmediate(this.onImmediate);
    }
  }

  private readonly onImmediate = (): void => {
    this.scheduled = false;
    if (this.failure || this.closeSent) {
      this.drop(); // nothing may be reported durable any more
      return;
    }
    if (this.inFlight === null && !this.cur.empty) this.send();
  };

  private send(): void {
    for (const fn of this.sendHooks) fn();
    this.inFlight = this.cur;
    this.post(this.seal(++this.seq));
  }

  private post(m: ToWriter): void {
    this.worker.postMessage(m);
  }

  private readonly onMessage = (m: FromWriter | FromApplier): void => {
    switch (m.t) {
      case "ack": {
        const done = this.inFlight;
        if (done === null || m.seq !== this.seq) {
          this.fail(new Error(`database writer acknowledged batch ${m.seq}, expected ${this.seq}`));
          return;
        }
        this.inFlight = null;
        this.appliedMark.acked(m.seq, m.records);
        this.committedBatches++;
        this.committedRecords += m.records;
        const prev = this.lastRowKey;
        if (m.records > 0) this.lastRowKey = this.base + m.seq;
        // Send the next batch first so the writer works while the callbacks run.
        if (!this.cur.empty) this.send();
        if (m.frame !== undefined && this.frameListener !== null)
          this.frameListener({
            key: this.lastRowKey,
            prev,
            symFrom: m.symFrom ?? 0,
            syms: m.syms ?? [],
            frame: Buffer.from(m.frame.buffer, m.frame.byteOffset, m.frame.byteLength),
          });
        for (const fn of this.ackListeners) fn();
        const gate = this.gate;
        if (gate !== null && (this.held.length > 0 || !gate.released(this.lastRowKey))) {
          if (done.callbacks.length > 0)
            this.held.push({ key: this.lastRowKey, at: performance.now(), callbacks: done.callbacks });
          return;
        }
        runAll(done.callbacks);
        return;
      }
      case "error":
        this.fail(new Error(`database write failed (batch ${m.seq}): ${m.message}`));
        return;
      case "applied":
        this.appliedMark.applied(m.through, m.asked);
        return;
      case "closed":
        this.closedAck = true;
        this.appliedMark.closed();
        return;
      case "ready":
        return;
    }
  };

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.inFlight = null;
    this.held.length = 0;
    this.drop();
    for (const reject of this.flushRejects) reject(err);
    this.flushRejects.clear();
    this.appliedMark.failed(err);
    if (this.fatalListeners.length === 0) {
      // Nobody handles it: crash rather than run on with writes silently lost.
      process.nextTick(() => {
        throw err;
      });
    }
    for (const cb of this.fatalListeners) cb(err);
    void this.worker.terminate();
    void this.applier.terminate();
  }
}

/** Runs each callback; one that throws does not keep the others (other clients' answers) from running. */
function runAll(callbacks: readonly (() => void)[]): void {
  for (const cb of callbacks) {
    try {
      cb();
    } catch (err) {
      queueMicrotask(() => {
        throw err;
      });
    }
  }
}
