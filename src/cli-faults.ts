/**
 * What the `exchange` command (src/cli.ts) says when it cannot do what was asked, so that the person
 * at the terminal knows the fix without reading code (docs/API.md section 14):
 *
 *   the server's address    a `--url` / `EXCHANGE_URL` that is not an http(s) URL is refused
 *                           before anything is sent, with the URL written as meant
 *   no answer               the URL, where it came from, the cause (refused, unknown host,
 *                           certificate, TLS on one side only, no answer in time) and the fix
 *                           (`--url`, `EXCHANGE_URL`, `NODE_EXTRA_CA_CERTS`)
 *   unknown names           an unknown pair, currency or stream channel is followed by the ones
 *                           the server has, read from it
 */
import type { ExchangeClient, PairInfo } from "./client/index.ts";

/** The server's address as the command got it, and where it came from. */
export interface Target {
  readonly url: string;
  /** `--url`, `EXCHANGE_URL`, or `the default`. */
  readonly source: string;
}

export const DEFAULT_URL = "http://127.0.0.1:8080";

/**
 * The address from `--url`, else `EXCHANGE_URL`, else the default; a text that is not an http or
 * https URL (`127.0.0.1:8080`, `localhost:8080`, `ws://...`) is answered with the URL as meant.
 */
export function targetOf(flag: string | undefined, env: string | undefined): Target | { error: string } {
  const [url, source] =
    flag !== undefined
      ? [flag, "--url"]
      : env !== undefined && env !== ""
        ? [env, "EXCHANGE_URL"]
        : [DEFAULT_URL, "the default"];
  let scheme: string | undefined;
  try {
    scheme = new URL(url).protocol;
  } catch {}
  if (scheme === "http:" || scheme === "https:") return { url, source };
  const meant = /^wss?:\/\//i.test(url)
    ? url.replace(/^ws/i, "http")
    : `http://${url.replace(/^[a-z][a-z0-9+.-]*:\/\/(?=.)/i, "")}`;
  return {
    error: `${source} ${JSON.stringify(url)} is not an http:// or https:// URL; write it in full: --url ${meant}`,
  };
}

/** Certificate faults of node's TLS (`error.code`): the client does not trust the server's certificate. */
const UNTRUSTED = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
  "CERT_SIGNATURE_FAILURE",
]);

/** The error and its causes, outermost first (fetch's `TypeError: fetch failed` holds the socket's). */
function chain(error: unknown): Error[] {
  const out: Error[] = [];
  for (let e = error; e instanceof Error && out.length < 5; e = e.cause) out.push(e);
  return out;
}

/**
 * Two lines, what went wrong and what to do, when `error` is a failure to get an answer from the
 * server at all (a refusal, a TLS fault, a timeout); undefined for any other error.
 */
