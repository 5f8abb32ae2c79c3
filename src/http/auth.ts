/**
 * Request authentication (docs/API.md 3): the API token from `Authorization`, an HMAC-SHA256 signature
 * in `X-Signature` over the exact bytes received, and the optional strictly increasing `nonce`.
 * With `X-Timestamp` (docs/API.md 3, bound form) the signature also covers the time, the method and the path:
 * `<X-Timestamp>\n<METHOD>\n<path>\n<raw query or raw body>`, and the time must be within
 * `X-Recv-Window` of the server's clock.
 * The HMAC itself is src/accounts/hmac.ts; the last accepted nonce of each token is kept by
 * src/accounts/users.ts (NonceGuard). Everything here is synchronous; it runs on every signed request.
 */

import { verifyBoundSignature, verifySignature } from "../accounts/hmac.ts";
import type { ApiKey, Users } from "../accounts/users.ts";
import { Code } from "../errors/catalogue.ts";
import { MAX_NONCE, readInteger } from "../util/integers.ts";

/**
 * The API token of an `Authorization` header: the value alone or `Bearer <token>` (scheme in any
 * case), trimmed. Null when the header is missing or carries no token.
 */
export function parseAuthorization(header: string | undefined): string | null {
  if (header === undefined || header === "") return null;
  // The usual header, a bare token: printable ASCII at both ends (nothing to trim) and no `b`/`B`
  // first (no scheme), taken as it is without the copies the general reading makes.
  const first = header.charCodeAt(0);
  const last = header.charCodeAt(header.length - 1);
  if (first > 0x20 && first < 0x7f && (first | 0x20) !== 0x62 && last > 0x20 && last < 0x7f) return header;
  let token = header.trim();
  if (token.length >= 6 && token.slice(0, 6).toLowerCase() === "bearer") {
    if (token.length === 6) return null; // the scheme with nothing after it
    const next = token.charCodeAt(6);
    if (next === 0x20 || next === 0x09) token = token.slice(7).trim();
  }
  return token === "" ? null : token;
}

// ---- nonce ----------------------------------------------------------------------------------------

/** Result of the nonce extractors when a `nonce` is present but is not an integer: a 400 on `nonce`. */
export const NONCE_INVALID = Code.NONCE_INVALID;
export type NonceResult = bigint | undefined | typeof NONCE_INVALID;

/**
 * The `nonce` of a raw query string (without `?`): undefined when absent, NONCE_INVALID when it is
 * not a non-negative integer of at most 64 bits (docs/API.md 1, src/util/integers.ts), empty, or given
 * more than once. The name is matched as sent (not decoded), like the
 * signature covers the query as sent.
 */
export function nonceFromQuery(query: string): NonceResult {
  if (!query.includes("nonce")) return undefined; // fast path: most requests carry none
  let found: string | undefined;
  let start = 0;
  while (start <= query.length) {
    let end = query.indexOf("&", start);
    if (end === -1) end = query.length;
    const eq = query.indexOf("=", start);
    const nameEnd = eq !== -1 && eq < end ? eq : end;
    if (nameEnd - start === 5 && query.startsWith("nonce", start)) {
      if (found !== undefined) return NONCE_INVALID;
      found = nameEnd === end ? "" : query.slice(nameEnd + 1, end);
    }
    start = end + 1;
  }
  if (found === undefined) return undefined;
  return readInteger(found, 0n, MAX_NONCE) ?? NONCE_INVALID;
}

/**
 * The `nonce` of a parsed JSON body: undefined when the body is not an object or has no `nonce`,
 * NONCE_INVALID when it is not a non-negative integer of at most 64 bits read as docs/API.md 1 says
 * (src/util/integers.ts): a JSON integer (a long one kept exact by src/wire/json-body.ts) or a string of
 * decimal digits. `null` is not a nonce (400).
 */
export function nonceFromBody(body: unknown): NonceResult {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const value = (body as { nonce?: unknown }).nonce;
  if (value === undefined) return undefined;
  return readInteger(value, 0n, MAX_NONCE) ?? NONCE_INVALID;
}

// ---- time-bound signatures (docs/API.md 3) ------------------------------------------------------------

/** X-Recv-Window when the header is absent (ms). */
export const DEFAULT_RECV_WINDOW = 5000;
/** The largest X-Recv-Window accepted (ms); the smallest is 1. */
export const MAX_RECV_WINDOW = 60_000;

/**
 * The value of a header made only of ASCII digits (at most `maxDigits`), else -1. `+`, `-`, a point,
 * an exponent or white space inside make it not an integer for docs/API.md 3; a negative timestamp
 * would be refused as too far from the clock anyway, so refusing the sign loses nothing.
 */
