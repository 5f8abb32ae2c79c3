/**
 * `session.logon` (docs/API.md 13): the credentials checked against the hello challenge (a wrong,
 * unknown or revoked key answers 401 and closes the connection with 4001), then the session's
 * settings (a bad one answers 400 and the session may log on again).
 */
import { verifySignature } from "../accounts/hmac.ts";
import type { ApiKey, Users } from "../accounts/users.ts";
import { unknownFields } from "../entry/fields.ts";
import type { ErrorEntry } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";
import { MAX_SAFE, readSmallInteger } from "../util/integers.ts";
import { LOGON_FIELDS } from "./methods.ts";
import { HEARTBEAT_DEFAULT_S, HEARTBEAT_MAX_S } from "./session-conn.ts";

/** A logon's outcome: refused (401, then 4001), invalid settings (400), or the session's settings. */
export type Logon =
  | { readonly refused: number }
  | { readonly invalid: ErrorEntry[] }
  | {
      readonly key: ApiKey;
      readonly cancelOnDisconnect: boolean;
      readonly heartbeatMs: number;
      readonly reports: boolean;
      /** docs/API.md 16: replay the executions above this number first; -1: no resume. */
      readonly resumeFrom: number;
      /** The epoch `resumeFrom` belongs to; 0: not given. */
      readonly resumeEpoch: number;
    };

/** Reads a logon's params against the session's `challenge`. */
export function readLogon(users: Users, challenge: string, p: Record<string, unknown>): Logon {
  const token = p.apiToken;
  if (typeof token !== "string" || token === "") return { refused: Code.AUTH_TOKEN_MISSING };
  const key = users.key(token);
  if (key === undefined) return { refused: Code.AUTH_TOKEN_UNKNOWN };
  const sig = p.signature;
  if (typeof sig !== "string" || sig === "") return { refused: Code.AUTH_SIGNATURE_MISSING };
  if (!verifySignature(key.hmac, challenge, sig)) return { refused: Code.AUTH_SIGNATURE_INVALID };
  const errors: ErrorEntry[] = [];
  const hb = p.heartbeatSeconds;
  if (
    hb !== undefined &&
    !(typeof hb === "number" && Number.isInteger(hb) && hb >= 1 && hb <= HEARTBEAT_MAX_S)
  )
    errors.push([Code.SESSION_HEARTBEAT_INVALID]);
  const cod = p.cancelOnDisconnect;
  if (cod !== undefined && typeof cod !== "boolean") errors.push([Code.SESSION_CANCEL_ON_DISCONNECT_INVALID]);
  const rep = p.reports;
  if (rep !== undefined && typeof rep !== "boolean") errors.push([Code.SESSION_REPORTS_INVALID]);
  const from = p.resumeFrom === undefined ? -1 : readSmallInteger(p.resumeFrom, 0, MAX_SAFE);
  if (p.resumeFrom !== undefined && from < 0) errors.push([Code.RESUME_FROM_INVALID]);
  else if (from >= 0 && rep === false) errors.push([Code.RESUME_WITHOUT_REPORTS]);
  const epoch = p.resumeEpoch === undefined ? 0 : readSmallInteger(p.resumeEpoch, 1, MAX_SAFE);
  if (epoch < 0) errors.push([Code.RESUME_EPOCH_INVALID]);
  errors.push(...unknownFields(p, LOGON_FIELDS));
  if (errors.length > 0) return { invalid: errors };
  return {
    key,
    cancelOnDisconnect: cod === true,
    heartbeatMs: (hb === undefined ? HEARTBEAT_DEFAULT_S : (hb as number)) * 1000,
    reports: rep !== false,
    resumeFrom: from,
    resumeEpoch: epoch,
  };
}
