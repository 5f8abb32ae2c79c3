/**
 * The FIX Logon (docs/API.md 17): the first message, signed with the API key's secret over
 * `SendingTime<SOH>A<SOH>MsgSeqNum<SOH>SenderCompID<SOH>TargetCompID`. Wrong, unknown or revoked
 * credentials, or a stale SendingTime, are refused with `AUTH: <message>`; any other invalid field
 * with a Text naming its tag; a resume (docs/API.md 16) is judged last.
 */
import { verifySignature } from "../accounts/hmac.ts";
import type { ApiKey, Users } from "../accounts/users.ts";
import type { EntryContext } from "../entry/context.ts";
import { resumeCut } from "../entry/resume.ts";
import { errorDetail, errorMessage, errorName } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";
import { type FixMessage, parseFixTime } from "./codec.ts";
import { DROP_COPY, HEARTBEAT_MAX_S, HEARTBEAT_MIN_S, LOGON_CLOCK_SKEW_MS } from "./fix-conn.ts";

export type FixLogon =
  | { readonly peerCompId: string; readonly refused: string }
  | {
      readonly peerCompId: string;
      readonly key: ApiKey;
      readonly heartBtInt: number;
      readonly cancelOnDisconnect: boolean;
      readonly dropCopy: boolean;
      /** Replay the executions above this number first; -1: no resume. */
      readonly resumeFrom: number;
      /** The resume's cut (the user's last number given at the logon). */
      readonly cut: number;
    };

const UINT = /^\d{1,16}$/;

/** `AUTH: <message>` of an authentication code, in English. */
function auth(code: number): string {
  return `AUTH: ${errorMessage(code, "en")}`;
}

/** `<CODE>: <message>` of a catalogue code, in English (docs/API.md 17). */
export function codeText(code: number, extra?: string): string {
  const message = errorMessage(code, "en");
  return `${errorName(code)}: ${extra === undefined ? message : `${message} (${errorDetail(code, "en", extra)})`}`;
}

export function readFixLogon(
  users: Users,
  compId: string,
  ctx: EntryContext,
  m: FixMessage,
  type: string,
  now: number,
): FixLogon {
  const peerCompId = m.get(49) ?? "";
  if (type !== "A") return { peerCompId, refused: "the first message must be a Logon (35=A)" };
  if (peerCompId === "") return { peerCompId, refused: "SenderCompID(49) is required" };
  if (m.get(56) !== compId) return { peerCompId, refused: `TargetCompID(56) must be ${compId}` };
  const token = m.get(553);
  if (token === undefined || token === "") return { peerCompId, refused: auth(Code.AUTH_TOKEN_MISSING) };
  const key = users.key(token);
  if (key === undefined) return { peerCompId, refused: auth(Code.AUTH_TOKEN_UNKNOWN) };
  const sig = m.get(96);
  if (sig === undefined || sig === "") return { peerCompId, refused: auth(Code.AUTH_SIGNATURE_MISSING) };
  const seqText = m.get(34) ?? "";
  const time = m.get(52) ?? "";
  const signed = `${time}\x01A\x01${seqText}\x01${peerCompId}\x01${compId}`;
  if (m.get(95) !== String(Buffer.byteLength(sig)) || !verifySignature(key.hmac, signed, sig))
    return { peerCompId, refused: auth(Code.AUTH_SIGNATURE_INVALID) };
  const sent = parseFixTime(time);
  if (!(Math.abs(now - sent) <= LOGON_CLOCK_SKEW_MS))
    return { peerCompId, refused: "AUTH: SendingTime(52) must be within 5 seconds of the server time" };
  if (seqText !== "1")
    return { peerCompId, refused: "MsgSeqNum(34) of the Logon must be 1 (ResetSeqNumFlag=Y)" };
  if (m.get(98) !== "0") return { peerCompId, refused: "EncryptMethod(98) must be 0" };
  const hbText = m.get(108) ?? "";
  const hb = UINT.test(hbText) ? Number(hbText) : -1;
  if (hb < HEARTBEAT_MIN_S || hb > HEARTBEAT_MAX_S)
    return {
      peerCompId,
      refused: `HeartBtInt(108) must be an integer from ${HEARTBEAT_MIN_S} to ${HEARTBEAT_MAX_S}`,
    };
  if (m.get(141) !== "Y") return { peerCompId, refused: "ResetSeqNumFlag(141) must be Y" };
  const cod = m.get(8013);
  if (cod !== undefined && cod !== "Y" && cod !== "N")
    return { peerCompId, refused: "CancelOnDisconnect(8013) must be Y or N" };
  const sub = m.get(57);
  if (sub !== undefined && sub !== DROP_COPY)
    return { peerCompId, refused: `TargetSubID(57) must be ${DROP_COPY} when given` };
  const fromText = m.get(20001);
  const from = fromText === undefined ? -1 : UINT.test(fromText) ? Number(fromText) : -2;
  if (from === -2 || from > Number.MAX_SAFE_INTEGER)
    return { peerCompId, refused: "ResumeFromExecSeq(20001) must be an integer >= 0" };
  const epochText = m.get(20008);
  const epoch = epochText === undefined ? 0 : UINT.test(epochText) ? Number(epochText) : -1;
  if (epoch < 0 || (epochText !== undefined && epoch < 1) || epoch > Number.MAX_SAFE_INTEGER)
    return { peerCompId, refused: "ResumeEpoch(20008) must be an integer >= 1" };
  let cut = 0;
  if (from >= 0) {
    cut = resumeCut(ctx, key.userId, from, epoch);
    if (cut < 0) return { peerCompId, refused: codeText(-cut) };
  }
  return {
    peerCompId,
    key,
    heartBtInt: hb,
    cancelOnDisconnect: cod === "Y",
    dropCopy: sub === DROP_COPY,
    resumeFrom: from,
    cut,
  };
}
