/**
 * A tiny stream client over `ws` (docs/API.md 12): connects to `/stream?streams=...`, optionally signed
 * like a GET (Authorization + X-Signature of the raw query string; by default in the bound form of
 * docs/API.md 3, `<X-Timestamp>\nGET\n/stream\n<query>`), keeps every message in arrival order, and
 * lets a test wait for the next message that matches a predicate, with a timeout.
 */

import WebSocket from "ws";
import { headerRecord, originOf } from "./base.ts";
import { type SignatureForm, signedHeaders } from "./rest.ts";
import type { PairStatusUpdate, StreamMessage } from "./types.ts";

export type { StreamMessage } from "./types.ts";

/** A channel as subscribed (docs/API.md 12.2); `{pair}` a configured pair, `{uid}` the caller's. */
export type StreamChannel =
  | "exchanges"
  | "status"
  | `orders:${string}`
  | `bbo:${string}`
  | `orders_l3:${string}`
  | `history:${string}`
  | `user_orders:${string}`
  | `user_history:${string}`;

/** A `status` message's data: every pair in config order on connect, then the pair that changed. */
export type StatusData = PairStatusUpdate[] | PairStatusUpdate;

/** The pairs a `status` message names: all of them (the first message) or the one that changed. */
export function pairStatuses(message: StreamMessage<StatusData>): PairStatusUpdate[] {
  return Array.isArray(message.data) ? message.data : [message.data];
}

/** Reconnect attempts after a close, RECONNECT_DELAY_MS apart (10 s in all), before giving up. */
const RECONNECT_TRIES = 100;
const RECONNECT_DELAY_MS = 100;

/**
 * Calls `connect` until it succeeds, RECONNECT_DELAY_MS apart, while `closed()` is false (the
 * feeds' reconnect after a close); after RECONNECT_TRIES failures it gives up and hands the last
 * error to `onError`.
 */
export async function reconnect(
  connect: () => Promise<void>,
  closed: () => boolean,
  onError?: (error: Error) => void,
): Promise<void> {
  for (let attempt = 1; !closed(); attempt++) {
    try {
      await connect();
      return;
    } catch (error) {
      if (attempt >= RECONNECT_TRIES) {
        onError?.(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, RECONNECT_DELAY_MS));
    }
  }
}

export interface StreamOptions {
  /** Server origin or REST base (as for ExchangeClient). */
  baseUrl: string | (() => string);
  /** Channel names (StreamChannel), joined with `,` into the `streams` query parameter unencoded. */
  streams: readonly string[];
  /** With both, the upgrade request is signed like a GET of the query string. */
  apiToken?: string;
  secretKey?: string;
  /** As for ExchangeClient: "bound" (default) or "legacy", X-Recv-Window, the clock of X-Timestamp. */
  signatureForm?: SignatureForm;
  recvWindow?: number;
  clock?: () => number;
  /** docs/API.md 10: authenticates the upgrade with a listen key instead of the signed headers. */
  listenKey?: string;
  /** Replaces the whole query string (without `?`), for malformed-list tests. */
  rawQuery?: string;
  headers?: Record<string, string>;
  /** How long to wait for the upgrade (default 5000 ms). */
  timeoutMs?: number;
  /** Called with each message as it arrives. */
  onMessage?: (message: StreamMessage) => void;
  /**
   * Called once when the connection closes after it opened, with the close code. A connection that
   * never opened calls nothing: `connect` rejects instead (so a feed's reconnect loop is started by
   * a drop only, never by a failed attempt).
   */
  onClose?: (code: number) => void;
  /** Keep every message in `messages` for `next` (default true; false for long-running tails). */
  keep?: boolean;
}

/** The upgrade was refused with an HTTP answer (400 / 401 / 403 per docs/API.md 12). */
export class StreamRejected extends Error {
  override name = "StreamRejected";
  readonly status: number;
  readonly text: string;
  constructor(status: number, text: string) {
    super(`stream upgrade refused: HTTP ${status}: ${text.slice(0, 300)}`);
    this.status = status;
    this.text = text;
  }
}

interface Waiter {
  predicate: (m: StreamMessage) => boolean;
  resolve: (m: StreamMessage) => void;
}

export class StreamClient {
  /** Every message received, in order. */
  readonly messages: StreamMessage[] = [];
  /** Indices of `messages` already returned by `next`. */
  private readonly consumed = new Set<number>();
  closeCode: number | undefined;
  private readonly ws: WebSocket;
  private waiter: Waiter | null = null;
  private readonly closed: Promise<void>;

