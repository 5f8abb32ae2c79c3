/**
 * The guarded steps every REST route runs before its handler, in the order docs/API.md 4 ranks the
 * failures: 404 (path, pair) → 413 (body size) → 415 (media type) → 401 (auth, nonce) → 429 (rate)
 * → 400. A request over a limit of the request head (414 request target, 431 header) is answered
 * before all of them: nothing of it is read. The steps are module functions over one
 * `RouteContext` built at mount: nothing is allocated per request here beyond the request record
 * `readRequest` makes.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from "@trufflesuite/uws-js-unofficial";
import type { ApiKey } from "../accounts/users.ts";
import type { PairConfig } from "../config/exchange-config.ts";
import { errorBody } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";
import { isJsonObject, parseJsonBody, unreadableBodyCode } from "../wire/json-body.ts";
import {
  isJsonMediaType,
  MAX_BODY,
  type RequestInfo,
  readBody,
  readRequest,
  send,
  sendError,
} from "../wire/request.ts";
import {
  authenticate,
  authenticateBound,
  consumeNonce,
  nonceFromBody,
  nonceFromQuery,
  unboundRefusal,
} from "./auth.ts";
import type { RouteContext } from "./route-context.ts";
import { type GetRoute, type PostRoute, pattern, type Route, routeLabel } from "./route-types.ts";

// ---------------------------------------------------------------- the steps

/** 200 with a serialised body. */
export function ok(ctx: RouteContext, res: HttpResponse, info: RequestInfo, body: string): void {
  send(res, info, 200, body, ctx.finish);
}

/** 429 step: true when it answered. */
export function rateLimited(ctx: RouteContext, res: HttpResponse, info: RequestInfo, key: string): boolean {
  const limiter = ctx.limiter;
  if (!limiter.enabled) return false;
  const now = Date.now();
  const remaining = limiter.take(key, now);
  // Every answer from here on counted against the limit: it says how much is left (docs/API.md 3).
  info.rateLimit = limiter.limit;
  info.rateRemaining = remaining < 0 ? 0 : remaining;
  if (remaining >= 0) return false;
  send(res, info, 429, errorBody(Code.RATE_LIMITED, info.lang), ctx.finish, limiter.retryAfter(key, now));
  return true;
}

/** 503 while starting or shutting down: true when it answered. */
export function notReady(ctx: RouteContext, res: HttpResponse, info: RequestInfo): boolean {
  const deps = ctx.deps;
  if (deps.accepting() && deps.ready()) return false;
  sendError(res, info, deps.accepting() ? Code.NOT_READY : Code.SHUTTING_DOWN, ctx.finish);
  return true;
}

export function pairFromPath(ctx: RouteContext, req: HttpRequest): PairConfig | undefined {
  return ctx.config.pairsByName.get(req.getParameter(0) ?? "");
}

/** Mounts a signed POST: 413 → 415 → 401 → nonce → 429 → JSON object, then the route's handler. */
export function mountSignedPost(app: TemplatedApp, ctx: RouteContext, route: PostRoute): void {
  const { users, cors, nonceUsed } = ctx.deps;
  const readOnly = ctx.deps.readOnly === true;
  const label = routeLabel(route);
  const handle = route.handler(ctx);
  const fast = route.fast?.(ctx);
  const finish = ctx.finish;
  app.post(pattern(route), (res, req) => {
    const info = readRequest(res, req, label, false, false);
    if (cors.enabled) info.cors = cors.allowed(req);
    if (info.overLimit !== 0) return sendError(res, info, info.overLimit, finish);
    if (info.contentLength > MAX_BODY) return sendError(res, info, Code.BODY_TOO_LARGE, finish);
    if (!isJsonMediaType(info.contentType)) {
      sendError(res, info, Code.UNSUPPORTED_MEDIA_TYPE, finish);
      return;
    }
    readBody(res, info, (raw) => {
      if (raw === null) return sendError(res, info, Code.BODY_TOO_LARGE, finish);
      if (notReady(ctx, res, info)) return;
      // 401 step (src/http/auth.ts, shared with the stream upgrade), bound to the time, the method and
      // the path when X-Timestamp came (docs/API.md 3).
      const key =
        info.timestamp === ""
          ? authenticate(users, info.authorization, info.signature, raw)
          : authenticateBound(users, info.authorization, info.signature, raw, "POST", info, Date.now());
      if (typeof key === "number") {
        const code =
          key === Code.AUTH_SIGNATURE_INVALID && info.timestamp === ""
            ? unboundRefusal(users, info.authorization, info.signature, raw, "POST", route.path)
            : key;
        return sendError(res, info, code, finish);
      }
      // A follower changes nothing: not even the nonce is taken (docs/API.md 4).
      if (readOnly) {
        if (rateLimited(ctx, res, info, key.token)) return;
        return sendError(res, info, Code.FOLLOWER_READ_ONLY, finish);
      }
      if (fast !== undefined) {
        const order = fast.parse(raw);
        if (order !== null) {
          if (rateLimited(ctx, res, info, key.token)) return;
          return fast.handle(res, info, key, order);
        }
      }
      let body: unknown;
      let unreadable = 0;
      try {
        body = parseJsonBody(raw.toString("utf8"));
      } catch (err) {
        unreadable = unreadableBodyCode(err);
      }
      const isObject = isJsonObject(body);
      // Nonce step (401 on replay); a malformed nonce is a 400 reported after the rate limit.
      const nonceErr = isObject ? consumeNonce(users, key, nonceFromBody(body), nonceUsed) : 0;
      if (nonceErr === Code.AUTH_NONCE_REPLAY) return sendError(res, info, nonceErr, finish);
      if (rateLimited(ctx, res, info, key.token)) return;
      if (unreadable !== 0) return sendError(res, info, unreadable, finish);
      if (!isObject) return sendError(res, info, Code.BODY_NOT_OBJECT, finish);
      if (nonceErr !== 0) return sendError(res, info, nonceErr, finish);
      handle(res, info, key, body as Record<string, unknown>);
    });
  });
}

