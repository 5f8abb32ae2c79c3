/**
 * The client library (`exchange-client`, and `exchange-server/client` beside the server): the REST client (./rest.ts), the live feeds (./book.ts,
 * ./market-data.ts, ./stream.ts), the book checksum (./checksum.ts), trading sessions (./session.ts)
 * and the wire types (./types.ts). Every module imports what it needs from its neighbours, never
 * from this one, so none is in an import cycle.
 */

export { headerRecord, originOf, signText } from "./base.ts";
export * from "./rest.ts";
export type * from "./types.ts";

// ---- live feeds and the book checksum (docs/API.md 12) ----------------------------------------------

export { type BookFeedOptions, OrderBookFeed } from "./book.ts";
export {
  bookChecksum,
  CHECKSUM_LEVELS,
  checksumText,
  crc32,
  decimalText,
  type LevelPair,
  sumExact,
} from "./checksum.ts";
export { type L3ApplyResult, L3Book } from "./l3-book.ts";
export { LiveBook, LocalBook, type ResyncReason } from "./local-book.ts";
export {
  BboFeed,
  type BboFeedOptions,
  L3BookFeed,
  type L3FeedOptions,
  type L3ResyncReason,
  subscribeBbo,
} from "./market-data.ts";

// ---- docs/API.md 13: trading sessions (src/client/session.ts) ----------------------------------------

export {
  type Credentials,
  type Deadline,
  type DisconnectInfo,
  type LogonResult,
  type LogonSettings,
  type ReconnectOptions,
  type ResumedInfo,
  type ResumeRefusal,
  SESSION_HEARTBEAT_SECONDS,
  SESSION_MAX_IN_FLIGHT,
  type SessionCalls,
  SessionConnectError,
  SessionDisconnected,
  SessionError,
  type SessionEvents,
  type SessionMethod,
  TradingSession,
  type TradingSessionOptions,
} from "./session.ts";
