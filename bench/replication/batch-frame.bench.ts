/**
 * Question: what does one journal row cost to frame on the leader and to read back into a decoded
 * batch on the follower, as a BATCH frame (protocol version 3, src/replication/protocol.ts) against
 * the JSON message with base64 slots of version 2?
 *
 * The rows are real: a DbWriter on a temporary database journals batches of N create-orders each
 * (an ORDER, an EXECUTION, two balances per order), read back from its journal file. Per row:
 *   encode  the leader's side: v2 JSON.stringify of the message with the slots in base64, then
 *           the frame; v3 batchFrame (which the writer thread now runs);
 *   decode  the follower's side from the frame's payload: v2 JSON.parse and base64 back to bytes;
 *           v3 parseBatch; then, both, the journal's decode (slots to numbers), as the follower does.
 * tinybench, mean time per row.
 *
 *   npx tsx bench/replication/batch-frame.bench.ts [--orders 16,64]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Bench } from "tinybench";
import { DbWriter } from "../../src/db/writer.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";
import { decode, type JournalRow, journalPath } from "../../src/protocol/db/journal.ts";
import { EXEC_ORDER } from "../../src/protocol/db/rows.ts";
import { batchFrame, jsonFrame, parseBatch, parseMessage } from "../../src/replication/protocol.ts";

const { values: flags } = parseArgs({ options: { orders: { type: "string" } } });
const SIZES = (flags.orders ?? "16,64").split(",").map(Number);

/** A journal row of `n` create-orders, as the journal stores it. */
async function rowOf(dir: string, n: number): Promise<JournalRow> {
  const file = join(dir, `rows-${n}.db`);
  const w = await DbWriter.start(file);
  for (let i = 1; i <= n; i++) {
    const user = 1 + (i % 7);
    w.order(
      1000 + i,
      user,
      "btc_usdt",
      i % 2,
      0,
      3_000_000 + i,
      10_000 + i,
      0,
      false,
      200 + i,
      200 + i,
      0,
      undefined,
      i,
    );
    w.execution(user, i, EXEC_ORDER, 1000 + i);
    w.balance(user, "usdt", BigInt(1_000_000_000 - i * 3_000_000), BigInt(i * 3_000_000));
    w.balance(user, "btc", 10_000_000_000n, 0n);
  }
  await w.flush();
  const j = openDatabase(journalPath(file), { readonly: true });
  const row = j.prepare<[], JournalRow>("SELECT * FROM journal ORDER BY seq DESC LIMIT 1").get()!;
  j.close();
  await w.close();
  return row;
}

/** Version 2's batch message. */
function v2Frame(r: JournalRow): Buffer {
  return jsonFrame({
    t: "batch",
    key: r.seq,
    counts: r.counts,
    slots: r.slots.toString("base64"),
    strs: r.strs,
    settledBelow: r.settled_below,
    layout: r.layout ?? 0,
  } as never);
}

function v2Read(payload: Buffer): JournalRow {
  const m = parseMessage(payload) as {
    key: number;
    counts: string;
    slots: string;
    strs: string;
    settledBelow: number;
    layout: number;
  };
  return {
    seq: m.key,
    counts: m.counts,
    slots: Buffer.from(m.slots, "base64"),
    strs: m.strs,
    settled_below: m.settledBelow,
    layout: m.layout,
  };
}

const dir = mkdtempSync(join(tmpdir(), "bench-batch-frame-"));
try {
  for (const n of SIZES) {
    const row = await rowOf(dir, n);
    const v2 = v2Frame(row).subarray(5);
    const v3 = batchFrame(row).subarray(5);
    // Both carry the same row.
    const a = decode(v2Read(v2));
    const b = decode(parseBatch(v3));
    if (JSON.stringify([...a.slots]) !== JSON.stringify([...b.slots]) || a.strs.join() !== b.strs.join())
      throw new Error("v2 and v3 frames decode to different rows");
    let sink = 0;
    const bench = new Bench({ time: 500 });
    bench
      .add(`encode v2 (JSON, base64)`, () => {
        sink += v2Frame(row).length;
      })
      .add(`encode v3 (BATCH frame)`, () => {
        sink += batchFrame(row).length;
      })
      .add(`decode v2`, () => {
        sink += decode(v2Read(v2)).slots.length;
      })
      .add(`decode v3`, () => {
        sink += decode(parseBatch(v3)).slots.length;
      });
    await bench.run();
    console.log(
      `row of ${n} orders: slots ${row.slots.length} B, strs ${row.strs.length} chars; frame v2 ${v2.length + 5} B, v3 ${v3.length + 5} B`,
    );
    for (const t of bench.tasks) {
      const r = t.result;
      const us = r.state === "completed" ? (r.period * 1000).toFixed(2) : r.state;
      console.log(`  ${t.name.padEnd(28)} ${us.padStart(8)} µs per row`);
    }
    if (sink < 0) console.log(sink);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
