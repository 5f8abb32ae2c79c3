/**
 * The stream's keep-alive: one timer over the open connections that pings the quiet ones and
 * closes the silent ones. The WebSocket route (src/stream/stream-route.ts) tells it of each connection's
 * open and close, and records in the connection's state when the client was last heard.
 */
import type { WebSocket } from "@trufflesuite/uws-js-unofficial";
import { CLOSE_SILENT } from "../wire/close-codes.ts";
import type { Conn } from "./stream-conn.ts";

type Socket = WebSocket<Conn>;

/**
 * The stream's keep-alive (docs/API.md 12.2): a ping after half the idle timeout without a frame
 * from the client, and a close with CLOSE_SILENT (a close frame, which uWS's own idle timeout does not
 * send) after the whole of it. One sweep for every connection, at most an eighth of the timeout
 * late; no timer while no connection is open.
 */
export class KeepAlive {
  private readonly conns = new Set<Socket>();
  private timer: NodeJS.Timeout | null = null;
  constructor(private readonly idleMs: number) {}

  open(ws: Socket): void {
    if (this.idleMs === 0) return;
    const c = ws.getUserData();
    c.heardMs = Date.now();
    this.conns.add(ws);
    if (this.timer === null) {
      this.timer = setInterval(this.sweep, Math.max(100, this.idleMs / 8));
      this.timer.unref();
    }
  }

  close(ws: Socket): void {
    if (!this.conns.delete(ws) || this.conns.size > 0 || this.timer === null) return;
    clearInterval(this.timer);
    this.timer = null;
  }

  private readonly sweep = (): void => {
    const now = Date.now();
    for (const ws of this.conns) {
      const c = ws.getUserData();
      const silent = now - c.heardMs;
      try {
        if (silent >= this.idleMs) ws.end(CLOSE_SILENT, "idle timeout: nothing from the client");
        else if (silent * 2 >= this.idleMs && !c.pinged) {
          c.pinged = true;
          ws.ping();
        }
      } catch {
        // Closed meanwhile: its close handler forgets it.
      }
    }
  };
}
