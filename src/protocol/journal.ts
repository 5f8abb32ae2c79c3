/**
 * The batch journal (migration 006): one row per acknowledged batch whose rows are not written
 * yet. The writer thread (workers/db/writer-worker.ts) appends a batch here in the transaction
 * that makes it durable and acknowledges it, and writes its rows later in bulk with the same
 * `applyBatches` (batch-apply.ts) in a transaction that also deletes the journal rows it applied;
 * `replayJournal` applies what a stop left here before anything reads the tables.
 */
import { type BatchRecords, createBatchApplier } from "./batch-apply.ts";
import type { Db } from "./db-open.ts";
import { decodeSlots, encodeSlots } from "./slot-codec.ts";
import { KIND_COUNT } from "./writer-batch.ts";

/** A batch as the journal keeps it: its records copied out of the sender's buffer. */
export interface JournalBatch extends BatchRecords {
  seq: number;
}

/** The writer's statements on the journal tables. */
export interface JournalWriter {
  /** Appends the batch's row. In a transaction. */
  append(b: JournalBatch): void;
  /** Appends symbol `id` (the next one) of the run's table. In a transaction. */
  appendSym(id: number, name: string): void;
  /** Deletes the rows up to `seq`; returns how many there were. In a transaction. */
  deleteThrough(seq: number): number;
}

export function journalWriter(db: Db): JournalWriter {
  const insert = db.prepare(
    "INSERT INTO journal (seq, counts, slots, strs, settled_below) VALUES (?, ?, ?, ?, ?)",
  );
  const insertSym = db.prepare("INSERT INTO journal_syms (id, name) VALUES (?, ?)");
  const del = db.prepare("DELETE FROM journal WHERE seq <= ?");
  return {
    append(b) {
      const bytes = encodeSlots(b.slots, b.counts);
      insert.run(
        b.seq,
        JSON.stringify(b.counts),
        Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length),
        JSON.stringify(b.strs),
        b.settledBelow,
      );
    },
    appendSym(id, name) {
      insertSym.run(id, name);
    },
    deleteThrough(seq) {
      return del.run(seq).changes;
    },
  };
}

interface JournalRow {
  seq: number;
  counts: string;
  slots: Buffer;
  strs: string;
  settled_below: number;
}

/** Decodes a stored row. */
function decode(r: JournalRow): JournalBatch {
  const counts = JSON.parse(r.counts) as number[];
  if (!Array.isArray(counts) || counts.length !== KIND_COUNT)
    throw new Error(`journal row ${r.seq}: ${counts.length} record kinds, expected ${KIND_COUNT}`);
  const slots = decodeSlots(r.slots, counts);
  return { seq: r.seq, counts, slots, strs: JSON.parse(r.strs) as string[], settledBelow: r.settled_below };
}

/**
 * Applies every journal row left by an earlier run, in `seq` order, with the writer's own apply
 * code, catches the per-user rows up (nothing is in flight at a start), then empties the journal
 * and its symbol table: all in one IMMEDIATE transaction, so a crash in the middle leaves the
 * journal whole to be replayed again. `db` is a read-write connection, and no writer thread may
 * be running on the file (its unapplied batches would be written twice). Returns the number of
 * batches applied.
 */
export function replayJournal(db: Db): number {
  const count = (table: string) => db.prepare<[], number>(`SELECT COUNT(*) FROM ${table}`).pluck().get()!;
  if (count("journal") === 0 && count("journal_syms") === 0) return 0;
  return db
    .transaction(() => {
      // User rows are written once, by catchUp at the end, not every `userRowsFlushAt` batches.
      const applier = createBatchApplier(db, Number.POSITIVE_INFINITY);
      const syms = db
        .prepare<[], { id: number; name: string }>("SELECT id, name FROM journal_syms ORDER BY id")
        .all();
      syms.forEach((s, i) => {
        if (s.id !== i) throw new Error(`journal_syms: symbol ${i} is missing`);
        applier.syms.push(s.name);
      });
      // All at once: the connection runs no other statement while an iterator is open. The
      // journal holds about one bulk apply's batches (workers/db/writer-worker.ts).
      const rows = db.prepare<[], JournalRow>("SELECT * FROM journal ORDER BY seq").all();
      applier.applyBatches(rows.map(decode));
      applier.catchUp();
      db.prepare("DELETE FROM journal").run();
      db.prepare("DELETE FROM journal_syms").run();
      return rows.length;
    })
    .immediate();
}
