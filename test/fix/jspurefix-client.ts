/**
 * A FIX 4.4 client for the tests of the FIX gateway, on jspurefix: an engine independent of ours
 * (nothing of src/fix is imported). jspurefix's initiator does the session: its TCP/TLS connector,
 * its encoder and parser, sequence numbers, heartbeats, TestRequest answers and the Logout
 * exchange. This module adds the exchange's signed Logon, its custom tags (FIX44-exchange.xml, an
 * overlay on jspurefix's QuickFIX FIX44.xml), every received message kept as tag/value pairs, and
 * raw bytes for the faults an engine will not produce.
 *
 *   const c = await FixClient.connect({ host, port, senderCompId: "MAKER1", targetCompId: "EXCHANGE",
 *     apiToken, secretKey, cancelOnDisconnect: true });  // resolves on the Logon answer
 *   c.send("D", [[11, "o1"], [55, "BTC_USDT"], [54, "1"], [40, "2"], [38, "1.5"], [44, "100"],
 *     [60, fixTime(new Date())], [20003, "cancelMaker"]]);
 *   const report = await c.next((m) => m.msgType === "8" && m.get(150) === "0");
 *   report.get(20002); report.getAll(58);  // values as strings, repeated tags in order
 *   await c.logout();                      // 35=5, then waits for the end of the session
 *
 * A refused Logon rejects `connect` with a FixLogonRefused carrying the Logout's Text
 * (`logoutText`). `logonFields` adds, replaces or (null) removes tags of the Logon, header tags
 * included; the signature is computed over the SendingTime, MsgSeqNum and CompIDs it then carries,
 * unless RawData(96) is given. `send` takes any tag the dictionary declares on the message (header
 * tags too: 49, 56, 52, 34, 43=Y...); MsgSeqNum advances as jspurefix counts it, except with 43=Y.
 * Whatever the engine cannot write (an undeclared tag or MsgType, a repeated tag, an empty value,
 * a wrong CheckSum or BodyLength, a group) goes through `sendRaw`, e.g.
 * `c.sendRaw(fixFrame([...c.header("D"), [11, ""]], { checkSum: "000" }))`; raw bytes do not move
 * jspurefix's MsgSeqNum (set `nextSeqNum` when the server counts them). `destroy()` drops the link
 * without a Logout. FIX_CLIENT_LOG=debug (a winston level) shows jspurefix's own log.
 */
import "reflect-metadata"; // tsyringe, jspurefix's dependency injection, needs it loaded first

import { createHash, createHmac } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  AsciiSession,
  AsciiSessionMsgFactory,
  type ContainedComponentField,
  ContainedFieldType,
  DefinitionFactory,
  DITokens,
  type ElasticBuffer,
  EmptyLogFactory,
  type FixDefinitions,
  type FixEntity,
  type IContainedSet,
  type IJsFixConfig,
  type ILooseObject,
  type ISessionDescription,
  type ISessionMsgFactory,
  type IStandardHeader,
  JsFixConfig,
  JsFixWinstonLogFactory,
  type MsgTransport,
  type MsgView,
  SessionContainer,
  SessionState,
  type TcpDuplex,
  WinstonLogger,
} from "jspurefix";
import { WAIT_TIMEOUT_MS, waitFor } from "../wait.ts";

export type FixField = readonly [tag: number, value: string];
/** Tag/value pairs in the order to send, or an object by tag number. */
export type FixFields = readonly FixField[] | Readonly<Record<number, string>>;

