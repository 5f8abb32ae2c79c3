/**
 * The stream's WebSocket route (docs/API.md 12.1): `ws://HOST:PORT/stream?streams=...`, read only.
 *
 *   upgrade   parse the list, check the signature (user channels) or the listen key, answer
 *             400/401/403 at once
 *   open      track the connection by its listen key and API token (their end ends it), start its
 *             keep-alive, and hand it to the hub (src/stream/hub.ts), which subscribes it and
 *             sends the snapshots
 *   message   ignored, up to MAX_CLIENT_MESSAGE; any frame counts as heard for the keep-alive
 *   close     forget it everywhere
 *
 * A request for /stream that is not an upgrade answers 426 (405 for a method other than GET).
 */
import type { TemplatedApp, WebSocket } from "@trufflesuite/uws-js-unofficial";
import type { Users } from "../accounts/users.ts";
import { errorBody, errorStatus, multiErrorBody } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";
import { pickLanguage } from "../errors/language.ts";
import {
  authenticate,
  authenticateBound,
  consumeNonce,
  nonceFromQuery,
  unboundRefusal,
} from "../http/auth.ts";
import { type ListenKeys, listenKeyFromQuery } from "../http/listen-keys.ts";
import { addToSet, removeFromSet } from "../util/set-map.ts";
import { CLOSE_AUTH, CLOSE_TOO_BIG } from "../wire/close-codes.ts";
import { internalErrorBody, readRequest, STATUS_LINE, sendMethodNotAllowed } from "../wire/request.ts";
import { CH_USER_HISTORY, CH_USER_ORDERS, parseStreams } from "./channels.ts";
import type { StreamHub } from "./hub.ts";
import { KeepAlive } from "./keep-alive.ts";
import type { Conn } from "./stream-conn.ts";

/** The largest message a stream client may send (it is ignored); a larger one closes with 1009. */
export const MAX_CLIENT_MESSAGE = 16 * 1024;
/** What uWS buffers of one client message (see the route's maxPayloadLength). */
const UWS_MESSAGE_CEILING = 1024 * 1024;

type Socket = WebSocket<Conn>;

export interface StreamDeps {
  hub: StreamHub;
  users: Users;
  /** Seconds of silence before a connection is closed (0: never); the server pings before that. */
  idleTimeoutSeconds: number;
  /** True once the server is up and the database writer is healthy. */
  ready: () => boolean;
  /** False while shutting down. */
  accepting: () => boolean;
  /** Persists the last nonce of a token (docs/API.md 3, replay guard). */
  nonceUsed: (token: string, nonce: bigint) => void;
  /** Runs `then` once every nonce persisted so far is committed (see FrontEndDeps.afterNonces). */
  afterNonces: (then: () => void) => void;
  /** `listenKey=K` in the query authenticates the upgrade as K's user (docs/API.md 10). */
  listenKeys?: ListenKeys;
  /** A follower (docs/API.md 4): a signed upgrade carrying a nonce is refused, nothing recorded. */
  readOnly?: boolean;
}

/** What admission reads of an upgrade request (headers as uWS gives them: "" when absent). */
interface UpgradeRequest {
  readonly query: string;
  readonly authorization: string;
  readonly signature: string;
  /** The bound form (docs/API.md 3): X-Timestamp, X-Recv-Window and the raw path (`/stream`). */
  readonly timestamp: string;
  readonly recvWindow: string;
  readonly path: string;
}

/** An admitted upgrade: its connection state, and whether a nonce must commit before it completes. */
interface Admitted {
  conn: Conn;
  waitNonce: boolean;
}

