/**
 * Checks WebSocket messages against the AsyncAPI document (src/documents/asyncapi.ts), as
 * openapi-check.ts checks HTTP answers against the OpenAPI document: a stream message against the
 * messages of the channel its `stream` field names, a session frame against what the server sends
 * on the session (hello, reports, answers, error answers), or, when the call is known, against that
 * call's answer and error answer. The harness and test/stream/helpers.ts hook it into every stream
 * client they make, test/session/helpers.ts into every session client, so a message that matches
 * no schema fails the test.
 *
 * Each message payload is compiled by ajv the first time it is needed, then reused.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { buildAsyncApi, type SessionCallSpec } from "../../src/documents/asyncapi.ts";
import { DESCRIBED_SESSION_CALLS } from "../../src/session/methods.ts";
import { TEST_CONFIG } from "./pairs.ts";

type Json = Record<string, unknown>;

export interface AsyncApiChecker {
  readonly doc: Json;
  /** Why a stream message `{stream, data}` matches no message of its channel, or null. */
  streamMismatch(message: unknown): string | null;
  /** Why a frame the server sent on a session matches nothing it may send, or null. */
  sessionMismatch(frame: unknown): string | null;
  /** Why the answer to a call of `method` is neither its answer nor its error answer, or null. */
  answerMismatch(method: string, frame: unknown): string | null;
  /** Whether `method` is a call of the document. */
  hasCall(method: string): boolean;
}

/** A checker of the document of `calls` (the session's call table) and the test config. */
export function asyncApiChecker(calls: readonly SessionCallSpec[]): AsyncApiChecker {
  const doc = buildAsyncApi(TEST_CONFIG, calls);
  const channels = doc.channels as Record<string, Json>;
  const operations = doc.operations as Record<string, Json>;
  const ajv = new Ajv2020({ strict: false, allErrors: true });

  /** Follows `#/...` references through the document (there are no cycles). */
  const resolve = (ref: string): unknown => {
    let node: unknown = doc;
    for (const part of ref.slice(2).split("/")) node = (node as Json)[part];
    return node;
  };
  const deref = (schema: unknown): unknown => {
    if (Array.isArray(schema)) return schema.map(deref);
    if (schema === null || typeof schema !== "object") return schema;
    const ref = (schema as Json).$ref;
    if (typeof ref === "string") return deref(resolve(ref));
    const out: Json = {};
    for (const [k, v] of Object.entries(schema)) out[k] = deref(v);
    return out;
  };

  const validators = new Map<string, ValidateFunction>();
  /** The validator of a message, by its reference (`#/components/messages/X` or `#/channels/...`). */
  const validatorOf = (ref: string): ValidateFunction => {
    const message = deref(resolve(ref)) as Json;
    const name = message.name as string;
    let v = validators.get(name);
    if (v === undefined) {
      v = ajv.compile(message.payload as object);
      validators.set(name, v);
    }
    return v;
  };
  const refs = (list: unknown): string[] =>
    Object.values(list as Json).map((m) => (m as Json).$ref as string);
  /** The first of `messages` that `value` matches (null), else every message's complaint. */
  const match = (what: string, messages: readonly string[], value: unknown): string | null => {
    const complaints: string[] = [];
    for (const ref of messages) {
      const v = validatorOf(ref);
      if (v(value)) return null;
      complaints.push(`${ref.split("/").pop()}: ${ajv.errorsText(v.errors)}`);
    }
    return `${what}: matches no message of the AsyncAPI document\n  ${complaints.join("\n  ")}\n  message: ${JSON.stringify(value).slice(0, 500)}`;
  };

  // Stream channels by kind: the address up to `:` (`orders:{pair}` → orders).
  const streamChannels = new Map<string, Json>();
  for (const channel of Object.values(channels)) {
    const address = channel.address;
    if (typeof address === "string") streamChannels.set(address.split(":")[0], channel);
  }

  // What the server may send on a session: its `send` operations' messages and every reply.
  const sessionSent: string[] = [];
  const answers = new Map<string, string[]>();
  for (const op of Object.values(operations)) {
    if ((op.channel as Json).$ref !== "#/channels/session") continue;
    if (op.action === "send") sessionSent.push(...refs(op.messages));
    const reply = op.reply as Json | undefined;
    if (reply !== undefined) {
      sessionSent.push(...refs(reply.messages));
      answers.set(op.title as string, refs(reply.messages));
    }
  }

  return {
    doc,
    streamMismatch(message) {
      const stream = (message as Json | null)?.stream;
      if (typeof stream !== "string") return match("stream message without a stream name", [], message);
      const colon = stream.indexOf(":");
      const kind = colon === -1 ? stream : stream.slice(0, colon);
      const channel = streamChannels.get(kind);
      if (channel === undefined || (colon === -1) !== !(channel.address as string).includes(":"))
        return `stream ${stream}: no channel of the AsyncAPI document`;
      const pair = (channel.parameters as Json | undefined)?.pair as Json | undefined;
      if (pair !== undefined && !(pair.enum as string[]).includes(stream.slice(colon + 1)))
        return `stream ${stream}: not a pair of the AsyncAPI document's enum`;
      return match(`stream ${stream}`, refs(channel.messages), message);
    },
    sessionMismatch(frame) {
      return match("session frame", sessionSent, frame);
    },
    answerMismatch(method, frame) {
      const list = answers.get(method);
      if (list === undefined) return `session call ${method}: not in the AsyncAPI document`;
      return match(`answer to ${method}`, list, frame);
    },
    hasCall(method) {
      return answers.has(method);
    },
  };
}

/** The checker of the server's document: the stream and every session call the server answers. */
export const asyncApi = asyncApiChecker(DESCRIBED_SESSION_CALLS);
