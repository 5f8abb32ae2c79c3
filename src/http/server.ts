/**
 * The REST front end: routes under `/1.0`, admin under `/admin`, `/health` and `/metrics`.
 *
 * Each route is one file of routes/ (listed in routes/index.ts); route.ts runs the guarded steps
 * every route shares, in the order CONTRACT 5 ranks the failures: 404 (path, pair) → 413 (body
 * size) → 415 (media type) → 401 (auth, nonce) → 429 (rate) → 400; trade.ts is where the order
 * routes talk to the core. This file mounts them, then the admin calls, the CORS preflights, 405
 * for a known path with another method and 404 for the rest.
 */
import type { TemplatedApp } from "@trufflesuite/uws-js-unofficial";
import { Code } from "../errors/catalogue.ts";
import { DESCRIBED_SESSION_CALLS } from "../session/methods.ts";
import { buildAsyncApi } from "../documents/asyncapi.ts";
import { buildOpenApi } from "../documents/openapi.ts";
import { readRequest, sendError, sendMethodNotAllowed } from "./request.ts";
import {
  type FrontEndDeps,
  mountRoute,
  PREFIX,
  pairFromPath,
  pattern,
  type Route,
  type RouteContext,
  routeContext,
} from "./route.ts";
import { ROUTES } from "../documents/openapi-routes.ts";
import { REST_ROUTES } from "./route-list.ts";

export type { FrontEndDeps, UserReads } from "./route.ts";
export { orderRowView, tradeRowView } from "../entry/row-views.ts";
export { validateOrder } from "../entry/validate.ts";

/** Mounts every REST route; returns their context (the trading sessions share it, src/session/). */
export function mountRoutes(app: TemplatedApp, deps: FrontEndDeps): RouteContext {
  // The OpenAPI and AsyncAPI documents are built once from the config (src/documents/openapi.ts,
  // asyncapi.ts) and served by routes/openapi-json.ts and routes/asyncapi-json.ts.
  const ctx = routeContext(
    deps,
    JSON.stringify(buildOpenApi(deps.config, ROUTES)),
    JSON.stringify(buildAsyncApi(deps.config, DESCRIBED_SESSION_CALLS)),
  );
  const finish = ctx.finish;

  for (const route of REST_ROUTES) mountRoute(app, ctx, route);

  if (deps.admin !== null) deps.admin.mount(app, finish);
  else
    app.any("/admin/*", (res, req) => {
      const info = readRequest(res, req, "/admin");
      sendError(res, info, info.overLimit !== 0 ? info.overLimit : Code.UNKNOWN_PATH, finish);
    });

  // ---------------------------------------------------------------- 404 / 405

  // CORS preflights (CONTRACT 10), answered for any path under the REST base.
  app.options(`${PREFIX}/*`, (res, req) => deps.cors.preflight(res, req));

  // A known path with a method it does not serve: 405 with `Allow` (RFC 9110), 404 first for an
  // unknown pair. The route table is the one source of each path's methods; under the REST base
  // OPTIONS is answered too (the CORS preflight).
  for (const [path, allow] of allowedMethods(REST_ROUTES)) {
    const route = path.startsWith(`${PREFIX}/`) ? path.slice(PREFIX.length) : path;
    const withPair = route.includes(":pairName");
    const preflight = path.startsWith(`${PREFIX}/`);
    app.any(path, (res, req) => {
      if (preflight && req.getMethod() === "options") return deps.cors.preflight(res, req);
      const info = readRequest(res, req, route);
      if (info.overLimit === 0 && withPair && pairFromPath(ctx, req) === undefined) {
        return sendError(res, info, Code.PAIR_UNKNOWN_IN_PATH, finish);
      }
      sendMethodNotAllowed(res, info, allow, finish);
    });
  }
  app.any("/*", (res, req) => {
    const info = readRequest(res, req, "unknown");
    if (info.overLimit !== 0) return sendError(res, info, info.overLimit, finish);
    sendError(res, info, Code.UNKNOWN_PATH, finish, req.getUrl());
  });
  return ctx;
}

/**
 * The `Allow` header of each uWS pattern of `routes`: its methods in upper case, and OPTIONS under
 * the REST base (the CORS preflight, CONTRACT 10).
 */
export function allowedMethods(routes: readonly Route[]): Map<string, string> {
  const methods = new Map<string, Set<string>>();
  for (const r of routes) {
    const p = pattern(r);
    let set = methods.get(p);
    if (set === undefined) {
      set = new Set();
      methods.set(p, set);
    }
    set.add(r.method.toUpperCase());
    if (p.startsWith(`${PREFIX}/`)) set.add("OPTIONS");
  }
  return new Map([...methods].map(([p, set]) => [p, [...set].join(", ")]));
}
