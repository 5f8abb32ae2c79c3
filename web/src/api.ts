/**
 * The page's side of the wire interface: REST calls under /1.0 on the same origin, requests signed
 * with WebCrypto HMAC-SHA256 exactly as the server checks them, in the form bound to the time, the
 * method and the path (docs/API.md 3: `<X-Timestamp>\n<METHOD>\n<path>\n<body or raw query>`), and
 * stream URLs.
 *
 * Prices and amounts travel as the user typed them (decimal strings): the page never does
 * arithmetic on money it sends.
 */

import type {
  Balance,
  Bbo,
  BookData,
  Candle,
  ExchangeRecord,
  Level,
  NewUser,
  Order,
  PairInfo,
  PairStatusUpdate,
  PublicTrade,
  UserTrade,
} from "../../src/client/types.ts";

// The wire types are the client library's (src/client/types.ts), under the names the page uses.
export type { Balance, Candle, Level, Order, PairInfo, PairStatusUpdate, PublicTrade, UserTrade };
/** The pasted key: what the admin interface's create-user answers. */
export type Key = NewUser;
/** A book from REST or from an `orders:` message (`seq` when the server numbers the book). */
export type Book = BookData;
export type { Bbo };
/** A 24 h ticker of the `exchanges` channel. */
export type Ticker = ExchangeRecord;

export interface Answer<T> {
  status: number;
  body: T;
}

export const isOpen = (o: Order): boolean => !o.isCancelled && o.amountUsed < o.amount;

/** `{"errors": {field: [msg]}}` as one line for the status bar. */
export function errorText(body: unknown): string {
  const errors = (body as { errors?: Record<string, string[]> } | null)?.errors;
  if (errors === undefined) return "request failed";
  return Object.entries(errors)
    .map(([field, msgs]) => `${field}: ${msgs.join("; ")}`)
    .join(" · ");
}

const encoder = new TextEncoder();
const keyCache = new Map<string, Promise<CryptoKey>>();

/** Hex HMAC-SHA256 of `text` under `secret`. Needs a secure context (https or localhost). */
export async function sign(secret: string, text: string): Promise<string> {
  if (globalThis.crypto?.subtle === undefined) {
    throw new Error("WebCrypto is unavailable: open the page over https or on localhost");
  }
  let key = keyCache.get(secret);
  if (key === undefined) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
    ]);
    keyCache.set(secret, key);
  }
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await key, encoder.encode(text)));
  let hex = "";
  for (const b of mac) hex += b.toString(16).padStart(2, "0");
  return hex;
}

async function answer<T>(res: Response): Promise<Answer<T>> {
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text === "" ? null : JSON.parse(text);
  } catch {
    body = { errors: { body: [text.slice(0, 200)] } };
  }
  return { status: res.status, body: body as T };
}

export async function getPublic<T>(path: string): Promise<Answer<T>> {
  return answer<T>(await fetch(`/1.0${path}`));
}

/**
 * Server time minus this machine's clock (ms), measured once with `GET /time`: a browser whose clock
 * is a few seconds off still signs timestamps the server accepts. 0 when /time cannot be read.
 */
let clockOffset: Promise<number> | null = null;

function measureOffset(): Promise<number> {
  const sent = Date.now();
  return fetch("/1.0/time")
    .then((res) => res.json() as Promise<{ serverTime?: unknown }>)
    .then((body) => {
      const received = Date.now();
      const server = body.serverTime;
      // The server read its clock about halfway through the round trip.
      return typeof server === "number" ? Math.round(server - (sent + received) / 2) : 0;
    })
    .catch(() => 0);
}

/**
 * Authorization, X-Timestamp and X-Signature of `<timestamp>\n<method>\n<path>\n<payload>`, the path
 * as the browser sends it (`/1.0/...`, without the query).
 */
async function signedHeaders(
  key: Key,
  method: "GET" | "POST",
  url: string,
  payload: string,
): Promise<Record<string, string>> {
  clockOffset ??= measureOffset();
  const timestamp = String(Date.now() + (await clockOffset));
  const path = new URL(url, location.origin).pathname;
  return {
    Authorization: key.apiToken,
    "X-Timestamp": timestamp,
    "X-Signature": await sign(key.secretKey, `${timestamp}\n${method}\n${path}\n${payload}`),
  };
}

/** A signed GET: the signature covers the time, the path and the query string exactly as sent. */
export async function getSigned<T>(key: Key, path: string, query = ""): Promise<Answer<T>> {
  const url = `/1.0${path}${query === "" ? "" : `?${query}`}`;
  const headers = await signedHeaders(key, "GET", url, query);
  return answer<T>(await fetch(url, { headers }));
}

/** A signed POST: the signature covers the time, the path and the body text exactly as sent. */
export async function postSigned<T>(
  key: Key,
  path: string,
  body: Record<string, unknown>,
): Promise<Answer<T>> {
  const text = JSON.stringify(body);
  const url = `/1.0${path}`;
  const headers = { ...(await signedHeaders(key, "POST", url, text)), "Content-Type": "application/json" };
  return answer<T>(await fetch(url, { method: "POST", headers, body: text }));
}

export function streamUrl(streams: string[], listenKey?: string): string {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const q = `streams=${encodeURIComponent(streams.join(","))}${listenKey === undefined ? "" : `&listenKey=${listenKey}`}`;
  return `${scheme}//${location.host}/stream?${q}`;
}
