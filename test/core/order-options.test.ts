/**
 * An order's option bits (src/core/order-options.ts): what the matching engine is sent and what a record
 * shows, for the self-trade modes and market-maker protection (docs/API.md 8.10, 8.11) beside the
 * options that were there before.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  engineFlags,
  FLAG_CANCEL_ON_DISCONNECT,
  FLAG_POST_ONLY,
  ORDER_MMP,
  selfTradePreventionFlags,
  TIF_GIVEN,
  TIF_IOC,
  withOrderOptions,
} from "../../src/core/order-options.ts";
import { FLAG_MMP, STP_CANCEL_BOTH, STP_CANCEL_TAKER } from "../../src/protocol/pair/engine.ts";

describe("order option bits", () => {
  it("sends the engine its own bits: protection as FLAG_MMP, the STP mode as it is, nothing of the core's", () => {
    assert.equal(engineFlags(ORDER_MMP), FLAG_MMP);
    assert.equal(engineFlags(TIF_GIVEN | FLAG_CANCEL_ON_DISCONNECT), 0, "bits 3 and 4 are the core's");
    assert.equal(
      engineFlags(TIF_IOC | TIF_GIVEN | FLAG_POST_ONLY | STP_CANCEL_BOTH | FLAG_CANCEL_ON_DISCONNECT),
      TIF_IOC | FLAG_POST_ONLY | STP_CANCEL_BOTH,
    );
    assert.equal(engineFlags(ORDER_MMP | STP_CANCEL_TAKER), FLAG_MMP | STP_CANCEL_TAKER);
  });

  it("reads the STP names, and nothing else", () => {
    assert.equal(selfTradePreventionFlags("cancelMaker"), 0);
    assert.equal(selfTradePreventionFlags("cancelTaker"), STP_CANCEL_TAKER);
    assert.equal(selfTradePreventionFlags("cancelBoth"), STP_CANCEL_BOTH);
    for (const bad of ["CancelTaker", "", null, 0, 32, undefined])
      assert.equal(selfTradePreventionFlags(bad), -1);
  });

  it("shows mmp and a mode other than cancelMaker only when set", () => {
    assert.deepEqual(withOrderOptions({}, 0, undefined), {});
    assert.deepEqual(withOrderOptions({}, ORDER_MMP | STP_CANCEL_TAKER, undefined), {
      mmp: true,
      selfTradePrevention: "cancelTaker",
    });
    assert.deepEqual(withOrderOptions({}, STP_CANCEL_BOTH | FLAG_CANCEL_ON_DISCONNECT, null), {
      cancelOnDisconnect: true,
      selfTradePrevention: "cancelBoth",
    });
  });
});
