/**
 * The web page at `/` (docs/API.md 10): the built files served from memory with their content types,
 * 404 for anything that is not a built file, and no way out of the build folder.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { gunzipSync } from "node:zlib";
import { acceptsGzip, loadStaticFiles } from "../../src/http/static.ts";
import { startServer, type TestServer } from "../stream/helpers.ts";
import { rawHttp } from "../support/raw-http.ts";
import { ensureWebBuilt } from "../web/build.ts";

/** GET with the path exactly as written (fetch and http.request would normalise `..`). */
async function rawGet(
  server: TestServer,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; head: string; body: string; bytes: Buffer }> {
  const answer = await rawHttp({ host: "127.0.0.1", port: server.port }, "GET", path, headers);
  return { status: answer.status, head: answer.head.toLowerCase(), body: answer.text, bytes: answer.bytes };
}

describe("the web page", () => {
  let server: TestServer;
  before(async () => {
    ensureWebBuilt();
    server = await startServer(1);
  });
  after(async () => {
    await server.close();
  });

  test("serves index.html at / with its content type and a same-origin-only policy", async () => {
    const res = await fetch(`${server.url}/`, { headers: { connection: "close" } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal(res.headers.get("cache-control"), "no-cache");
    assert.match(res.headers.get("content-security-policy") ?? "", /default-src 'self'/);
    const html = await res.text();
    assert.match(html, /<title>Exchange<\/title>/);
    // Everything the page loads is its own: no absolute URL to another host.
    assert.doesNotMatch(html, /(src|href)="(https?:)?\/\//);
    const same = await fetch(`${server.url}/index.html`, { headers: { connection: "close" } });
    assert.equal(await same.text(), html);
  });

  test("serves every script and stylesheet the page names, with their content types", async () => {
    const html = await (await fetch(`${server.url}/`, { headers: { connection: "close" } })).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((m) => m[1]);
    const js = assets.filter((a) => a.endsWith(".js"));
    const css = assets.filter((a) => a.endsWith(".css"));
    assert.ok(js.length >= 1 && css.length >= 1, `assets in the page: ${assets}`);
    const types: Record<string, RegExp> = {
      ".js": /^text\/javascript/,
      ".css": /^text\/css/,
      ".svg": /^image\/svg\+xml$/,
    };
    for (const asset of assets) {
      const res = await fetch(`${server.url}${asset}`, { headers: { connection: "close" } });
      assert.equal(res.status, 200, asset);
      const ext = asset.slice(asset.lastIndexOf("."));
      assert.match(res.headers.get("content-type") ?? "", types[ext], asset);
      assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      if (asset.startsWith("/assets/")) assert.match(res.headers.get("cache-control") ?? "", /immutable/);
      assert.ok((await res.arrayBuffer()).byteLength > 0, asset);
    }
  });

  test("gzips text files for a client that accepts it, and only then", async () => {
    const html = await (await fetch(`${server.url}/`, { headers: { connection: "close" } })).text();
    const js = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1];
    const plain = await rawGet(server, js);
    assert.doesNotMatch(plain.head, /content-encoding/);
    const zipped = await rawGet(server, js, { "Accept-Encoding": "gzip, deflate, br" });
    assert.equal(zipped.status, 200);
    assert.match(zipped.head, /content-encoding: gzip/);
    assert.match(zipped.head, /vary: accept-encoding/);
    assert.ok(zipped.bytes.length < plain.bytes.length);
    assert.deepEqual(gunzipSync(zipped.bytes), plain.bytes);
    const refused = await rawGet(server, js, { "Accept-Encoding": "gzip;q=0, identity" });
    assert.doesNotMatch(refused.head, /content-encoding/);
    assert.deepEqual(refused.bytes, plain.bytes);
  });

  test("answers 404 in the error format for an unknown asset", async () => {
    for (const path of ["/assets/nope.js", "/assets/", "/nope.html", "/favicon.ico"]) {
      const res = await fetch(`${server.url}${path}`, { headers: { connection: "close" } });
      assert.equal(res.status, 404, path);
      const body = (await res.json()) as { errors: Record<string, string[]> };
      assert.deepEqual(Object.keys(body.errors), ["path"], path);
    }
  });

  test("no path reaches a file outside the build, however it is written", async () => {
    const paths = [
      "/../package.json",
      "/assets/../index.html",
      "/assets/../../package.json",
      "/assets/%2e%2e/%2e%2e/package.json",
      "/assets/..%2f..%2fpackage.json",
      "/%2e%2e/src/server.ts",
      "/web/index.html",
      "/src/main.ts",
      "//etc/passwd",
      "/assets/..\\..\\package.json",
    ];
    for (const path of paths) {
      const r = await rawGet(server, path);
      assert.ok(r.status === 404 || r.status === 400, `${path}: ${r.status}`);
      assert.doesNotMatch(r.body, /"name": "exchange-server"|root:x:0|import /, path);
    }
  });
});

describe("loadStaticFiles", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "exchange-static-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test("reads Accept-Encoding", () => {
    assert.equal(acceptsGzip(""), false);
    assert.equal(acceptsGzip("gzip"), true);
    assert.equal(acceptsGzip("br, GZIP;q=0.5"), true);
    assert.equal(acceptsGzip("*"), true);
    assert.equal(acceptsGzip("gzip;q=0"), false);
    assert.equal(acceptsGzip("deflate, br"), false);
  });

  test("is empty when the page is not built", () => {
    assert.equal(loadStaticFiles(join(dir, "missing")).size, 0);
  });

  test("maps each file of a known type to its URL, / to index.html", async () => {
    await mkdir(join(dir, "assets"));
    await writeFile(join(dir, "index.html"), "<p>hi</p>");
    await writeFile(join(dir, "assets", "a-1.js"), "1");
    await writeFile(join(dir, "assets", "a-1.css"), "b{}");
    await writeFile(join(dir, "notes.md"), "not served");
    await writeFile(join(dir, ".env"), "SECRET=1");
    const files = loadStaticFiles(dir);
    assert.deepEqual([...files.keys()].sort(), ["/", "/assets/a-1.css", "/assets/a-1.js", "/index.html"]);
    assert.equal(files.get("/")!.body.toString(), "<p>hi</p>");
    assert.equal(files.get("/assets/a-1.js")!.contentType, "text/javascript; charset=utf-8");
    assert.equal(files.get("/assets/a-1.css")!.contentType, "text/css; charset=utf-8");
  });
});
