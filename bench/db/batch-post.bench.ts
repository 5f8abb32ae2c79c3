/**
 * Question: what does handing one writer batch to the writer thread cost, with its records in a
 * copied ArrayBuffer (the previous way), a transferred one, or a shared SharedArrayBuffer (now,
 * src/db/batch-builder.ts `wires`)? The message is shaped like a batch: 8 KiB of record slots (the
 * smallest wire), a few strings, the per-kind counts.
 *
 *   this thread ── postMessage(batch) ──▶ receiving thread (reads the first and last slot, counts)
 *
 * CPU from process.cpuUsage: both threads, so the clone on one side and the copy out on the other
 * are both counted. Variants alternate in rounds. Checksum: the receiver's sum of the slots it
 * read equals what was sent.
 *
 * Run: npx tsx bench/db/batch-post.bench.ts [--quick]
 */
import os from "node:os";
import { Worker } from "node:worker_threads";

const N = process.argv.includes("--quick") ? 5_000 : 20_000;
const ROUNDS = 3;
const SLOTS = 1024;
const KINDS = 14;

const receiver = new Worker(
  `const { parentPort } = require("node:worker_threads");
   let sum = 0;
   parentPort.on("message", (m) => {
     if (m.t === "sum") return parentPort.postMessage(sum);
     const f = new Float64Array(m.slots);
     sum += f[0] + f[f.length - 1] + m.counts.length;
   });`,
  { eval: true },
);

type Variant = { name: string; send: () => void };
// Every batch carries the same slots (first 1, last 0), so the receiver's sum is exact.
const copied = new Float64Array(SLOTS);
copied[0] = 1;
const shared = new Float64Array(new SharedArrayBuffer(SLOTS * 8));
shared[0] = 1;
const message = (slots: ArrayBuffer | SharedArrayBuffer) => ({
  t: "batch",
  seq: 1,
  syms: [],
  strs: ["btc_usdt", "client-order-1"],
  slots,
  counts: new Array(KINDS).fill(1),
});
let expected = 0;
const variants: Variant[] = [
  {
    name: "copied ArrayBuffer (structured clone)",
    send: () => receiver.postMessage(message(copied.buffer)),
  },
  {
    name: "transferred ArrayBuffer (new each batch)",
    send: () => {
      const f = new Float64Array(SLOTS);
      f[0] = 1;
      receiver.postMessage(message(f.buffer), [f.buffer]);
    },
  },
  {
    name: "shared SharedArrayBuffer",
    send: () => receiver.postMessage(message(shared.buffer)),
  },
];

const cpu = new Map<string, number>();
for (let r = 0; r < ROUNDS; r++) {
  for (const v of variants) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < N; i++) {
      v.send();
      expected += 1 + KINDS;
      // One batch in flight at a time, as the writer runs: wait for the receiver now and then.
      if (i % 64 === 63) await roundTrip();
    }
    await roundTrip();
    const c = process.cpuUsage(c0);
    cpu.set(v.name, (cpu.get(v.name) ?? 0) + c.user + c.system);
  }
}

console.log(
  `node ${process.version}, ${os.cpus().length} CPUs, load average ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}; ${N} posts x ${ROUNDS} rounds per variant`,
);
console.log("| variant | CPU µs per batch (both threads) | vs copied |");
console.log("|---|---:|---:|");
const base = cpu.get(variants[0].name)! / (N * ROUNDS);
for (const v of variants) {
  const us = cpu.get(v.name)! / (N * ROUNDS);
  console.log(`| ${v.name} | ${us.toFixed(2)} | ${(us / base).toFixed(2)} |`);
}
const sum = await new Promise<number>((resolve) => {
  receiver.once("message", resolve);
  receiver.postMessage({ t: "sum" });
});
if (sum !== expected) throw new Error(`checksum: the receiver read ${sum}, expected ${expected}`);
console.log(`checksum: ${sum} (every batch read whole)`);
await receiver.terminate();

function roundTrip(): Promise<void> {
  return new Promise((resolve) => {
    receiver.once("message", () => resolve());
    receiver.postMessage({ t: "sum" });
  });
}
