/**
 * The sequencer (src/core/sequencer.ts) against a real pair worker with a tiny command ring: it
 * numbers creates itself in FIFO order, and past MAX_WAITING waiting commands it refuses (the edge
 * answers 503) with nothing sent.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CMD_CREATE, type Command, LIMIT, NO_REQUEST, newCommand } from "../../src/core/command.ts";
import { OpenOrders } from "../../src/core/open-orders.ts";
import { MAX_WAITING, PairSequencer, SequenceIds } from "../../src/core/sequencer.ts";
import { PairChannel } from "../../src/pair/pair-client.ts";
import { NO_BUDGET, SELL } from "../../src/protocol/pair/engine.ts";
import { EV_END, EV_KIND } from "../../src/protocol/pair/records.ts";
import { waitFor } from "../wait.ts";

function sell(user: number, price: number): Command {
  const cmd = newCommand(CMD_CREATE, NO_REQUEST, user, 0);
  cmd.type = LIMIT;
  cmd.side = SELL;
  cmd.price = price;
  cmd.amount = 1;
  cmd.flags = 0;
  cmd.budget = NO_BUDGET;
  return cmd;
}

describe("PairSequencer", () => {
  it("numbers creates in submission order, finishes them in FIFO order, and refuses past the bound", async () => {
    const finished: Command[] = [];
    let seq: PairSequencer | null = null;
    const channel = new PairChannel({
      pairName: "btc_usdt",
      commandSlots: 4,
      onEvent: (f, o) => {
        if (f[o + EV_KIND] === EV_END) {
          const cmd = seq!.finish();
          if (cmd !== undefined) finished.push(cmd);
        }
      },
    });
    await channel.ready;
    try {
      const ids = new SequenceIds(100, 1);
      seq = new PairSequencer(0, channel, ids, new OpenOrders(), {
        settle: () => assert.fail("no cancel-all was sent"),
      });
      // One synchronous burst: the ring takes 4, MAX_WAITING wait, the next one is refused.
      const submitted: Command[] = [];
      let refused = 0;
      for (let i = 0; i < 4 + MAX_WAITING + 3; i++) {
        const cmd = sell(i % 7, 1_000 + i);
        if (seq.submit(cmd)) submitted.push(cmd);
        else refused++;
      }
      assert.equal(submitted.length, 4 + MAX_WAITING);
      assert.equal(refused, 3);
      // Only what entered the ring has an id; waiting ones get theirs as they enter.
      assert.equal(ids.nextOrderId, 104);
      assert.equal(seq.inFlight, 4 + MAX_WAITING);
      await waitFor(() => finished.length === submitted.length, {
        timeoutMs: 30_000,
        what: "every accepted command finished",
      });
      assert.deepEqual(
        finished.map((c) => c.orderId),
        submitted.map((_, i) => 100 + i),
      );
      assert.ok(finished.every((c, i) => c === submitted[i] && c.order!.id === c.orderId));
      assert.equal(ids.nextOrderId, 100 + submitted.length);
      assert.equal(seq.inFlight, 0);
      // Room again: a new command is accepted.
      assert.equal(seq.submit(sell(0, 50)), true);
      await waitFor(() => finished.length === submitted.length + 1, { what: "the command after the burst" });
    } finally {
      await channel.close();
    }
  });
});
