import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  authenticate,
  authenticateBound,
  DEFAULT_RECV_WINDOW,
  generateSecret,
  HmacKey,
  MAX_RECV_WINDOW,
  NONCE_INVALID,
  NonceGuard,
  nonceFromBody,
  nonceFromQuery,
  parseAuthorization,
  secretsEqual,
  sign,
  timestampError,
  unboundRefusal,
  verifyBoundSignature,
  verifySignature,
} from "../src/auth.ts";
import { boundSigningText } from "../src/client/index.ts";
import { Code, errorField, errorName, errorStatus } from "../src/errors.ts";
import { Users } from "../src/users.ts";

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

describe("parseAuthorization", () => {
  const cases: Array<[string | undefined, string | null]> = [
    [undefined, null],
    ["", null],
    ["   ", null],
    ["abc123token", "abc123token"],
    ["  abc123token  ", "abc123token"],
    ["Bearer abc123token", "abc123token"],
    ["bearer abc123token", "abc123token"],
    ["BEARER   abc123token ", "abc123token"],
    ["Bearer\tabc123token", "abc123token"],
    ["Bearer", null],
    ["Bearer ", null],
    ["Bearerabc123token", "Bearerabc123token"],
    ["Bearer with inner space", "with inner space"],
    ["x", "x"],
    ["token\t", "token"],
    ["token\u00a0", "token"],
    ["\u00a0token", "token"],
    ["btoken", "btoken"],
    ["Btoken ", "Btoken"],
  ];
  for (const [header, token] of cases) {
    it(`reads ${JSON.stringify(header)} as ${JSON.stringify(token)}`, () => {
      assert.equal(parseAuthorization(header), token);
    });
  }

  /** The general reading, which the bare-token shortcut must agree with on every header. */
  const general = (header: string): string | null => {
    let token = header.trim();
    if (token.length >= 6 && token.slice(0, 6).toLowerCase() === "bearer") {
      if (token.length === 6) return null;
      const next = token.charCodeAt(6);
      if (next === 0x20 || next === 0x09) token = token.slice(7).trim();
    }
    return token === "" ? null : token;
  };

  it("reads every header as the general reading does (bare tokens take a shortcut)", () => {
    const piece = fc.constantFrom(
      " ",
      "\t",
      "\u00a0",
      "\u2028",
      "b",
      "B",
      "Bearer",
      "bearer ",
      "BEARER\t",
      "x",
      "~",
      "é",
      "0",
    );
    const header = fc.oneof(
      fc.string(),
      fc.array(piece, { maxLength: 8 }).map((p) => p.join("")),
    );
    fc.assert(
      fc.property(header, (h) => parseAuthorization(h) === general(h)),
      { numRuns: 5000 },
    );
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

describe("nonce extraction", () => {
  it("maps an invalid nonce to the 400 nonce error", () => {
    assert.equal(NONCE_INVALID, Code.NONCE_INVALID);
    assert.equal(errorStatus(NONCE_INVALID), 400);
    assert.equal(errorField(NONCE_INVALID), "nonce");
  });

  const queries: Array<[string, bigint | undefined | typeof NONCE_INVALID]> = [
    ["", undefined],
    ["page=1&pageSize=20", undefined],
    ["nonce=5", 5n],
    ["page=1&nonce=1700000000000000&pageSize=20", 1_700_000_000_000_000n],
    ["nonce=18446744073709551615", 18_446_744_073_709_551_615n],
    ["nonce=-3", NONCE_INVALID],
    ["nonce=18446744073709551616", NONCE_INVALID],
    ["xnonce=5&noncex=6", undefined],
    ["nonce", NONCE_INVALID],
    ["nonce=", NONCE_INVALID],
    ["nonce=1.5", NONCE_INVALID],
    ["nonce=1e3", NONCE_INVALID],
    ["nonce=abc", NONCE_INVALID],
    ["nonce=%31", NONCE_INVALID],
    ["nonce=123456789012345678901", NONCE_INVALID],
    ["nonce=1&nonce=2", NONCE_INVALID],
    ["a=1&&nonce=9&", 9n],
  ];
  for (const [query, expected] of queries) {
    it(`reads the query ${JSON.stringify(query)} as ${String(expected)}`, () => {
      assert.equal(nonceFromQuery(query), expected);
    });
  }

  const bodies: Array<[unknown, bigint | undefined | typeof NONCE_INVALID]> = [
    [{ orderId: 1 }, undefined],
    [{ nonce: 7 }, 7n],
    [{ nonce: 0 }, 0n],
    [{ nonce: Number.MAX_SAFE_INTEGER }, 9_007_199_254_740_991n],
    [{ nonce: "1700000000000000001" }, 1_700_000_000_000_000_001n],
    [{ nonce: 1.5 }, NONCE_INVALID],
    [{ nonce: 2 ** 60 }, NONCE_INVALID],
    [{ nonce: "1.5" }, NONCE_INVALID],
    [{ nonce: "" }, NONCE_INVALID],
    [{ nonce: null }, NONCE_INVALID],
    [{ nonce: true }, NONCE_INVALID],
    [{ nonce: [1] }, NONCE_INVALID],
    [{ nonce: -1 }, NONCE_INVALID],
    [{ nonce: "-1" }, NONCE_INVALID],
    [{ nonce: " 1" }, NONCE_INVALID],
    [{ nonce: "3e1" }, NONCE_INVALID],
    [null, undefined],
    [[{ nonce: 1 }], undefined],
    ["nonce", undefined],
  ];
  for (const [body, expected] of bodies) {
    it(`reads the body ${JSON.stringify(body)} as ${String(expected)}`, () => {
      assert.equal(nonceFromBody(body), expected);
    });
  }
});

describe("NonceGuard", () => {
  it("lets requests without a nonce through and remembers nothing for them", () => {
    const guard = new NonceGuard();
    assert.equal(guard.check("t", undefined), true);
    assert.equal(guard.check("t", undefined), true);
    assert.equal(guard.size, 0);
  });

  it("accepts strictly increasing nonces and rejects a replay or a smaller one", () => {
    const guard = new NonceGuard();
    assert.equal(guard.check("t", 5n), true);
    assert.equal(guard.check("t", 5n), false);
    assert.equal(guard.check("t", 4), false);
    assert.equal(guard.check("t", 6), true);
    assert.equal(guard.check("t", 6n), false);
    assert.equal(guard.last("t"), 6n);
  });

  it("does not advance on a rejected nonce", () => {
    const guard = new NonceGuard();
    guard.check("t", 10n);
    assert.equal(guard.check("t", 3n), false);
    assert.equal(guard.last("t"), 10n);
    assert.equal(guard.check("t", 11n), true);
  });

  it("keeps tokens apart", () => {
    const guard = new NonceGuard();
    assert.equal(guard.check("a", 100n), true);
    assert.equal(guard.check("b", 1n), true);
    assert.equal(guard.check("a", 50n), false);
  });

  it("compares numbers and bigints by value beyond 2^53", () => {
    const guard = new NonceGuard();
    assert.equal(guard.check("t", 9_007_199_254_740_993n), true);
    assert.equal(guard.check("t", 2 ** 53), false);
    assert.equal(guard.check("t", 9_007_199_254_740_994n), true);
  });

  it("forgets a revoked token", () => {
    const guard = new NonceGuard();
    guard.check("t", 10n);
    guard.forget("t");
    assert.equal(guard.last("t"), undefined);
    assert.equal(guard.check("t", 1n), true);
  });

  it("accepts a sequence exactly when it is strictly increasing (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), { maxLength: 30 }),
        (nonces) => {
          const guard = new NonceGuard();
          let last: bigint | undefined;
          for (const nonce of nonces) {
            const expected = last === undefined || nonce > last;
            assert.equal(guard.check("t", nonce), expected);
            if (expected) last = nonce;
          }
        },
      ),
    );
  });
});

describe("verifyBoundSignature (CONTRACT 15)", () => {
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

describe("timestampError (CONTRACT 15)", () => {
  const NOW = 1_700_000_000_000;
  const refused = Code.AUTH_TIMESTAMP;

  it("answers a 401 auth error named AUTH_TIMESTAMP", () => {
    assert.equal(errorStatus(refused), 401);
    assert.equal(errorField(refused), "auth");
    assert.equal(errorName(refused), "AUTH_TIMESTAMP");
  });

  it("accepts a timestamp up to the default window of 5000 ms away, in the past or the future", () => {
    assert.equal(DEFAULT_RECV_WINDOW, 5000);
    for (const t of [NOW, NOW - 5000, NOW + 5000, NOW - 1, NOW + 4999])
      assert.equal(timestampError(String(t), "", NOW), 0, `${t}`);
    for (const t of [NOW - 5001, NOW + 5001, 0])
      assert.equal(timestampError(String(t), "", NOW), refused, `${t}`);
  });

  it("uses X-Recv-Window from 1 to 60000 ms, both bounds included", () => {
    assert.equal(MAX_RECV_WINDOW, 60_000);
    assert.equal(timestampError(String(NOW - 1), "1", NOW), 0);
    assert.equal(timestampError(String(NOW + 1), "1", NOW), 0);
    assert.equal(timestampError(String(NOW - 2), "1", NOW), refused);
    assert.equal(timestampError(String(NOW - 60_000), "60000", NOW), 0);
    assert.equal(timestampError(String(NOW + 60_000), "60000", NOW), 0);
    assert.equal(timestampError(String(NOW - 60_001), "60000", NOW), refused);
    assert.equal(timestampError(String(NOW - 7000), "10000", NOW), 0, "a window wider than the default");
    assert.equal(timestampError(String(NOW), "00100", NOW), 0, "leading zeros are still the integer");
  });

  it("refuses an X-Recv-Window that is not an integer from 1 to 60000, however fresh the timestamp", () => {
    for (const w of [
      "0",
      "60001",
      "100000",
      "-1",
      "+5",
      "1.5",
      "1e3",
      "abc",
      " 5",
      "5000ms",
      "99999999999",
    ]) {
      assert.equal(timestampError(String(NOW), w, NOW), refused, JSON.stringify(w));
    }
  });

  it("refuses a timestamp that is empty or not an integer", () => {
    for (const t of [
      "",
      "abc",
      "1.7e12",
      `${NOW}.0`,
      `+${NOW}`,
      `-${NOW}`,
      ` ${NOW}`,
      "0x1",
      "9".repeat(17),
    ]) {
      assert.equal(timestampError(t, "", NOW), refused, JSON.stringify(t));
    }
  });
});

describe("authenticateBound and unboundRefusal (CONTRACT 15)", () => {
  const users = new Users();
  const TOKEN = "a".repeat(32);
  users.add(0, "00000000-0000-0000-0000-00000000000a");
  users.addKey(TOKEN, 0, SECRET, false);
  const NOW = 1_700_000_000_000;
  const path = "/1.0/trade/pairs/user-history";
  const query = "page=1";
  const request = (timestamp: string, recvWindow = "") => ({ timestamp, recvWindow, path });
  const boundSig = (ts: string) => sign(SECRET, Buffer.from(boundSigningText(ts, "GET", path, query)));

  it("checks the token first, then the time (no HMAC for a stale request), then the signature", () => {
    const ts = String(NOW);
    const ok = authenticateBound(users, TOKEN, boundSig(ts), query, "GET", request(ts), NOW);
    assert.equal(typeof ok, "object");
    assert.equal(
      authenticateBound(users, undefined, boundSig(ts), query, "GET", request(ts), NOW),
      Code.AUTH_TOKEN_MISSING,
    );
    assert.equal(
      authenticateBound(users, "b".repeat(32), boundSig(ts), query, "GET", request(ts), NOW),
      Code.AUTH_TOKEN_UNKNOWN,
    );
    assert.equal(
      authenticateBound(users, TOKEN, undefined, query, "GET", request(ts), NOW),
      Code.AUTH_SIGNATURE_MISSING,
    );
    // A stale timestamp answers AUTH_TIMESTAMP whatever the signature.
    assert.equal(
      authenticateBound(users, TOKEN, boundSig(ts), query, "GET", request(ts), NOW + 6000),
      Code.AUTH_TIMESTAMP,
    );
    assert.equal(
      authenticateBound(users, TOKEN, "0".repeat(64), query, "GET", request(ts), NOW + 6000),
      Code.AUTH_TIMESTAMP,
    );
    assert.equal(
      authenticateBound(users, TOKEN, boundSig(ts), query, "GET", request(ts, "0"), NOW),
      Code.AUTH_TIMESTAMP,
    );
    assert.equal(
      authenticateBound(users, TOKEN, boundSig(ts), query, "POST", request(ts), NOW),
      Code.AUTH_SIGNATURE_INVALID,
    );
    assert.equal(
      authenticateBound(users, TOKEN, sign(SECRET, query), query, "GET", request(ts), NOW),
      Code.AUTH_SIGNATURE_INVALID,
      "old-form signature with X-Timestamp",
    );
  });

  it("tells an empty X-Timestamp by its signature after the old form failed", () => {
    assert.equal(authenticate(users, TOKEN, boundSig(""), query), Code.AUTH_SIGNATURE_INVALID);
    assert.equal(unboundRefusal(users, TOKEN, boundSig(""), query, "GET", path), Code.AUTH_TIMESTAMP);
    assert.equal(
      unboundRefusal(users, TOKEN, "0".repeat(64), query, "GET", path),
      Code.AUTH_SIGNATURE_INVALID,
    );
    assert.equal(
      unboundRefusal(users, TOKEN, boundSig(""), query, "GET", "/1.0/other"),
      Code.AUTH_SIGNATURE_INVALID,
    );
  });
});
