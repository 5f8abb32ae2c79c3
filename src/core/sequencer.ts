/**
 * Sequencing and back-pressure (the SEQ stage of src/core/command.ts): one FIFO of commands per pair.
 *
 *   submit(cmd) ─▶ [waiting for ring room, ≤ MAX_WAITING] ─▶ command ring ─▶ [in the worker] ─▶ END
 *
 * A command enters the ring at once when nothing waits before it; otherwise it queues behind the
 * waiting ones, so a pair's commands reach its worker in submission order. The worker answers in
 * ring order, so the oldest command in the worker is the one every event record belongs to
 * (`current()`), and END finishes it (`finish()`). Past MAX_WAITING waiting commands, `submit`
 * refuses (the edge answers 503) and nothing changed.
 */
import {
  CMD_AMEND,
  CMD_CANCEL,
  CMD_CANCEL_ALL,
  CMD_CREATE,
  CMD_RESTORE,
  type Command,
  LIMIT,
  NO_REQUEST,
  newCommand,
  type OrderState,
} from "./command.ts";
import { ENGINE_FLAGS, FLAG_POST_ONLY, TIF_GTC } from "./orders.ts";

/** Commands a pair may hold while its command ring is full; past it, requests get 503. */
export const MAX_WAITING = 10_000;

/** What the sequencer needs from a pair worker's command ring (see src/pair/pair-client.ts). */
export interface CommandSink {
  /** Resolves once the command ring has room again. */
  writable(): Promise<void>;
  sendLimit(orderId: number, user: number, side: 0 | 1, price: number, qty: number, flags: number): boolean;
  sendMarket(orderId: number, user: number, side: 0 | 1, qty: number, budget: number): boolean;
  sendCancel(orderId: number): boolean;
  sendReduce(orderId: number, by: number): boolean;
  sendMove(orderId: number, price: number, delta: number, flags: number): boolean;
}

/** What the sequencer asks of the core as commands enter the ring. */
export interface SequencerHost {
  /** The id the next create gets; read just before the create enters the ring. */
  readonly nextOrderId: number;
  /** `cmd` is in the ring (a create has its `orderId`): the core takes it into its state. */
  entered(cmd: Command): void;
  /** The orders a cancel-all of `user` sent now on pair `pair` must cancel. */
  cancelTargets(pair: number, user: number): OrderState[];
  /** Every cancel of a cancel-all's pair is in the ring. */
  cancelAllSent(cmd: Command): void;
}

export class PairSequencer {
  /** Commands waiting for room in the command ring, oldest first. */
  private readonly waiting: Command[] = [];
  /** Commands in the worker, oldest first from `head`. */
  private pending: Command[] = [];
  private head = 0;

  constructor(
    readonly pair: number,
    private readonly sink: CommandSink,
    private readonly host: SequencerHost,
  ) {}

  /** Sends `cmd` now or queues it behind the waiting ones; false when the queue is full. */
  submit(cmd: Command): boolean {
    const waiting = this.waiting;
    if (waiting.length === 0 && this.send(cmd)) return true;
    if (waiting.length >= MAX_WAITING) return false;
    waiting.push(cmd);
    // The channel rejects `writable()` only when its worker is gone or it is closing; the server
    // treats a dead pair worker as fatal, so the waiting commands are simply never sent.
    if (waiting.length === 1) this.drain().catch(() => {});
    return true;
  }

  /** Commands submitted and not finished yet. */
  get inFlight(): number {
    return this.pending.length - this.head + this.waiting.length;
  }

  /** The command the worker is running: every event record belongs to it. */
  current(): Command | undefined {
    return this.pending[this.head];
  }

  /** END: the current command is done; returns it (undefined for the worker's own SHUTDOWN). */
  finish(): Command | undefined {
    const cmd = this.pending[this.head];
    if (cmd === undefined) return undefined;
    this.pending[this.head++] = undefined as unknown as Command;
    if (this.head > 1024 && this.head * 2 > this.pending.length) {
      this.pending = this.pending.slice(this.head);
      this.head = 0;
    }
    return cmd;
  }

  /** The lowest order id of a create in the worker (they are in id order), or `Infinity`. */
  oldestCreate(): number {
    for (let i = this.head; i < this.pending.length; i++) {
      const cmd = this.pending[i];
      if (cmd.kind === CMD_CREATE) return cmd.orderId;
    }
    return Number.POSITIVE_INFINITY;
  }

  /** The commands in the worker, oldest first. */
  inWorker(): Command[] {
    return this.pending.slice(this.head);
  }

  private async drain(): Promise<void> {
    const waiting = this.waiting;
    while (waiting.length > 0) {
      await this.sink.writable();
      while (waiting.length > 0 && this.send(waiting[0])) waiting.shift();
    }
  }

  /** Writes `cmd` into the command ring; false when the ring is full (nothing sent). */
  private send(cmd: Command): boolean {
    const sink = this.sink;
    switch (cmd.kind) {
      case CMD_CREATE: {
        // The id is taken as the command enters the ring, so ids follow matching order.
        const id = this.host.nextOrderId;
        const sent =
          cmd.type === LIMIT
            ? sink.sendLimit(id, cmd.user, cmd.side, cmd.price, cmd.amount, cmd.flags & ENGINE_FLAGS)
            : sink.sendMarket(id, cmd.user, cmd.side, cmd.amount, cmd.budget);
        if (!sent) return false;
        cmd.orderId = id;
        break;
      }
      case CMD_CANCEL:
        if (!sink.sendCancel(cmd.orderId)) return false;
        break;
      case CMD_AMEND: {
        // Only a lower amount at the same price keeps the order's place (REDUCE); else a MOVE.
        const o = cmd.order!;
        const sent =
          cmd.delta < 0 && cmd.price === o.price
            ? sink.sendReduce(o.id, -cmd.delta)
            : sink.sendMove(o.id, cmd.price, cmd.delta, o.flags & FLAG_POST_ONLY);
        if (!sent) return false;
        break;
      }
      case CMD_RESTORE: {
        const o = cmd.order!;
        if (!sink.sendLimit(o.id, o.user, o.side, o.price, o.amount - o.used, TIF_GTC)) return false;
        break;
      }
      case CMD_CANCEL_ALL:
        return this.sendCancelAll(cmd);
    }
    this.host.entered(cmd);
    this.pending.push(cmd);
    return true;
  }

  /**
   * A cancel-all's cancels enter the ring as one step of the FIFO: its targets are chosen when it
   * reaches the ring, so they are the orders resting then and the creates before it that may rest.
   * A full ring stops it part way; it resumes from `sent` when there is room.
   */
  private sendCancelAll(cmd: Command): boolean {
    let targets = cmd.targets;
    if (targets === null) {
      targets = cmd.targets = this.host.cancelTargets(this.pair, cmd.user);
      cmd.group!.outstanding += targets.length;
    }
    while (cmd.sent < targets.length) {
      const o = targets[cmd.sent];
      if (!this.sink.sendCancel(o.id)) return false;
      const cancel = newCommand(CMD_CANCEL, NO_REQUEST, o.user, this.pair);
      cancel.orderId = o.id;
      cancel.order = o;
      cancel.group = cmd.group;
      this.pending.push(cancel);
      cmd.sent++;
    }
    this.host.cancelAllSent(cmd);
    return true;
  }
}
