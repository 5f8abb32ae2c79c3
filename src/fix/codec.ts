/**
 * FIX 4.4 tag=value framing (docs/API.md 17, DECISIONS.md "FIX gateway: own codec over node:net"):
 * the gateway's hot path, so it parses in place over the bytes received and builds each outgoing
 * message as one Buffer.
 *
 *   FixFramer     streaming: Buffer chunks in, whole messages out. A message is
 *                 `8=FIX.4.4<SOH>9=<BodyLength><SOH>` + body + `10=<CheckSum><SOH>`; one whose
 *                 BodyLength does not land on its `10=`, whose CheckSum differs, or that does not
 *                 start as a message is reported as garbled and skipped (the framer resyncs at the
 *                 next `8=FIX.4.4<SOH>`); one longer than the bound is reported as too big.
 *   FixMessage    the fields of one framed message by tag: offsets into its bytes, values read on
 *                 demand; a repeated tag, a tag without a value and a field that is no `tag=value`
 *                 are noted for the session to judge.
 *   encodeFix     header (8, 9, 35, 49, 56, 34, 52), body and checksum into one Buffer;
 *   FixBatch      the same for the messages of one write, into one Buffer.
 */

export const SOH = 1;
const EQ = 61;
const CH_0 = 48;
const CH_9 = 57;

/** The start of every message: `8=FIX.4.4<SOH>9=`. */
const BEGIN = Buffer.from("8=FIX.4.4\x019=", "latin1");
/** Where the framer resyncs after garbage: the start of a message. */
const BEGIN_FIELD = Buffer.from("8=FIX.4.4\x01", "latin1");
/** `10=NNN<SOH>`. */
const TRAILER_LEN = 7;
/** BodyLength digits beyond this: not a message the bound lets through anyway. */
const MAX_LENGTH_DIGITS = 7;

/** One framed message: its bytes and its fields in order. */
export class FixMessage {
  /** The whole message, `8=` to the trailer's SOH. */
  readonly bytes: Buffer;
  /** Tag of field i, in order (the header's 8 and 9 and the trailer's 10 included). */
  readonly tags: number[] = [];
  /** Value of field i: bytes[starts[i], ends[i]). */
  readonly starts: number[] = [];
  readonly ends: number[] = [];
  /** The first tag that appears twice (0: none). */
  repeated = 0;
  /** The first tag whose value is empty (0: none). */
  empty = 0;
  /** A field that is not `<digits>=<value>`. */
  malformed = false;

  constructor(bytes: Buffer) {
    this.bytes = bytes;
    const n = bytes.length;
    let i = 0;
    while (i < n) {
      let tag = 0;
      const tagStart = i;
      let c = bytes[i];
      while (c >= CH_0 && c <= CH_9 && i - tagStart < 9) {
        tag = tag * 10 + (c - CH_0);
        c = bytes[++i];
      }
      if (c !== EQ || i === tagStart || tag === 0) {
        this.malformed = true;
        return;
      }
      const start = ++i;
      while (i < n && bytes[i] !== SOH) i++;
      if (this.repeated === 0 && this.indexOf(tag) >= 0) this.repeated = tag;
      if (this.empty === 0 && i === start) this.empty = tag;
      this.tags.push(tag);
      this.starts.push(start);
      this.ends.push(i);
      i++;
    }
  }

  /** The index of the first field with `tag`, or -1. */
  indexOf(tag: number): number {
    const tags = this.tags;
    for (let i = 0; i < tags.length; i++) if (tags[i] === tag) return i;
    return -1;
  }

  has(tag: number): boolean {
    return this.indexOf(tag) >= 0;
  }

  /** The value of the first field with `tag` (UTF-8), or undefined when it is absent. */
  get(tag: number): string | undefined {
    const i = this.indexOf(tag);
    return i < 0 ? undefined : this.bytes.toString("utf8", this.starts[i], this.ends[i]);
  }

  /** MsgType(35). */
  get msgType(): string {
    return this.get(35) ?? "";
  }
}

/** What the framer tells its owner. */
export interface FramerEvents {
  message(m: FixMessage): void;
  /** Bytes that are no message, or a message with a wrong BodyLength or CheckSum: skipped. */
  garbled(reason: string): void;
  /** A message (or what claims to be one) over the bound: the connection should end. */
  tooBig(): void;
}

