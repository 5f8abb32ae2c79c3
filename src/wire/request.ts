/**
 * Small guarded steps of the HTTP path on uWebSockets.js: headers are read synchronously
 * into a plain record (the request object dies when the handler returns), `onAborted` is attached
 * before anything asynchronous, every late write is corked, and bodies are read into one
 * preallocated buffer (no concatenation per chunk).
 */
import { randomUUID } from "node:crypto";
import type { HttpRequest, HttpResponse } from "@trufflesuite/uws-js-unofficial";
import { errorBody, errorName, errorStatus } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";
import { type Lang, pickLanguage } from "../errors/language.ts";
import { log } from "../util/log.ts";

/** Answer headers a browser script may read when CORS allows the origin (docs/API.md 4, 9, 10). */
const EXPOSE_HEADERS = "Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining";

export const MAX_BODY = 64 * 1024;
/**
 * The longest request head (request line, headers and the blank line) that uWebSockets.js reads
 * whatever way it arrives. A head that is not complete in the first read is kept in the parser's
 * 4,096-byte buffer, and a head that outgrows it closes the connection with no answer: a fixed size
 * in the build we use (no environment variable changes it), and the usual case over a real network,
 * which delivers a head over about 1.4 KB in several pieces. A longer head that arrives in one read
 * is parsed; the server refuses it then (414, 431), so a request is never served on a loopback test
 * and dropped in production. DECISIONS.md "HTTP edges and input"; docs/API.md 4.1.
 */
export const MAX_HEAD_BYTES = 4096;
/** Longest request target (path and query) answered: 414 beyond. A longer one cannot fit in a head. */
export const MAX_REQUEST_TARGET = MAX_HEAD_BYTES;
/**
 * The bytes of a head that are not the target or a header the server reads: `GET ` and ` HTTP/1.1\r\n`
 * around the target (the shortest method), `host:\r\n` (uWS refuses a request without one), and the
 * blank line. Whitespace around header values is not counted (the parser trims it).
 */
const HEAD_OVERHEAD = 4 + 11 + 7 + 2;

/** `name:value\r\n` of a header read as `value` ("" when absent: uWS cannot tell it from empty). */
function headerBytes(nameLength: number, value: string): number {
  return value === "" ? 0 : nameLength + 3 + value.length;
}

/** Status lines of every status the server answers (REST, admin, the stream upgrade). */
export const STATUS_LINE: Record<number, string> = {
  200: "200 OK",
  400: "400 Bad Request",
  401: "401 Unauthorized",
  403: "403 Forbidden",
  404: "404 Not Found",
  405: "405 Method Not Allowed",
  413: "413 Payload Too Large",
  414: "414 URI Too Long",
  415: "415 Unsupported Media Type",
  426: "426 Upgrade Required",
  429: "429 Too Many Requests",
  431: "431 Request Header Fields Too Large",
  500: "500 Internal Server Error",
  503: "503 Service Unavailable",
};

/** What a handler may keep from the request after it returns. */
export interface RequestInfo {
  readonly route: string;
  readonly query: string;
  readonly lang: Lang;
  readonly authorization: string | undefined;
  readonly signature: string | undefined;
  /**
   * X-Timestamp (docs/API.md 3), read only when `Authorization` is there; "" when absent or empty.
   * When it is set, `recvWindow` and `path` are read too (a request without it needs neither).
   */
  readonly timestamp: string;
  /** X-Recv-Window, "" when absent or not read. */
  readonly recvWindow: string;
  /** The raw path as sent, without the query; "" when not read (no X-Timestamp). */
  readonly path: string;
  readonly contentType: string;
  readonly contentLength: number;
  /** The client address, read only when rate limiting needs it (see `readRequest`). */
  readonly address: string | undefined;
  /** performance.now() when the request arrived (a double: no BigInt per request, as hrtime.bigint). */
  readonly startMs: number;
  /** Set by the rate-limit step (docs/API.md 3): the answer then carries X-RateLimit-* headers. */
  rateLimit: number;
  rateRemaining: number;
  aborted: boolean;
  /** `Access-Control-Allow-Origin` to send (docs/API.md 10), set by the route when the origin is allowed. */
  cors?: string;
  /** Set once an answer was written. */
  done: boolean;
  /**
   * URI_TOO_LONG or HEADER_TOO_LARGE when the request is over a limit of the server (answered before
   * anything else, see `overLimit`), else 0.
   */
  readonly overLimit: number;
  /** The `Allow` header of a 405 answer (RFC 9110 15.5.6). */
  allow?: string;
}

