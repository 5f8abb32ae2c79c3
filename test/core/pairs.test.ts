/**
 * A pair as the core's stages see it (src/core/pairs.ts): the record `newPairState` builds (scale
 * factors between book and ledger units, the currencies' ledger indexes, fee rates, the read
 * model's committed seq), and the lowest order id that may still get a record, which the writer's
 * `user_orders` rows rely on (src/db/writer.ts settledOrderIds).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ClientIds } from "../../src/core/client-ids.ts";
import { CMD_CANCEL, CMD_CREATE, LIMIT, NO_REQUEST, newCommand } from "../../src/core/command.ts";
import { ExecSeqs } from "../../src/core/exec-seqs.ts";
import { Ledger } from "../../src/core/ledger.ts";
import { OpenOrders } from "../../src/core/open-orders.ts";
import { lowestUnsettledOrderId, newPairState, type PairSpec, type PairState } from "../../src/core/pairs.ts";
import { PairMarket } from "../../src/core/read-models/pair-market.ts";
import { Results } from "../../src/core/results.ts";
import { PairSequencer, SequenceIds } from "../../src/core/sequencer.ts";
import { DbWriter } from "../../src/db/writer.ts";
import { PairChannel } from "../../src/pair/pair-client.ts";
import { NO_BUDGET, SELL } from "../../src/protocol/pair/engine.ts";
import { EV_END, EV_KIND } from "../../src/protocol/pair/records.ts";
import { tempDir } from "../db/helpers.ts";
import { waitFor } from "../wait.ts";

const SPEC: PairSpec = {
  index: 0,
  name: "btc_usdt",
  base: "btc",
  quote: "usdt",
  priceDecimals: 2,
  amountDecimals: 6,
};

describe("pairs", () => {
  const tmp = tempDir("pairs");
  let writer: DbWriter;
  let channel: PairChannel;
  /** END records the worker reported; the test never finishes a command, so every one stays in the worker. */
  let ends = 0;
  const ids = new SequenceIds(100, 1);
  const openOrders = new OpenOrders();
  let results: Results;

  before(async () => {
    writer = await DbWriter.start(tmp.dbPath);
    results = new Results(writer, [], { openOrders, clientIds: new ClientIds(), execSeqs: new ExecSeqs() });
    channel = new PairChannel({
      pairName: "btc_usdt",
      onEvent: (f, o) => {
        if (f[o + EV_KIND] === EV_END) ends++;
      },
    });
    await channel.ready;
  });

  after(async () => {
    await channel.close();
    await writer.close();
    tmp.cleanup();
  });

  const sequencer = (index = 0) => new PairSequencer(index, channel, ids, openOrders, results);

  it("scales book units to ledger units by the currencies' decimals beyond the pair's", () => {
    // The ledger keeps btc at 8 decimals and usdt at 10: a lot (10^-6 btc) is 10^2 btc units, a
    // tick × lot (10^-8 usdt) 10^2 usdt units.
    const p = newPairState(
      SPEC,
      new Ledger(["btc", "usdt"]),
      new PairMarket("btc_usdt", 2, 6),
      sequencer(),
      8,
      10,
      0,
      0,
    );
    assert.equal(p.baseMul, 100n);
    assert.equal(p.quoteMul, 100n);
    // At the pair's own decimals a lot and a tick × lot are one unit each.
    const q = newPairState(
      SPEC,
      new Ledger(["btc", "usdt"]),
      new PairMarket("btc_usdt", 2, 6),
      sequencer(),
      6,
      8,
      0,
      0,
    );
    assert.equal(q.baseMul, 1n);
    assert.equal(q.quoteMul, 1n);
  });

  it("finds its currencies in the ledger by name, whatever their order there", () => {
    const ledger = new Ledger(["eth", "usdt", "btc"]);
    const p = newPairState(SPEC, ledger, new PairMarket("btc_usdt", 2, 6), sequencer(), 6, 8, 0, 0);
    assert.equal(p.base, 2);
    assert.equal(p.quote, 1);
  });

  it("has no fees when no rate is given, and fees when either rate is not 0 (docs/API.md 9)", () => {
    const ledger = new Ledger(["btc", "usdt"]);
    const market = () => new PairMarket("btc_usdt", 2, 6);
    const none = newPairState(SPEC, ledger, market(), sequencer(), 6, 8, 0, 0);
    assert.equal(none.hasFees, false);
    assert.deepEqual([none.makerFee, none.takerFee, none.makerRate, none.takerRate], [0n, 0n, 0, 0]);
    const zero = newPairState(
      { ...SPEC, makerFee: 0n, takerFee: 0n },
      ledger,
      market(),
      sequencer(),
      6,
      8,
      0,
      0,
    );
    assert.equal(zero.hasFees, false);
    const takerOnly = newPairState(
      { ...SPEC, takerFee: 2_000n },
      ledger,
      market(),
      sequencer(),
      12,
      14,
      0,
      0,
    );
    assert.equal(takerOnly.hasFees, true);
    assert.deepEqual([takerOnly.makerFee, takerOnly.takerFee], [0n, 2_000n]);
    assert.deepEqual([takerOnly.makerRate, takerOnly.takerRate], [0, 2_000]);
    const makerOnly = newPairState({ ...SPEC, makerFee: 1n }, ledger, market(), sequencer(), 12, 14, 0, 0);
    assert.equal(makerOnly.hasFees, true);
    assert.equal(makerOnly.makerRate, 1);
  });

  it("starts from the book sequence last committed: the record and its read model both hold it", () => {
    const market = new PairMarket("btc_usdt", 2, 6);
    const seq = sequencer();
    const p = newPairState(SPEC, new Ledger(["btc", "usdt"]), market, seq, 6, 8, 41, 1_764_201_600_123_456);
    assert.equal(p.bookSeq, 41);
    assert.equal(p.bookMicro, 1_764_201_600_123_456);
    assert.equal(market.seq, 41);
    assert.equal(market.bookMicro, 1_764_201_600_123_456);
    assert.equal(p.market, market);
    assert.equal(p.seq, seq);
    assert.equal(p.spec, SPEC);
    // Nothing of a command in progress, and no L3 book followed.
    assert.equal(p.seqDirty, false);
    assert.deepEqual([p.touched, p.trades, p.userTrades, p.levels], [[], [], [], []]);
    assert.equal(p.l3, null);
    assert.equal(p.l3Pending, false);
  });

  it("gives the next order id as the lowest unsettled one while no create is in a worker, also with no pair or a gap", () => {
    assert.equal(lowestUnsettledOrderId([], 17), 17);
    const p = newPairState(
      SPEC,
      new Ledger(["btc", "usdt"]),
      new PairMarket("btc_usdt", 2, 6),
      sequencer(),
      6,
      8,
      0,
      0,
    );
    const sparse: PairState[] = [];
    sparse[2] = p;
    assert.equal(lowestUnsettledOrderId(sparse, 17), 17);
  });

  it("gives the oldest create still in a worker, over every pair, and a cancel in a worker does not count", async () => {
    const ledger = new Ledger(["btc", "usdt"]);
    const a = newPairState(SPEC, ledger, new PairMarket("btc_usdt", 2, 6), sequencer(0), 6, 8, 0, 0);
    const b = newPairState(
      { ...SPEC, index: 1 },
      ledger,
      new PairMarket("btc_usdt", 2, 6),
      sequencer(1),
      6,
      8,
      0,
      0,
    );
    const create = (pair: number) => {
      const cmd = newCommand(CMD_CREATE, NO_REQUEST, 1, pair);
      cmd.type = LIMIT;
      cmd.side = SELL;
      cmd.price = 10_000;
      cmd.amount = 1;
      cmd.budget = NO_BUDGET;
      return cmd;
    };
    const cancel = newCommand(CMD_CANCEL, NO_REQUEST, 1, 0);
    cancel.orderId = 5;
    const before = ends;
    // A cancel enters pair a's worker first: not a create, so it holds no id back.
    assert.equal(a.seq.submit(cancel), true);
    assert.equal(lowestUnsettledOrderId([a, b], ids.nextOrderId), ids.nextOrderId);
    const first = ids.nextOrderId;
    assert.equal(b.seq.submit(create(1)), true);
    assert.equal(a.seq.submit(create(0)), true);
    assert.equal(ids.nextOrderId, first + 2, "each create took its id as it entered the ring");
    await waitFor(() => ends >= before + 3, { what: "the worker's END of the three commands" });
    // Pair b's create took the lower id; neither command was finished by the core.
    assert.equal(lowestUnsettledOrderId([a, b], ids.nextOrderId), first);
    assert.equal(lowestUnsettledOrderId([a], ids.nextOrderId), first + 1);
    // Once the core finishes b's create, a's is the oldest.
    b.seq.finish();
    assert.equal(lowestUnsettledOrderId([a, b], ids.nextOrderId), first + 1);
    a.seq.finish();
    a.seq.finish();
    assert.equal(lowestUnsettledOrderId([a, b], ids.nextOrderId), ids.nextOrderId);
  });
});