/**
 * Cuts a byte stream into FIX messages. Chunks are kept as they come and joined only while a
 * message spans them; a message within one chunk is a view of it, not a copy.
 */
export class FixFramer {
  private buf: Buffer = Buffer.alloc(0);
  private stopped = false;

  constructor(
    /** The longest message taken, in bytes (header and trailer included). */
    private readonly maxBytes: number,
    private readonly events: FramerEvents,
  ) {}

  /** Stops framing (the connection is ending): later chunks are dropped. */
  stop(): void {
    this.stopped = true;
    this.buf = Buffer.alloc(0);
  }

  push(chunk: Buffer): void {
    if (this.stopped) return;
    let buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    let at = 0;
    while (!this.stopped) {
      const used = this.next(buf, at);
      if (used === 0) break;
      at += used;
    }
    if (this.stopped) return;
    buf = at >= buf.length ? Buffer.alloc(0) : buf.subarray(at);
    // A partial message is kept as a copy: the chunk it came in may be reused by the socket.
    this.buf = buf.length === 0 ? buf : Buffer.from(buf);
  }

  /** Frames one message (or skips garbage) at `at`; the bytes used, 0 when more must arrive. */
  private next(buf: Buffer, at: number): number {
    const left = buf.length - at;
    if (left === 0) return 0;
    // The fixed start, as far as it has arrived.
    const head = Math.min(left, BEGIN.length);
    if (buf.compare(BEGIN, 0, head, at, at + head) !== 0)
      return this.skip(buf, at, at + 1, "no BeginString FIX.4.4");
    if (left <= BEGIN.length) return 0;
    let len = 0;
    let i = at + BEGIN.length;
    const digitsStart = i;
    while (i < buf.length && buf[i] >= CH_0 && buf[i] <= CH_9) {
      len = len * 10 + (buf[i] - CH_0);
      i++;
      if (i - digitsStart > MAX_LENGTH_DIGITS) {
        this.stop();
        this.events.tooBig();
        return 0;
      }
    }
    if (i === buf.length) return 0;
    if (buf[i] !== SOH || i === digitsStart) return this.skip(buf, at, at + 1, "BodyLength is not a number");
    const bodyStart = i + 1;
    const total = bodyStart - at + len + TRAILER_LEN;
    if (total > this.maxBytes) {
      this.stop();
      this.events.tooBig();
      return 0;
    }
    if (left < total) return 0;
    const t = bodyStart + len;
    if (
      buf[t] !== CH_0 + 1 ||
      buf[t + 1] !== CH_0 ||
      buf[t + 2] !== EQ ||
      buf[t + 6] !== SOH ||
      !isDigit(buf[t + 3]) ||
      !isDigit(buf[t + 4]) ||
      !isDigit(buf[t + 5])
    )
      return this.skip(buf, at, at + 1, "BodyLength does not end at CheckSum");
    let sum = 0;
    for (let k = at; k < t; k++) sum += buf[k];
    const said = (buf[t + 3] - CH_0) * 100 + (buf[t + 4] - CH_0) * 10 + (buf[t + 5] - CH_0);
    if ((sum & 255) !== said) {
      this.events.garbled("wrong CheckSum");
      return total;
    }
    this.events.message(new FixMessage(buf.subarray(at, at + total)));
    return total;
  }

  /**
   * Skips the bytes from `at` up to the next start of a message after `from` (or up to a tail that
   * may begin one); the bytes used, at least 1.
   */
  private skip(buf: Buffer, at: number, from: number, reason: string): number {
    this.events.garbled(reason);
    const found = buf.indexOf(BEGIN_FIELD, from);
    if (found >= 0) return found - at;
    // A tail that is the start of BEGIN_FIELD waits for the rest; everything before it goes.
    const n = buf.length;
    for (let k = Math.max(from, n - (BEGIN_FIELD.length - 1)); k < n; k++)
      if (buf.compare(BEGIN_FIELD, 0, n - k, k, n) === 0) return k - at;
    return n - at;
  }
}

function isDigit(c: number): boolean {
  return c >= CH_0 && c <= CH_9;
}

/** The header fields a message is sent with. */
export interface FixHeader {
  senderCompId: string;
  targetCompId: string;
  seqNum: number;
  /** SendingTime(52), `YYYYMMDD-HH:MM:SS.sss`. */
  sendingTime: string;
  /** Header fields after 52 (`43=Y<SOH>`, `97=Y<SOH>`...), as field text. */
  extra?: string;
}

