import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { sign } from "../../src/accounts/hmac.ts";
import { NonceGuard, Users } from "../../src/accounts/users.ts";
import { boundSigningText } from "../../src/client/index.ts";
import { errorField, errorName, errorStatus } from "../../src/errors/bodies.ts";
import { Code } from "../../src/errors/catalogue.ts";
import {
  authenticate,
  authenticateBound,
  DEFAULT_RECV_WINDOW,
  MAX_RECV_WINDOW,
  NONCE_INVALID,
  nonceFromBody,
  nonceFromQuery,
  parseAuthorization,
  timestampError,
  unboundRefusal,
} from "../../src/http/auth.ts";

const SECRET = "9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a";

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

describe("timestampError (docs/API.md 3)", () => {
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

describe("authenticateBound and unboundRefusal (docs/API.md 3)", () => {
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
