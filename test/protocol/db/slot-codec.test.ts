/**
 * The journal's compact slots (src/protocol/db/slot-codec.ts) give back exactly the slots they were
 * made of, for every integer a slot can hold and for the slots the delta form cannot carry.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decodeSlots, encodeSlots } from "../../../src/protocol/db/slot-codec.ts";
import { KIND_COUNT, KINDS, ORDER, TRADE } from "../../../src/protocol/db/writer-batch.ts";
import { mulberry32 as rng } from "../../support/prng.ts";

function batch(counts: number[], value: (k: number, c: number, r: number) => number): Float64Array {
  let n = 0;
  for (let k = 0; k < KIND_COUNT; k++) n += counts[k] * KINDS[k].stride;
  const slots = new Float64Array(n);
  let at = 0;
  for (let k = 0; k < KIND_COUNT; k++)
    for (let r = 0; r < counts[k]; r++)
      for (let c = 0; c < KINDS[k].stride; c++) slots[at++] = value(k, c, r);
  return slots;
}

function roundTrip(slots: Float64Array, counts: number[]): Uint8Array {
  const bytes = encodeSlots(slots, counts).slice(); // the encoder's scratch is reused
  assert.deepEqual(decodeSlots(bytes, counts), slots);
  return bytes;
}

const EDGES = [
  0,
  1,
  -1,
  2,
  127,
  128,
  255,
  16383,
  16384,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32,
  2 ** 52 - 1,
  2 ** 53 - 1,
];

describe("journal slot codec", () => {
  it("gives back random batches of every kind exactly, in a few bytes a slot", () => {
    const r = rng(12);
    for (let i = 0; i < 200; i++) {
      const counts = KINDS.map(() => Math.floor(r() * 6));
      const slots = batch(counts, (k, c, row) => {
        const pick = r();
        if (pick < 0.1) return EDGES[Math.floor(r() * EDGES.length)];
        if (pick < 0.2) return 0 - EDGES[Math.floor(r() * EDGES.length)]; // no -0: slots are integers
        if (pick < 0.3) return 1_700_000_000_000_000 + row * 7 + k + c; // micros
        return Math.floor(r() * 10_000);
      });
      roundTrip(slots, counts);
    }
  });

  it("stores a group commit of orders and trades in about 2 bytes a slot", () => {
    const counts = new Array(KIND_COUNT).fill(0);
    counts[ORDER.id] = 64;
    counts[TRADE.id] = 32;
    const slots = batch(counts, (k, c, row) =>
      c === 0
        ? 1_000_000 + row
        : k === TRADE.id && c === 11
          ? 1_700_000_000_000_000 + row * 13
          : (row * 7 + c) % 50,
    );
    const bytes = roundTrip(slots, counts);
    assert.ok(bytes.length < 2.5 * slots.length, `${bytes.length} bytes for ${slots.length} slots`);
  });

  it("keeps slots the delta form cannot carry, raw", () => {
    const counts = new Array(KIND_COUNT).fill(0);
    counts[ORDER.id] = 3;
    for (const odd of [0.5, -(2 ** 53 - 1), Number.MAX_VALUE, Number.NaN, Number.POSITIVE_INFINITY]) {
      const slots = batch(counts, (_k, c, row) => (row === 1 && c === 5 ? odd : 2 ** 53 - 1 - c));
      // As SQLite gives a blob back: a Buffer at an odd offset of a larger one.
      const bytes = Buffer.concat([Buffer.of(7), encodeSlots(slots, counts)]).subarray(1);
      assert.equal(bytes.length, 1 + slots.length * 8);
      const back = decodeSlots(bytes, counts);
      assert.equal(back.length, slots.length);
      for (let i = 0; i < slots.length; i++) assert.ok(Object.is(back[i], slots[i]), `slot ${i}`);
    }
  });

  it("refuses bytes that do not fit the counts", () => {
    const counts = new Array(KIND_COUNT).fill(0);
    counts[ORDER.id] = 2;
    const bytes = encodeSlots(
      batch(counts, (_k, c) => c),
      counts,
    ).slice();
    const more = [...counts];
    more[ORDER.id] = 3;
    assert.throws(() => decodeSlots(bytes, more), /end inside slot/);
    assert.throws(() => decodeSlots(Uint8Array.of(...bytes, 0), counts), /left over/);
    assert.throws(() => decodeSlots(Uint8Array.of(9), counts), /unknown format/);
  });
});
