/**
 * The REST front end: routes under `/1.0`, admin under `/admin`, `/health` and `/metrics`.
 *
 * Each route is one file of routes/ (listed in route-list.ts, described by route-types.ts);
 * route-steps.ts runs the guarded steps every route shares, in the order docs/API.md 4 ranks the
 * failures: 404 (path, pair) → 413 (body size) → 415 (media type) → 401 (auth, nonce) → 429 (rate)
 * → 400; the order routes are adapters over order entry (src/entry/calls.ts). This file mounts
 * them, then the admin calls, the CORS preflights, 405 for a known path with another method and 404
 * for the rest.
 */
import type { TemplatedApp } from "@trufflesuite/uws-js-unofficial";
import type { EntryContext } from "../entry/context.ts";
import { Code } from "../errors/catalogue.ts";
import { readRequest, sendError, sendMethodNotAllowed } from "../wire/request.ts";
import { type FrontEndDeps, type RouteContext, routeContext, type ServedDocuments } from "./route-context.ts";
import { REST_ROUTES } from "./route-list.ts";
import { mountRoute, pairFromPath } from "./route-steps.ts";
import { PREFIX, pattern, type Route } from "./route-types.ts";

/**
 * Mounts every REST route over the order entry context `entry`; `docs` are the OpenAPI and AsyncAPI
 * documents (built by boot.ts from src/documents/) that routes/openapi-json.ts and asyncapi-json.ts
 * serve. Returns the routes' context.
 */
export function mountRoutes(
  app: TemplatedApp,
  entry: EntryContext,
  deps: FrontEndDeps,
  docs: ServedDocuments,
): RouteContext {
  const ctx = routeContext(entry, deps, docs);
  const finish = ctx.finish;

  for (const route of REST_ROUTES) mountRoute(app, ctx, route);

  if (deps.admin !== null) deps.admin.mount(app, finish);
  else
    app.any("/admin/*", (res, req) => {
      const info = readRequest(res, req, "/admin");
      sendError(res, info, info.overLimit !== 0 ? info.overLimit : Code.UNKNOWN_PATH, finish);
    });

  // ---------------------------------------------------------------- 404 / 405

  // CORS preflights (docs/API.md 10), answered for any path under the REST base.
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
 * the REST base (the CORS preflight, docs/API.md 10).
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