/**
 * Mounts a GET: optional pair (404) → auth as the route says (401, nonce) → 429, then its handler;
 * with a nonce, the handler runs once that nonce is committed (docs/API.md 3).
 */
export function mountGet(app: TemplatedApp, ctx: RouteContext, route: GetRoute): void {
  const { users, cors, nonceUsed, afterNonces } = ctx.deps;
  const readOnly = ctx.deps.readOnly === true;
  const label = routeLabel(route);
  const handle = route.handler(ctx);
  const finish = ctx.finish;
  const limiter = ctx.limiter;
  const withPair = route.path.includes("{pairName}");
  const auth = route.auth;
  app.get(pattern(route), (res, req) => {
    const info = readRequest(res, req, label, limiter.enabled);
    if (cors.enabled) info.cors = cors.allowed(req);
    if (info.overLimit !== 0) return sendError(res, info, info.overLimit, finish);
    let pair: PairConfig | undefined;
    if (withPair) {
      pair = pairFromPath(ctx, req);
      if (pair === undefined) return sendError(res, info, Code.PAIR_UNKNOWN_IN_PATH, finish);
    }
    const param = req.getParameter(withPair ? 1 : 0) ?? "";
    let key: ApiKey | null = null;
    const hasAuth = info.authorization !== undefined || info.signature !== undefined;
    if (auth === "signedQuery" || (auth === "optionalSignedQuery" && hasAuth)) {
      const k =
        info.timestamp === ""
          ? authenticate(users, info.authorization, info.signature, info.query)
          : authenticateBound(users, info.authorization, info.signature, info.query, "GET", info, Date.now());
      if (typeof k === "number") {
        const code =
          k === Code.AUTH_SIGNATURE_INVALID && info.timestamp === ""
            ? unboundRefusal(users, info.authorization, info.signature, info.query, "GET", req.getUrl())
            : k;
        return sendError(res, info, code, finish);
      }
      key = k;
      const nonce = nonceFromQuery(info.query);
      // A follower records no nonce: a signed read carrying one is refused (docs/API.md 4).
      if (readOnly && nonce !== undefined) {
        if (rateLimited(ctx, res, info, key.token)) return;
        return sendError(res, info, Code.FOLLOWER_READ_ONLY, finish);
      }
      const nonceErr = consumeNonce(users, key, nonce, nonceUsed);
      if (nonceErr === Code.AUTH_NONCE_REPLAY) return sendError(res, info, nonceErr, finish);
      if (rateLimited(ctx, res, info, key.token)) return;
      if (nonceErr !== 0) return sendError(res, info, nonceErr, finish);
      if (typeof nonce === "bigint") {
        // Consumed: answered once it is durable, so the same request replayed after a crash is
        // refused (docs/API.md 3). Everything the handler needs was read above.
        const signedKey = key;
        afterNonces(() => {
          try {
            handle(res, info, pair, signedKey, param);
          } catch (err) {
            // Not uWS's handler any more: a failure here is answered, not left hanging.
            sendError(res, info, Code.INTERNAL, finish, undefined, err);
          }
        });
        return;
      }
    } else if (rateLimited(ctx, res, info, info.address ?? "")) return;
    handle(res, info, pair, key, param);
  });
}

/** Mounts any route by its kind. */
export function mountRoute(app: TemplatedApp, ctx: RouteContext, route: Route): void {
  switch (route.kind) {
    case "signedPost":
      mountSignedPost(app, ctx, route);
      break;
    case "get":
      mountGet(app, ctx, route);
      break;
    case "plain":
      app.get(pattern(route), route.handler(ctx));
      break;
  }
}
