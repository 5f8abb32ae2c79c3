/**
 * The FIX listener under generated input (docs/FIX.md 1 to 3 and 6), against one real server: broken
 * framing, wrong CheckSum and BodyLength, messages over 16 KiB, messages before the Logon, and order
 * messages whose every field may be dropped, emptied, repeated, replaced by text or numbers out of
 * range, or joined by unknown tags. Each case must get the answer the document names (ignored and not
 * counted; Logout and close; Reject(3) with 45/371/373; a business refusal with `<CODE>: <message>`),
 * and after the run the server is still serving and no balance or order of its users has changed.
 * The fuzzing user holds nothing, so every order it sends is refused.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { placeLimit, TestServer, type TestUser } from "../e2e/harness.ts";
import { fixPortOf } from "./helpers.ts";
import { fixFrame, fixTime } from "./jspurefix-client.ts";
import { type Field, get, RawFix, show } from "./raw-fix.ts";

/** fast-check runs per property: the whole file stays well under a minute on two busy cores. */
const RUNS = 40;

/** Tags FIX 4.4 requires on each order message (docs/FIX.md 3): missing, Reject 373=1. */
const REQUIRED: Record<string, number[]> = {
  D: [11, 54, 55, 40, 60, 38],
  F: [11, 54, 55, 60],
  G: [11, 54, 55, 40, 60],
  q: [11, 530, 60],
  H: [54, 55],
  "2": [7],
};
const DECIMAL = /^-?(?:\d+\.?\d*|\.\d+)$/;
const TIMESTAMP = /^\d{8}-\d{2}:\d{2}:\d{2}(?:\.\d{3})?$/;
const CODE_TEXT = /^[A-Z][A-Z0-9_]*: \S/;

/** A base message of each order type, before mutation (from 35's body on, no header). */
function baseBody(type: string, orderId: string): Field[] {
  const now = fixTime(new Date());
  switch (type) {
    case "D":
      return [
        [11, "fz-1"],
        [55, "btc_usdt"],
        [54, "1"],
        [40, "2"],
        [38, "0.01"],
        [44, "100"],
        [59, "1"],
        [60, now],
        [20003, "cancelMaker"],
        [20004, "N"],
      ];
    case "F":
      return [
        [37, orderId],
        [11, "fz-c"],
        [55, "btc_usdt"],
        [54, "2"],
        [60, now],
      ];
    case "G":
      return [
        [37, orderId],
        [11, "fz-r"],
        [55, "btc_usdt"],
        [54, "2"],
        [40, "2"],
        [38, "0.5"],
        [44, "30100"],
        [60, now],
      ];
    case "q":
      return [
        [11, "fz-q"],
        [530, "1"],
        [55, "btc_usdt"],
        [60, now],
      ];
    case "2":
      return [
        [7, "1"],
        [16, "0"],
      ];
    default:
      return [
        [37, orderId],
        [11, "fz-1"],
        [55, "btc_usdt"],
        [54, "2"],
      ];
  }
}

type Mutation =
  | { kind: "keep" }
  | { kind: "drop" }
  | { kind: "empty" }
  | { kind: "repeat" }
  | { kind: "value"; value: string };

const values = fc.oneof(
  fc.constantFrom(
    "0",
    "-1",
    "3",
    "9",
    "Z",
    "abc",
    "1e3",
    "0.0000001",
    "99999999999999999999",
    "1.",
    ".5",
    "N",
    "Y",
  ),
  fc.stringMatching(/^[0-9A-Za-z.\-_ ]{1,12}$/),
  fc.integer({ min: -1_000_000, max: 1_000_000_000 }).map(String),
  // any text but SOH: UTF-8 beyond ASCII, `=`, spaces
  fc
    .string({ unit: "binary", minLength: 1, maxLength: 12 })
    .map((t) => t.replaceAll("\x01", ""))
    .filter((t) => t !== ""),
);
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: "keep" } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: "drop" } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: "empty" } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: "repeat" } as const) },
  { weight: 2, arbitrary: values.map((value) => ({ kind: "value", value }) as const) },
);
/** Tags the gateway does not use, with any value: processed as if absent. */
const unknownTags = fc.array(
  fc.tuple(fc.integer({ min: 5000, max: 7999 }), fc.stringMatching(/^[0-9A-Za-z]{1,8}$/)),
  { maxLength: 3 },
);

