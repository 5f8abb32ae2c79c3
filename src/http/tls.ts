/**
 * TLS (docs/OPERATIONS.md "TLS"): with `--tls-cert` and `--tls-key` the one uWebSockets.js app the
 * server builds is an `SSLApp`, so every route and WebSocket endpoint mounted on it (REST, admin,
 * `/stream`, `/session`, the web page) speaks https and wss only; without them a plain `App`.
 *
 * uWebSockets.js reads the files itself and, when it cannot, says only "App construction failed".
 * The files are therefore read and checked here first, at start, so that a missing, unreadable or
 * mismatched file is one clear `config error:` line naming the file and the reason.
 */
import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import uws from "@trufflesuite/uws-js-unofficial";
import { ConfigError } from "../config/config-error.ts";

export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** The certificate's subject and end of validity, for the start-up log. */
  readonly subject: string;
  readonly validTo: Date;
}

/**
 * Checks the certificate and key files named by the settings: both readable, a PEM certificate, a
 * PEM private key without a passphrase, and the key the certificate's. Undefined when TLS is off.
 */
export function loadTls(settings: { tlsCert?: string; tlsKey?: string }): TlsFiles | undefined {
  const { tlsCert, tlsKey } = settings;
  if (tlsCert === undefined && tlsKey === undefined) return undefined;
  if (tlsCert === undefined || tlsKey === undefined)
    throw new ConfigError("--tls-cert and --tls-key (TLS_CERT, TLS_KEY) go together: give both or neither");
  const certPem = readTlsFile("--tls-cert", tlsCert);
  const keyPem = readTlsFile("--tls-key", tlsKey);
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (err) {
    throw new ConfigError(`--tls-cert ${tlsCert}: not a PEM certificate (${(err as Error).message})`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch (err) {
    throw new ConfigError(
      `--tls-key ${tlsKey}: not an unencrypted PEM private key (${(err as Error).message})`,
    );
  }
  if (!cert.checkPrivateKey(key))
    throw new ConfigError(`--tls-key ${tlsKey}: not the private key of the certificate in ${tlsCert}`);
  return { certFile: tlsCert, keyFile: tlsKey, subject: cert.subject, validTo: new Date(cert.validTo) };
}

function readTlsFile(flag: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why =
      e.code === "ENOENT"
        ? "no such file"
        : e.code === "EACCES" || e.code === "EPERM"
          ? "permission denied"
          : e.code === "EISDIR"
            ? "is a folder, not a file"
            : e.message;
    throw new ConfigError(`${flag} ${file}: cannot read: ${why}`);
  }
}

/** The server's one app: an SSLApp over the checked files, or a plain App. */
export function createApp(tls: TlsFiles | undefined): uws.TemplatedApp {
  if (tls === undefined) return uws.App();
  if (typeof uws.SSLApp !== "function")
    throw new ConfigError("TLS: this uWebSockets.js build has no SSLApp (the pure-JS fallback?)");
  try {
    return uws.SSLApp({ cert_file_name: tls.certFile, key_file_name: tls.keyFile });
  } catch (err) {
    throw new ConfigError(
      `TLS with --tls-cert ${tls.certFile} and --tls-key ${tls.keyFile}: uWebSockets.js refused them (${(err as Error).message})`,
    );
  }
}
