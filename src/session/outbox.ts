/**
 * The sessions' outgoing queue (docs/API.md 13): each call takes a slot in its connection's outbox
 * when it arrives and its answer fills the slot; frames leave in arrival order, once per event-loop
 * turn per connection, in one uWS cork. An execution report goes in behind every call received
 * before it, so the answer to a call precedes the reports of what it changed. Above the
 * slow-consumer bound (docs/API.md 12.1) the connection is closed with 1008.
 */
import { CLOSE_SLOW_CONSUMER } from "../wire/close-codes.ts";
import { TurnFlush, written } from "../wire/out-queue.ts";
import { type SessionConn, type Slot, type Socket, STATE_ENDED } from "./session-conn.ts";

export class Outbox {
  private readonly turn = new TurnFlush<Socket>((ws) => {
    const c = ws.getUserData();
    if (c.state !== STATE_ENDED) this.flushOne(ws, c);
  });

  constructor(
    /** Unsent bytes above which a connection is closed with 1008. */
    private readonly maxBackpressureBytes: number,
    /** Ends a session (SessionHub.end). */
    private readonly end: (ws: Socket, code: number, reason: string) => void,
  ) {}

  /** A frame to send: queued, and written this turn. */
  push(ws: Socket, c: SessionConn, slot: Slot): void {
    c.out.push(slot);
    if (slot.answer) c.inFlight++;
    this.markDirty(ws, c);
  }

  /** An empty slot (a call's answer, a resume's replay): written once it is filled. */
  pushSlot(c: SessionConn, slot: Slot): void {
    c.out.push(slot);
    if (slot.answer) c.inFlight++;
  }

  /** A frame that goes out in this turn's write ahead of the waiting ones. */
  pushFront(ws: Socket, c: SessionConn, text: string): void {
    c.out.splice(c.head, 0, { text, answer: false });
    this.markDirty(ws, c);
  }

  /** A call's answer text is in its slot: the connection has something to write this turn. */
  filled(ws: Socket, c: SessionConn): void {
    if (c.state !== STATE_ENDED) this.markDirty(ws, c);
  }

  private markDirty(ws: Socket, c: SessionConn): void {
    this.turn.mark(ws, c);
  }

  /**
   * Writes every ready frame at the head of the outbox in one cork, then checks the bound. A slot
   * with frames following its text (a resume's replay) writes them while the socket holds less than
   * half the bound, and stays at the head until all are out (the rest goes on at `drain`).
   */
  flushOne(ws: Socket, c: SessionConn): void {
    const out = c.out;
    let i = c.head;
    if (i >= out.length || out[i].text === null) return;
    const half = this.maxBackpressureBytes / 2;
    try {
      ws.cork(() => {
        while (i < out.length && out[i].text !== null) {
          const s = out[i];
          const more = s.more;
          if (more === undefined) {
            ws.send(s.text!, false, false);
            if (s.answer) c.inFlight--;
            i++;
            continue;
          }
          let sent = s.sent ?? 0;
          while (sent < more.length && ws.getBufferedAmount() < half) ws.send(more[sent++], false, false);
          s.sent = sent;
          if (sent < more.length) break;
          i++;
        }
      });
    } catch {
      // The socket closed under us; `close` ends the session.
      return;
    }
    written(c, i);
    if (ws.getBufferedAmount() > this.maxBackpressureBytes) {
      this.end(ws, CLOSE_SLOW_CONSUMER, "slow consumer: unsent buffer over the limit");
    }
  }
}