  private constructor(ws: WebSocket, options: StreamOptions) {
    this.ws = ws;
    const keep = options.keep !== false;
    ws.on("message", (data) => {
      let message: StreamMessage;
      try {
        message = JSON.parse(data.toString()) as StreamMessage;
      } catch {
        message = { stream: "<not json>", data: data.toString() };
      }
      options.onMessage?.(message);
      if (!keep) return;
      this.messages.push(message);
      this.poke();
    });
    let opened = false;
    ws.once("open", () => {
      opened = true;
    });
    this.closed = new Promise((resolve) => {
      ws.on("close", (code) => {
        this.closeCode = code;
        if (opened) options.onClose?.(code);
        resolve();
      });
    });
    ws.on("error", () => {
      // Surfaces as a close; `next` then times out with the close code in its message.
    });
  }

  /** Connects; rejects with StreamRejected when the server answers the upgrade with an HTTP error. */
  static connect(options: StreamOptions): Promise<StreamClient> {
    const base = typeof options.baseUrl === "function" ? options.baseUrl() : options.baseUrl;
    const origin = originOf(base).replace(/^http/, "ws");
    let query = options.rawQuery ?? `streams=${options.streams.join(",")}`;
    if (options.listenKey !== undefined) query += `&listenKey=${encodeURIComponent(options.listenKey)}`;
    const headers = headerRecord();
    if (options.apiToken !== undefined && options.secretKey !== undefined) {
      const signer = {
        apiToken: options.apiToken,
        secretKey: options.secretKey,
        signatureForm: options.signatureForm,
        recvWindow: options.recvWindow,
        clock: options.clock,
      };
      Object.assign(headers, signedHeaders(signer, "GET", "/stream", query));
    }
    Object.assign(headers, options.headers);
    const timeoutMs = options.timeoutMs ?? 5000;
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${origin}/stream?${query}`, { headers, handshakeTimeout: timeoutMs });
      // Created before `open` so no message sent right after the upgrade is missed.
      const client = new StreamClient(ws, options);
      let settled = false;
      const timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        ws.terminate();
        reject(new Error(`stream connect timed out after ${timeoutMs} ms`));
      }, timeoutMs + 500);
      ws.once("open", () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(client);
      });
      ws.once("unexpected-response", (_req, res) => {
        const chunks: Buffer[] = [];
        const refuse = () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          ws.terminate();
          reject(new StreamRejected(res.statusCode ?? 0, Buffer.concat(chunks).toString("utf8")));
        };
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", refuse);
        res.on("close", refuse); // a body cut short still reports the status
      });
      ws.once("error", (error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      });
    });
  }

  /**
   * The oldest message not yet returned by `next` that matches `predicate`, waiting up to
   * `timeoutMs` for one to arrive. Rejects on timeout listing what did arrive.
   */
  next<T = unknown>(
    predicate: (m: StreamMessage<T>) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<StreamMessage<T>> {
    const found = this.scan(predicate as (m: StreamMessage) => boolean);
    if (found !== undefined) return Promise.resolve(found as StreamMessage<T>);
    if (this.waiter !== null) return Promise.reject(new Error("StreamClient.next: one wait at a time"));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        const seen = this.messages
          .slice(-10)
          .map((m) => JSON.stringify(m).slice(0, 200))
          .join("\n  ");
        reject(
          new Error(
            `no matching stream message within ${timeoutMs} ms (received ${this.messages.length}, ` +
              `close code ${this.closeCode ?? "none"}); last ones:\n  ${seen}`,
          ),
        );
      }, timeoutMs);
      this.waiter = {
        predicate: predicate as (m: StreamMessage) => boolean,
        resolve: (m) => {
          clearTimeout(timer);
          this.waiter = null;
          resolve(m as StreamMessage<T>);
        },
      };
    });
  }

  /** Messages of one channel received so far. */
  of<T = unknown>(stream: string): StreamMessage<T>[] {
    return this.messages.filter((m) => m.stream === stream) as StreamMessage<T>[];
  }

  /** Closes the connection and waits (at most 2 s) for the close to finish. */
  async close(): Promise<void> {
    if (this.closeCode !== undefined) return;
    this.ws.close();
    const timeout = new Promise<boolean>((resolve) => setTimeout(resolve, 2000, false).unref());
    const closed = await Promise.race([this.closed.then(() => true), timeout]);
    if (!closed) this.ws.terminate();
  }

  private scan(predicate: (m: StreamMessage) => boolean): StreamMessage | undefined {
    for (let i = 0; i < this.messages.length; i++) {
      if (!this.consumed.has(i) && predicate(this.messages[i])) {
        this.consumed.add(i);
        return this.messages[i];
      }
    }
    return undefined;
  }

  private poke(): void {
    const w = this.waiter;
    if (w === null) return;
    const found = this.scan(w.predicate);
    if (found !== undefined) w.resolve(found);
  }
}
