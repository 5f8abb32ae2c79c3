/**
 * The example session of docs/FIX.md section 9 runs as written against a real server: the client's
 * messages are sent in order over TCP, each with what a document cannot fix put in (SendingTime,
 * TransactTime, the Username and the Logon's RawData for the test user's key, order ids learnt from
 * earlier reports, BodyLength and CheckSum), and each server message of the example must arrive on
 * its session with the same MsgType and, tag by tag, the same values, except the tags that vary
 * from run to run. Received bytes are framed and read here, with nothing of src/fix.
 *
 * FIX_DOC_RECORD=1 prints the session as it ran, in the document's form.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { REPO_ROOT, TestServer, type TestUser } from "../e2e/harness.ts";
import { fixPortOf } from "../fix/helpers.ts";
import { fixFrame, fixTime, logonSignature } from "../fix/jspurefix-client.ts";
import { type Field, parseFrame, RawFix, show } from "../fix/raw-fix.ts";

/** Tags whose values differ from run to run: not compared. */
const VARYING = new Set([9, 10, 52, 60, 17, 880, 122, 553, 95, 96]);
/** Tags the test fills in on the client's messages. */
const NOW_TAGS = new Set([52, 60]);
const ORDER_ID = 37;

interface Line {
  readonly session: string;
  readonly fromClient: boolean;
  readonly fields: Field[];
  readonly text: string;
}

/** The ```fix block after "## 9." in docs/FIX.md: `SESSION > fields` (sent) and `SESSION < fields`. */
function exampleLines(): Line[] {
  const doc = readFileSync(join(REPO_ROOT, "docs", "FIX.md"), "utf8");
  const at = doc.indexOf("\n## 9. ");
  assert.ok(at >= 0, "docs/FIX.md has a section 9");
  const block = /^```fix\n([\s\S]*?)^```$/m.exec(doc.slice(at));
  assert.ok(block !== null, "a ```fix block follows it");
  const lines: Line[] = [];
  for (const raw of block[1].split("\n")) {
    const text = raw.trim();
    if (text === "" || text.startsWith("#")) continue;
    const m = /^(\S+) ([<>]) (8=FIX\.4\.4\|.*\|)$/.exec(text);
    assert.ok(m !== null, `an example line is "SESSION > 8=...|" or "SESSION < 8=...|": ${text}`);
    const fields = m[3]
      .slice(0, -1)
      .split("|")
      .map((f): Field => {
        const eq = f.indexOf("=");
        return [Number(f.slice(0, eq)), f.slice(eq + 1)];
      });
    lines.push({ session: m[1], fromClient: m[2] === ">", fields, text });
  }
  return lines;
}

/** The differences of `got` from `want`: tags in order, and values of the tags that do not vary. */
function diff(want: readonly Field[], got: readonly Field[], ids: Map<string, string>): string[] {
  const out: string[] = [];
  const wantTags = want.map(([t]) => t).join(",");
  const gotTags = got.map(([t]) => t).join(",");
  if (wantTags !== gotTags) out.push(`tags: expected ${wantTags}\n          got ${gotTags}`);
  for (const [tag, value] of want) {
    if (VARYING.has(tag)) continue;
    const actual = got.find(([t]) => t === tag)?.[1];
    if (tag === ORDER_ID && value !== "NONE" && actual !== undefined) {
      const known = ids.get(value);
      if (known === undefined) ids.set(value, actual);
      else if (known !== actual) out.push(`37: the document's ${value} is ${known}, got ${actual}`);
      continue;
    }
    if (actual !== value)
      out.push(`${tag}: expected ${JSON.stringify(value)}, got ${JSON.stringify(actual)}`);
  }
  return out;
}

describe("docs/FIX.md example session", () => {
  let server: TestServer;
  let users: Record<string, TestUser>;

  before(async () => {
    server = await TestServer.start({
      args: ["--fix-port", "0"],
      pairFees: { btc_usdt: { makerFee: "0.001", takerFee: "0.002" } },
    });
    users = {
      MAKER1: await server.newUser({ btc: "1", usdt: "5000" }),
      TAKER1: await server.newUser({ usdt: "10000" }),
    };
  });
  after(async () => {
    await server?.close();
  });

  it("runs as written: every server message arrives with the document's values", async () => {
    const lines = exampleLines();
    const conns = new Map<string, RawFix>();
    const ids = new Map<string, string>();
    const record: string[] = [];
    const failures: string[] = [];
    const recording = process.env.FIX_DOC_RECORD === "1";
    for (const line of lines) {
      const user = users[line.session];
      assert.ok(user !== undefined, `the example's sessions are ${Object.keys(users).join(", ")}`);
      if (line.fromClient) {
        let conn = conns.get(line.session);
        if (conn === undefined || conn.closed) {
          conn = await RawFix.open(fixPortOf(server));
          conns.set(line.session, conn);
        }
        const now = fixTime(new Date());
        const fields = line.fields
          .filter(([t]) => t !== 8 && t !== 9 && t !== 10)
          .map(([t, v]): Field => {
            if (NOW_TAGS.has(t)) return [t, now];
            if (t === 553) return [t, user.apiToken];
            if (t === ORDER_ID) return [t, ids.get(v) ?? v];
            return [t, v];
          });
        if (fields.some(([t]) => t === 96)) {
          const get = (tag: number) => fields.find(([t]) => t === tag)?.[1] ?? "";
          const sig = logonSignature(user.secretKey, get(52), get(34), get(49), get(56));
          for (const f of fields) if (f[0] === 96) f[1] = sig;
        }
        const frame = fixFrame(fields);
        conn.writeBytes(frame);
        if (recording) {
          record.push(`${line.session} > ${show(parseFrame(frame))}`);
          await new Promise((r) => setTimeout(r, 300));
          for (const [name, c] of conns) for (const m of c.take()) record.push(`${name} < ${show(m)}`);
        }
        continue;
      }
      if (recording) continue;
      const conn = conns.get(line.session);
      assert.ok(conn !== undefined, `${line.session} has sent nothing before: ${line.text}`);
      const got = await conn.next(`${line.session}: ${line.text}`).catch(() => null);
      if (got === null) {
        failures.push(`${line.session}: no message arrived for\n  ${line.text}`);
        break;
      }
      record.push(`${line.session} < ${show(got)}`);
      const d = diff(line.fields, got, ids);
      if (d.length > 0)
        failures.push(
          `${line.session}: expected\n  ${line.text}\ngot\n  ${line.session} < ${show(got)}\n  ${d.join("\n  ")}`,
        );
    }
    if (recording) return console.log(record.join("\n"));
    assert.ok(lines.length > 20, `the example has ${lines.length} messages`);
    // Nothing more arrives on a session than the example shows, and each logged-out one is closed.
    await new Promise((r) => setTimeout(r, 200));
    for (const [name, conn] of conns) {
      for (const m of conn.unread())
        failures.push(`${name}: a message the example does not show: ${show(m)}`);
      if (!conn.closed) failures.push(`${name}: the server did not close the connection after the Logout`);
      conn.destroy();
    }
    if (failures.length > 0) assert.fail(failures.join("\n\n"));
  });
});