/** The body after its mutations, in order (a repeat adds the field again right after it). */
function mutate(
  body: readonly Field[],
  muts: readonly Mutation[],
  extra: readonly [number, string][],
): Field[] {
  const out: Field[] = [];
  body.forEach(([tag, value], i) => {
    const m = muts[i] ?? { kind: "keep" };
    if (m.kind === "drop") return;
    if (m.kind === "empty") out.push([tag, ""]);
    else if (m.kind === "value") out.push([tag, m.value]);
    else out.push([tag, value]);
    if (m.kind === "repeat") out.push([tag, value]);
  });
  for (const [tag, value] of extra) if (!out.some(([t]) => t === tag)) out.push([tag, value]);
  return out;
}

/**
 * The Reject(3) docs/FIX.md 3 names for `fields` of an order message `type` ([371, 373]), or null
 * when the message is FIX-valid and gets a business answer. First an empty value, then a repeated
 * tag (in message order), then a required tag missing, then a value not of its FIX type.
 */
function expectedReject(type: string, fields: readonly Field[]): [number, number] | null {
  const empty = fields.find(([, v]) => v === "");
  if (empty !== undefined) return [empty[0], 4];
  const seen = new Set<number>();
  for (const [t] of fields) {
    if (seen.has(t)) return [t, 13];
    seen.add(t);
  }
  const has = (t: number) => seen.has(t);
  for (const t of REQUIRED[type]) if (!has(t)) return [t, 1];
  for (const t of [38, 44]) {
    const v = get(fields, t);
    if (v !== undefined && !DECIMAL.test(v)) return [t, 6];
  }
  const transact = get(fields, 60);
  if (transact !== undefined && !TIMESTAMP.test(transact)) return [60, 6];
  const expires = get(fields, 20005);
  if (expires !== undefined && !/^-?\d+$/.test(expires)) return [20005, 6];
  if (type === "2" && !/^\d{1,16}$/.test(get(fields, 7) ?? "")) return [7, 6];
  if (type === "q") {
    const kind = get(fields, 530);
    if (kind === "1" && !has(55)) return [55, 1];
    if (kind !== "1" && kind !== "7") return [530, 5];
  }
  return null;
}

/** The business answer of an order message `type` (docs/FIX.md 5, 6), judged on its own. */
function checkBusinessAnswer(type: string, fields: readonly Field[], answer: readonly Field[]): void {
  const what = `${show(fields)} answered ${show(answer)}`;
  const msgType = get(answer, 35);
  const text = get(answer, 58);
  if (text !== undefined) assert.match(text, CODE_TEXT, `Text of ${what}`);
  switch (type) {
    case "D":
      // Nothing in the fuzzing account: every create is refused.
      assert.equal(msgType, "8", what);
      assert.equal(get(answer, 150), "8", what);
      assert.equal(get(answer, 39), "8", what);
      assert.equal(get(answer, 37), "NONE", what);
      assert.ok(["1", "3", "6", "99"].includes(get(answer, 103) ?? ""), what);
      assert.ok(text !== undefined, what);
      return;
    case "F":
    case "G":
      assert.equal(msgType, "9", what);
      assert.equal(get(answer, 434), type === "F" ? "1" : "2", what);
      assert.ok(["0", "1", "99"].includes(get(answer, 102) ?? ""), what);
      assert.ok(text !== undefined, what);
      return;
    case "2": {
      // Nothing is resent: one GapFill numbered BeginSeqNo (docs/FIX.md 3).
      assert.equal(msgType, "4", what);
      assert.equal(get(answer, 123), "Y", what);
      assert.equal(get(answer, 43), "Y", what);
      assert.equal(get(answer, 34), String(Math.max(1, Number(get(fields, 7)))), what);
      return;
    }
    case "q":
      assert.equal(msgType, "r", what);
      if (get(answer, 531) === "0") assert.ok(text !== undefined && get(answer, 532) !== undefined, what);
      else assert.equal(get(answer, 533), "0", what);
      return;
    default:
      assert.equal(msgType, "8", what);
      assert.equal(get(answer, 150), "I", what);
      assert.equal(get(answer, 39), "8", what);
      assert.equal(get(answer, 103), "5", what);
  }
}

