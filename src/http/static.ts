/**
 * The web trading page (docs/API.md 10): the files Vite built into `dist/web` (`npm run build:web`),
 * read into memory once at start and served from there. Each file gets its own exact route, so a
 * URL either names a built file or falls through to the 404 of the REST front end: no path is
 * ever joined onto the file system at request time, so no traversal is possible.
 *
 * Vite names assets by content hash (`/assets/index-3f2a1c.js`): those are cached for a year;
 * `index.html` must be revalidated so a new build is picked up. Text files are gzipped for clients
 * that accept it, once, on the first such request (nothing is compressed at start).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import type { TemplatedApp } from "@trufflesuite/uws-js-unofficial";
import { errorBody } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";
import { pickLanguage } from "../errors/language.ts";
import { readRequest, sendMethodNotAllowed } from "../wire/request.ts";

const NO_METRICS = () => {};

/** Where `npm run build:web` writes the page (web/vite.config.ts). */
// From the sources (src/http/) the page is in ../../dist/web; from the build (dist/src/http/) the same
// folder is ../../web.
export const DEFAULT_WEB_DIR = resolve(
  dirname(fileURLToPath(import.meta.url)),
  import.meta.url.endsWith(".ts") ? "../../dist/web" : "../../web",
);

/** Content types by file extension (a Map: the names are file names, never read as code). */
const CONTENT_TYPES: ReadonlyMap<string, string> = new Map([
  [".html", "text/html; charset=utf-8"],
  [".js", "text/javascript; charset=utf-8"],
  [".mjs", "text/javascript; charset=utf-8"],
  [".css", "text/css; charset=utf-8"],
  [".json", "application/json"],
  [".map", "application/json"],
  [".svg", "image/svg+xml"],
  [".png", "image/png"],
  [".ico", "image/x-icon"],
  [".woff2", "font/woff2"],
  [".txt", "text/plain; charset=utf-8"],
]);

/**
 * The page's own rules: scripts, styles and connections to this server only (no CDN can be
 * loaded even by mistake). Charts set inline styles, hence 'unsafe-inline' for styles only.
 */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self' ws: wss:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

export interface StaticFile {
  readonly body: Buffer;
  readonly contentType: string;
  readonly cacheControl: string;
  /** The gzipped body, made on first use; null when gzip does not pay (images, tiny files). */
  gzipped?: Buffer | null;
}

const COMPRESSIBLE = /^(text\/|application\/json|image\/svg)/;
const MIN_GZIP_BYTES = 1024;

function gzipped(file: StaticFile): Buffer | null {
  if (file.gzipped === undefined) {
    const worth = COMPRESSIBLE.test(file.contentType) && file.body.length >= MIN_GZIP_BYTES;
    const z = worth ? gzipSync(file.body, { level: 9 }) : null;
    file.gzipped = z !== null && z.length < file.body.length ? z : null;
  }
  return file.gzipped;
}

/** True when an Accept-Encoding header allows gzip (not refused with q=0). */
export function acceptsGzip(header: string): boolean {
  for (const part of header.toLowerCase().split(",")) {
    const [coding, ...params] = part.trim().split(";");
    if (coding.trim() !== "gzip" && coding.trim() !== "*") continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

/** URL path → file, for every file under `dir` (an empty map when the page is not built). */
export function loadStaticFiles(dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  if (!existsSync(join(dir, "index.html"))) return files;
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) {
        walk(path);
        continue;
      }
      const type = CONTENT_TYPES.get(extname(name).toLowerCase());
      if (type === undefined) continue; // nothing the page needs; not served
      const url = `/${relative(dir, path).split(sep).join("/")}`;
      const hashed = url.startsWith("/assets/");
      files.set(url, {
        body: readFileSync(path),
        contentType: type,
        cacheControl: hashed ? "public, max-age=31536000, immutable" : "no-cache",
      });
    }
  };
  walk(dir);
  const index = files.get("/index.html");
  if (index !== undefined) files.set("/", index);
  return files;
}

/**
 * Registers one GET route per file. Without a built page, `/` answers 404 saying how to build it
 * (the REST interface works either way).
 */
export function mountStatic(app: TemplatedApp, files: ReadonlyMap<string, StaticFile>): void {
  // Another method on a path of the page: 405, the page is GET only (no metrics, like the page).
  for (const url of files.has("/") ? files.keys() : ["/"]) {
    app.any(url, (res, req) => sendMethodNotAllowed(res, readRequest(res, req, url), "GET", NO_METRICS));
  }
  if (!files.has("/")) {
    app.get("/", (res, req) => {
      const lang = pickLanguage(req.getHeader("accept-language") || undefined);
      res.cork(() => {
        res
          .writeStatus("404 Not Found")
          .writeHeader("content-type", "application/json")
          .end(errorBody(Code.UNKNOWN_PATH, lang, "the web page is not built: run npm run build:web"));
      });
    });
    return;
  }
  for (const [url, file] of files) {
    app.get(url, (res, req) => {
      const gz = acceptsGzip(req.getHeader("accept-encoding")) ? gzipped(file) : null;
      res.cork(() => {
        res
          .writeStatus("200 OK")
          .writeHeader("content-type", file.contentType)
          .writeHeader("cache-control", file.cacheControl)
          .writeHeader("x-content-type-options", "nosniff")
          .writeHeader("vary", "Accept-Encoding");
        if (gz !== null) res.writeHeader("content-encoding", "gzip");
        if (file.contentType.startsWith("text/html")) {
          res.writeHeader("content-security-policy", CSP).writeHeader("referrer-policy", "no-referrer");
        }
        res.end(gz ?? file.body);
      });
    });
  }
}
