/**
 * HMAC-SHA256 primitives of request signing (docs/API.md 3): the key prepared once into its
 * ipad/opad blocks, verification by two one-shot `crypto.hash` calls with a constant-time compare
 * of the hex signature, the old form (over the payload) and the bound form
 * (`<X-Timestamp>\n<METHOD>\n<path>\n<payload>`), the constant-time comparison of two secrets and
 * fresh random secrets. Which key, which form and which nonce a request needs is src/http/auth.ts's job.
 * Everything here is synchronous and allocation-light; it runs on every signed request.
 */

import { createHash, createHmac, hash, type KeyObject, randomBytes, timingSafeEqual } from "node:crypto";

if (typeof hash !== "function") throw new Error("Node.js 20.12 or later is required (crypto.hash)");

/** Hex HMAC-SHA256 of `payload` keyed with `secret` (what a client puts in `X-Signature`). */
export function sign(secret: string | Buffer | KeyObject, payload: string | Buffer): string {
  return createHmac("sha256", secret).update(payload).digest("hex");
}

/** SHA-256's block size in bytes. */
const BLOCK = 64;

/**
 * An HMAC-SHA256 key prepared once, when the key is loaded (RFC 2104): its block XOR ipad and XOR
 * opad. A verification is then two one-shot `crypto.hash` calls, H((K ⊕ ipad) ‖ payload) and
 * H((K ⊕ opad) ‖ inner), instead of an Hmac object per request (`createHmac` builds a JS object,
 * its native context and an OpenSSL digest looked up by name each time): 1.01 vs 1.42 µs (p50)
 * per verification of a create-order body (BENCHMARKS.md, "Changes kept").
 */
export class HmacKey {
  /** The key block XOR ipad (0x36). */
  readonly inner: Buffer;
  /** The key block XOR opad (0x5c), then 32 bytes where each verification puts its inner digest. */
  readonly outer: Buffer;

  constructor(secret: Buffer | string) {
    let key = typeof secret === "string" ? Buffer.from(secret, "utf8") : secret;
    // A key longer than the block is replaced by its digest (RFC 2104); a shorter one is zero-padded.
    if (key.length > BLOCK) key = hash("sha256", key, "buffer");
    this.inner = Buffer.alloc(BLOCK, 0x36);
    this.outer = Buffer.alloc(BLOCK + 32, 0x5c);
    for (let i = 0; i < key.length; i++) {
      this.inner[i] ^= key[i];
      this.outer[i] ^= key[i];
    }
  }
}

/** Decoded signature; reused because verification is synchronous and single-threaded. */
const decoded = Buffer.alloc(32);
/** (K ⊕ ipad) ‖ payload, rebuilt by each verification; grows to the largest payload seen. */
let innerInput = Buffer.allocUnsafe(BLOCK + 4096);

/**
 * True when `signatureHex` is the HMAC-SHA256 of `payload` under `key`. Hex is accepted in any
 * case; the comparison of the 32 decoded bytes is constant-time. A missing signature, a wrong
 * length or a non-hex character answers false without throwing (their timing reveals nothing the
 * sender does not already know).
 *
 * `payload` must be the raw body bytes as received (POST) or the raw query string after `?` (GET,
 * empty when there is none): never a re-serialisation. A string is signed as its UTF-8 bytes.
 *
 * Digests come out as "binary" (latin1) strings, one char per byte: a Buffer digest would have a
 * backing store of its own to allocate, register and sweep on every signed request (BENCHMARKS.md,
 * "Changes kept"). The final one is compared with the decoded signature by an OR of XORs over all
 * 32 bytes, without an early exit.
 */
export function verifySignature(
  key: HmacKey,
  payload: Buffer | string,
  signatureHex: string | undefined,
): boolean {
  // Buffer#write stops at the first pair that is not hex, so 32 bytes written means 64 hex digits.
  if (signatureHex === undefined || signatureHex.length !== 64 || decoded.write(signatureHex, "hex") !== 32) {
    return false;
  }
  const n = typeof payload === "string" ? Buffer.byteLength(payload, "utf8") : payload.length;
  if (BLOCK + n > innerInput.length) innerInput = Buffer.allocUnsafe(BLOCK + n);
  innerInput.set(key.inner, 0);
  if (typeof payload === "string") innerInput.write(payload, BLOCK, "utf8");
  else innerInput.set(payload, BLOCK);
  return digestMatches(key, BLOCK + n);
}

/** The outer hash of the inner input's first `end` bytes, compared with `decoded` (see above). */
function digestMatches(key: HmacKey, end: number): boolean {
  key.outer.write(hash("sha256", innerInput.subarray(0, end), "binary"), BLOCK, "binary");
  const digest = hash("sha256", key.outer, "binary");
  let diff = 0;
  for (let i = 0; i < 32; i++) diff |= digest.charCodeAt(i) ^ decoded[i];
  return diff === 0;
}

/**
 * The bound form of docs/API.md 3: true when `signatureHex` is the HMAC-SHA256 under `key` of
 * `<timestamp>\n<method>\n<path>\n<payload>`, written after the key's inner pad into the same
 * input as `verifySignature` uses: the short head as one string, then the payload's bytes, so the
 * body is never concatenated into a string.
 * `timestamp` is the X-Timestamp header as received, `method` upper case (`GET`, `POST`), `path`
 * the raw path as sent (not decoded, without the query), `payload` as for `verifySignature`.
 */
export function verifyBoundSignature(
  key: HmacKey,
  timestamp: string,
  method: string,
  path: string,
  payload: Buffer | string,
  signatureHex: string | undefined,
): boolean {
  if (signatureHex === undefined || signatureHex.length !== 64 || decoded.write(signatureHex, "hex") !== 32) {
    return false;
  }
  // The head is a few dozen bytes: one small string and one write; the payload is never copied
  // into a string. 3 bytes per UTF-16 unit bound its UTF-8 length.
  const head = `${timestamp}\n${method}\n${path}\n`;
  const n = typeof payload === "string" ? Buffer.byteLength(payload, "utf8") : payload.length;
  const most = BLOCK + head.length * 3 + n;
  if (most > innerInput.length) innerInput = Buffer.allocUnsafe(most);
  const input = innerInput;
  input.set(key.inner, 0);
  const at = BLOCK + input.write(head, BLOCK, "utf8");
  if (typeof payload === "string") input.write(payload, at, "utf8");
  else input.set(payload, at);
  return digestMatches(key, at + n);
}

/**
 * Constant-time comparison of two secrets of any length (the admin token, docs/API.md 11): both are
 * hashed first, so neither the content nor the length of `expected` leaks through timing.
 */
export function secretsEqual(expected: string, actual: string | undefined): boolean {
  if (actual === undefined) return false;
  const a = createHash("sha256").update(expected).digest();
  const b = createHash("sha256").update(actual).digest();
  return timingSafeEqual(a, b);
}

/** Fresh random secret: 32 bytes (256 bits) as 64 lowercase hex characters, for API tokens and keys. */
export function generateSecret(): string {
  return randomBytes(32).toString("hex");
}
