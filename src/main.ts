/**
 * `npm start`: runs the exchange in the foreground on the settings README.md "Running it" lists (flags after `--`
 * win over environment variables, which win over the embedded defaults). SIGINT/SIGTERM stop it
 * gracefully: no new requests, every acknowledged write committed, exit 0.
 *
 * Everything it writes to stdout is one JSON object per line (src/util/log.ts; docs/OPERATIONS.md, "Logs"); a
 * refusal to start is the one plain `config error: ...` line on stderr, and exit 1.
 */

import { startExchange } from "./boot.ts";
import { ConfigError } from "./config/config-error.ts";
import { parseSettings } from "./config/settings.ts";
import { createLog, log, useLog } from "./util/log.ts";

async function main(): Promise<void> {
  const settings = parseSettings(process.argv.slice(2), process.env);
  useLog(createLog(settings.logLevel ?? "info"));
  log().info(
    {
      node: process.version,
      host: settings.host,
      port: settings.port,
      db: settings.dbPath,
      config: settings.configPath,
      tls: settings.tlsCert !== undefined,
      adminApi: settings.adminToken !== undefined,
      logLevel: settings.logLevel ?? "info",
    },
    "starting",
  );
  for (const w of settings.warnings) log().warn({ warning: w }, `config warning: ${w}`);
  // The handlers are in place before anything can read the readiness line: a signal that came
  // between that line and them would kill the server uncleanly, by the default action. One that
  // comes during the start stops the server as soon as it has started.
  let stopping = false;
  const starting = startExchange(settings);
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    const started = performance.now();
    log().info({ signal }, `${signal}: shutting down`);
    starting
      .then((running) => running.close())
      .then(
        () => {
          log().info(
            { ms: Math.round(performance.now() - started) },
            "stopped: every acknowledged write is committed",
          );
          process.exit(process.exitCode ?? 0);
        },
        (err: unknown) => {
          log().error({ err }, "shutdown failed");
          process.exit(1);
        },
      );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  const running = await starting;
  if (stopping) return;
  // Readiness: /health answers ok from now on. The harness and scripts read the address up to the
  // first space of the message; the settings follow it.
  const rate = settings.rateLimit === 0 ? "off" : `${settings.rateLimit}/s per token and address`;
  // Written at every --log-level: it is what scripts and the test harness wait for.
  const readiness = log().isLevelEnabled("info") ? log() : createLog("info");
  readiness.info(
    {
      url: running.url,
      ready: true,
      db: settings.dbPath,
      synchronous: settings.synchronous,
      rateLimit: settings.rateLimit,
      waitStrategy: running.waitStrategy,
      fixPort: running.fixPort,
      replicationPort: running.replicationPort,
      follow: settings.follow === undefined ? undefined : `${settings.follow.host}:${settings.follow.port}`,
    },
    `listening on ${running.url} (database ${settings.dbPath}, synchronous ${settings.synchronous}, ` +
      `rate limit ${rate}, wait strategy ${running.waitStrategy}` +
      `${running.fixPort === null ? "" : `, FIX on ${settings.host}:${running.fixPort}${settings.tlsCert === undefined ? "" : " (TLS)"}`}` +
      `${running.replicationPort === null ? "" : `, replication on ${settings.host}:${running.replicationPort}${settings.tlsCert === undefined ? "" : " (TLS)"}`}` +
      `${settings.follow === undefined ? "" : `, following ${settings.follow.host}:${settings.follow.port} (read-only)`})`,
  );
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) console.error(`config error: ${err.message}`);
  else {
    log().error({ err }, "start failed");
    console.error(err);
  }
  process.exit(1);
});
