/**
 * One question: what does our FIX codec (src/fix/codec.ts) save per message against a general FIX
 * engine's, jspurefix 5.11.4 (its ASCII parser and encoder on QuickFIX's FIX44.xml with the
 * exchange's tags, as test/fix/jspurefix-client.ts loads them)? DECISIONS.md "FIX gateway: own codec
 * over node:net" holds the figures.
 *
 * Messages: a NewOrderSingle(D) as bench:load's FIX client sends it (a limit buy: 11, 55, 54, 40,
 * 38, 44, 59, 60) and an ExecutionReport(8) as src/fix/exec-report.ts writes a fill (37, 11, 17,
 * 150=F, 39, 55, 54, 40, 38, 44, 59, 14, 151, 6, 60, 32, 31, 880, 12, 479, 851, 20002), each with
 * the header 8, 9, 35, 49, 56, 34, 52 and the trailer 10.
 *
 *   parse    the bytes of one message in, every field read as a string: ours as the gateway does
 *            (FixFramer.push, then FixMessage.get per tag), jspurefix's AsciiParser.parseBuffer
 *            and getString per tag on the view it emits;
 *   encode   the field values in (decimals as the text the gateway formats, times from the clock),
 *            one whole message out as a Buffer: ours as the gateway does (the body as `field()`
 *            text, then encodeFix), jspurefix's as its AsciiMsgTransmitter does (header from its
 *            session message factory, body, BodyLength patched, CheckSum, trailer, `trim()` copy).
 * Checked before timing: each parser reads the other's encoding to the same values. The sum of
 * lengths read and written is the checksum printed at the end.
 *
 *   npx tsx bench/fix/codec.bench.ts
 */
import "reflect-metadata"; // tsyringe, jspurefix's dependency injection, needs it loaded first

import {
  AsciiParser,
  DefinitionFactory,
  DITokens,
  type ElasticBuffer,
  EmptyLogFactory,
  type ILooseObject,
  type ISessionDescription,
  type ISessionMsgFactory,
  JsFixConfig,
  type MsgTransmitter,
  type MsgView,
  SessionContainer,
} from "jspurefix";
import { Bench } from "tinybench";
import { encodeFix, FixFramer, type FixMessage, field, fixTime } from "../../src/fix/codec.ts";
import { exchangeDictionaryFile } from "../../test/fix/jspurefix-client.ts";
import { taskNs } from "../http/task-time.ts";

const SENDER = "MAKER1";
const TARGET = "EXCHANGE";

// ---- the two messages, as field values ---------------------------------------------------------------

const D = {
  clOrdId: "5f2a9c1e04b71234",
  symbol: "btc_usdt",
  side: "1",
  ordType: "2",
  qty: "0.001",
  price: "30000.5",
  tif: "1",
};
const ER = {
  orderId: "1234567",
  clOrdId: "5f2a9c1e04b71234",
  execId: "mifk3q2a-98765",
  execType: "F",
  ordStatus: "1",
  symbol: "btc_usdt",
  side: "1",
  ordType: "2",
  qty: "0.002",
  price: "30000.5",
  tif: "1",
  cum: "0.001",
  leaves: "0.001",
  avgPx: "30000.5",
  lastQty: "0.001",
  lastPx: "30000.5",
  trdMatchId: "456789",
  commission: "0.03",
  commCurrency: "usdt",
  liquidity: "2",
  execSeq: "4321",
};
/** Tags read after a parse: every field but the framing (8, 9, 10). */
const D_TAGS = [35, 49, 56, 34, 52, 11, 55, 54, 40, 38, 44, 59, 60];
const ER_TAGS = [35, 49, 56, 34, 52, 37, 11, 17, 150, 39, 55, 54, 40, 38, 44, 59, 14, 151, 6, 60];
const ER_FILL_TAGS = [32, 31, 880, 12, 479, 851, 20002];
const ER_ALL = [...ER_TAGS, ...ER_FILL_TAGS];

// ---- ours ------------------------------------------------------------------------------------------

let seq = 1;

function oursEncodeD(now: number): Buffer {
  const time = fixTime(now);
  const body =
    field(11, D.clOrdId) +
    field(55, D.symbol) +
    field(54, D.side) +
    field(40, D.ordType) +
    field(38, D.qty) +
    field(44, D.price) +
    field(59, D.tif) +
    field(60, time);
  return encodeFix(
    "D",
    { senderCompId: SENDER, targetCompId: TARGET, seqNum: seq++, sendingTime: time },
    body,
  );
}

