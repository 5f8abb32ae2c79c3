/**
 * The compact form of a batch's record slots in its journal row (migration 006). Every slot is an
 * integer (writer-batch.ts: INT, STR and SYM), mostly small or close to the same column of the
 * record before (ids, micros, prices), so each slot is stored as the difference from that column
 * in the previous record of its kind, as a sign and a magnitude in 7-bit groups (a varint): about
 * 1-3 bytes a slot instead of 8. A journal row of a group commit then fits in one or two database pages,
 * which are what the acknowledging commit writes and fsyncs.
 *
 * Layout: byte 0 is the format. FORMAT_DELTA: the varints follow, kind after kind in kind order,
 * records in order, columns in slot order. FORMAT_RAW: the float64 slots follow as they are
 * (native byte order), for a batch holding a slot the delta form cannot carry exactly (not an
 * integer, or a difference beyond 2^53 - 1): never expected, but never lost either.
 */
import { KIND_COUNT, KINDS, slotsOf } from "./writer-batch.ts";

/** Slots per record of each kind (decodeSlots takes those of an older layout too). */
const STRIDES: readonly number[] = KINDS.map((k) => k.stride);

const FORMAT_RAW = 0;
const FORMAT_DELTA = 1;

/** Scratch of the encoder, grown as needed (the bytes are copied by SQLite when bound). */
let scratch = new Uint8Array(1 << 16);
/** Column values of the previous record of the current kind. */
const prev = new Float64Array(64);

/** Bytes for `slots` (records of `counts`, kind after kind); valid until the next call. */
export function encodeSlots(slots: Float64Array, counts: readonly number[]): Uint8Array {
  const n = slotsOf(counts);
  // At most 8 bytes per slot (6 + 7 x 7 bits hold a magnitude below 2^53), or 8 raw.
  if (scratch.length < 1 + 8 * n) scratch = new Uint8Array(2 * (1 + 8 * n));
  const buf = scratch;
  let p = 0;
  buf[p++] = FORMAT_DELTA;
  let at = 0;
  for (let k = 0; k < KIND_COUNT; k++) {
    const stride = KINDS[k].stride;
    const end = at + counts[k] * stride;
    prev.fill(0, 0, stride);
    for (; at < end; at += stride) {
      for (let c = 0; c < stride; c++) {
        const v = slots[at + c];
        const d = v - prev[c];
        if (!Number.isSafeInteger(d) || prev[c] + d !== v) return raw(slots, n);
        prev[c] = v;
        // First byte: continuation bit, sign bit, the magnitude's low 6 bits; then 7 bits a byte.
        const neg = d < 0;
        let u = neg ? -d : d;
        if (u < 0x40) {
          buf[p++] = neg ? u | 0x40 : u;
          continue;
        }
        buf[p++] = (u % 0x40) | (neg ? 0xc0 : 0x80);
        u = Math.floor(u / 0x40);
        while (u >= 0x80000000) {
          buf[p++] = (u % 0x80) | 0x80;
          u = Math.floor(u / 0x80);
        }
        while (u >= 0x80) {
          buf[p++] = (u & 0x7f) | 0x80;
          u >>>= 7;
        }
        buf[p++] = u;
      }
    }
  }
  return buf.subarray(0, p);
}

function raw(slots: Float64Array, n: number): Uint8Array {
  scratch[0] = FORMAT_RAW;
  scratch.set(new Uint8Array(slots.buffer, slots.byteOffset, n * 8), 1);
  return scratch.subarray(0, 1 + n * 8);
}

/** The slots `encodeSlots` made `bytes` of, for records of `counts`; throws if they do not fit. */
export function decodeSlots(
  bytes: Uint8Array,
  counts: readonly number[],
  strides: readonly number[] = STRIDES,
): Float64Array {
  let n = 0;
  for (let k = 0; k < KIND_COUNT; k++) n += counts[k] * strides[k];
  if (bytes[0] === FORMAT_RAW) {
    if (bytes.length !== 1 + n * 8)
      throw new Error(`journal slots: ${bytes.length - 1} bytes for ${n} slots`);
    // A copy: a Float64Array needs an aligned buffer of its own.
    const copy = new Uint8Array(n * 8);
    copy.set(bytes.subarray(1));
    return new Float64Array(copy.buffer);
  }
  if (bytes[0] !== FORMAT_DELTA) throw new Error(`journal slots: unknown format ${bytes[0]}`);
  const out = new Float64Array(n);
  let p = 1;
  let at = 0;
  for (let k = 0; k < KIND_COUNT; k++) {
    const stride = strides[k];
    const start = at;
    const end = at + counts[k] * stride;
    for (; at < end; at++) {
      if (p >= bytes.length) throw new Error(`journal slots: ${bytes.length} bytes end inside slot ${at}`);
      let b = bytes[p++];
      const neg = (b & 0x40) !== 0;
      let u = b & 0x3f;
      let scale = 0x40;
      while (b >= 0x80) {
        if (p >= bytes.length) throw new Error(`journal slots: ${bytes.length} bytes end inside slot ${at}`);
        b = bytes[p++];
        u += (b & 0x7f) * scale;
        scale *= 0x80;
      }
      const d = neg ? -u : u;
      // The same column of the kind's previous record; the first record's columns follow 0.
      out[at] = (at - stride >= start ? out[at - stride] : 0) + d;
    }
  }
  if (p !== bytes.length) throw new Error(`journal slots: ${bytes.length - p} bytes left over`);
  return out;
}