export interface FixClientOptions {
  host: string;
  port: number;
  /** TLS (node:tls): the server's CA, or rejectUnauthorized false for any certificate. */
  tls?: { ca?: Buffer | string; rejectUnauthorized?: boolean };
  senderCompId: string;
  targetCompId: string;
  apiToken: string;
  secretKey: string;
  /** HeartBtInt(108) of the Logon and of jspurefix's own heartbeats (default 30). */
  heartBtInt?: number;
  /** CancelOnDisconnect(8013) Y or N; absent when undefined. */
  cancelOnDisconnect?: boolean;
  /** TargetSubID(57)=DROPCOPY on the Logon. */
  dropCopy?: boolean;
  /** ResumeFromExecSeq(20001). */
  resumeFromExecSeq?: number;
  /** ResumeEpoch(20008). */
  resumeEpoch?: number;
  /** Tags added to or replaced on the Logon, body or header; null removes one. */
  logonFields?: Readonly<Record<number, string | null>>;
  /** False: the client sends no Heartbeat of its own and answers no TestRequest (default true). */
  heartbeats?: boolean;
  /** How long to wait for the Logon answer (default 10 s). */
  logonTimeoutMs?: number;
  /** How long jspurefix keeps trying to connect (default 5 s). */
  connectTimeoutSeconds?: number;
}

export interface FixClosed {
  /** Text(58) of the last Logout the server sent, if it sent one. */
  logoutText?: string;
  /** Why jspurefix ended the session, when it was not a Logout exchange. */
  error?: Error;
}

const SOH = "\x01";
/** Tags jspurefix writes itself: a message that needs other values for them goes through sendRaw. */
const FRAMING_TAGS = new Set([8, 9, 10, 35]);

/** A message received, as it was on the wire: every field in order, values as strings. */
export class ReceivedMessage {
  readonly msgType: string;

  constructor(
    readonly fields: readonly FixField[],
    /** CheckSum(10) and BodyLength(9) agree with the bytes (jspurefix's initiator checks neither). */
    readonly checkSumOk: boolean,
    readonly bodyLengthOk: boolean,
  ) {
    this.msgType = this.get(35) ?? "";
  }

  /** The first value of `tag`. */
  get(tag: number): string | undefined {
    return this.fields.find(([t]) => t === tag)?.[1];
  }

  /** Every value of `tag`, in order. */
  getAll(tag: number): string[] {
    return this.fields.filter(([t]) => t === tag).map(([, v]) => v);
  }

  toString(): string {
    return this.fields.map(([t, v]) => `${t}=${v}|`).join("");
  }
}

/** The Logout(5) that refused a Logon (or the close that did). */
export class FixLogonRefused extends Error {
  constructor(
    readonly logoutText: string | undefined,
    readonly received: readonly ReceivedMessage[],
    cause?: Error,
  ) {
    super(`logon refused: ${logoutText ?? "the connection closed without a Logout"}`, { cause });
  }
}

