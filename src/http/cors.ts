/**
 * CORS for the REST base (docs/API.md 10). Only origins listed in `--cors-origin` / `CORS_ORIGIN` get
 * `Access-Control-Allow-Origin`; with none listed (the default) no request reads its `Origin`
 * header and nothing changes on the hot path. The server's own page is same-origin and needs none.
 *
 * Requests carry no cookies (authentication is the signed headers), so credentials are never
 * allowed and `*` is safe to offer.
 */
import type { HttpRequest, HttpResponse } from "@trufflesuite/uws-js-unofficial";

const ALLOW_METHODS = "GET, POST, OPTIONS";
/** Headers a signed call sends beyond the CORS-safelisted ones. */
const ALLOW_HEADERS = "Authorization, X-Signature, X-Timestamp, X-Recv-Window, Content-Type, Accept-Language";
const MAX_AGE_SECONDS = "600";

export class CorsPolicy {
  readonly enabled: boolean;
  readonly #any: boolean;
  readonly #origins: ReadonlySet<string>;

  constructor(origins: readonly string[]) {
    this.#any = origins.includes("*");
    this.#origins = new Set(origins.map((o) => o.toLowerCase()));
    this.enabled = origins.length > 0;
  }

  /**
   * The `Access-Control-Allow-Origin` value for a request, or undefined (no header). Read while
   * the request lives.
   */
  allowed(req: HttpRequest): string | undefined {
    if (!this.enabled) return undefined;
    const origin = req.getHeader("origin");
    if (origin === "") return undefined;
    if (this.#any) return "*";
    return this.#origins.has(origin.toLowerCase()) ? origin : undefined;
  }

  /**
   * Answers an `OPTIONS` preflight: 204 with the allowed methods and headers for an allowed
   * origin; a plain 204 without CORS headers otherwise (the browser then refuses the call).
   */
  preflight(res: HttpResponse, req: HttpRequest): void {
    const allow = this.allowed(req);
    res.cork(() => {
      res.writeStatus("204 No Content");
      if (allow !== undefined) {
        res
          .writeHeader("access-control-allow-origin", allow)
          .writeHeader("access-control-allow-methods", ALLOW_METHODS)
          .writeHeader("access-control-allow-headers", ALLOW_HEADERS)
          .writeHeader("access-control-max-age", MAX_AGE_SECONDS);
      }
      if (this.enabled && !this.#any) res.writeHeader("vary", "Origin");
      res.end();
    });
  }
}
