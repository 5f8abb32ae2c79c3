/**
 * Fuzzed session frames (docs/API.md 13) against the real server: 10,000 random frames (random text,
 * random JSON, random objects shaped like calls with random params), huge frames and binary ones.
 * Each answers a clear 400 with an errors body, the connection stays, the server keeps serving,
 * and nothing of the user changes.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { sharedServer, type TestServer } from "../e2e/harness.ts";
import { waitFor } from "../wait.ts";
import { SessionSocket } from "./helpers.ts";

/** Methods whose every random params fail validation (no call that succeeds on `{}`). */
const METHODS = [
  "order.create",
  "order.cancel",
  "order.amend",
  "orders.create",
  "orders.cancel",
  "order.get",
  "orders.open",
];

const frame = fc.oneof(
  fc.string({ maxLength: 64 }),
  fc.json({ maxDepth: 3 }),
  fc
    .record(
      {
        id: fc.oneof(fc.integer({ min: -5, max: 1e9 }), fc.string({ maxLength: 40 }), fc.constant(null)),
        method: fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 20 })),
        params: fc.oneof(fc.object({ maxDepth: 2 }), fc.anything({ maxDepth: 1 })),
        extra: fc.anything({ maxDepth: 1 }),
      },
      { requiredKeys: [] },
    )
    .map((o) => JSON.stringify(o)),
);

describe("session fuzzing", () => {
  let server: TestServer;
  sharedServer((s) => {
    server = s;
  });

  it("answers 400 to 10,000 random frames and binary frames, 413 to huge ones, and changes nothing", async () => {
    const u = await server.newUser({ usdt: "1000", btc: "1" });
    const resting = await u.client.createOrder({
      pairName: "btc_usdt",
      tradeType: "limit",
      directionType: "buy",
      price: "10",
      amount: "1",
    });
    assert.equal(resting.status, 200);
    const before = [await server.balanceTable(u), await server.allOrders(u)];
    const s = await SessionSocket.logon(server, u);
    const frames = fc.sample(frame, { numRuns: 10_000, seed: 29 });
    // Over 64 KiB: 413 errors.body, the connection kept (docs/API.md 11.2).
    const huge = new Set([frames.length, frames.length + 1]);
    frames.push(
      "x".repeat(100_000),
      JSON.stringify({ id: 1, method: "ping", params: { pad: "y".repeat(70_000) } }),
    );
    let answered = s.frames.filter((f) => "status" in f).length;
    const chunk = 500;
    for (let i = 0; i < frames.length; i += chunk) {
      const part = frames.slice(i, i + chunk);
      for (const f of part) s.send(f);
      const want = answered + part.length;
      await waitFor(() => s.frames.filter((f) => "status" in f).length >= want, {
        what: `answers to frames ${i}..${i + part.length}`,
        timeoutMs: 30_000,
      });
      answered = want;
    }
    s.send(Buffer.from([0x7b, 0x7d]), true);
    const answers = s.frames.filter((f) => "status" in f).slice(1);
    await waitFor(() => s.frames.filter((f) => "status" in f).length === answers.length + 2, {
      what: "the binary frame's answer",
    });
    const all = s.frames.filter((f) => "status" in f).slice(1);
    assert.equal(all.length, frames.length + 1);
    all.forEach((a, i) => {
      const status = huge.has(i) ? 413 : 400;
      assert.equal(
        a.status,
        status,
        `frame ${JSON.stringify(frames[i])?.slice(0, 200)}: ${JSON.stringify(a)}`,
      );
      if (huge.has(i)) assert.deepEqual(a.codes, { body: ["BODY_TOO_LARGE"] });
      assert.ok(Object.keys(a.errors as object).length > 0);
      assert.ok(Object.keys(a.codes as object).length > 0);
    });
    assert.equal(s.closeCode, null);
    assert.equal((await s.call("ping", undefined, "after-fuzz")).status, 200);
    assert.deepEqual([await server.balanceTable(u), await server.allOrders(u)], before);
    s.close();
  });
});