const decoder = new TextDecoder();

/**
 * The request's headers as a plain record (see RequestInfo). `withAddress`: read the client
 * address (rate limiting by address); `withQuery`: read the query string (a signed POST signs and
 * reads only its body, so it leaves the query unread and `query` empty).
 */
export function readRequest(
  res: HttpResponse,
  req: HttpRequest,
  route: string,
  withAddress = false,
  withQuery = true,
): RequestInfo {
  const auth = req.getHeader("authorization");
  const sig = req.getHeader("x-signature");
  const cl = req.getHeader("content-length");
  // Only a signed request can be bound; one without the header reads nothing more (docs/API.md 3).
  const timestamp = auth === "" ? "" : req.getHeader("x-timestamp");
  const bound = timestamp !== "";
  const query = req.getQuery() ?? "";
  const acceptLanguage = req.getHeader("accept-language");
  const contentType = req.getHeader("content-type");
  const url = req.getUrl();
  const recvWindow = bound ? req.getHeader("x-recv-window") : "";
  // At least what the head holds: the target and the headers read here (a string's length never
  // exceeds its UTF-8 bytes). Walking every header to count the rest costs 1.8 µs per request
  // (DECISIONS.md "HTTP edges and input"), so a head long only through other headers is served
  // when it arrives in one read.
  const target = url.length + (query === "" ? 0 : query.length + 1);
  const head =
    HEAD_OVERHEAD +
    target +
    headerBytes(13, auth) +
    headerBytes(11, sig) +
    headerBytes(14, cl) +
    headerBytes(11, timestamp) +
    headerBytes(13, recvWindow) +
    headerBytes(15, acceptLanguage) +
    headerBytes(12, contentType);
  const overLimit =
    target > MAX_REQUEST_TARGET ? Code.URI_TOO_LONG : head > MAX_HEAD_BYTES ? Code.HEADER_TOO_LARGE : 0;
  const info: RequestInfo = {
    route,
    query: withQuery ? query : "",
    lang: overLimit === 0 ? pickLanguage(acceptLanguage || undefined) : "en",
    authorization: auth === "" ? undefined : auth,
    signature: sig === "" ? undefined : sig,
    timestamp,
    recvWindow,
    path: bound ? url : "",
    contentType,
    contentLength: cl === "" ? -1 : Number(cl),
    address: withAddress ? decoder.decode(res.getRemoteAddressAsText()) : undefined,
    startMs: performance.now(),
    rateLimit: 0,
    rateRemaining: 0,
    aborted: false,
    done: false,
    overLimit,
  };
  res.onAborted(() => {
    info.aborted = true;
  });
  return info;
}

