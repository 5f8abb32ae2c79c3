/**
 * docs/API.md 12.5 book checksum: the CRC-32 (as zlib) of the best 25 asks and bids in canonical
 * decimal text, checked on the contract's own examples, against node:zlib and past 25 levels.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import * as zlib from "node:zlib";
import {
  bookChecksum,
  CHECKSUM_LEVELS,
  checksumText,
  crc32,
  decimalText,
  type LevelPair,
  sumExact,
} from "../../src/client/checksum.ts";
import { LocalBook } from "../../src/client/local-book.ts";

/** node:zlib's crc32 where this Node has it (20.15 and later), to check the table against. */
const zlibCrc32 = (zlib as { crc32?: (data: string | Uint8Array) => number }).crc32;

describe("crc32", () => {
  test("gives the standard check value of IEEE CRC-32 and 0 for no bytes", () => {
    assert.equal(crc32("123456789"), 0xcbf43926);
    assert.equal(crc32(""), 0);
    assert.equal(crc32(new Uint8Array([0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39])), 0xcbf43926);
  });

  test("equals node:zlib's crc32 on ASCII, UTF-8 and binary input", (t) => {
    if (zlibCrc32 === undefined) {
      t.skip(`node:zlib has no crc32 in Node ${process.versions.node}`);
      return;
    }
    const inputs: (string | Uint8Array)[] = ["|", "25010.01:0.5|25000:2", "цена:1", "€", "\u{1F600}"];
    const bytes = new Uint8Array(1000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) & 0xff;
    inputs.push(bytes);
    for (const input of inputs) assert.equal(crc32(input), zlibCrc32(input), String(input).slice(0, 20));
  });
});

describe("decimalText", () => {
  test("writes the API's canonical text: no exponent, no trailing zeros, no trailing point", () => {
    assert.equal(decimalText(25010.01), "25010.01");
    assert.equal(decimalText(25011), "25011");
    assert.equal(decimalText(0.001), "0.001");
    assert.equal(decimalText(1e-7), "0.0000001");
    assert.equal(decimalText(1.25e-8), "0.0000000125");
    assert.equal(decimalText(1e21), "1000000000000000000000");
    assert.equal(decimalText(1.5e22), "15000000000000000000000");
    assert.equal(decimalText(0), "0");
    assert.equal(decimalText(-0), "0");
    assert.equal(decimalText(0.30000000000000004), "0.30000000000000004");
  });

  test("adds amounts exactly, never as floats", () => {
    assert.equal(sumExact([0.1, 0.2]), 0.3);
    assert.equal(sumExact([1e-7, 2e-7, 0.5]), 0.5000003);
    assert.equal(sumExact([25000, 0.001]), 25000.001);
    assert.equal(sumExact([7]), 7);
  });
});

describe("book checksum (docs/API.md 12.5)", () => {
  test("an empty book is the CRC-32 of `|`, 2343686810", () => {
    assert.equal(checksumText([], []), "|");
    assert.equal(bookChecksum([], []), 2343686810);
  });

  test("docs/API.md 12.5's four-level example gives its text and 3621080957", () => {
    const asks: LevelPair[] = [
      [25010.01, 0.5],
      [25011, 1.25],
    ];
    const bids: LevelPair[] = [
      [25000, 2],
      [24999.5, 0.001],
    ];
    assert.equal(checksumText(asks, bids), "25010.01:0.5,25011:1.25|25000:2,24999.5:0.001");
    assert.equal(bookChecksum(asks, bids), 3621080957);
  });

  test("a local book gives the same checksum from levels received in any order", () => {
    const book = new LocalBook();
    book.reset({
      sell: [
        { price: 25011, amount: 1.25 },
        { price: 25010.01, amount: 0.5 },
      ],
      buy: [
        { price: 24999.5, amount: 0.001 },
        { price: 25000, amount: 2 },
      ],
    });
    assert.equal(book.checksum(), 3621080957);
  });

  test("covers only the best 25 levels of each side of a deeper book", () => {
    const book = new LocalBook();
    const sell = Array.from({ length: 40 }, (_, i) => ({
      price: Number(`100.${String(i).padStart(2, "0")}`),
      amount: Number(`${i + 1}e-7`),
    }));
    const buy = Array.from({ length: 30 }, (_, i) => ({ price: 99 - i, amount: i + 0.5 }));
    book.reset({ buy: [...buy].reverse(), sell: [...sell].reverse() });
    const asks = sell
      .slice(0, CHECKSUM_LEVELS)
      .map((l) => `${decimalText(l.price)}:${decimalText(l.amount)}`);
    const bids = buy.slice(0, CHECKSUM_LEVELS).map((l) => `${l.price}:${l.amount}`);
    const text = `${asks.join(",")}|${bids.join(",")}`;
    assert.equal(asks[0], "100:0.0000001");
    assert.equal(asks[24], "100.24:0.0000025");
    assert.equal(bids[24], "75:24.5");
    assert.equal(checksumText(book.levels("sell"), book.levels("buy")), text);
    assert.equal(book.checksum(), crc32(text));
    // A change below the 25th level leaves the checksum as it was; one inside it changes it.
    const before = book.checksum();
    book.apply({ buy: [{ price: 60, amount: 3 }], sell: [{ price: 100.3, amount: 0 }] });
    assert.equal(book.checksum(), before);
    book.apply({ buy: [], sell: [{ price: 100.24, amount: 1 }] });
    assert.notEqual(book.checksum(), before);
  });
});
