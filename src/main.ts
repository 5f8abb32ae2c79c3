/**
 * `npm start`: runs the exchange in the foreground on the settings of CONTRACT 1 (flags after `--`
 * win over environment variables, which win over the embedded defaults). SIGINT/SIGTERM stop it
 * gracefully: no new requests, every acknowledged write committed, exit 0.
 */

import { startExchange } from "./boot.ts";
import { ConfigError, parseSettings } from "./config.ts";

async function main(): Promise<void> {
  const settings = parseSettings(process.argv.slice(2), process.env);
  for (const w of settings.warnings) console.warn(`warning: ${w}`);
  const running = await startExchange(settings);
  // The harness and scripts read the address up to the first space; the settings follow it.
  const rate = settings.rateLimit === 0 ? "off" : `${settings.rateLimit}/s per token and address`;
  console.log(
    `listening on ${running.url} (database ${settings.dbPath}, synchronous ${settings.synchronous}, ` +
      `rate limit ${rate}, wait strategy ${running.waitStrategy})`,
  );
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: shutting down`);
    running.close().then(
      () => process.exit(process.exitCode ?? 0),
      (err: unknown) => {
        console.error("shutdown failed:", err);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? `config error: ${err.message}` : err);
  process.exit(1);
});
