/**
 * Arrival order per user and pair on the main thread (docs/API.md 6 and 13: "two calls on one pair
 * are answered in their order"). A pair's sequencer keeps the order of what reaches it, but some of
 * a user's commands wait on the main thread before they reach it:
 *
 *   a create whose client order id the database judges       (risk-stage.ts `checkingClientIds`)
 *   a create, amend or quote refused for funds while a market buy of the user is in flight
 *                                                            (risk-stage.ts `waitingForMarketBuys`)
 *   an amend behind an amend of the same order in flight     (`OrderState.amending`)
 *   a quote behind the user's quote in flight on the pair    (quotes.ts `inFlight`)
 *
 * Each of those calls `wait` as it starts waiting. While any command of user U on pair P waits, U's
 * later creates, amends, cancels, cancel-all steps and quotes on P are `park`ed behind it, and when
 * nothing of U waits on P any more they run (through the `resume` given) in arrival order; one that
 * waits in turn stops the rest again. Safety cancels (cancel-on-disconnect, the dead-man's switch)
 * and MMP calls are not held: they do not pass through here.
 *
 * A command that waited runs its R1 again through `rerun`, which tells whether it still waits or
 * went (to its sequencer, or answered). The hot path, with nothing waiting anywhere, is one size
 * check of an empty Map.
 */
import type { Command } from "./command.ts";

/** One user's pair while something of that user waits there. */
interface Gate {
  /** Commands of the user on the pair waiting on the main thread (`Command.waits`). */
  waiting: number;
  /** Commands that arrived while one waited, oldest first: they run once none waits. */
  parked: Command[];
}

export class ArrivalOrder {
  /** Per `user:pair`, while a command of that user waits there or commands are parked behind one. */
  private readonly gates = new Map<string, Gate>();

  /** `resume`: R1 of a parked command, as on arrival but not parked again (it answers a refusal). */
  constructor(private readonly resume: (cmd: Command) => void) {}

  /**
   * A user's command on arrival: true when a command of the user waits on its pair, and then it is
   * parked behind it (it comes back through `resume`). False: it runs now.
   */
  park(cmd: Command): boolean {
    if (this.gates.size === 0) return false;
    const gate = this.gates.get(`${cmd.user}:${cmd.pair}`);
    if (gate === undefined) return false;
    gate.parked.push(cmd);
    return true;
  }

  /** `cmd` starts waiting on the main thread (again: nothing changes): its pair closes behind it. */
  wait(cmd: Command): void {
    if (cmd.waits) return;
    cmd.waits = true;
    const key = `${cmd.user}:${cmd.pair}`;
    const gate = this.gates.get(key);
    if (gate === undefined) this.gates.set(key, { waiting: 1, parked: [] });
    else gate.waiting++;
  }

  /**
   * `cmd`, which waited, runs its R1 again (`run`, which answers a refusal). If it does not wait
   * again it went, and what was parked behind it runs when nothing else of the user waits there.
   */
  rerun(cmd: Command, run: (cmd: Command) => void): void {
    if (!cmd.waits) {
      run(cmd);
      return;
    }
    const key = `${cmd.user}:${cmd.pair}`;
    const gate = this.gates.get(key)!;
    cmd.waits = false;
    gate.waiting--;
    // The gate stays in the map while `run` may call `wait` (it counts there again).
    run(cmd);
    while (gate.waiting === 0 && gate.parked.length > 0) this.resume(gate.parked.shift()!);
    if (gate.waiting === 0 && gate.parked.length === 0 && this.gates.get(key) === gate)
      this.gates.delete(key);
  }
}
