/** Test certificates made with openssl (Debian's), for the TLS tests of the server and the CLI. */
import { execFileSync } from "node:child_process";

/** A self-signed certificate for 127.0.0.1 (and localhost), valid for a day, and its key. */
export function selfSignedCertificate(certFile: string, keyFile: string): void {
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      keyFile,
      "-out",
      certFile,
      "-days",
      "1",
      "-subj",
      "/CN=exchange-test",
      "-addext",
      "subjectAltName=IP:127.0.0.1,DNS:localhost",
    ],
    { stdio: "ignore" },
  );
}
