import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  generateSecret,
  HmacKey,
  secretsEqual,
  sign,
  verifyBoundSignature,
  verifySignature,
} from "../../src/accounts/hmac.ts";
import { boundSigningText } from "../../src/client/index.ts";

const SECRET = "9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a";
const KEY = new HmacKey(SECRET);

describe("sign", () => {
  it("is the hex HMAC-SHA256 of the payload under the secret", () => {
    const body =
      '{"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":"30000","amount":"0.01"}';
    const expected = createHmac("sha256", SECRET).update(body).digest("hex");
    assert.equal(sign(SECRET, body), expected);
    assert.equal(sign(SECRET, Buffer.from(body)), expected);
    assert.match(expected, /^[0-9a-f]{64}$/);
  });

  it("matches the RFC 4231 test vector 2", () => {
    assert.equal(
      sign("Jefe", "what do ya want for nothing?"),
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
  });
});

describe("verifySignature", () => {
  const body = Buffer.from('{"orderId": 42,  "nonce": 1}');

  it("accepts the signature of the body bytes exactly as sent", () => {
    assert.equal(verifySignature(KEY, body, sign(SECRET, body)), true);
  });

  it("refuses a signature of the re-serialised JSON", () => {
    const reserialised = JSON.stringify(JSON.parse(body.toString()));
    assert.notEqual(reserialised, body.toString());
    assert.equal(verifySignature(KEY, body, sign(SECRET, reserialised)), false);
  });

  it("refuses a GET whose query string was reordered or decoded", () => {
    const query = "page=2&pageSize=50&nonce=7";
    const signature = sign(SECRET, query);
    assert.equal(verifySignature(KEY, query, signature), true);
    assert.equal(verifySignature(KEY, "pageSize=50&page=2&nonce=7", signature), false);
    const encoded = "streams=orders%3Abtc_usdt";
    assert.equal(verifySignature(KEY, decodeURIComponent(encoded), sign(SECRET, encoded)), false);
  });

  it("accepts the signature of the empty string for a GET without a query", () => {
    assert.equal(verifySignature(KEY, "", sign(SECRET, "")), true);
    assert.equal(verifySignature(KEY, "", sign(SECRET, "?")), false);
  });

  it("accepts uppercase and mixed-case hex", () => {
    const signature = sign(SECRET, body);
    assert.equal(verifySignature(KEY, body, signature.toUpperCase()), true);
    const mixed = [...signature].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join("");
    assert.equal(verifySignature(KEY, body, mixed), true);
  });

  it("prepares a string secret and its UTF-8 bytes as the same key", () => {
    const signature = sign(SECRET, body);
    assert.equal(verifySignature(new HmacKey(Buffer.from(SECRET)), body, signature), true);
    const accented = "clé-secrète-ü";
    assert.equal(verifySignature(new HmacKey(accented), body, sign(Buffer.from(accented), body)), true);
  });

  it("matches RFC 4231 for keys shorter than, as long as and longer than a block", () => {
    // Test case 2 (a 4-byte key) and test case 6 (131 bytes of 0xaa: the key is hashed first).
    const jefe = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
    assert.equal(verifySignature(new HmacKey("Jefe"), "what do ya want for nothing?", jefe), true);
    const long = "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54";
    const text = "Test Using Larger Than Block-Size Key - Hash Key First";
    assert.equal(verifySignature(new HmacKey(Buffer.alloc(131, 0xaa)), text, long), true);
    for (const size of [0, 1, 63, 64, 65, 200]) {
      const secret = Buffer.alloc(size, 0x41 + (size % 26));
      assert.equal(
        verifySignature(new HmacKey(secret), body, sign(secret, body)),
        true,
        `key of ${size} bytes`,
      );
    }
  });

  it("signs a string payload as its UTF-8 bytes and grows for payloads of any size", () => {
    const query = "name=%C3%A9&note=é€😀";
    assert.equal(verifySignature(KEY, query, sign(SECRET, Buffer.from(query, "utf8"))), true);
    assert.equal(verifySignature(KEY, query, sign(SECRET, Buffer.from(query, "latin1"))), false);
    const big = Buffer.alloc(70_000, 0x7a);
    assert.equal(verifySignature(KEY, big, sign(SECRET, big)), true);
    assert.equal(verifySignature(KEY, body, sign(SECRET, body)), true, "a short payload after a long one");
  });

  it("refuses another secret", () => {
    assert.equal(verifySignature(new HmacKey("another-secret"), body, sign(SECRET, body)), false);
  });

  it("answers false without throwing for missing, short, long or non-hex signatures", () => {
    const good = sign(SECRET, body);
    for (const bad of [
      undefined,
      "",
      good.slice(0, 62),
      `${good}00`,
      `${good.slice(0, 63)}g`,
      `g${good.slice(1)}`,
      `${good.slice(0, 30)}zz${good.slice(32)}`,
      " ".repeat(64),
      `sha256=${good}`.slice(0, 64),
    ]) {
      assert.equal(verifySignature(KEY, body, bad), false, String(bad));
    }
  });

  it("does not let a failed check poison the next one", () => {
    const good = sign(SECRET, body);
    assert.equal(verifySignature(KEY, body, `${good.slice(0, 63)}g`), false);
    assert.equal(verifySignature(KEY, body, good), true);
  });

  it("accepts exactly the right signature for arbitrary payloads (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), fc.integer({ min: 0, max: 63 }), (bytes, position) => {
        const payload = Buffer.from(bytes);
        const signature = sign(SECRET, payload);
        assert.equal(verifySignature(KEY, payload, signature), true);
        const flipped = signature[position] === "0" ? "1" : "0";
        const tampered = signature.slice(0, position) + flipped + signature.slice(position + 1);
        assert.equal(verifySignature(KEY, payload, tampered), false);
      }),
    );
  });
});

