/**
 * What the REST client (index.ts), the stream client (stream.ts) and the trading session
 * (session.ts) share: the HMAC of docs/API.md 3, header records without a prototype, and the server
 * origin of a base URL. index.ts re-exports them; the session imports them from here, so that
 * index.ts can re-export the session without an import cycle.
 */

import { createHmac } from "node:crypto";

/** The version segment of the REST paths. */
export const REST_PREFIX = "/1.0";

/**
 * A header record built from names the caller chose: no prototype, so a name such as `__proto__`
 * or `constructor` is a header like any other (Object.assign onto `{}` would reset the prototype).
 */
export function headerRecord(init?: Record<string, string>): Record<string, string> {
  const headers = Object.create(null) as Record<string, string>;
  return init === undefined ? headers : Object.assign(headers, init);
}

/** Hex HMAC-SHA256 of `text` with `secret` (docs/API.md 3). */
export function signText(secret: string, text: string | Uint8Array): string {
  return createHmac("sha256", secret).update(text).digest("hex");
}

/** The origin of a base URL that may end in the REST version segment. */
export function originOf(baseUrl: string): string {
  let url = baseUrl.replace(/\/+$/, "");
  if (url.endsWith(REST_PREFIX)) url = url.slice(0, -REST_PREFIX.length);
  return url;
}
