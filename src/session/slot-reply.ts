/**
 * The order entry `Reply` (src/entry/reply.ts) of one session call: its answer frame, with the
 * result rendered as JSON (src/wire/render.ts) or the error body, into the call's slot of the
 * outbox, once.
 */
import type { Reply } from "../entry/reply.ts";
import { type ErrorEntry, errorBody, errorStatus, multiErrorBody } from "../errors/bodies.ts";
import type { Render } from "../wire/render.ts";
import { internalErrorBody } from "../wire/request.ts";
import type { Outbox } from "./outbox.ts";
import type { SessionConn, Slot, Socket } from "./session-conn.ts";

/** `{"id":..,"status":..,"errors":..,"codes":..}` from an error body. */
export function answerText(id: string, status: number, body: string): string {
  return `{"id":${id},"status":${status},${body.slice(1)}`;
}

/** A class, not an object of closures, as the REST one: one is made per call on the hot path. */
export class SlotReply<T> implements Reply<T> {
  constructor(
    private readonly outbox: Outbox,
    private readonly ws: Socket,
    private readonly c: SessionConn,
    private readonly id: string,
    private readonly slot: Slot,
    private readonly render: Render<T>,
  ) {}
  private fill(text: string): void {
    if (this.slot.text !== null) return;
    this.slot.text = text;
    this.outbox.filled(this.ws, this.c);
  }
  ok(result: T): void {
    this.fill(`{"id":${this.id},"status":200,"result":${this.render(result, this.c.lang)}}`);
  }
  error(code: number, extra?: string, cause?: unknown): void {
    const status = errorStatus(code);
    const lang = this.c.lang;
    const body =
      status === 500 ? internalErrorBody(code, lang, "/session", extra, cause) : errorBody(code, lang, extra);
    this.fill(answerText(this.id, status, body));
  }
  invalid(errors: readonly ErrorEntry[]): void {
    this.fill(answerText(this.id, 400, multiErrorBody(errors, this.c.lang)));
  }
}