describe("FIX listener under generated input", () => {
  let server: TestServer;
  let port: number;
  /** Holds nothing: every order it sends must be refused. */
  let fuzzer: TestUser;
  /** Has a resting order the fuzzer aims at by id. */
  let bystander: TestUser;
  let bystanderOrder: number;
  let compIds = 0;
  const before_: { balances?: unknown; orders?: unknown } = {};

  before(async () => {
    server = await TestServer.start({ args: ["--fix-port", "0"] });
    port = fixPortOf(server);
    fuzzer = await server.newUser();
    bystander = await server.newUser({ btc: "1", usdt: "1000" });
    bystanderOrder = (await placeLimit(bystander, "btc_usdt", "sell", "30000", "0.5")).id;
    before_.balances = await server.balanceTable(bystander);
    before_.orders = await server.allOrders(bystander);
  });
  after(async () => {
    await server?.close();
  });

  /** A TestRequest with the next MsgSeqNum; the messages before its Heartbeat, which must arrive. */
  async function probe(c: RawFix, what: string): Promise<Field[][]> {
    const id = `probe-${c.seq}`;
    c.write([...c.header("1"), [112, id]]);
    const before: Field[][] = [];
    for (;;) {
      const m = await c.next(`${what}: the Heartbeat of ${id}`);
      if (get(m, 35) === "0" && get(m, 112) === id) return before;
      before.push(m);
    }
  }

  async function logon(): Promise<RawFix> {
    return RawFix.logon(port, fuzzer, `FUZZ${++compIds}`);
  }

  it("ignores broken framing after the Logon without counting it", async () => {
    const c = await logon();
    try {
      /** A message whose MsgSeqNum is the next one but is not taken from the sequence. */
      const unnumbered = (type: string, more: Field[] = []) => {
        const fields = [...c.header(type), ...more];
        c.seq--;
        return fields;
      };
      const broken = fc.oneof(
        // random bytes, no message start in them
        fc
          .uint8Array({ minLength: 1, maxLength: 300 })
          .map((b) => Buffer.from(b.map((x) => (x === 56 ? 57 : x)))),
        // a message with SOH replaced by another byte
        fc
          .constant(0)
          .map(() =>
            Buffer.from(fixFrame(unnumbered("0")).toString("latin1").replaceAll("\x01", "^"), "latin1"),
          ),
        // BeginString not first: ignored up to the next message start
        fc.constant(0).map(() => Buffer.from("35=0\x0134=1\x01")),
        // a wrong CheckSum
        fc.integer({ min: 0, max: 255 }).map((n) => {
          const f = unnumbered("1", [[112, "never"]]);
          const right = fixFrame(f).toString("latin1").slice(-4, -1);
          const wrong = String(n).padStart(3, "0");
          return fixFrame(f, { checkSum: wrong === right ? String((n + 1) % 256).padStart(3, "0") : wrong });
        }),
        // a wrong BodyLength
        fc
          .integer({ min: -40, max: 40 })
          .filter((d) => d !== 0)
          .map((d) => {
            const f = unnumbered("1", [[112, "never"]]);
            const len = Buffer.byteLength(`${f.map(([t, v]) => `${t}=${v}\x01`).join("")}`);
            return fixFrame(f, { bodyLength: String(Math.max(0, len + d)) });
          }),
        // a message cut short, then bytes that complete no message
        fc.integer({ min: 1, max: 60 }).map((k) => {
          const full = fixFrame(unnumbered("1", [[112, "never"]]));
          return Buffer.concat([
            full.subarray(0, Math.min(k, full.length - 1)),
            Buffer.alloc(full.length + 20, "x"),
          ]);
        }),
      );
      let ignored = 0;
      await fc.assert(
        fc.asyncProperty(broken, async (bytes) => {
          c.writeBytes(bytes);
          ignored++;
          const answers = await probe(c, `after ${JSON.stringify(bytes.toString("latin1"))}`);
          assert.deepEqual(answers.map(show), [], "broken bytes get no answer");
        }),
        { numRuns: Math.min(RUNS, 60) },
      );
      assert.ok(ignored < 100);
      assert.equal(c.closed, false);
    } finally {
      c.destroy();
    }
  });

  it("ends the connection after 100 ignored messages, and for a message over 16 KiB", async () => {
    const c = await logon();
    for (let i = 0; i < 99; i++) c.writeBytes(fixFrame([...c.header("0")], { checkSum: "999" }));
    c.seq -= 99;
    assert.deepEqual(await probe(c, "99 ignored"), []);
    c.writeBytes(fixFrame([...c.header("0")], { checkSum: "999" }));
    const bye = await c.next("the Logout");
    assert.equal(get(bye, 35), "5");
    assert.equal(get(bye, 58), "100 messages ignored");
    assert.ok(await c.waitClosed());

    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 16 * 1024 - 60, max: 64 * 1024 }),
        fc.boolean(),
        async (size, loggedOn) => {
          const d = loggedOn ? await logon() : await RawFix.open(port, "BIG");
          try {
            d.writeBytes(fixFrame([...d.header("0"), [58, "x".repeat(size)]]));
            const m = await d.next("the Logout of a big message");
            assert.equal(get(m, 35), "5", show(m));
            assert.equal(get(m, 58), "message over 16384 bytes");
            assert.ok(await d.waitClosed());
          } finally {
            d.destroy();
          }
        },
      ),
      { numRuns: 8 },
    );
  });

  it("ignores broken bytes before the Logon: the Logon after them is answered", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .uint8Array({ minLength: 1, maxLength: 200 })
          .map((b) => Buffer.from(b.map((x) => (x === 56 ? 57 : x)))),
        async (bytes) => {
          const c = await RawFix.logon(port, fuzzer, `FUZZ${++compIds}`, bytes);
          try {
            assert.deepEqual(await probe(c, "a Logon after garbage"), []);
          } finally {
            c.destroy();
          }
        },
      ),
      { numRuns: 10 },
    );
  });

  it("answers a message before the Logon with a Logout and closes", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("0", "1", "D", "F", "5", "2", "4", "j", "x"), async (type) => {
        const c = await RawFix.open(port, "EARLY");
        try {
          c.write([...c.header(type), [112, "t"]]);
          const m = await c.next("the Logout");
          assert.equal(get(m, 35), "5");
          assert.equal(get(m, 58), "the first message must be a Logon (35=A)");
          assert.ok(await c.waitClosed());
        } finally {
          c.destroy();
        }
      }),
      { numRuns: 9 },
    );
  });

  it("rejects another CompID after the Logon with 373=9, then ends the session", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(49, 56),
        fc.stringMatching(/^[A-Za-z0-9]{0,10}$/),
        async (tag, value) => {
          const c = await logon();
          try {
            const fields = c.header("0").map(([t, v]): Field => [t, t === tag ? `${v}${value}X` : v]);
            c.write(fields);
            const r = await c.next("the Reject");
            assert.equal(get(r, 35), "3", show(r));
            assert.equal(get(r, 371), String(tag));
            assert.equal(get(r, 373), "9");
            const m = await c.next("the Logout");
            assert.equal(get(m, 58), "CompID problem");
            assert.ok(await c.waitClosed());
          } finally {
            c.destroy();
          }
        },
      ),
      { numRuns: 6 },
    );
  });

  it("ends the session when MsgSeqNum is not a number", async () => {
    await fc.assert(
      fc.asyncProperty(fc.stringMatching(/^[0-9]*[A-Za-z.-][0-9A-Za-z]*$/), async (seq) => {
        const c = await logon();
        try {
          c.write([
            [35, "0"],
            [49, c.senderCompId],
            [56, c.targetCompId],
            [34, seq],
            [52, fixTime(new Date())],
          ]);
          const m = await c.next("the Logout");
          assert.equal(get(m, 35), "5");
          assert.equal(get(m, 58), "MsgSeqNum missing or not a number");
          assert.ok(await c.waitClosed());
        } finally {
          c.destroy();
        }
      }),
      { numRuns: 10 },
    );
  });

  it("answers every mutated order message as FIX or the business rules say, and the session stays", async () => {
    const c = await logon();
    const seen = { rejects: 0, answers: 0 };
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom("D", "F", "G", "q", "H", "2"),
          fc.array(mutation, { minLength: 12, maxLength: 12 }),
          unknownTags,
          fc.boolean(),
          async (type, muts, extra, theirs) => {
            const body = mutate(baseBody(type, theirs ? String(bystanderOrder) : "999999"), muts, extra);
            const header = c.header(type);
            c.write([...header, ...body]);
            const answers = await probe(c, `${type} ${show(body)}`);
            assert.equal(answers.length, 1, `one answer to ${show(body)}: ${answers.map(show).join(" ")}`);
            const [answer] = answers;
            const reject = expectedReject(type, body);
            if (reject === null) {
              seen.answers++;
              return checkBusinessAnswer(type, body, answer);
            }
            seen.rejects++;
            assert.equal(get(answer, 35), "3", `Reject of ${show(body)}: ${show(answer)}`);
            assert.equal(get(answer, 45), get(header, 34));
            assert.equal(get(answer, 371), String(reject[0]), `RefTagID of ${show(body)}: ${show(answer)}`);
            assert.equal(get(answer, 373), String(reject[1]), `reason of ${show(body)}: ${show(answer)}`);
          },
        ),
        { numRuns: RUNS * 5 },
      );
      assert.equal(c.closed, false);
      assert.ok(
        seen.rejects > 10 && seen.answers > 10,
        `both kinds of answer were tried: ${JSON.stringify(seen)}`,
      );
    } finally {
      c.destroy();
    }
  });

  it("leaves the server serving and every balance and order as it was", async () => {
    const health = await fetch(`http://127.0.0.1:${server.port}/health`);
    assert.equal(health.status, 200);
    assert.equal(server.running, true);
    assert.deepEqual(await server.balanceTable(bystander), before_.balances);
    assert.deepEqual(await server.allOrders(bystander), before_.orders);
    assert.deepEqual(await server.allOrders(fuzzer), []);
    for (const [currency, [available, reserved]] of Object.entries(await server.balanceTable(fuzzer)))
      assert.ok(Number(available) === 0 && Number(reserved) === 0, `${currency}: ${available} / ${reserved}`);
    // A FIX session still logs on and trades.
    const c = await RawFix.logon(port, bystander, "AFTER");
    c.write([...c.header("H"), [37, String(bystanderOrder)], [55, "btc_usdt"], [54, "2"]]);
    const status = await c.next("the status");
    assert.equal(get(status, 150), "I");
    assert.equal(get(status, 39), "0");
    c.destroy();
  });
});
