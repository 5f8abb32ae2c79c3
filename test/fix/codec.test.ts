/**
 * The FIX codec (src/fix/codec.ts, docs/API.md 17.1) on its own: messages framed across any cut of
 * the byte stream, garbage and wrong CheckSums skipped with the stream resynced, the size bound,
 * fields by tag with repeated and empty tags noted, and the encoder's BodyLength and CheckSum as an
 * independent computation here reads them.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  encodeFix,
  FixBatch,
  FixFramer,
  type FixMessage,
  fixTime,
  parseFixTime,
} from "../../src/fix/codec.ts";

const SOH = "\x01";

/** A message built here, not by the encoder: BodyLength and CheckSum computed independently. */
function frame(fields: [number, string][], checkSum?: string): Buffer {
  const body = fields.map(([t, v]) => `${t}=${v}${SOH}`).join("");
  const head = `8=FIX.4.4${SOH}9=${Buffer.byteLength(body)}${SOH}`;
  let sum = 0;
  for (const b of Buffer.from(head + body)) sum += b;
  return Buffer.from(`${head}${body}10=${checkSum ?? String(sum % 256).padStart(3, "0")}${SOH}`);
}

function collect(maxBytes = 16384) {
  const got: FixMessage[] = [];
  const garbled: string[] = [];
  let tooBig = 0;
  const framer = new FixFramer(maxBytes, {
    message: (m) => got.push(m),
    garbled: (r) => garbled.push(r),
    tooBig: () => tooBig++,
  });
  return { framer, got, garbled, tooBig: () => tooBig };
}

describe("FIX codec", () => {
  it("frames the same messages however the stream is cut", () => {
    const stream = Buffer.concat([
      frame([
        [35, "D"],
        [11, "a"],
      ]),
      frame([
        [35, "0"],
        [112, "ü"],
      ]),
      frame([[35, "5"]]),
    ]);
    for (const step of [1, 2, 3, 7, 64, stream.length]) {
      const { framer, got, garbled } = collect();
      for (let i = 0; i < stream.length; i += step) framer.push(stream.subarray(i, i + step));
      assert.deepEqual(
        got.map((m) => m.msgType),
        ["D", "0", "5"],
      );
      assert.equal(got[1].get(112), "ü");
      assert.deepEqual(garbled, []);
    }
  });

  it("skips garbage and a wrong CheckSum or BodyLength, and resyncs at the next message", () => {
    const good = frame([
      [35, "1"],
      [112, "x"],
    ]);
    const badSum = frame([[35, "0"]], "000");
    const len = Number(/9=(\d+)/.exec(good.toString("latin1"))![1]);
    const badLen = Buffer.from(good.toString("latin1").replace(`9=${len}`, `9=${len - 1}`), "latin1");
    const { framer, got, garbled } = collect();
    framer.push(Buffer.concat([Buffer.from("junk"), good, badSum, badLen, good]));
    assert.equal(got.length, 2);
    assert.deepEqual(garbled, [
      "no BeginString FIX.4.4",
      "wrong CheckSum",
      "BodyLength does not end at CheckSum",
    ]);
  });

  it("reports a message over the bound as too big and stops", () => {
    const { framer, got, tooBig } = collect(100);
    framer.push(frame([[58, "y".repeat(200)]]));
    framer.push(frame([[35, "0"]]));
    assert.equal(tooBig(), 1);
    assert.equal(got.length, 0);
  });

  it("gives fields by tag and notes a repeated tag and an empty value", () => {
    const { framer, got } = collect();
    framer.push(
      frame([
        [35, "D"],
        [11, "a"],
        [11, "b"],
        [58, ""],
      ]),
    );
    const m = got[0];
    assert.equal(m.get(11), "a");
    assert.equal(m.repeated, 11);
    assert.equal(m.empty, 58);
    assert.equal(m.get(44), undefined);
  });

  it("encodes the header, body and a CheckSum an independent reading accepts", () => {
    const out = encodeFix(
      "8",
      { senderCompId: "EXCHANGE", targetCompId: "C", seqNum: 42, sendingTime: "20260102-03:04:05.006" },
      `37=1${SOH}58=é${SOH}`,
    );
    const text = out.toString("utf8");
    assert.ok(text.startsWith(`8=FIX.4.4${SOH}9=`));
    const body = out.subarray(out.indexOf(SOH, 10) + 1, out.lastIndexOf(Buffer.from(`${SOH}10=`)) + 1);
    assert.equal(Number(/9=(\d+)/.exec(text)![1]), body.length);
    let sum = 0;
    for (const b of out.subarray(0, out.length - 7)) sum += b;
    assert.ok(text.endsWith(`10=${String(sum % 256).padStart(3, "0")}${SOH}`));
    assert.ok(
      text.includes(`35=8${SOH}49=EXCHANGE${SOH}56=C${SOH}34=42${SOH}52=20260102-03:04:05.006${SOH}37=1`),
    );
  });

  it("writes a batch of messages as one buffer, each with its own BodyLength and CheckSum", () => {
    const batch = new FixBatch();
    const h = {
      senderCompId: "EXCHANGE",
      targetCompId: "C",
      seqNum: 1,
      sendingTime: "20260102-03:04:05.006",
    };
    const bodies = [`37=1${SOH}58=é${SOH}`, `112=T${SOH}`, `58=${"x".repeat(300)}${SOH}`];
    for (const [i, body] of bodies.entries()) batch.add("8", { ...h, seqNum: i + 1 }, body);
    assert.equal(batch.size, 3);
    const bytes = batch.take();
    assert.equal(batch.size, 0);
    // Each message, cut out of the batch, is what encodeFix makes of it alone.
    const alone = bodies.map((body, i) => encodeFix("8", { ...h, seqNum: i + 1 }, body));
    assert.deepEqual(bytes, Buffer.concat(alone));
    const { framer, got, garbled } = collect();
    framer.push(bytes);
    assert.deepEqual(garbled, []);
    assert.deepEqual(
      got.map((m) => [m.get(34), m.get(58) ?? m.get(112)]),
      [
        ["1", "é"],
        ["2", "T"],
        ["3", "x".repeat(300)],
      ],
    );
    // Empty again: the next batch holds only its own messages.
    batch.add("0", h, "");
    assert.deepEqual(batch.take(), encodeFix("0", h, ""));
  });

  it("reads and writes UTC timestamps with milliseconds", () => {
    assert.equal(fixTime(Date.UTC(2026, 0, 2, 3, 4, 5, 6)), "20260102-03:04:05.006");
    assert.equal(parseFixTime("20260102-03:04:05.006"), Date.UTC(2026, 0, 2, 3, 4, 5, 6));
    assert.equal(parseFixTime("20260102-03:04:05"), Date.UTC(2026, 0, 2, 3, 4, 5));
    assert.ok(Number.isNaN(parseFixTime("20261302-03:04:05")));
    assert.ok(Number.isNaN(parseFixTime("2026-01-02 03:04:05")));
    // The same text twice reads the same; a wrong one after a right one is still wrong.
    assert.equal(parseFixTime("20260102-03:04:05.006"), parseFixTime("20260102-03:04:05.006"));
    assert.ok(Number.isNaN(parseFixTime("20260102-03:04:60.006")));
    assert.equal(parseFixTime("20260102-03:04:05.007"), Date.UTC(2026, 0, 2, 3, 4, 5, 7));
  });
});
