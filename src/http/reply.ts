/**
 * How a trade call answers, whatever the transport (src/entry/calls.ts): a 200 with its JSON, one
 * error by code, or a 400 of several errors. A REST route answers over its uWS response
 * (`httpReply`); a trading session over its socket (src/session/).
 */
import type { HttpResponse } from "@trufflesuite/uws-js-unofficial";
import { type ErrorEntry, multiErrorBody } from "../errors/bodies.ts";
import type { Lang } from "../errors/language.ts";
import { type RequestInfo, send, sendError } from "./request.ts";
import { ok, type RouteContext } from "./route.ts";

/** How a call answers: a 200 with its JSON, one error by code, or a 400 of several errors. */
export interface Reply {
  readonly lang: Lang;
  ok(json: string): void;
  error(code: number, extra?: string, cause?: unknown): void;
  invalid(errors: readonly ErrorEntry[]): void;
}

/**
 * The Reply of a REST request. A class, not an object of closures: one is made per request on the
 * create-order hot path, and closures there cost an allocation each (plus, under tsx, a
 * keep-names `defineProperty` each), which showed as extra garbage collection in bench:load.
 */
class HttpReply implements Reply {
  readonly lang: Lang;
  constructor(
    private readonly ctx: RouteContext,
    private readonly res: HttpResponse,
    private readonly info: RequestInfo,
  ) {
    this.lang = info.lang;
  }
  ok(json: string): void {
    ok(this.ctx, this.res, this.info, json);
  }
  error(code: number, extra?: string, cause?: unknown): void {
    sendError(this.res, this.info, code, this.ctx.finish, extra, cause);
  }
  invalid(errors: readonly ErrorEntry[]): void {
    send(this.res, this.info, 400, multiErrorBody(errors, this.info.lang), this.ctx.finish);
  }
}

/** The Reply of a REST request. */
export function httpReply(ctx: RouteContext, res: HttpResponse, info: RequestInfo): Reply {
  return new HttpReply(ctx, res, info);
}