describe("secretsEqual", () => {
  it("compares secrets of any length", () => {
    assert.equal(secretsEqual("admin-token-123456", "admin-token-123456"), true);
    assert.equal(secretsEqual("admin-token-123456", "admin-token-123457"), false);
    assert.equal(secretsEqual("admin-token-123456", "admin"), false);
    assert.equal(secretsEqual("admin-token-123456", ""), false);
    assert.equal(secretsEqual("admin-token-123456", undefined), false);
  });
});

describe("generateSecret", () => {
  it("gives 64 lowercase hex characters, different every time", () => {
    const a = generateSecret();
    const b = generateSecret();
    assert.match(a, /^[0-9a-f]{64}$/);
    assert.match(b, /^[0-9a-f]{64}$/);
    assert.notEqual(a, b);
  });
});

describe("verifyBoundSignature (docs/API.md 3)", () => {
  const body = Buffer.from('{"orderId":42,"nonce":1}');
  const path = "/1.0/trade/cancel-order";
  const bound = (ts: string, method: string, p: string, payload: string | Buffer) =>
    sign(SECRET, Buffer.from(boundSigningText(ts, method, p, payload)));

  it("accepts the HMAC of <timestamp>\\n<METHOD>\\n<path>\\n<payload> and nothing else", () => {
    const signature = bound("1700000000000", "POST", path, body);
    assert.equal(
      signature,
      createHmac("sha256", SECRET).update(`1700000000000\nPOST\n${path}\n${body.toString()}`).digest("hex"),
    );
    assert.equal(verifyBoundSignature(KEY, "1700000000000", "POST", path, body, signature), true);
    assert.equal(verifyBoundSignature(KEY, "1700000000000", "POST", path, body.toString(), signature), true);
    assert.equal(verifyBoundSignature(KEY, "1700000000001", "POST", path, body, signature), false, "time");
    assert.equal(verifyBoundSignature(KEY, "1700000000000", "GET", path, body, signature), false, "method");
    assert.equal(
      verifyBoundSignature(KEY, "1700000000000", "POST", `${path}s`, body, signature),
      false,
      "path",
    );
    assert.equal(
      verifyBoundSignature(KEY, "1700000000000", "POST", path, `${body} `, signature),
      false,
      "body",
    );
    assert.equal(verifySignature(KEY, body, signature), false, "the old form does not take it");
  });

  it("keeps the parts apart: moving a line feed between them changes the signature", () => {
    const signature = bound("1", "GET", "/1.0/a", "b=1");
    assert.equal(verifyBoundSignature(KEY, "1", "GET", "/1.0/a\nb=1", "", signature), false);
    assert.equal(verifyBoundSignature(KEY, "1", "GET", "/1.0/a", "b=1", signature), true);
  });

  it("grows for a long path and payload, and the next old-form check is unaffected", () => {
    const long = "x".repeat(70_000);
    const p = `/1.0/${"é".repeat(300)}`;
    assert.equal(verifyBoundSignature(KEY, "5", "POST", p, long, bound("5", "POST", p, long)), true);
    assert.equal(verifySignature(KEY, body, sign(SECRET, body)), true);
  });

  it("answers false for a missing or malformed signature", () => {
    for (const bad of [undefined, "", "zz".repeat(32), "ab"]) {
      assert.equal(verifyBoundSignature(KEY, "1", "GET", "/1.0/x", "", bad), false);
    }
  });

  it("accepts exactly the right signature for arbitrary parts (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 20 }),
        fc.constantFrom("GET", "POST"),
        fc.string({ maxLength: 80 }),
        fc.uint8Array({ maxLength: 256 }),
        (ts, method, p, bytes) => {
          const payload = Buffer.from(bytes);
          const signature = bound(ts, method, p, payload);
          assert.equal(verifyBoundSignature(KEY, ts, method, p, payload, signature), true);
          assert.equal(verifyBoundSignature(KEY, `${ts}0`, method, p, payload, signature), false);
        },
      ),
    );
  });
});