/** UTCTimestamp with milliseconds, as FIX writes it: YYYYMMDD-HH:MM:SS.sss. */
export function fixTime(date: Date): string {
  const iso = date.toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 23)}`;
}

/**
 * Raw bytes of one message: 8=FIX.4.4, 9=the body's length, `fields`, 10=the checksum, each
 * computed unless given. For faults only; every well-formed message goes through jspurefix.
 */
export function fixFrame(
  fields: readonly FixField[],
  fault: { bodyLength?: string; checkSum?: string } = {},
): Buffer {
  const body = fields.map(([t, v]) => `${t}=${v}${SOH}`).join("");
  const head = `8=FIX.4.4${SOH}9=${fault.bodyLength ?? Buffer.byteLength(body)}${SOH}`;
  let sum = 0;
  for (const byte of Buffer.from(head + body)) sum += byte;
  const checkSum = fault.checkSum ?? String(sum % 256).padStart(3, "0");
  return Buffer.from(`${head}${body}10=${checkSum}${SOH}`);
}

/** The Logon's signature: HMAC-SHA256, lowercase hex, of SendingTime, A, MsgSeqNum and the CompIDs. */
export function logonSignature(
  secretKey: string,
  sendingTime: string,
  msgSeqNum: string,
  senderCompId: string,
  targetCompId: string,
): string {
  const text = [sendingTime, "A", msgSeqNum, senderCompId, targetCompId].join(SOH);
  return createHmac("sha256", secretKey).update(text).digest("hex");
}

export class FixClient {
  /** Every message received, in order, session messages included. */
  readonly received: readonly ReceivedMessage[];
  /** Settles when the session has ended, however it ended. */
  readonly closed: Promise<FixClosed>;
  private readonly taken = new WeakSet<ReceivedMessage>();
  private ended = false;

  private constructor(
    private readonly session: ClientSession,
    private readonly definitions: FixDefinitions,
    ending: Promise<unknown>,
  ) {
    this.received = session.received;
    this.closed = ending.then(
      () => ({ logoutText: session.logoutText }),
      (error: Error) => ({ logoutText: session.logoutText, error }),
    );
    void this.closed.then(() => {
      this.ended = true;
    });
  }

  /** Connects and logs on; resolves on the server's Logon, rejects with FixLogonRefused otherwise. */
  static async connect(options: FixClientOptions): Promise<FixClient> {
    const definitions = await exchangeDefinitions();
    const logon = definitions.message.get("A")!;
    const header = definitions.component.get("StandardHeader")!;
    for (const tag of Object.keys(options.logonFields ?? {}).map(Number)) {
      // jspurefix would drop it without a word
      if (logon.localTag[tag] === undefined && header.localTag[tag] === undefined)
        throw new Error(`tag ${tag} is not declared on Logon (FIX44-exchange.xml)`);
    }
    const description = {
      application: {
        type: "initiator",
        name: `fix-client-${options.senderCompId}`,
        protocol: "ascii",
        dictionary: exchangeDictionaryFile(),
        reconnectSeconds: 0.2,
        connectTimeoutSeconds: options.connectTimeoutSeconds ?? 5,
        tcp: {
          host: options.host,
          port: options.port,
          tls: options.tls && {
            nodeTlsConnectionOptions: {
              ca: options.tls.ca,
              rejectUnauthorized: options.tls.rejectUnauthorized ?? true,
            },
          },
        },
      },
      BeginString: "FIX.4.4",
      SenderCompId: options.senderCompId,
      TargetCompID: options.targetCompId,
      HeartBtInt: options.heartBtInt ?? 30,
      ResetSeqNumFlag: true,
    } as unknown as ISessionDescription;

    // jspurefix's own wiring (its SessionLauncher does the same), with the dictionary parsed once
    // per process instead of once per connection.
    const container = new SessionContainer((d) => new HeaderFieldsMsgFactory(d));
    const level = process.env.FIX_CLIENT_LOG;
    const logFactory =
      level === undefined
        ? new EmptyLogFactory()
        : new JsFixWinstonLogFactory(WinstonLogger.consoleOptions(level));
    const scope = container.newChild(description);
    const config = new JsFixConfig(
      scope.resolve<ISessionMsgFactory>(DITokens.ISessionMsgFactory),
      definitions,
      description,
      1,
      logFactory,
    );
    container.registerSession(config, scope);
    const session = new ClientSession(config, options);
    scope.registerInstance(DITokens.FixSession, session);
    const initiator = scope.resolve<FixEntity>(DITokens.FixEntity);
    const client = new FixClient(session, definitions, initiator.start());

    const timeoutMs = options.logonTimeoutMs ?? WAIT_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      session.ready.then(() => "ready" as const),
      client.closed,
      new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (outcome === "ready") return client;
    if (outcome === "timeout") {
      client.destroy();
      throw new Error(`no Logon answer within ${timeoutMs} ms; received: ${client.received.join(" ")}`);
    }
    if (session.link === null) throw outcome.error ?? new Error("not connected"); // no TCP connection
    throw new FixLogonRefused(outcome.logoutText, client.received, outcome.error);
  }

  /** MsgSeqNum of the next message jspurefix sends. */
  get nextSeqNum(): number {
    return this.session.transmitter.msgSeqNum;
  }

  set nextSeqNum(seqNum: number) {
    this.session.transmitter.msgSeqNum = seqNum;
  }

  /** Sends a message through jspurefix: header tags among `fields` replace its own. */
  send(msgType: string, fields: FixFields): void {
    const message = this.definitions.message.get(msgType);
    if (message === undefined) throw new Error(`MsgType ${msgType} is not in the dictionary: use sendRaw`);
    const header = this.definitions.component.get("StandardHeader")!;
    const body: ILooseObject = {};
    const headerFields: ILooseObject = {};
    const seen = new Set<number>();
    for (const [tag, value] of fieldList(fields)) {
      if (FRAMING_TAGS.has(tag)) throw new Error(`tag ${tag} is written by jspurefix: use sendRaw`);
      if (seen.has(tag)) throw new Error(`tag ${tag} twice: use sendRaw`);
      seen.add(tag);
      if (header.localTag[tag] !== undefined) headerFields[header.localTag[tag].name] = value;
      else if (!place(message, body, tag, value))
        throw new Error(`tag ${tag} is not declared on ${message.name} (FIX44-exchange.xml): use sendRaw`);
    }
    this.session.sendMessage(msgType, withHeaderFields(body, headerFields));
  }

  /** Writes bytes on the socket as given, outside jspurefix's sequence numbers. */
  sendRaw(bytes: Buffer | string): void {
    const socket = this.session.socket;
    if (socket === null || socket.destroyed) throw new Error("the connection is closed");
    socket.write(bytes);
  }

  /** The header of a message this session would send now, for a raw one: 35, 49, 56, 34, 52. */
  header(msgType: string): FixField[] {
    const { SenderCompId, TargetCompID } = this.session.config.description;
    return [
      [35, msgType],
      [49, SenderCompId],
      [56, TargetCompID],
      [34, String(this.nextSeqNum)],
      [52, fixTime(new Date())],
    ];
  }

  /**
   * The first unread message that matches (a MsgType, or a predicate; without one, any message but
   * Heartbeat and TestRequest), marked read. Fails on timeout or once the session has ended.
   */
  async next(
    match?: string | ((m: ReceivedMessage) => boolean),
    timeoutMs = WAIT_TIMEOUT_MS,
  ): Promise<ReceivedMessage> {
    const test =
      typeof match === "string"
        ? (m: ReceivedMessage) => m.msgType === match
        : (match ?? ((m: ReceivedMessage) => m.msgType !== "0" && m.msgType !== "1"));
    const what = typeof match === "string" ? `a message 35=${match}` : "the next matching message";
    const found = await waitFor(
      () => this.received.find((m) => !this.taken.has(m) && test(m)) ?? (this.ended ? "ended" : undefined),
      { what, timeoutMs, detail: () => `unread: ${this.unread().join(" ") || "none"}` },
    );
    if (found === "ended")
      throw new Error(`the session ended before ${what}; unread: ${this.unread().join(" ")}`);
    this.taken.add(found);
    return found;
  }

  /** Sends Logout(5) with `text` and waits for the end of the session. */
  async logout(text?: string): Promise<FixClosed> {
    this.session.logout(text ?? "");
    return this.closed;
  }

  /** Drops the TCP link without a Logout. */
  destroy(): void {
    this.session.socket?.destroy();
    this.session.requestStop("destroyed by the test");
  }

  private unread(): ReceivedMessage[] {
    return this.received.filter((m) => !this.taken.has(m));
  }
}

/** jspurefix's initiator session, with the exchange's Logon, and every received message kept. */
class ClientSession extends AsciiSession {
  readonly received: ReceivedMessage[] = [];
  logoutText: string | undefined;
  /** The transport of the connection, kept after jspurefix lets go of it. */
  link: MsgTransport | null = null;
  readonly ready: Promise<void>;
  private markReady = (): void => {};

  constructor(
    config: IJsFixConfig,
    private readonly options: FixClientOptions,
  ) {
    super(config);
    this.ready = new Promise((resolve) => {
      this.markReady = resolve;
    });
    this.heartbeat = options.heartbeats !== false;
    // jspurefix reports the end of a session as an 'error' event too; FixClient.closed carries it.
    this.on("error", () => {});
  }

  get socket(): Socket | null {
    return (this.link?.duplex as TcpDuplex | undefined)?.socket ?? null;
  }

  get transmitter(): { msgSeqNum: number } {
    if (this.link === null) throw new Error("not connected");
    return this.link.transmitter as unknown as { msgSeqNum: number };
  }

  override async run(transport: MsgTransport): Promise<number> {
    this.link = transport;
    return super.run(transport);
  }

  /** The signed Logon, with the MsgSeqNum and SendingTime the header will carry. */
  override sendLogon(): void {
    const o = this.options;
    const header = new Map<number, string | null>([
      [49, o.senderCompId],
      [56, o.targetCompId],
      [34, String(this.transmitter.msgSeqNum)],
      [52, fixTime(new Date())],
    ]);
    if (o.dropCopy) header.set(57, "DROPCOPY");
    const body = new Map<number, string | null>([
      [98, "0"],
      [108, String(o.heartBtInt ?? 30)],
      [141, "Y"],
      [553, o.apiToken],
    ]);
    if (o.cancelOnDisconnect !== undefined) body.set(8013, o.cancelOnDisconnect ? "Y" : "N");
    if (o.resumeFromExecSeq !== undefined) body.set(20001, String(o.resumeFromExecSeq));
    if (o.resumeEpoch !== undefined) body.set(20008, String(o.resumeEpoch));
    const headerSet = this.config.definitions.component.get("StandardHeader")!;
    for (const [key, value] of Object.entries(o.logonFields ?? {})) {
      const tag = Number(key);
      (headerSet.localTag[tag] !== undefined ? header : body).set(tag, value);
    }
    if (!body.has(96)) {
      const at = (tag: number) => header.get(tag) ?? "";
      body.set(96, logonSignature(o.secretKey, at(52), at(34), at(49), at(56)));
    }
    const rawData = body.get(96);
    if (!body.has(95) && rawData != null) body.set(95, String(Buffer.byteLength(rawData)));
    this.send(
      "A",
      withHeaderFields(byName(this.config.definitions, body), byName(this.config.definitions, header)),
    );
  }

  sendMessage(msgType: string, message: ILooseObject): void {
    if (this.getState() === SessionState.Stopped) throw new Error("the session has ended");
    this.send(msgType, message);
  }

  logout(text: string): void {
    if (this.getState() === SessionState.Stopped) throw new Error("the session has ended");
    this.setState(SessionState.WaitingLogoutConfirm);
    this.sessionState.logoutSentAt = new Date();
    this.sendLogout(text);
  }

  protected override onMsg(msgType: string, view: MsgView): void {
    const message = readView(view);
    this.received.push(message);
    if (msgType === "5") this.logoutText = message.get(58);
    if (msgType === "1" && this.options.heartbeats === false) return;
    super.onMsg(msgType, view);
  }

  protected override onReady(): void {
    this.markReady();
  }

  protected override onLogon(): boolean {
    return true;
  }

  protected override onApplicationMsg(): void {}
  protected override onStopped(): void {}
  protected override onDecoded(): void {}
  protected override onEncoded(): void {}
}

/** Header fields for HeaderFieldsMsgFactory, carried in StandardHeader (jspurefix drops 49, 52 and 56 there). */
const HEADER_FIELDS = Symbol("header fields");

function withHeaderFields(body: ILooseObject, fields: ILooseObject): ILooseObject {
  // PossDupFlag where jspurefix reads it too: a possible duplicate does not advance MsgSeqNum.
  const possDup = fields.PossDupFlag === "Y" ? { PossDupFlag: true } : {};
  return { ...body, StandardHeader: { ...possDup, [HEADER_FIELDS]: fields } };
}

/** jspurefix's header, then the fields a test set on this message. */
class HeaderFieldsMsgFactory extends AsciiSessionMsgFactory {
  override header(
    msgType: string,
    seqNum: number,
    time: Date,
    overrideData?: Partial<IStandardHeader>,
  ): ILooseObject {
    const { [HEADER_FIELDS]: fields, ...rest } = (overrideData ?? {}) as Partial<IStandardHeader> & {
      [HEADER_FIELDS]?: ILooseObject;
    };
    return { ...super.header(msgType, seqNum, time, rest), ...fields };
  }
}

function fieldList(fields: FixFields): FixField[] {
  if (Array.isArray(fields)) return [...(fields as readonly FixField[])];
  return Object.entries(fields).map(([tag, value]) => [Number(tag), value as string]);
}

/** A tag/value map as a jspurefix object of a flat set (Logon body, header); null stays null. */
function byName(definitions: FixDefinitions, fields: Map<number, string | null>): ILooseObject {
  const o: ILooseObject = {};
  for (const [tag, value] of fields) {
    const field = definitions.tagToSimple[tag];
    if (field === undefined) throw new Error(`tag ${tag} is not in the dictionary (FIX44-exchange.xml)`);
    o[field.name] = value;
  }
  return o;
}

/** Puts `tag` where jspurefix's encoder looks for it: in the set, or in one of its components. */
function place(set: IContainedSet, target: ILooseObject, tag: number, value: string): boolean {
  const simple = set.localTag[tag];
  if (simple !== undefined) {
    target[simple.name] = value;
    return true;
  }
  const field = set.tagToField[tag];
  if (field?.type !== ContainedFieldType.Component) return false; // absent, or in a repeating group
  target[field.name] ??= {};
  return place((field as ContainedComponentField).definition, target[field.name], tag, value);
}

/** Every field of a message as jspurefix's parser delimited it, header and trailer included. */
function readView(view: MsgView): ReceivedMessage {
  const tags = view.structure?.tags;
  if (tags === undefined) return new ReceivedMessage([], false, false);
  const buffer = (view as MsgView & { buffer: ElasticBuffer }).buffer;
  const fields: FixField[] = [];
  for (let i = 0; i < tags.nextTagPos; i++) {
    const { tag, start, len } = tags.tagPos[i];
    fields.push([tag, buffer.getString(start, start + len)]);
  }
  const tagStart = (i: number) => tags.tagPos[i].start - String(tags.tagPos[i].tag).length - 1;
  const last = tags.nextTagPos - 1;
  const checkSum = fields[last]?.[0] === 10 ? fields[last][1] : "";
  const bodyLength = fields[1]?.[0] === 9 && last > 2 ? fields[1][1] : "";
  return new ReceivedMessage(
    fields,
    checkSum !== "" && Number(checkSum) === view.checksum(),
    bodyLength !== "" && Number(bodyLength) === tagStart(last) - tagStart(2),
  );
}

const jspurefixRoot = dirname(createRequire(import.meta.url).resolve("jspurefix/package.json"));
let dictionaryFile: string | undefined;
let definitions: Promise<FixDefinitions> | undefined;

/**
 * FIX44.xml of jspurefix with FIX44-exchange.xml merged in, written once to the temporary
 * directory (jspurefix loads a dictionary from a file), named by its content.
 */
export function exchangeDictionaryFile(): string {
  if (dictionaryFile !== undefined) return dictionaryFile;
  let merged = readFileSync(join(jspurefixRoot, "data", "FIX44.xml"), "utf8");
  const overlay = readFileSync(new URL("FIX44-exchange.xml", import.meta.url), "utf8").replace(
    /<!--[\s\S]*?-->/g,
    "",
  );
  for (const [, name, fields] of overlay.matchAll(/<message name='(\w+)'>([\s\S]*?)<\/message>/g)) {
    const open = merged.search(new RegExp(`<message name='${name}'`));
    if (open < 0) throw new Error(`FIX44.xml has no message ${name}`);
    const close = merged.indexOf("</message>", open);
    merged = merged.slice(0, close) + fields + merged.slice(close);
  }
  const fields = /<fields>([\s\S]*?)<\/fields>/.exec(overlay)?.[1] ?? "";
  const end = merged.lastIndexOf("</fields>");
  merged = merged.slice(0, end) + fields + merged.slice(end);
  const file = join(
    tmpdir(),
    `FIX44-exchange-${createHash("sha256").update(merged).digest("hex").slice(0, 16)}.xml`,
  );
  if (!existsSync(file)) {
    writeFileSync(`${file}.${process.pid}`, merged);
    renameSync(`${file}.${process.pid}`, file); // whole, for another test process reading it
  }
  dictionaryFile = file;
  return file;
}

function exchangeDefinitions(): Promise<FixDefinitions> {
  definitions ??= new DefinitionFactory().getDefinitions(exchangeDictionaryFile());
  return definitions;
}
