/**
 * What every part of the stream knows of one connection: its state, fixed at the upgrade and kept
 * by uWS as the socket's user data (src/stream/mount.ts makes it, the hub and the keep-alive read
 * and update it), and the close codes a connection may end with (docs/API.md 10, 12.2).
 */
import type { Channel } from "./channels.ts";

/** WebSocket close code for a consumer that fell behind (policy violation). */
export const CLOSE_SLOW_CONSUMER = 1008;
/**
 * WebSocket close code when the listen key that admitted a connection was closed or expired, or
 * the API key that signed its upgrade (or made its listen key) was revoked (docs/API.md 11).
 */
export const CLOSE_LISTEN_KEY_ENDED = 4001;
/** WebSocket close code when the server shuts down. */
export const CLOSE_GOING_AWAY = 1001;
/** WebSocket close code for a connection silent for the idle timeout, as a session's heartbeat. */
export const CLOSE_IDLE = 4002;
/** WebSocket close code for a client message over MAX_CLIENT_MESSAGE. */
export const CLOSE_TOO_BIG = 1009;

/** Per-connection state (uWS user data), fixed at the upgrade. */
export interface Conn {
  readonly channels: readonly Channel[];
  /** The authenticated user (-1 when the upgrade carried no credentials). */
  readonly userId: number;
  /** The listen key that admitted the connection (docs/API.md 10); it ends when the key ends. */
  readonly listenKey?: string;
  /** The API token that signed the upgrade; its revocation ends the connection (docs/API.md 11). */
  readonly apiToken?: string;
  /**
   * Bytes of the snapshots sent at open: a big book may exceed the bound on its own, so they are
   * allowed on top of it until the unsent buffer first falls under the bound.
   */
  allowance: number;
  /** The sweep round that last looked at this connection (a socket sits in several topics). */
  checked: number;
  /** When the client was last heard (any frame, a pong included), for the idle timeout. */
  heardMs: number;
  /** A keep-alive ping went out since then. */
  pinged: boolean;
}
