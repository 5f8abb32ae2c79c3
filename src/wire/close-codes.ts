/**
 * The WebSocket close codes the server ends a stream or a trading session with (docs/API.md 12.1,
 * 13): one list for both, since a client reads them the same way on either.
 */

/** The server shuts down. */
export const CLOSE_GOING_AWAY = 1001;
/** The client fell behind: its unsent buffer went over the bound (a policy violation). */
export const CLOSE_SLOW_CONSUMER = 1008;
/** The server could not do what the connection needs (a resume's read failed). */
export const CLOSE_INTERNAL = 1011;
/** A client message over the size the connection reads. */
export const CLOSE_TOO_BIG = 1009;
/**
 * The credentials ended: a logon refused or missing in time, an API key revoked, the listen key
 * that admitted a stream closed or expired (docs/API.md 10, 13).
 */
export const CLOSE_AUTH = 4001;
/** Nothing from the client for its heartbeat (a session) or the idle timeout (a stream). */
export const CLOSE_SILENT = 4002;
