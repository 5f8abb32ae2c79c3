/**
 * How a trade call answers, whatever the transport (src/http/calls.ts): a 200 with its JSON, one
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

/** The Reply of a REST request. */
export function httpReply(ctx: RouteContext, res: HttpResponse, info: RequestInfo): Reply {
  return {
    lang: info.lang,
    ok: (json) => ok(ctx, res, info, json),
    error: (code, extra, cause) => sendError(res, info, code, ctx.finish, extra, cause),
    invalid: (errors) => send(res, info, 400, multiErrorBody(errors, info.lang), ctx.finish),
  };
}
