/** The `/session` route on the uWS app: the WebSocket upgrade, and 426 for anything that is not one. */
import type { TemplatedApp } from "@trufflesuite/uws-js-unofficial";
import { errorBody, errorStatus } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";
import { pickLanguage } from "../errors/language.ts";
import { readRequest, STATUS_LINE, sendMethodNotAllowed } from "../wire/request.ts";
import { type SessionConn, type SessionDeps, UWS_MESSAGE_CEILING } from "./session-conn.ts";
import type { SessionHub } from "./session-hub.ts";

/** Registers `/session`: the WebSocket route, and 426 for anything that is not an upgrade. */
export function mountSession(app: TemplatedApp, hub: SessionHub, deps: SessionDeps): void {
  const metrics = deps.ctx.metrics;
  app.ws<SessionConn>("/session", {
    // Heartbeats are the session's own (docs/API.md 13), not uWS's idle timeout.
    idleTimeout: 0,
    sendPingsAutomatically: false,
    // Never let uWS skip a message: the session closes a slow consumer (1008) instead.
    maxBackpressure: 0,
    maxPayloadLength: UWS_MESSAGE_CEILING,
    upgrade: (res, req, context) => {
      const lang = pickLanguage(req.getHeader("accept-language") || undefined);
      const wsKey = req.getHeader("sec-websocket-key");
      const wsProtocol = req.getHeader("sec-websocket-protocol");
      const wsExtensions = req.getHeader("sec-websocket-extensions");
      const refused = !deps.accepting() ? Code.SHUTTING_DOWN : !deps.ready() ? Code.NOT_READY : 0;
      if (refused !== 0) {
        const status = errorStatus(refused);
        metrics.request("/session", status);
        res.cork(() => {
          res
            .writeStatus(STATUS_LINE[status] ?? `${status} Error`)
            .writeHeader("content-type", "application/json")
            .end(errorBody(refused, lang));
        });
        return;
      }
      metrics.request("/session", 101);
      res.upgrade(hub.newConn(lang), wsKey, wsProtocol, wsExtensions, context);
    },
    open: (ws) => hub.open(ws),
    message: (ws, data, isBinary) => hub.message(ws, data, isBinary),
    pong: (ws) => hub.heard(ws),
    drain: (ws) => hub.drained(ws),
    close: (ws) => hub.ended(ws),
  });
  app.any("/session", (res, req) => {
    if (req.getMethod() !== "get") {
      return sendMethodNotAllowed(res, readRequest(res, req, "/session"), "GET", (_, status) =>
        metrics.request("/session", status),
      );
    }
    const lang = pickLanguage(req.getHeader("accept-language") || undefined);
    metrics.request("/session", 426);
    res.cork(() => {
      res
        .writeStatus(STATUS_LINE[426])
        .writeHeader("upgrade", "websocket")
        .writeHeader("content-type", "application/json")
        .end(errorBody(Code.UPGRADE_REQUIRED, lang));
    });
  });
}
