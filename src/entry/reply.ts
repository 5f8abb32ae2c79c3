/**
 * How the order-entry layer answers a call, whatever the front end: the call's result as a record
 * (an order view, a list of ids, a batch of items), one error by its catalogue code, or several
 * errors of a validation. A front end implements it for its transport and renders the record its
 * way: the REST routes and the trading sessions as JSON (src/wire/render.ts), each over its own
 * socket (src/http/http-reply.ts, src/session/slot-reply.ts).
 */
import type { ErrorEntry } from "../errors/bodies.ts";

export interface Reply<T> {
  ok(result: T): void;
  /** One error by code; `extra` is appended to its message, `cause` is logged with a 500. */
  error(code: number, extra?: string, cause?: unknown): void;
  /** A 400 of several errors (unknown fields reported under their own names). */
  invalid(errors: readonly ErrorEntry[]): void;
}
