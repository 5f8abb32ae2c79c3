/**
 * The replication protocol's frames (src/replication/protocol.ts): however a byte stream is cut
 * into chunks, the reader hands over the same frames in order; it refuses an oversized or unknown
 * frame; a BATCH frame carries a journal row's columns exactly.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JournalRow } from "../../src/protocol/db/journal.ts";
import {
  batchFrame,
  bytesFrame,
  FRAME_BATCH,
  FRAME_BYTES,
  FRAME_JSON,
  FrameReader,
  jsonFrame,
  MAX_FRAME,
  PROTOCOL_VERSION,
  parseBatch,
  parseMessage,
} from "../../src/replication/protocol.ts";

function readAll(stream: Buffer, cuts: readonly number[]): [number, string][] {
  const got: [number, string][] = [];
  const reader = new FrameReader((type, payload) => got.push([type, payload.toString("latin1")]));
  let at = 0;
  for (const cut of [...cuts, stream.length]) {
    reader.push(stream.subarray(at, cut));
    at = cut;
  }
  return got;
}

describe("replication frames", () => {
  const row: JournalRow = {
    seq: 43,
    counts: "[1,0,2]",
    slots: Buffer.from([9, 8, 7]),
    strs: '["é","a\\"b"]',
    settled_below: 17,
    layout: 5,
  };
  const hello = {
    t: "hello",
    version: PROTOCOL_VERSION,
    token: "a-replication-token",
    position: 42,
    epoch: 1,
    led: false,
  } as const;
  const frames = [
    jsonFrame(hello),
    batchFrame(row),
    bytesFrame(Buffer.from([0, 1, 2, 250, 255])),
    jsonFrame({ t: "durable", key: 43 }),
    bytesFrame(Buffer.alloc(0)),
    jsonFrame({ t: "head", key: 43, ms: 1, epoch: 1 }),
  ];
  const stream = Buffer.concat(frames);
  const expected: [number, string][] = [
    [FRAME_JSON, JSON.stringify(hello)],
    [FRAME_BATCH, batchFrame(row).subarray(5).toString("latin1")],
    [FRAME_BYTES, Buffer.from([0, 1, 2, 250, 255]).toString("latin1")],
    [FRAME_JSON, JSON.stringify({ t: "durable", key: 43 })],
    [FRAME_BYTES, ""],
    [FRAME_JSON, JSON.stringify({ t: "head", key: 43, ms: 1, epoch: 1 })],
  ];

  it("reads the same frames in order whatever the chunks: whole, byte by byte, at every single cut", () => {
    assert.deepEqual(readAll(stream, []), expected);
    assert.deepEqual(
      readAll(
        stream,
        Array.from({ length: stream.length - 1 }, (_, i) => i + 1),
      ),
      expected,
    );
    for (let cut = 1; cut < stream.length; cut++)
      assert.deepEqual(readAll(stream, [cut]), expected, `cut at ${cut}`);
  });

  it("parses a JSON frame's payload into its message and refuses one that is not an object", () => {
    const [[, text]] = readAll(jsonFrame({ t: "syms", names: ["btc_usdt"] }), []);
    assert.deepEqual(parseMessage(Buffer.from(text, "latin1")), { t: "syms", names: ["btc_usdt"] });
    assert.throws(() => parseMessage(Buffer.from("[1]")), /not an object/);
  });

  it("carries a journal row in a BATCH frame: every column back as stored, and refuses a cut one", () => {
    const rows: JournalRow[] = [
      row,
      { seq: 2 ** 40 + 1, counts: "[]", slots: Buffer.alloc(0), strs: "[]", settled_below: 0, layout: 0 },
      {
        seq: 7,
        counts: "[3]",
        slots: Buffer.alloc(70_000, 0xab),
        strs: '["x"]',
        settled_below: 2 ** 50,
        layout: 9,
      },
    ];
    for (const r of rows) {
      const got: [number, Buffer][] = [];
      new FrameReader((type, payload) => got.push([type, payload])).push(batchFrame(r));
      assert.equal(got.length, 1);
      assert.equal(got[0][0], FRAME_BATCH);
      const back = parseBatch(got[0][1]);
      assert.deepEqual({ ...back, slots: [...back.slots] }, { ...r, slots: [...r.slots] });
    }
    // A row without a layout goes as layout 0, as it did in JSON.
    const { layout: _, ...bare } = row;
    assert.equal(parseBatch(batchFrame(bare).subarray(5)).layout, 0);
    assert.throws(() => parseBatch(Buffer.alloc(10)), /replication batch of 10 bytes/);
    assert.throws(() => parseBatch(batchFrame(row).subarray(5, 40)), /its head says more/);
  });

  it("refuses a frame longer than the limit and a frame of an unknown type", () => {
    const big = Buffer.alloc(5);
    big.writeUInt32BE(MAX_FRAME + 2, 0);
    assert.throws(() => readAll(big, []), /replication frame of/);
    const odd = Buffer.from([0, 0, 0, 1, 9]);
    assert.throws(() => readAll(odd, []), /replication frame type 9/);
  });
});