/**
 * One message: the header (8, 9, 35, 49, 56, 34, 52 and `extra`), `body` (field text, each field
 * ending in SOH) and the CheckSum, in one Buffer.
 */
export function encodeFix(msgType: string, h: FixHeader, body: string): Buffer {
  const batch = new FixBatch();
  batch.add(msgType, h, body);
  return batch.take();
}

/**
 * Messages written together (a connection's flush): their text is joined and turned into bytes by
 * one call, then each message's CheckSum is summed over its own bytes and written in place.
 */
export class FixBatch {
  private text = "";
  /** Byte length of each message added, trailer included. */
  private readonly lengths: number[] = [];
  private bytes = 0;

  get size(): number {
    return this.lengths.length;
  }

  add(msgType: string, h: FixHeader, body: string): void {
    const inner = `35=${msgType}\x0149=${h.senderCompId}\x0156=${h.targetCompId}\x0134=${h.seqNum}\x0152=${h.sendingTime}\x01${h.extra ?? ""}${body}`;
    const innerLen = Buffer.byteLength(inner, "utf8");
    const head = `8=FIX.4.4\x019=${innerLen}\x01`;
    // The CheckSum's digits are written by `take`.
    this.text += `${head}${inner}10=000\x01`;
    const len = head.length + innerLen + TRAILER_LEN;
    this.lengths.push(len);
    this.bytes += len;
  }

  /** The messages added, in order, as one Buffer; the batch is empty again. */
  take(): Buffer {
    const out = Buffer.allocUnsafe(this.bytes);
    out.write(this.text, 0, "utf8");
    let at = 0;
    for (const len of this.lengths) {
      const end = at + len - TRAILER_LEN;
      let sum = 0;
      for (let k = at; k < end; k++) sum += out[k];
      sum &= 255;
      out[end + 3] = CH_0 + Math.floor(sum / 100);
      out[end + 4] = CH_0 + (Math.floor(sum / 10) % 10);
      out[end + 5] = CH_0 + (sum % 10);
      at += len;
    }
    this.text = "";
    this.lengths.length = 0;
    this.bytes = 0;
    return out;
  }
}

/** `tag=value<SOH>`: one field of a body. */
export function field(tag: number, value: string | number): string {
  return `${tag}=${value}\x01`;
}

/** fixTime's last answer: every report and message written in one millisecond shares it. */
let lastMs = Number.NaN;
let lastTime = "";

/** `YYYYMMDD-HH:MM:SS.sss` in UTC (FIX UTCTimestamp with milliseconds) of Unix ms. */
export function fixTime(ms: number): string {
  if (ms === lastMs) return lastTime;
  const iso = new Date(ms).toISOString();
  lastMs = ms;
  lastTime = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 23)}`;
  return lastTime;
}

const FIX_TIME_RE = /^(\d{4})(\d{2})(\d{2})-(\d{2}):(\d{2}):(\d{2})(?:\.(\d{3}))?$/;

/** parseFixTime's last text and answer: a client's messages of one millisecond share their times. */
let lastParsedText = "";
let lastParsed = Number.NaN;

/** Unix ms of a FIX UTCTimestamp (`YYYYMMDD-HH:MM:SS[.sss]`), or NaN when it is not one. */
export function parseFixTime(text: string): number {
  if (text === lastParsedText) return lastParsed;
  const ms = readFixTime(text);
  lastParsedText = text;
  lastParsed = ms;
  return ms;
}

function readFixTime(text: string): number {
  const m = FIX_TIME_RE.exec(text);
  if (m === null) return Number.NaN;
  const year = +m[1];
  const month = +m[2] - 1;
  const day = +m[3];
  const hour = +m[4];
  const minute = +m[5];
  const second = +m[6];
  const ms = Date.UTC(year, month, day, hour, minute, second, m[7] === undefined ? 0 : +m[7]);
  // Date.UTC rolls over (month 13, second 61) and reads years below 100 as 19xx: only a time whose
  // fields read back the same is one.
  const d = new Date(ms);
  return d.getUTCFullYear() === year &&
    d.getUTCMonth() === month &&
    d.getUTCDate() === day &&
    d.getUTCHours() === hour &&
    d.getUTCMinutes() === minute &&
    d.getUTCSeconds() === second
    ? ms
    : Number.NaN;
}