/** As exec-report.ts's execReport builds a fill's body, then fix-gateway.ts's write. */
function oursEncodeEr(now: number): Buffer {
  const time = fixTime(now);
  let body = field(37, ER.orderId) + field(11, ER.clOrdId);
  body +=
    field(17, ER.execId) +
    field(150, ER.execType) +
    field(39, ER.ordStatus) +
    field(55, ER.symbol) +
    field(54, ER.side) +
    field(40, ER.ordType) +
    field(38, ER.qty);
  body += field(44, ER.price);
  body += field(59, ER.tif);
  body += field(14, ER.cum) + field(151, ER.leaves) + field(6, ER.avgPx) + field(60, time);
  body +=
    field(32, ER.lastQty) +
    field(31, ER.lastPx) +
    field(880, ER.trdMatchId) +
    field(12, ER.commission) +
    field(479, ER.commCurrency) +
    field(851, ER.liquidity);
  body += field(20002, ER.execSeq);
  return encodeFix(
    "8",
    { senderCompId: TARGET, targetCompId: SENDER, seqNum: seq++, sendingTime: time },
    body,
  );
}

let oursLast: FixMessage | null = null;
const framer = new FixFramer(16 * 1024, {
  message(m) {
    oursLast = m;
  },
  garbled(reason) {
    throw new Error(`ours: garbled (${reason})`);
  },
  tooBig() {
    throw new Error("ours: too big");
  },
});

function oursParse(bytes: Buffer, tags: readonly number[]): string[] {
  framer.push(bytes);
  const m = oursLast!;
  oursLast = null;
  return tags.map((t) => m.get(t) ?? "");
}

// ---- jspurefix -------------------------------------------------------------------------------------

const definitions = await new DefinitionFactory().getDefinitions(exchangeDictionaryFile());
const description = {
  application: { type: "initiator", name: "codec-bench", protocol: "ascii", dictionary: "" },
  BeginString: "FIX.4.4",
  SenderCompId: SENDER,
  TargetCompID: TARGET,
  HeartBtInt: 30,
  ResetSeqNumFlag: true,
} as unknown as ISessionDescription;
const container = new SessionContainer();
const scope = container.newChild(description);
const config = new JsFixConfig(
  scope.resolve<ISessionMsgFactory>(DITokens.ISessionMsgFactory),
  definitions,
  description,
  1,
  new EmptyLogFactory(),
);
container.registerSession(config, scope);
const transmitter = scope.resolve<MsgTransmitter>(DITokens.MsgTransmitter) as MsgTransmitter & {
  encodeMessage(msgType: string, obj: ILooseObject): unknown;
  encoder: { reset(): void; trim(): Buffer };
};
// The parser's state writes into the session's ParseBuffer: the parser must read the same one.
const parser = new AsciiParser(config, null, scope.resolve<ElasticBuffer>(DITokens.ParseBuffer));
/** The view lives only during the "msg" event (the parse buffer is reused after it): read there. */
let theirsTags: readonly number[] = [];
let theirsValues: string[] | null = null;
parser.on("msg", (_type: string, view: MsgView) => {
  theirsValues = theirsTags.map((t) => view.getString(t) ?? "");
});

function theirsEncode(msgType: string, obj: ILooseObject): Buffer {
  transmitter.encoder.reset();
  if (transmitter.encodeMessage(msgType, obj) === null)
    throw new Error(`jspurefix: could not encode ${msgType}`);
  return transmitter.encoder.trim();
}

function theirsEncodeD(now: number): Buffer {
  return theirsEncode("D", {
    ClOrdID: D.clOrdId,
    Instrument: { Symbol: D.symbol },
    Side: D.side,
    TransactTime: new Date(now),
    OrderQtyData: { OrderQty: D.qty },
    OrdType: D.ordType,
    Price: D.price,
    TimeInForce: D.tif,
  });
}