function digitsValue(text: string, maxDigits: number): number {
  const n = text.length;
  if (n === 0 || n > maxDigits) return -1;
  let value = 0;
  for (let i = 0; i < n; i++) {
    const d = text.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

/**
 * The time check of a bound request (docs/API.md 3): 0 when `timestamp` (Unix ms, the X-Timestamp
 * header) is an integer at most the window away from `now`, in the past or the future, else
 * AUTH_TIMESTAMP. The window is X-Recv-Window, an integer from 1 to 60000, or 5000 when the header
 * is empty (uWS answers "" for an absent header and for an empty one alike). 16 digits hold every
 * Unix ms until the year 318857; a longer text cannot be within a minute of the clock.
 */
export function timestampError(timestamp: string, recvWindow: string, now: number): number {
  const time = digitsValue(timestamp, 16);
  if (time < 0) return Code.AUTH_TIMESTAMP;
  let window = DEFAULT_RECV_WINDOW;
  if (recvWindow !== "") {
    window = digitsValue(recvWindow, 5);
    if (window < 1 || window > MAX_RECV_WINDOW) return Code.AUTH_TIMESTAMP;
  }
  return time - now > window || now - time > window ? Code.AUTH_TIMESTAMP : 0;
}

/** What a request with X-Timestamp says about itself, for the bound form (REST: its RequestInfo). */
export interface BoundRequest {
  /** X-Timestamp as received (not empty: an empty one reads as absent, see unboundRefusal). */
  readonly timestamp: string;
  /** X-Recv-Window as received; "" when absent (the default window). */
  readonly recvWindow: string;
  /** The raw path as sent, without the query (`/1.0/trade/create-order`, `/stream`). */
  readonly path: string;
}

/** The token's key, or the code of the first check that fails before the signature's. */
function keyOf(
  users: Users,
  authorization: string | undefined,
  signature: string | undefined,
): ApiKey | number {
  const token = parseAuthorization(authorization);
  if (token === null) return Code.AUTH_TOKEN_MISSING;
  const key = users.key(token);
  if (key === undefined) return Code.AUTH_TOKEN_UNKNOWN;
  if (signature === undefined) return Code.AUTH_SIGNATURE_MISSING;
  return key;
}

/**
 * The 401 step of every authenticated call, REST and stream upgrade alike (docs/API.md 3, 4): the API key
 * whose secret signed `payload` (the raw body of a POST, the raw query of a GET or an upgrade), or
 * the error code of the first check that fails. This is the old form (no X-Timestamp); a request
 * with one goes through `authenticateBound`.
 */
export function authenticate(
  users: Users,
  authorization: string | undefined,
  signature: string | undefined,
  payload: Buffer | string,
): ApiKey | number {
  const key = keyOf(users, authorization, signature);
  if (typeof key === "number") return key;
  if (!verifySignature(key.hmac, payload, signature)) return Code.AUTH_SIGNATURE_INVALID;
  return key;
}

/**
 * The 401 step of a request with X-Timestamp (docs/API.md 3). The time is checked after the token
 * and before the signature, so a stale or malformed request costs no HMAC: AUTH_TIMESTAMP. Then
 * the signature must be of `<timestamp>\n<method>\n<path>\n<payload>` (AUTH_SIGNATURE_INVALID).
 * No nonce is looked at here: a refusal consumes none.
 */
export function authenticateBound(
  users: Users,
  authorization: string | undefined,
  signature: string | undefined,
  payload: Buffer | string,
  method: string,
  request: BoundRequest,
  now: number,
): ApiKey | number {
  const key = keyOf(users, authorization, signature);
  if (typeof key === "number") return key;
  if (timestampError(request.timestamp, request.recvWindow, now) !== 0) return Code.AUTH_TIMESTAMP;
  if (!verifyBoundSignature(key.hmac, request.timestamp, method, request.path, payload, signature))
    return Code.AUTH_SIGNATURE_INVALID;
  return key;
}

/**
 * The code of a request without X-Timestamp whose signature `authenticate` refused: AUTH_TIMESTAMP
 * when it is signed in the bound form with an empty timestamp, else AUTH_SIGNATURE_INVALID.
 *
 * uWS reports an empty header as an absent one (telling them apart means walking every header,
 * about 0.9 µs a request, as much as the HMAC itself). An empty X-Timestamp therefore shows only
 * through what was signed: this costs one more HMAC, on the failure path alone. A request with an
 * empty X-Timestamp whose old-form signature is right is served as an old-form request.
 */
export function unboundRefusal(
  users: Users,
  authorization: string | undefined,
  signature: string | undefined,
  payload: Buffer | string,
  method: string,
  path: string,
): number {
  const key = keyOf(users, authorization, signature);
  if (typeof key === "number") return key;
  return verifyBoundSignature(key.hmac, "", method, path, payload, signature)
    ? Code.AUTH_TIMESTAMP
    : Code.AUTH_SIGNATURE_INVALID;
}

/**
 * The replay step after a good signature: 0 when the request may go on (a nonce it carries is
 * consumed and handed to `persist`), AUTH_NONCE_REPLAY (401), or NONCE_INVALID for a malformed one,
 * which the caller reports as a 400 after the other checks.
 */
export function consumeNonce(
  users: Users,
  key: ApiKey,
  nonce: NonceResult,
  persist: (token: string, nonce: bigint) => void,
): number {
  if (typeof nonce !== "bigint") return nonce === NONCE_INVALID ? NONCE_INVALID : 0;
  if (!users.nonces.check(key.token, nonce)) return Code.AUTH_NONCE_REPLAY;
  persist(key.token, nonce);
  return 0;
}
