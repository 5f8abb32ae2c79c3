/**
 * The edge's map from request id to the response waiting for it (src/core/command.ts). A trade route
 * registers what to do with the result, passes the id into the core with the command, and the
 * core reports the result under that id (ResultSink) once it has committed. Nothing below the
 * edge holds an HTTP closure.
 *
 * An id is dropped when the core refuses the command at once (the route answers the refusal
 * itself) or when its result arrives; a result for an id no longer here is ignored.
 */
import type { ResultSink } from "../core/command.ts";
import type { QuoteResult } from "../core/quotes.ts";
import type { OrderView } from "../core/views.ts";
import { IdTable } from "../util/id-table.ts";

/** `sibling`: create-oco's stop leg (docs/API.md 18). */
export type OrderAnswer = (code: number, order: OrderView | null, sibling?: OrderView | null) => void;
export type CancelAnswer = (code: number) => void;
export type CancelAllAnswer = (cancelled: number[]) => void;
export type QuoteAnswer = (code: number, result: QuoteResult | null) => void;

export class Answers implements ResultSink {
  /** Ids start at 1: 0 is NO_REQUEST. */
  private nextId = 1;
  private readonly orders = new IdTable<OrderAnswer>();
  private readonly cancels = new IdTable<CancelAnswer>();
  private readonly cancelAlls = new IdTable<CancelAllAnswer>();
  private readonly quotes = new IdTable<QuoteAnswer>();

  /** Registers a create-order or amend-order answer; returns its request id. */
  order(answer: OrderAnswer): number {
    const id = this.nextId++;
    this.orders.set(id, answer);
    return id;
  }

  cancel(answer: CancelAnswer): number {
    const id = this.nextId++;
    this.cancels.set(id, answer);
    return id;
  }

  cancelAll(answer: CancelAllAnswer): number {
    const id = this.nextId++;
    this.cancelAlls.set(id, answer);
    return id;
  }

  quote(answer: QuoteAnswer): number {
    const id = this.nextId++;
    this.quotes.set(id, answer);
    return id;
  }

  /** The core refused the request at once: nothing will come under `id`. */
  drop(id: number): void {
    if (!this.orders.delete(id) && !this.cancels.delete(id) && !this.cancelAlls.delete(id))
      this.quotes.delete(id);
  }

  orderResult(request: number, code: number, order: OrderView | null, sibling?: OrderView | null): void {
    const answer = this.orders.take(request);
    if (answer === undefined) return;
    answer(code, order, sibling);
  }

  cancelResult(request: number, code: number): void {
    const answer = this.cancels.take(request);
    if (answer === undefined) return;
    answer(code);
  }

  cancelAllResult(request: number, cancelled: number[]): void {
    const answer = this.cancelAlls.take(request);
    if (answer === undefined) return;
    answer(cancelled);
  }

  quoteResult(request: number, code: number, result: QuoteResult | null): void {
    const answer = this.quotes.take(request);
    if (answer === undefined) return;
    answer(code, result);
  }
}
