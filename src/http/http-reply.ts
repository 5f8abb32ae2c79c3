/**
 * The order entry `Reply` (src/entry/reply.ts) of a REST request: the result rendered as JSON
 * (src/wire/render.ts) in a 200, one error by code, or a 400 of several errors, over the request's
 * uWS response.
 */
import type { HttpResponse } from "@trufflesuite/uws-js-unofficial";
import type { Reply } from "../entry/reply.ts";
import { type ErrorEntry, multiErrorBody } from "../errors/bodies.ts";
import type { Render } from "../wire/render.ts";
import { type RequestInfo, send, sendError } from "../wire/request.ts";
import type { RouteContext } from "./route-context.ts";

/**
 * A class, not an object of closures: one is made per request on the create-order hot path, and
 * closures there cost an allocation each (plus, under tsx, a keep-names `defineProperty` each),
 * which showed as extra garbage collection in bench:load.
 */
class HttpReply<T> implements Reply<T> {
  constructor(
    private readonly ctx: RouteContext,
    private readonly res: HttpResponse,
    private readonly info: RequestInfo,
    private readonly render: Render<T>,
  ) {}
  ok(result: T): void {
    send(this.res, this.info, 200, this.render(result, this.info.lang), this.ctx.finish);
  }
  error(code: number, extra?: string, cause?: unknown): void {
    sendError(this.res, this.info, code, this.ctx.finish, extra, cause);
  }
  invalid(errors: readonly ErrorEntry[]): void {
    send(this.res, this.info, 400, multiErrorBody(errors, this.info.lang), this.ctx.finish);
  }
}

/** The Reply of a REST request whose result `render` writes. */
export function httpReply<T>(
  ctx: RouteContext,
  res: HttpResponse,
  info: RequestInfo,
  render: Render<T>,
): Reply<T> {
  return new HttpReply(ctx, res, info, render);
}
