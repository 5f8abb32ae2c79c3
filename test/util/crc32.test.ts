/** CRC-32 (src/util/crc32.ts, which the server, the client and the page use): zlib's checksum, and docs/API.md 12.5's two examples exactly. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as zlib from "node:zlib";
import { crc32 } from "../../src/util/crc32.ts";

describe("crc32", () => {
  it("gives docs/API.md 12.5's checksums: the empty book and the four-level example", () => {
    assert.equal(crc32("|"), 2343686810);
    assert.equal(crc32("25010.01:0.5,25011:1.25|25000:2,24999.5:0.001"), 3621080957);
  });

  it("gives the standard check value and 0 for no bytes", () => {
    assert.equal(crc32("123456789"), 0xcbf43926);
    assert.equal(crc32(""), 0);
    assert.equal(crc32(new Uint8Array([0xff, 0xff, 0xff, 0xff])), 0xffffffff);
  });

  it("equals zlib's crc32 where this Node has it", (t) => {
    const zcrc = (zlib as unknown as { crc32?: (d: string | Uint8Array) => number }).crc32;
    if (zcrc === undefined) return t.skip("node:zlib has no crc32 before Node 20.15");
    let text = "";
    for (let i = 0; i < 300; i++) {
      text += `${i * 7.25}:${(i % 13) / 8},é`;
      assert.equal(crc32(text), zcrc(text), text);
    }
  });
});
