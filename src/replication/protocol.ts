/**
 * The replication protocol between a leader's replication port and its followers
 * (docs/OPERATIONS.md, "A second box: follower"; DECISIONS.md, "A second box: follower").
 *
 * One TCP connection (TLS when the leader has a certificate) per follower. Every frame is
 *
 *   u32 big-endian length of what follows | u8 type | payload
 *
 * type JSON (a message below, UTF-8), BYTES (a piece of a database copy) or BATCH (one journal row,
 * batchFrame). The follower speaks first and once (`hello`); then the leader sends, in this order:
 *
 *   refused              the token, the version, the epoch or the position is not acceptable; it
 *                        closes
 *   welcome              the leader's epoch and replication mode
 *   copy, BYTES..., copyEnd
 *                        only when the follower has nothing or is behind the journal's trim mark:
 *                        a consistent copy of the database (the online backup), whose journal
 *                        position is `position`
 *   syms                 names appended to the leader run's symbol table (the first one holds the
 *                        table so far); the batches after it refer to them by index
 *   BATCH frames         one journal row each, as the leader committed it, in key order
 *   head                 the leader's last committed key and its clock, after the backlog and every
 *                        second (the follower's lag is measured against it)
 *
 * and, from a `sync` leader, `sync` whenever the leader starts or stops counting this follower's
 * acks for its answers. The follower sends `durable` for the last key its database committed (one
 * commit may hold several batches): to a `sync` leader after each commit, which holds a change's
 * answer until one follower's `durable` covers its key or goes on alone (src/replication/leader.ts);
 * to an `async` leader, which only shows it (lag), at most once per 100 ms, in answer to a head.
 * Either way a head is answered at least once per HEAD_EVERY_MS: a connection silent for
 * SILENT_MS is closed on either side.
 */
import { FRAME_BATCH } from "../protocol/db/batch-frame.ts";

export { batchFrame, FRAME_BATCH, parseBatch } from "../protocol/db/batch-frame.ts";

/** The protocol's version: a leader refuses a follower of another one. */
export const PROTOCOL_VERSION = 3;

/** How often the leader sends a head to a follower with nothing else to hear. */
export const HEAD_EVERY_MS = 1000;
/**
 * A connection that brought nothing for this long (three heads, or on the leader's side three
 * answers to them, missed) is lost and closed: a cut network ends no connection by itself. The
 * follower then asks again; its lag counts from the last head it heard.
 */
export const SILENT_MS = 3 * HEAD_EVERY_MS;

export const FRAME_JSON = 1;
export const FRAME_BYTES = 2;

/** A frame's payload at most (a copy is sent in pieces well below it). */
export const MAX_FRAME = 64 * 1024 * 1024;

/** Follower → leader. */
export type ToLeader =
  | {
      t: "hello";
      version: number;
      token: string;
      /**
       * The last journal key the follower's database holds, of its leader's journal, or of its
       * own when `led`; 0: nothing (take a copy).
       */
      position: number;
      /** The epoch of the follower's database (DECISIONS.md, "Promotion and epochs"). */
      epoch: number;
      /** The database took changes of its own as the leader of `epoch`. */
      led: boolean;
    }
  /** Every batch up to `key` is durable in the follower's database. */
  | { t: "durable"; key: number };

/** Leader → follower. */
export type ToFollower =
  | { t: "refused"; reason: string }
  | {
      t: "welcome";
      epoch: number;
      mode: "async" | "sync";
      /** Where each epoch above 1 began: [epoch, the previous epoch's journal key it began after]. */
      epochs: [number, number][];
    }
  /**
   * `on`: from now on the leader's answers wait for this follower's `durable` (every key up to
   * `from` was answered before; the follower holds every answered change once it has `from`);
   * off: it goes on without this follower.
   */
  | { t: "sync"; on: boolean; from: number }
  | { t: "copy"; position: number; bytes: number }
  | { t: "copyEnd" }
  | { t: "syms"; names: string[] }
  | { t: "head"; key: number; ms: number; epoch: number };

/** Encodes one JSON frame. */
export function jsonFrame(m: ToLeader | ToFollower): Buffer {
  const body = Buffer.from(JSON.stringify(m), "utf8");
  const out = Buffer.allocUnsafe(5 + body.length);
  out.writeUInt32BE(body.length + 1, 0);
  out[4] = FRAME_JSON;
  body.copy(out, 5);
  return out;
}

/** Encodes one BYTES frame. */
export function bytesFrame(piece: Buffer): Buffer {
  const head = Buffer.allocUnsafe(5);
  head.writeUInt32BE(piece.length + 1, 0);
  head[4] = FRAME_BYTES;
  return Buffer.concat([head, piece]);
}

/**
 * Cuts a byte stream into frames: `push` each chunk as it arrives; `onFrame` is called once per
 * whole frame, in order. Throws on a frame over MAX_FRAME or of an unknown type.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private held = 0;

  constructor(private readonly onFrame: (type: number, payload: Buffer) => void) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.held += chunk.length;
    for (;;) {
      if (this.held < 5) return;
      const head = this.peek(5);
      const len = head.readUInt32BE(0);
      if (len < 1 || len > MAX_FRAME + 1) throw new Error(`replication frame of ${len} bytes`);
      if (this.held < 4 + len) return;
      const frame = this.take(4 + len);
      const type = frame[4];
      if (type !== FRAME_JSON && type !== FRAME_BYTES && type !== FRAME_BATCH)
        throw new Error(`replication frame type ${type}`);
      this.onFrame(type, frame.subarray(5));
    }
  }

  private peek(n: number): Buffer {
    if (this.chunks[0].length >= n) return this.chunks[0];
    const all = Buffer.concat(this.chunks);
    this.chunks = [all];
    return all;
  }

  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    const frame = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.held = rest.length;
    return frame;
  }
}

/** Parses a JSON frame's payload into a message object (shape checked by its reader). */
export function parseMessage(payload: Buffer): Record<string, unknown> {
  const m = JSON.parse(payload.toString("utf8")) as unknown;
  if (typeof m !== "object" || m === null || Array.isArray(m))
    throw new Error("replication message is not an object");
  return m as Record<string, unknown>;
}