/** Registers `/stream`: the WebSocket route, and 426 for anything that is not an upgrade. */
export function mountStream(app: TemplatedApp, deps: StreamDeps): void {
  const { hub, users } = deps;
  const count = (status: number) => hub.metrics.request("/stream", status);
  // Connections per listen key: a key that is closed or expires ends its connections (docs/API.md 10).
  const byKey = new Map<string, Set<Socket>>();
  if (deps.listenKeys !== undefined) {
    deps.listenKeys.onEnd = (key) => {
      const sockets = byKey.get(key);
      if (sockets === undefined) return;
      byKey.delete(key);
      for (const ws of sockets) ws.end(CLOSE_AUTH, "listen key closed or expired");
    };
    deps.listenKeys.watch();
  }
  const keepAlive = new KeepAlive(deps.idleTimeoutSeconds * 1000);
  const heard = (ws: Socket) => {
    const c = ws.getUserData();
    c.heardMs = Date.now();
    c.pinged = false;
  };
  // Connections per API token that signed their upgrade. Revoking a key ends them and the listen
  // keys it made (whose connections end through onEnd above), as it ends its sessions (docs/API.md 11).
  const byToken = new Map<string, Set<Socket>>();
  users.revokeListeners.push((token) => {
    const sockets = byToken.get(token);
    if (sockets !== undefined) {
      byToken.delete(token);
      for (const ws of sockets) ws.end(CLOSE_AUTH, "API key revoked");
    }
    deps.listenKeys?.endToken(token);
  });

  /**
   * Admission of an upgrade, in the order docs/API.md 4 ranks failures (401 before 400), with 403
   * for another user's channel between them. Returns the connection state (and whether it carried
   * a nonce, which must be committed before the upgrade completes) or [status, body].
   */
  const admit = (up: UpgradeRequest, lang: "en" | "ru"): Admitted | [number, string] => {
    const { query, authorization, signature } = up;
    const reject = (code: number, extra?: string): [number, string] => [
      errorStatus(code),
      errorBody(code, lang, extra),
    ];
    if (!deps.accepting()) return reject(Code.SHUTTING_DOWN);
    if (!deps.ready()) return reject(Code.NOT_READY);
    const list = parseStreams(query, hub.pairIndex);
    const userChannels = list.channels.filter((c) => c.kind === CH_USER_ORDERS || c.kind === CH_USER_HISTORY);
    let userId = -1;
    let nonceInvalid = false;
    let waitNonce = false;
    let admittedBy: string | undefined;
    let signedBy: string | undefined;
    const listenKey = deps.listenKeys === undefined ? undefined : listenKeyFromQuery(query);
    if (listenKey !== undefined) {
      // A listen key replaces the headers (a browser cannot set them); any headers sent are ignored.
      const owner = deps.listenKeys!.userOf(listenKey);
      if (owner === undefined) return reject(Code.AUTH_LISTEN_KEY_INVALID);
      userId = owner;
      admittedBy = listenKey;
      for (const c of userChannels) {
        if (users.idOf(c.uid) !== userId) return reject(Code.AUTH_FORBIDDEN_CHANNEL, c.name);
      }
    } else if (userChannels.length > 0 || authorization !== "" || signature !== "") {
      // The same steps as a signed REST GET (src/http/auth.ts): the raw query is what is signed, with
      // the time, `GET` and the path `/stream` in the bound form (docs/API.md 3).
      const auth = authorization === "" ? undefined : authorization;
      const sig = signature === "" ? undefined : signature;
      const key =
        up.timestamp === ""
          ? authenticate(users, auth, sig, query)
          : authenticateBound(users, auth, sig, query, "GET", up, Date.now());
      if (typeof key === "number") {
        if (key === Code.AUTH_SIGNATURE_INVALID && up.timestamp === "")
          return reject(unboundRefusal(users, auth, sig, query, "GET", up.path));
        return reject(key);
      }
      const nonce = nonceFromQuery(query);
      if (deps.readOnly === true && nonce !== undefined) return reject(Code.FOLLOWER_READ_ONLY);
      const nonceErr = consumeNonce(users, key, nonce, deps.nonceUsed);
      if (nonceErr === Code.AUTH_NONCE_REPLAY) return reject(nonceErr);
      nonceInvalid = nonceErr !== 0;
      waitNonce = typeof nonce === "bigint" && nonceErr === 0;
      userId = key.userId;
      signedBy = key.token;
      for (const c of userChannels) {
        if (users.idOf(c.uid) !== userId) return reject(Code.AUTH_FORBIDDEN_CHANNEL, c.name);
      }
    }
    const errors = list.errors;
    if (nonceInvalid) errors.push([Code.NONCE_INVALID]);
    if (errors.length > 0) return [400, multiErrorBody(errors, lang)];
    return {
      conn: {
        channels: list.channels,
        userId,
        listenKey: admittedBy,
        apiToken: signedBy,
        allowance: 0,
        checked: 0,
        heardMs: 0,
        pinged: false,
      },
      waitNonce,
    };
  };

  app.ws<Conn>("/stream", {
    // The keep-alive is the route's own (below): uWS ends an idle connection without a close frame.
    idleTimeout: 0,
    sendPingsAutomatically: false,
    // Never let uWS skip a message for backpressure: the hub closes a slow consumer (1008) instead.
    maxBackpressure: 0,
    // Clients have nothing to say: a message over MAX_CLIENT_MESSAGE closes the connection with 1009.
    // uWS drops a connection over its own limit with no close frame, so that limit sits above it.
    maxPayloadLength: UWS_MESSAGE_CEILING,
    upgrade: (res, req, context) => {
      // Everything is read now: the request object dies when this handler returns. The
      // answer is written before returning too, so no onAborted is needed, except when a nonce
      // makes the upgrade wait for its commit (below).
      const lang = pickLanguage(req.getHeader("accept-language") || undefined);
      const up: UpgradeRequest = {
        query: req.getQuery() ?? "",
        authorization: req.getHeader("authorization"),
        signature: req.getHeader("x-signature"),
        timestamp: req.getHeader("x-timestamp"),
        recvWindow: req.getHeader("x-recv-window"),
        path: req.getUrl(),
      };
      const wsKey = req.getHeader("sec-websocket-key");
      const wsProtocol = req.getHeader("sec-websocket-protocol");
      const wsExtensions = req.getHeader("sec-websocket-extensions");
      let verdict: Admitted | [number, string];
      try {
        verdict = admit(up, lang);
      } catch (err) {
        verdict = [500, internalErrorBody(Code.INTERNAL, lang, "/stream", undefined, err)];
      }
      if (Array.isArray(verdict)) {
        const [status, body] = verdict;
        count(status);
        res.cork(() => {
          res
            .writeStatus(STATUS_LINE[status] ?? `${status} Error`)
            .writeHeader("content-type", "application/json")
            .end(body);
        });
        return;
      }
      const conn = verdict.conn;
      if (!verdict.waitNonce) {
        count(101);
        res.upgrade(conn, wsKey, wsProtocol, wsExtensions, context);
        return;
      }
      // A nonce was consumed: the upgrade completes once it is committed (docs/API.md 3, replay guard), so the same
      // upgrade replayed after a crash is refused. Everything it needs was read above.
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      deps.afterNonces(() => {
        if (aborted) return;
        count(101);
        res.cork(() => res.upgrade(conn, wsKey, wsProtocol, wsExtensions, context));
      });
    },
    open: (ws) => {
      const { listenKey: key, apiToken } = ws.getUserData();
      if (key !== undefined) {
        // The key may have ended between the upgrade and now: then the connection ends at once.
        if (deps.listenKeys?.userOf(key) === undefined) {
          ws.end(CLOSE_AUTH, "listen key closed or expired");
          return;
        }
        addToSet(byKey, key, ws);
      }
      if (apiToken !== undefined) {
        // The same for a key revoked while the upgrade waited for its nonce's commit.
        if (users.key(apiToken) === undefined) {
          ws.end(CLOSE_AUTH, "API key revoked");
          return;
        }
        addToSet(byToken, apiToken, ws);
      }
      keepAlive.open(ws);
      hub.open(ws);
    },
    message: (ws, data) => {
      heard(ws);
      // Read only (docs/API.md 12.2): whatever a client sends is ignored, up to a bound.
      if (data.byteLength > MAX_CLIENT_MESSAGE) ws.end(CLOSE_TOO_BIG, "message over 16 KiB");
    },
    pong: (ws) => heard(ws),
    close: (ws) => {
      const { listenKey: key, apiToken } = ws.getUserData();
      if (key !== undefined) removeFromSet(byKey, key, ws);
      if (apiToken !== undefined) removeFromSet(byToken, apiToken, ws);
      keepAlive.close(ws);
      hub.close(ws);
    },
  });

  // A request for /stream that is not a WebSocket upgrade (the ws route yields it to this one).
  app.any("/stream", (res, req) => {
    if (req.getMethod() !== "get") {
      // The stream is a GET (an upgrade); any other method: 405 with `Allow` (RFC 9110).
      return sendMethodNotAllowed(res, readRequest(res, req, "/stream"), "GET", (_, status) => count(status));
    }
    const lang = pickLanguage(req.getHeader("accept-language") || undefined);
    count(426);
    res.cork(() => {
      res
        .writeStatus(STATUS_LINE[426])
        .writeHeader("upgrade", "websocket")
        .writeHeader("content-type", "application/json")
        .end(errorBody(Code.UPGRADE_REQUIRED, lang));
    });
  });
}
