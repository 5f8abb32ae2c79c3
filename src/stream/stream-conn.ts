/**
 * What every part of the stream knows of one connection: its state, fixed at the upgrade and kept
 * by uWS as the socket's user data (stream-route.ts makes it, the hub and the keep-alive read and
 * update it). The close codes a connection may end with are src/wire/close-codes.ts.
 */
import type { Channel } from "./channels.ts";

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
