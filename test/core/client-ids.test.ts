/** The client order id filter and window (src/core/client-ids.ts). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  BlockedBloom,
  CID_DUPLICATE,
  CID_MAYBE,
  CID_NEW,
  ClientIdFilter,
  ClientIds,
} from "../../src/core/client-ids.ts";

describe("BlockedBloom", () => {
  it("never forgets a key and answers about 0.1% false positives at capacity", () => {
    const n = 200_000;
    const f = new BlockedBloom(n);
    for (let i = 0; i < n; i++) f.add(i % 1000, `id-${i}`);
    for (let i = 0; i < n; i++) assert.ok(f.has(i % 1000, `id-${i}`), `key ${i} forgotten`);
    let positives = 0;
    for (let i = 0; i < n; i++) if (f.has(i % 1000, `other-${i}`)) positives++;
    assert.ok(positives / n < 0.004, `false positive rate ${positives / n}`);
    // The same text under another user is another key.
    let crossUser = 0;
    for (let i = 0; i < 10_000; i++) if (f.has((i % 1000) + 1, `id-${i}`)) crossUser++;
    assert.ok(crossUser < 40, `${crossUser} of 10000 keys of other users seen`);
  });
});

describe("ClientIdFilter", () => {
  it("adds layers as it fills, within its bytes, and forgets no key", () => {
    const f = new ClientIdFilter(8 * 1024 * 1024);
    assert.equal(f.bytes, 2 * 1024 * 1024);
    const n = 3_500_000;
    for (let i = 0; i < n; i++) f.add(i & 63, `k${i}`);
    // 2 MiB for 2^20 keys, then 4 MiB for 2^21; 8 MiB more would pass the cap: the last layer
    // takes the rest.
    assert.equal(f.bytes, 6 * 1024 * 1024);
    assert.equal(f.count, n);
    for (let i = 0; i < n; i += 7) assert.ok(f.has(i & 63, `k${i}`), `key ${i} forgotten`);
  });

  it("makes room at once for the keys it is told to expect", () => {
    const f = new ClientIdFilter(64 * 1024 * 1024, 3_000_000);
    assert.equal(f.bytes, 16 * 1024 * 1024);
  });
});

describe("ClientIds", () => {
  it("holds keys in flight and the last `window` committed ones, and leaves older ones to the database", () => {
    const ids = new ClientIds(2, 4);
    const key = (id: string) => ClientIds.key(7, id);
    assert.equal(ids.check(7, "a", key("a"), false), CID_NEW);
    ids.accepted(7, "a", key("a"));
    assert.equal(ids.check(7, "a", key("a"), false), CID_DUPLICATE, "in flight");
    assert.equal(ids.check(8, "a", ClientIds.key(8, "a"), false), CID_NEW, "another user's");
    ids.committed(key("a"));
    assert.equal(ids.check(7, "a", key("a"), false), CID_DUPLICATE, "in the window");
    for (const id of ["b", "c"]) {
      ids.accepted(7, id, key(id));
      ids.committed(key(id));
    }
    assert.equal(ids.held, 2);
    assert.equal(ids.check(7, "a", key("a"), false), CID_MAYBE, "out of the window: ask the database");
    assert.equal(ids.check(7, "a", key("a"), true), CID_NEW, "the database said unused");
    assert.equal(ids.check(7, "c", key("c"), true), CID_DUPLICATE, "the window wins over an old answer");
    // Refused by the book: free again, though the filter has seen it.
    ids.accepted(7, "d", key("d"));
    ids.refused(key("d"));
    assert.equal(ids.check(7, "d", key("d"), false), CID_MAYBE);
    assert.equal(ids.held, 2);
  });

  it("keeps no window when it is 0", () => {
    const ids = new ClientIds(0, 4);
    ids.accepted(1, "x", "1:x");
    ids.committed("1:x");
    assert.equal(ids.held, 0);
    assert.equal(ids.check(1, "x", "1:x", false), CID_MAYBE);
  });
});

describe("BlockedBloom in a sparse filter", () => {
  it("takes a key's bits from both its hashes: no false positive among 2 million looks-ups", () => {
    // 2^19 keys in a filter for 2^22 (8 MiB): about one key per block, so a false positive needs
    // another key's exact bits, which 33 bits of hash (block and two 9-bit steps) gave in about
    // one look-up of 2^33 / 2^19 = 16,000.
    const f = new BlockedBloom(1 << 22);
    for (let i = 0; i < 1 << 19; i++) f.add(i % 977, `key-${i}`);
    let positives = 0;
    for (let i = 0; i < 2_000_000; i++) if (f.has(i % 977, `miss-${i}`)) positives++;
    assert.equal(positives, 0);
  });
});
