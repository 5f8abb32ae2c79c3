/**
 * The command record (src/core/command.ts; docs/ARCHITECTURE.md, "Following a create-order"): its
 * codes, a record's one shape for every kind, the deadline rule (docs/API.md 8.8), and what the
 * core's facade writes into a create's record, seen in the answer of a core of real parts
 * (test/core/core-fixture.ts).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  CID_CHECK_ASKING,
  CID_CHECK_FAILED,
  CID_CHECK_NONE,
  CID_CHECK_UNUSED,
  CID_CHECK_USED,
  CMD_AMEND,
  CMD_CANCEL,
  CMD_CANCEL_ALL,
  CMD_CREATE,
  CMD_MMP,
  CMD_QUOTE,
  CMD_RESTORE,
  expired,
  LIMIT,
  MARKET,
  NEEDS_ROW,
  NO_REQUEST,
  newCommand,
} from "../../src/core/command.ts";
import { Answers } from "../../src/entry/answers.ts";
import { ERRORS } from "../../src/errors/catalogue.ts";
import { BUY, SELL } from "../../src/protocol/pair/engine.ts";
import { tempDir } from "../db/helpers.ts";
import { BTC, placeResting, sendCreate, startCore, type TestCore, USDT } from "./core-fixture.ts";

const KINDS = [CMD_RESTORE, CMD_CREATE, CMD_CANCEL, CMD_AMEND, CMD_CANCEL_ALL, CMD_MMP, CMD_QUOTE];

describe("command codes", () => {
  it("gives every command kind its own number", () => {
    assert.equal(new Set(KINDS).size, KINDS.length);
    for (const k of KINDS) assert.ok(Number.isInteger(k) && k >= 0, `kind ${k}`);
  });

  it("numbers order types as the order facts do: 0 limit, 1 market (docs/API.md 5.1 tradeType)", () => {
    assert.equal(LIMIT, 0);
    assert.equal(MARKET, 1);
  });

  it("gives each client order id check state its own number, NONE being a new record's 0", () => {
    const states = [CID_CHECK_NONE, CID_CHECK_ASKING, CID_CHECK_UNUSED, CID_CHECK_USED, CID_CHECK_FAILED];
    assert.equal(new Set(states).size, states.length);
    assert.equal(newCommand(CMD_CREATE, 1, 1, 0).cidCheck, CID_CHECK_NONE);
  });

  it("has NO_REQUEST 0, below every request id the edge gives", () => {
    assert.equal(NO_REQUEST, 0);
    const answers = new Answers();
    const ids = [
      answers.order(() => {}),
      answers.cancel(() => {}),
      answers.cancelAll(() => {}),
      answers.quote(() => {}),
    ];
    for (const id of ids) {
      assert.ok(id > NO_REQUEST, `request id ${id}`);
      answers.drop(id);
    }
  });

  it("answers NEEDS_ROW with a number no catalogue code has", () => {
    const codes = Object.values(ERRORS).map((e) => e.code);
    assert.ok(codes.length > 10);
    assert.ok(!codes.includes(NEEDS_ROW as never));
    assert.ok(NEEDS_ROW < 0);
    assert.notEqual(NEEDS_ROW, 0, "0 answers a cancel that went through");
  });
});

describe("newCommand", () => {
  it("makes every kind the same shape, keys in the same order, with its kind, request, user and pair", () => {
    const shape = Object.keys(newCommand(CMD_CREATE, 1, 2, 3));
    for (const kind of KINDS) {
      const cmd = newCommand(kind, 11, 22, 33);
      assert.deepEqual(Object.keys(cmd), shape, `kind ${kind}`);
      assert.deepEqual([cmd.kind, cmd.request, cmd.user, cmd.pair], [kind, 11, 22, 33]);
    }
  });

  it("starts with nothing held, no order, no answer and no deadline", () => {
    const cmd = newCommand(CMD_CANCEL, NO_REQUEST, 5, 0);
    assert.equal(cmd.orderId, 0);
    assert.equal(cmd.order, null);
    assert.equal(cmd.hold, 0n);
    assert.equal(cmd.result, 0);
    assert.equal(cmd.view, null);
    assert.equal(cmd.expiresAt, 0);
    assert.equal(expired(cmd.expiresAt), false);
    // Every field has a value but the client order id, which only a create may carry.
    const unset = Object.entries(cmd)
      .filter(([, v]) => v === undefined)
      .map(([k]) => k);
    assert.deepEqual(unset, ["clientOrderId"]);
  });

  it("gives each record its own object: a change to one is not seen in another", () => {
    const a = newCommand(CMD_CREATE, 1, 1, 0);
    const b = newCommand(CMD_CREATE, 2, 1, 0);
    a.amount = 7;
    a.hold = 9n;
    assert.equal(b.amount, 0);
    assert.equal(b.hold, 0n);
  });
});

describe("expired", () => {
  it("never expires a call without a deadline (0)", () => {
    assert.equal(expired(0), false);
  });

  it("expires a call whose deadline has passed, and not one whose deadline is ahead (docs/API.md 8.8)", () => {
    assert.equal(expired(Date.now() - 1), true);
    assert.equal(expired(1), true, "1 ms after the epoch is long gone");
    assert.equal(expired(Date.now() + 60_000), false);
  });
});

describe("the facade's command records on a real core", () => {
  const tmp = tempDir("command");
  let core: TestCore;
  before(async () => {
    core = await startCore(tmp.dbPath);
  });
  after(async () => {
    await core?.close();
    tmp.cleanup();
  });

  it("makes a session's create cancel-on-disconnect (docs/API.md 8.9), and a create without session not", async () => {
    core.ledger.deposit(1, USDT, 1_000_000n);
    const tagged = sendCreate(core, 1, BUY, 9_000, 1, { session: 5 });
    const { err, order } = await tagged.answer;
    assert.equal(err, 0);
    assert.equal(order!.cancelOnDisconnect, true);
    const plain = await placeResting(core, 1, BUY, 9_000, 1);
    assert.equal("cancelOnDisconnect" in plain, false);
  });

  it("ignores a market order's price: it fills at the book's and shows the average price (docs/API.md 5.1)", async () => {
    core.ledger.deposit(2, BTC, 10n);
    core.ledger.deposit(3, USDT, 1_000_000n);
    await placeResting(core, 2, SELL, 10_000, 2);
    // A price of 1 tick would stop a limit buy from filling at 100.00.
    const buy = sendCreate(core, 3, BUY, 1, 2, { type: MARKET });
    const { err, order } = await buy.answer;
    assert.equal(err, 0);
    assert.equal(order!.tradeType, "market");
    assert.equal(order!.amountUsed, 0.000002);
    assert.equal(order!.price, 100);
  });

  it("refuses a call whose deadline passed before its risk check, with nothing changed (docs/API.md 8.8)", async () => {
    core.ledger.deposit(4, USDT, 50_000n);
    const late = sendCreate(core, 4, BUY, 10_000, 5, { expiresAt: Date.now() - 1 });
    const { err } = await late.answer;
    assert.equal(err, ERRORS.REQUEST_EXPIRED.code);
    assert.equal(core.ledger.available(4, USDT), 50_000n);
    assert.equal(core.ledger.reserved(4, USDT), 0n);
    assert.deepEqual(core.exchange.openOrderIds(4, 0), []);
  });
});