function theirsEncodeEr(now: number): Buffer {
  return theirsEncode("8", {
    OrderID: ER.orderId,
    ClOrdID: ER.clOrdId,
    ExecID: ER.execId,
    ExecType: ER.execType,
    OrdStatus: ER.ordStatus,
    Instrument: { Symbol: ER.symbol },
    Side: ER.side,
    OrdType: ER.ordType,
    OrderQtyData: { OrderQty: ER.qty },
    Price: ER.price,
    TimeInForce: ER.tif,
    CumQty: ER.cum,
    LeavesQty: ER.leaves,
    AvgPx: ER.avgPx,
    TransactTime: new Date(now),
    LastQty: ER.lastQty,
    LastPx: ER.lastPx,
    TrdMatchID: ER.trdMatchId,
    CommissionData: { Commission: ER.commission, CommCurrency: ER.commCurrency },
    LastLiquidityInd: ER.liquidity,
    ExecSeq: ER.execSeq,
  });
}

function theirsParse(bytes: Buffer, tags: readonly number[]): string[] {
  theirsTags = tags;
  parser.parseBuffer(bytes);
  const v = theirsValues!;
  theirsValues = null;
  return v;
}

// ---- checked before timing ---------------------------------------------------------------------------

const now = Date.now();
const samples = {
  D: { ours: oursEncodeD(now), theirs: theirsEncodeD(now), tags: D_TAGS },
  "8": { ours: oursEncodeEr(now), theirs: theirsEncodeEr(now), tags: ER_ALL },
};
for (const [type, s] of Object.entries(samples)) {
  // Each parser on each encoding; the header's CompIDs, MsgSeqNum and SendingTime are each encoder's own.
  const values = [
    oursParse(s.ours, s.tags),
    theirsParse(s.ours, s.tags),
    oursParse(s.theirs, s.tags),
    theirsParse(s.theirs, s.tags),
  ].map((v) => v.filter((_, i) => ![49, 56, 34, 52].includes(s.tags[i])).join("|"));
  if (new Set(values).size !== 1 || values[0].includes("||"))
    throw new Error(`${type}: the codecs disagree:\n${values.join("\n")}`);
}
console.log(
  `NewOrderSingle ${samples.D.ours.length} B (jspurefix ${samples.D.theirs.length} B: BodyLength padded to 7 digits); ` +
    `ExecutionReport ${samples["8"].ours.length} B (jspurefix ${samples["8"].theirs.length} B)`,
);

// ---- timing ------------------------------------------------------------------------------------------

let sink = 0;
const dOurs = samples.D.ours;
const dTheirs = samples.D.theirs;
const erOurs = samples["8"].ours;
const erTheirs = samples["8"].theirs;
const sumLengths = (values: string[]) => {
  for (const v of values) sink += v.length;
};
const cases: [string, () => void, () => void][] = [
  [
    "NewOrderSingle(D) parse",
    () => sumLengths(oursParse(dOurs, D_TAGS)),
    () => sumLengths(theirsParse(dTheirs, D_TAGS)),
  ],
  [
    "NewOrderSingle(D) encode",
    () => {
      sink += oursEncodeD(Date.now()).length;
    },
    () => {
      sink += theirsEncodeD(Date.now()).length;
    },
  ],
  [
    "ExecutionReport(8) fill parse",
    () => sumLengths(oursParse(erOurs, ER_ALL)),
    () => sumLengths(theirsParse(erTheirs, ER_ALL)),
  ],
  [
    "ExecutionReport(8) fill encode",
    () => {
      sink += oursEncodeEr(Date.now()).length;
    },
    () => {
      sink += theirsEncodeEr(Date.now()).length;
    },
  ],
];
const bench = new Bench({ time: 1000, warmupTime: 300 });
for (const [name, ours, theirs] of cases) bench.add(`${name}: ours`, ours).add(`${name}: jspurefix`, theirs);
await bench.run();
const rows = bench.tasks.map((t) => {
  const ns = taskNs(t);
  return {
    task: t.name,
    "ns/op": Math.round(ns.mean),
    "p50 ns": Math.round(ns.p50),
    "ops/s": Math.round(1e9 / ns.mean),
  };
});
const table = rows.map((r, i) => ({ ...r, "x ours": (r["ns/op"] / rows[i - (i % 2)]["ns/op"]).toFixed(2) }));
console.table(table);
if (sink === 0) throw new Error("nothing parsed or encoded");
console.log(`checksum ${sink}`);