export function explainNetworkFault(error: unknown, target: Target): string | undefined {
  const errors = chain(error);
  const codes = errors.map((e) => String((e as { code?: unknown }).code ?? ""));
  const text = errors.map((e) => e.message).join(" | ");
  const has = (...names: string[]) => codes.some((c) => names.includes(c));
  const url = new URL(target.url);
  const tls = url.protocol === "https:";
  const where = `${target.url} (${target.source})`;
  const otherScheme = `--url ${tls ? "http" : "https"}://${url.host}`;
  const elsewhere = "give the server's address with --url or EXCHANGE_URL";
  const say = (what: string, fix: string) => `cannot reach ${where}: ${what}\n  ${fix}`;
  if (has("ECONNREFUSED"))
    return say("connection refused: no server listens there", `start the server, or ${elsewhere}`);
  if (has("ENOTFOUND", "EAI_AGAIN", "EAI_NONAME"))
    return say(`the host ${url.hostname} is not known`, elsewhere);
  if (has("EHOSTUNREACH", "ENETUNREACH", "ETIMEDOUT", "EADDRNOTAVAIL"))
    return say(`no route to ${url.host} (${text})`, elsewhere);
  const cert = errors.find((e) => UNTRUSTED.has(String((e as { code?: unknown }).code)));
  if (cert !== undefined)
    return say(
      `the server's certificate is not trusted (${cert.message})`,
      "trust it with NODE_EXTRA_CA_CERTS=/path/to/cert.pem (the server's certificate, or the CA that issued it)",
    );
  if (has("CERT_HAS_EXPIRED", "CERT_NOT_YET_VALID"))
    return say(`the server's certificate is not valid now (${text})`, "renew the server's certificate");
  if (has("ERR_TLS_CERT_ALTNAME_INVALID"))
    return say(
      `the server's certificate is not for ${url.hostname}`,
      "use the host name (or address) the certificate was issued for in --url",
    );
  if (tls && (has("EPROTO", "ERR_SSL_WRONG_VERSION_NUMBER") || /wrong version number/i.test(text)))
    return say("the server does not speak TLS", `it serves plain http: ${otherScheme}`);
  const closed =
    has("UND_ERR_SOCKET", "ECONNRESET", "UND_ERR_CLOSED") || /socket hang up|other side closed/i.test(text);
  const late =
    has("UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT") ||
    errors.some((e) => e.name === "TimeoutError") ||
    /timed out after/.test(text);
  // A plain server reads a TLS handshake as a request that never ends: no answer, then a close.
  if (tls && (closed || late))
    return say(
      closed ? "the connection ended without an answer" : "no answer in time",
      `a server started without --tls-cert speaks plain http: ${otherScheme}; or the server is busy or paused`,
    );
  // A TLS server drops a plain request at once.
  if (closed)
    return say(
      "the server closed the connection without an answer",
      `a server started with --tls-cert speaks https only: ${otherScheme}`,
    );
  if (late) return say("no answer in time", "the server is busy or paused, or something else listens there");
  // Any other failure of fetch ("fetch failed"): its cause says what (a port fetch refuses, ...).
  const cause = errors.find((e) => e !== errors[0]);
  if (errors[0]?.message === "fetch failed" && cause !== undefined) return say(cause.message, elsewhere);
  return undefined;
}

/** The wire codes of an error body (`{"errors":..., "codes": {field: [CODE]}}`), or none. */
export function codesOf(text: string): string[] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [];
  }
  const codes = (body as { codes?: unknown } | null)?.codes;
  if (codes === null || typeof codes !== "object") return [];
  return Object.values(codes).flatMap((list) => (Array.isArray(list) ? list.map(String) : []));
}

const UNKNOWN_PAIR = new Set(["PAIR_UNKNOWN", "PAIR_UNKNOWN_IN_PATH", "STREAMS_UNKNOWN_PAIR"]);

/**
 * The names the server has, after an answer that refused an unknown one: `pairs: btc_usdt, ...`
 * for an unknown pair, the channels too for an unknown channel, the currencies for an unknown
 * currency. Read from the server (`GET /info`, `GET /asyncapi.json`); undefined when the codes
 * name none of these, or the server does not say.
 */
export async function validNames(
  codes: readonly string[],
  client: ExchangeClient,
): Promise<string | undefined> {
  const channel = codes.includes("STREAMS_UNKNOWN_CHANNEL");
  const pair = channel || codes.some((c) => UNKNOWN_PAIR.has(c));
  const currency = codes.includes("CURRENCY_UNKNOWN");
  if (!pair && !currency) return undefined;
  const lines: string[] = [];
  try {
    const info = await client.info();
    const pairs = info.status === 200 ? (info.body as { pairs: PairInfo[] }).pairs : [];
    if (pair && pairs.length > 0) lines.push(`pairs: ${pairs.map((p) => p.name).join(", ")}`);
    if (currency && pairs.length > 0)
      lines.push(`currencies: ${[...new Set(pairs.flatMap((p) => [p.base, p.quote]))].join(", ")}`);
    if (channel) {
      const res = await fetch(`${client.origin}/1.0/asyncapi.json`, { signal: AbortSignal.timeout(5000) });
      const doc = (await res.json()) as { channels?: unknown };
      const channels =
        doc.channels !== null && typeof doc.channels === "object"
          ? Object.values(doc.channels).flatMap((c: { address?: unknown }) =>
              typeof c?.address === "string" ? [c.address] : [],
            )
          : [];
      if (channels.length > 0) lines.push(`channels: ${channels.join(", ")} (user_ channels signed)`);
    }
  } catch {
    // The hint is a courtesy: the answer itself was printed already.
  }
  return lines.length === 0 ? undefined : lines.join("\n");
}
