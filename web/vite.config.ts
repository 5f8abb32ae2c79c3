/**
 * Builds the trading page into ../dist/web (`npm run build:web`), which the server reads at start
 * and serves at `/` (src/http/static.ts). Everything is bundled: no CDN, no external fonts.
 * `npx vite --config web/vite.config.ts` serves it with live reload against a server on :8080.
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/",
  logLevel: "warn",
  build: {
    outDir: fileURLToPath(new URL("../dist/web", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    // One chunk is fine for a page this size; the chart library is most of it.
    chunkSizeWarningLimit: 400,
  },
  server: {
    proxy: {
      "/1.0": "http://127.0.0.1:8080",
      "/stream": { target: "ws://127.0.0.1:8080", ws: true },
    },
  },
});
