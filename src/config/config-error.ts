/**
 * The one error of a refused start: a bad flag, environment variable or config file entry, or a
 * resource the settings name that cannot be used (the port, the database lock, the TLS files).
 * main.ts prints its message as the single `config error: ...` line and exits 1 (README.md,
 * "Running it"), so the message must name the bad entry well enough to fix it without the code.
 */
export class ConfigError extends Error {
  override name = "ConfigError";
}
