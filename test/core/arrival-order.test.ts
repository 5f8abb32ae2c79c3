/**
 * The arrival-order gate (src/core/arrival-order.ts): while a command of a user waits on a pair,
 * that user's later commands there are parked and run in arrival order once none waits; a resumed
 * command that waits in turn stops the rest; other users and other pairs are not held; and the gate
 * is gone once nothing waits (the hot path's empty Map).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ArrivalOrder } from "../../src/core/arrival-order.ts";
import { CMD_CANCEL, CMD_CREATE, type Command, NO_REQUEST, newCommand } from "../../src/core/command.ts";

function command(kind: number, user: number, pair: number, tag: number): Command {
  const cmd = newCommand(kind, NO_REQUEST, user, pair);
  cmd.orderId = tag;
  return cmd;
}

describe("ArrivalOrder", () => {
  it("parks a user's later commands on the pair behind the waiting one and runs them in order", () => {
    const ran: number[] = [];
    const waitAgain = new Set<number>();
    const gate: ArrivalOrder = new ArrivalOrder((cmd) => {
      ran.push(cmd.orderId);
      if (waitAgain.delete(cmd.orderId)) gate.wait(cmd);
    });
    const first = command(CMD_CREATE, 1, 0, 1);
    assert.equal(gate.park(first), false, "nothing waits: it runs now");
    gate.wait(first);
    gate.wait(first); // waiting again while it waits counts once
    const later = [2, 3, 4].map((tag) => command(tag === 3 ? CMD_CANCEL : CMD_CREATE, 1, 0, tag));
    for (const c of later) assert.equal(gate.park(c), true);
    assert.equal(gate.park(command(CMD_CREATE, 2, 0, 9)), false, "another user is not held");
    assert.equal(gate.park(command(CMD_CREATE, 1, 1, 9)), false, "another pair is not held");
    // The first goes; command 3 waits in turn when it runs, so 4 stays parked behind it.
    waitAgain.add(3);
    gate.rerun(first, (cmd) => ran.push(-cmd.orderId));
    assert.deepEqual(ran, [-1, 2, 3]);
    const fifth = command(CMD_CREATE, 1, 0, 5);
    assert.equal(gate.park(fifth), true, "still held behind command 3");
    gate.rerun(later[1], (cmd) => ran.push(-cmd.orderId));
    assert.deepEqual(ran, [-1, 2, 3, -3, 4, 5]);
    assert.equal(gate.park(command(CMD_CREATE, 1, 0, 6)), false, "nothing waits any more");
  });

  it("keeps the pair closed while a second command of the user waits there", () => {
    const ran: number[] = [];
    const gate = new ArrivalOrder((cmd) => ran.push(cmd.orderId));
    const a = command(CMD_CREATE, 1, 0, 1);
    const b = command(CMD_CREATE, 1, 0, 2);
    gate.wait(a);
    gate.wait(b);
    assert.equal(gate.park(command(CMD_CREATE, 1, 0, 3)), true);
    gate.rerun(a, () => {});
    assert.deepEqual(ran, [], "b still waits");
    gate.rerun(b, () => {});
    assert.deepEqual(ran, [3]);
    assert.equal(gate.park(command(CMD_CREATE, 1, 0, 4)), false);
  });

  it("runs a command that never waited at once", () => {
    const gate = new ArrivalOrder(() => assert.fail("nothing is parked"));
    let ran = 0;
    gate.rerun(command(CMD_CREATE, 1, 0, 1), () => ran++);
    assert.equal(ran, 1);
    assert.equal(gate.park(command(CMD_CREATE, 1, 0, 2)), false);
  });
});