/** True when a POST's media type is `application/json` (parameters such as charset are fine). */
export function isJsonMediaType(contentType: string): boolean {
  // What clients send nearly always, answered without slicing, trimming and lowercasing a copy.
  if (contentType === "application/json") return true;
  const semi = contentType.indexOf(";");
  const type = (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  return type === "application/json";
}

export type Finish = (info: RequestInfo, status: number) => void;

/** Writes a JSON answer (corked, so it works after an await too) unless the client went away. */
export function send(
  res: HttpResponse,
  info: RequestInfo,
  status: number,
  body: string,
  finish: Finish,
  retryAfter?: number,
): void {
  if (info.aborted || info.done) return;
  info.done = true;
  // cork runs its callback at once: the answer's parts go through module variables, so no closure
  // is built per answer.
  corkRes = res;
  corkInfo = info;
  corkStatus = status;
  corkBody = body;
  corkRetryAfter = retryAfter;
  res.cork(writeCorked);
  corkRes = null;
  corkInfo = null;
  corkBody = "";
  finish(info, status);
}

let corkRes: HttpResponse | null = null;
let corkInfo: RequestInfo | null = null;
let corkStatus = 0;
let corkBody = "";
let corkRetryAfter: number | undefined;

/** The body of `send`'s cork (see there). */
function writeCorked(): void {
  const res = corkRes!;
  const info = corkInfo!;
  const status = corkStatus;
  const body = corkBody;
  const retryAfter = corkRetryAfter;
  // uWS writes `200 OK` itself when no status was written: one call less for most answers.
  if (status !== 200) res.writeStatus(STATUS_LINE[status] ?? `${status} Error`);
  res.writeHeader("content-type", "application/json");
  if (retryAfter !== undefined) res.writeHeader("retry-after", String(retryAfter));
  if (info.allow !== undefined) res.writeHeader("allow", info.allow);
  if (info.cors !== undefined) {
    res.writeHeader("access-control-allow-origin", info.cors).writeHeader("vary", "Origin");
    res.writeHeader("access-control-expose-headers", EXPOSE_HEADERS);
  }
  if (info.rateLimit > 0) {
    res.writeHeader("x-ratelimit-limit", String(info.rateLimit));
    res.writeHeader("x-ratelimit-remaining", String(info.rateRemaining));
  }
  res.end(body);
}

/**
 * Answers the error `code`. A 500 (a fault of the server, never of the request) is also logged at
 * `error` under a new request id, which its message names (`internalErrorBody`); `cause`, when the
 * caller has it, goes into that log line.
 */
export function sendError(
  res: HttpResponse,
  info: RequestInfo,
  code: number,
  finish: Finish,
  extra?: string,
  cause?: unknown,
): void {
  const status = errorStatus(code);
  const body =
    status === 500
      ? internalErrorBody(code, info.lang, info.route, extra, cause)
      : errorBody(code, info.lang, extra);
  send(res, info, status, body, finish);
}

/**
 * The body of a 500 answer (docs/API.md 4): the message of `errors.server` names a request id, and
 * the log line at `error` carries the same id, the route and the cause, so an operator can find what
 * a user reports. Each call is one answer and one line.
 */
export function internalErrorBody(
  code: number,
  lang: Lang,
  route: string,
  extra?: string,
  cause?: unknown,
): string {
  const requestId = randomUUID();
  log().error(
    { requestId, route, code: errorName(code), catalogueCode: code, detail: extra, err: cause },
    `500 answer to ${route}: request id ${requestId}`,
  );
  const named = lang === "ru" ? `идентификатор запроса ${requestId}` : `request id ${requestId}`;
  return errorBody(code, lang, extra === undefined ? named : `${extra}; ${named}`);
}

/**
 * Reads the whole body into one buffer. Calls `done(null)` when it exceeds MAX_BODY (the caller
 * answers 413) or `done(body)`.
 */
export function readBody(
  res: HttpResponse,
  info: Pick<RequestInfo, "contentLength">,
  done: (body: Buffer | null) => void,
): void {
  let buf = Buffer.allocUnsafe(
    info.contentLength >= 0 && info.contentLength <= MAX_BODY ? info.contentLength : 1024,
  );
  let len = 0;
  let over = false;
  res.onData((chunk, isLast) => {
    if (over) return;
    const n = chunk.byteLength;
    if (len + n > MAX_BODY) {
      over = true;
      done(null);
      return;
    }
    if (len + n > buf.length) {
      const bigger = Buffer.allocUnsafe(Math.min(MAX_BODY, Math.max(buf.length * 2, len + n)));
      buf.copy(bigger, 0, 0, len);
      buf = bigger;
    }
    // The chunk's memory is only valid during this call: copy it out now.
    buf.set(new Uint8Array(chunk), len);
    len += n;
    if (isLast) done(len === buf.length ? buf : buf.subarray(0, len));
  });
}

/**
 * Answers 405 with `Allow` (RFC 9110 15.5.6): `path` exists, `allow` lists the methods it has
 * (upper case, comma-separated). A request over a limit answers that instead.
 */
export function sendMethodNotAllowed(
  res: HttpResponse,
  info: RequestInfo,
  allow: string,
  finish: Finish,
): void {
  if (info.overLimit !== 0) {
    sendError(res, info, info.overLimit, finish);
    return;
  }
  info.allow = allow;
  sendError(res, info, Code.METHOD_NOT_ALLOWED, finish);
}
