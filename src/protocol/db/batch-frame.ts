/**
 * One journal row (src/protocol/db/journal.ts) as the replication protocol's BATCH frame
 * (src/replication/protocol.ts): built by the writer thread from the row it committed
 * (DbWriter.shipFrames) and read by a follower. Here, beside the journal, because both sides of
 * the thread boundary use it.
 */
import type { JournalRow } from "./journal.ts";

/** The frame type byte of a BATCH frame (src/replication/protocol.ts lists the others). */
export const FRAME_BATCH = 3;

/**
 * A BATCH frame's payload after the type byte:
 *
 *   f64 key | f64 settledBelow | u32 layout | u32 n1 | u32 n2 | counts (n1 bytes, UTF-8) |
 *   strs (n2 bytes, UTF-8) | slots (the rest)
 *
 * (little-endian): the journal row's columns as stored (src/protocol/db/journal.ts), copied with
 * no text encoding of the slots and no JSON around them.
 */
const BATCH_HEAD = 28;

/**
 * Encodes one journal row as a BATCH frame (a row without `layout` has layout 0), in a buffer of
 * its own (the writer thread transfers it).
 */
export function batchFrame(r: JournalRow): Buffer {
  const n1 = Buffer.byteLength(r.counts, "utf8");
  const n2 = Buffer.byteLength(r.strs, "utf8");
  const len = 1 + BATCH_HEAD + n1 + n2 + r.slots.length;
  const out = Buffer.allocUnsafeSlow(4 + len);
  out.writeUInt32BE(len, 0);
  out[4] = FRAME_BATCH;
  out.writeDoubleLE(r.seq, 5);
  out.writeDoubleLE(r.settled_below, 13);
  out.writeUInt32LE(r.layout ?? 0, 21);
  out.writeUInt32LE(n1, 25);
  out.writeUInt32LE(n2, 29);
  let at = 5 + BATCH_HEAD;
  at += out.write(r.counts, at, n1, "utf8");
  at += out.write(r.strs, at, n2, "utf8");
  r.slots.copy(out, at);
  return out;
}

/**
 * Decodes a BATCH frame's payload into the journal row (its `slots` a view into `payload`).
 * Throws on a payload too short for what its head says.
 */
export function parseBatch(payload: Buffer): Required<JournalRow> {
  if (payload.length < BATCH_HEAD) throw new Error(`replication batch of ${payload.length} bytes`);
  const n1 = payload.readUInt32LE(20);
  const n2 = payload.readUInt32LE(24);
  const from = BATCH_HEAD + n1 + n2;
  if (from > payload.length)
    throw new Error(`replication batch of ${payload.length} bytes, its head says more`);
  return {
    seq: payload.readDoubleLE(0),
    settled_below: payload.readDoubleLE(8),
    layout: payload.readUInt32LE(16),
    counts: payload.toString("utf8", BATCH_HEAD, BATCH_HEAD + n1),
    strs: payload.toString("utf8", BATCH_HEAD + n1, from),
    slots: payload.subarray(from),
  };
}
