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
 *
 * The sequencer numbers creates itself (`SequenceIds`, shared by every pair): a create takes the
 * next order id, and its order record, as it enters the ring, so ids follow matching order.
 */
import {
  NO_BUDGET,
  SELL,
  STOP_MARKET,
  STOP_OCO,
  STOP_RESTORE,
  STOP_SELL,
  STOP_UP,
} from "../protocol/pair/engine.ts";
import { nowMicro } from "../util/time.ts";
import {
  CMD_AMEND,
  CMD_CANCEL,
  CMD_CANCEL_ALL,
  CMD_CREATE,
  CMD_MMP,
  CMD_QUOTE,
  CMD_RESTORE,
  type Command,
  isWaitingStop,
  LIMIT,
  MARKET,
  NO_REQUEST,
  newCommand,
  type OrderState,
  STOP_DIRECTION_UP,
} from "./command.ts";
import type { OpenOrders } from "./open-orders.ts";
import { engineFlags, FLAG_POST_ONLY, STP_MASK, TIF_GTC, TIF_MASK } from "./order-options.ts";
import { quoteLevelOrders, quoteLevelRecords, restoreFlags } from "./quote-orders.ts";
import type { Results } from "./results.ts";

/** Commands a pair may hold while its command ring is full; past it, requests get 503. */
export const MAX_WAITING = 10_000;

/**
 * What the sequencer needs from a pair worker's command ring (see src/pair/pair-client.ts). `time`
 * is the command's time in Unix ms, taken as it enters the ring: the worker measures the MMP
 * window and freeze in it (it reads no clock).
 */
export interface CommandSink {
  /** Resolves once the command ring has room again. */
  writable(): Promise<void>;
  sendLimit(
    orderId: number,
    user: number,
    side: 0 | 1,
    price: number,
    qty: number,
    flags: number,
    time: number,
  ): boolean;
  sendMarket(
    orderId: number,
    user: number,
    side: 0 | 1,
    qty: number,
    budget: number,
    flags: number,
    time: number,
  ): boolean;
  sendCancel(orderId: number): boolean;
  sendReduce(orderId: number, by: number): boolean;
  sendMove(
    orderId: number,
    price: number,
    delta: number,
    flags: number,
    time: number,
    stopPrice?: number,
    trailingDelta?: number,
  ): boolean;
  sendMmpSet(user: number, intervalSeconds: number, qtyLimit: number, frozenSeconds: number): boolean;
  sendMmpReset(user: number): boolean;
  /** docs/API.md 18: a stop order that waits in the worker (workers/matching/stops.ts). */
  sendStop(
    orderId: number,
    user: number,
    mode: number,
    price: number,
    qty: number,
    flags: number,
    stopPrice: number,
    trailingDelta: number,
  ): boolean;
  /** docs/API.md 18: an OCO, its limit leg `orderId` and its stop leg `orderId + 1`, in one command. */
  sendOco(
    orderId: number,
    user: number,
    mode: number,
    price: number,
    qty: number,
    stopPrice: number,
    stopLimitPrice: number,
    time: number,
  ): boolean;
  /** The budget of a triggered market buy whose step waits for it (not a command of the FIFO). */
  sendFunds(orderId: number, budget: number): boolean;
  /** A quote's QUOTE record and its levels (`orderId, side, price, qty` per level), all or none. */
  sendQuote(user: number, levels: Float64Array, time: number): boolean;
}

/**
 * The next order and trade ids, over all pairs (a restart goes on from the stored ones): order ids
 * are taken by the sequencer as creates enter a ring, trade ids by R2 as trades settle.
 */
export class SequenceIds {
  constructor(
    public nextOrderId = 1,
    public nextTradeId = 1,
  ) {}
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
    private readonly ids: SequenceIds,
    /** Restored orders rest at once; a cancel-all cancels the user's resting orders. */
    private readonly openOrders: OpenOrders,
    /** A cancel-all's step is settled once its cancels are all in the ring. */
    private readonly results: Pick<Results, "settle">,
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

  /**
   * Resolves once `submit` takes a command again (fewer than MAX_WAITING wait). A start restoring
   * more open orders than fit waits here: the waiting commands enter the ring as the worker frees
   * it, which the main thread learns in a later event-loop turn (Atomics.waitAsync), so each wait
   * is a turn of its own; waiting on the ring's room instead would resolve at once while the ring
   * has room and this queue is full, and never leave the microtask queue (DECISIONS.md "A start
   * with many open orders").
   */
  async room(): Promise<void> {
    while (this.waiting.length >= MAX_WAITING) await new Promise((r) => setImmediate(r));
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
      // A quote's level orders take the ids from its `orderId` on.
      if (cmd.kind === CMD_QUOTE && cmd.quote!.levels.length > 0) return cmd.orderId;
    }
    return Number.POSITIVE_INFINITY;
  }

  /**
   * docs/API.md 18: the budget of triggered market buy `orderId`, whose step waits for it in the
   * worker: it goes straight to the ring, past the commands waiting here (the worker takes it
   * before any other), or as soon as the ring has room.
   */
  funds(orderId: number, budget: number): void {
    if (this.sink.sendFunds(orderId, budget)) return;
    const retry = async (): Promise<void> => {
      do await this.sink.writable();
      while (!this.sink.sendFunds(orderId, budget));
    };
    // As for the waiting commands: a dead pair worker is fatal to the server.
    retry().catch(() => {});
  }

  /** Every command submitted and not finished (in the worker, then waiting for the ring), oldest first. */
  ahead(): Command[] {
    return this.pending.slice(this.head).concat(this.waiting);
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
        if (cmd.oco) {
          if (!this.sendOco(cmd)) return false;
          break;
        }
        // The id is taken as the command enters the ring, so ids follow matching order.
        const id = this.ids.nextOrderId;
        const time = Date.now();
        const sent =
          cmd.stopDirection !== 0
            ? sink.sendStop(
                id,
                cmd.user,
                stopMode(cmd, 0),
                cmd.price,
                cmd.amount,
                arrivalFlags(cmd),
                cmd.stopPrice,
                cmd.trailingDelta,
              )
            : cmd.type === LIMIT
              ? sink.sendLimit(id, cmd.user, cmd.side, cmd.price, cmd.amount, engineFlags(cmd.flags), time)
              : sink.sendMarket(id, cmd.user, cmd.side, cmd.amount, cmd.budget, cmd.flags & STP_MASK, time);
        if (!sent) return false;
        cmd.orderId = id;
        this.ids.nextOrderId = id + 1;
        cmd.order = newOrder(cmd, id);
        break;
      }
      case CMD_CANCEL:
        if (!sink.sendCancel(cmd.orderId)) return false;
        break;
      case CMD_AMEND: {
        // Only a lower amount at the same price keeps the order's place (REDUCE); else a MOVE. A
        // waiting stop's is a MOVE with its new stop price or trailing delta (0: as it is;
        // docs/API.md 18).
        const o = cmd.order!;
        const sent = isWaitingStop(o)
          ? sink.sendMove(o.id, cmd.price, cmd.delta, 0, Date.now(), cmd.stopPrice, cmd.trailingDelta)
          : cmd.delta < 0 && cmd.price === o.price
            ? sink.sendReduce(o.id, -cmd.delta)
            : sink.sendMove(o.id, cmd.price, cmd.delta, o.flags & FLAG_POST_ONLY, Date.now());
        if (!sent) return false;
        break;
      }
      case CMD_RESTORE: {
        const o = cmd.order!;
        if (isWaitingStop(o)) {
          // docs/API.md 18: it waits again with its stop price, whatever the last trade price; an
          // OCO's stop leg is linked again to its limit leg, the order before it.
          const sent = sink.sendStop(
            o.id,
            o.user,
            stopMode(o, o.ocoId !== 0 && o.ocoId !== o.id ? STOP_RESTORE | STOP_OCO : STOP_RESTORE),
            o.price,
            o.amount - o.used,
            arrivalFlags(o),
            o.stopPrice,
            o.trailingDelta,
          );
          if (!sent) return false;
          this.openOrders.setOpen(o);
          break;
        }
        // As it rested: GTC, with its protection and STP mode, or as a quote order (it cannot cross:
        // books never are).
        const left = o.amount - o.used;
        if (!sink.sendLimit(o.id, o.user, o.side, o.price, left, restoreFlags(o.flags), Date.now()))
          return false;
        this.openOrders.setOpen(o);
        break;
      }
      case CMD_MMP: {
        const s = cmd.mmp!.settings;
        const sent =
          s === null
            ? sink.sendMmpReset(cmd.user)
            : sink.sendMmpSet(cmd.user, s.intervalSeconds, s.qtyLimit, s.frozenSeconds);
        if (!sent) return false;
        break;
      }
      case CMD_QUOTE: {
        // The level orders take consecutive ids as the quote enters the ring.
        const id = this.ids.nextOrderId;
        if (!sink.sendQuote(cmd.user, quoteLevelRecords(cmd.quote!, id), Date.now())) return false;
        cmd.orderId = id;
        this.ids.nextOrderId = quoteLevelOrders(cmd, nowMicro());
        break;
      }
      case CMD_CANCEL_ALL:
        return this.sendCancelAll(cmd);
    }
    this.pending.push(cmd);
    return true;
  }

  /**
   * docs/API.md 18: an OCO enters the ring as one command; its legs take two consecutive ids, the
   * limit leg's first (the OCO's id). The limit leg is a post-only GTC order (the command's
   * flags), the stop leg a stop-limit at `stopLimitPrice` or a stop-market, without a client
   * order id.
   */
  private sendOco(cmd: Command): boolean {
    const id = this.ids.nextOrderId;
    const stopType = cmd.stopLimitPrice > 0 ? LIMIT : MARKET;
    const mode = stopMode({ side: cmd.side, type: stopType, stopDirection: cmd.stopDirection }, 0);
    if (
      !this.sink.sendOco(
        id,
        cmd.user,
        mode,
        cmd.price,
        cmd.amount,
        cmd.stopPrice,
        cmd.stopLimitPrice,
        Date.now(),
      )
    )
      return false;
    cmd.orderId = id;
    this.ids.nextOrderId = id + 2;
    const limit = newOrder(cmd, id);
    limit.stopPrice = 0;
    limit.stopDirection = 0;
    limit.ocoId = id;
    const stop = newOrder(cmd, id + 1);
    stop.type = stopType;
    stop.price = cmd.stopLimitPrice;
    stop.flags = cmd.flags & ~FLAG_POST_ONLY;
    stop.clientOrderId = undefined;
    stop.ocoId = id;
    cmd.order = limit;
    cmd.sibling = stop;
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
      targets = cmd.targets = this.cancelTargets(cmd.user);
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
    const group = cmd.group!;
    // Deferred: the answer must not come before the caller learned the call was accepted.
    queueMicrotask(() => this.results.settle(group));
    return true;
  }

  /** What a cancel-all of `user` sent now must cancel: its resting orders and creates that may rest. */
  private cancelTargets(user: number): OrderState[] {
    return this.createsThatMayRest((o) => o.user === user, this.openOrders.userOrdersOn(user, this.pair, []));
  }

  /**
   * The orders of creates in the worker that pass `which` and may still rest (good-till-cancelled
   * limits not resting yet), appended to `out`: a cancel submitted now reaches them after they rest.
   */
  createsThatMayRest(which: (o: OrderState) => boolean, out: OrderState[]): OrderState[] {
    const open = this.openOrders;
    for (let i = this.head; i < this.pending.length; i++) {
      const cmd = this.pending[i];
      const o = cmd.order;
      // A quote's level orders are good-till-cancelled limits.
      if (cmd.kind === CMD_QUOTE)
        for (const l of cmd.quote!.orders) if (which(l) && !open.has(l.id)) out.push(l);
      if (cmd.kind !== CMD_CREATE || o === null || !which(o)) continue;
      // docs/API.md 18: both legs of an OCO are open once it is accepted.
      if (cmd.sibling !== null) {
        if (!open.has(o.id)) out.push(o, cmd.sibling);
        continue;
      }
      // docs/API.md 18: a stop order of any type waits once accepted.
      const mayRest = o.stopDirection !== 0 || (o.type === LIMIT && (o.flags & TIF_MASK) === TIF_GTC);
      if (mayRest && !open.has(o.id)) out.push(o);
    }
    return out;
  }
}

/** docs/API.md 18: the engine's STOP_* mode of a stop order (`extra`: STOP_RESTORE or 0). */
function stopMode(o: { side: number; type: number; stopDirection: number }, extra: number): number {
  return (
    (o.side === SELL ? STOP_SELL : 0) |
    (o.stopDirection === STOP_DIRECTION_UP ? STOP_UP : 0) |
    (o.type === LIMIT ? 0 : STOP_MARKET) |
    extra
  );
}

/** The engine flags a stop order arrives with once triggered: a limit's, or a market's STP mode. */
function arrivalFlags(o: { type: number; flags: number }): number {
  return o.type === LIMIT ? engineFlags(o.flags) : o.flags & STP_MASK;
}

/** The order record of a create entering the ring as order `id`. */
function newOrder(cmd: Command, id: number): OrderState {
  const micro = nowMicro();
  return {
    id,
    user: cmd.user,
    pair: cmd.pair,
    side: cmd.side,
    type: cmd.type,
    price: cmd.price,
    amount: cmd.amount,
    used: 0,
    cancelled: false,
    createMicro: micro,
    updateMicro: micro,
    budget: cmd.budget === NO_BUDGET ? 0n : cmd.hold,
    executed: 0n,
    flags: cmd.flags,
    clientOrderId: cmd.clientOrderId,
    rowSent: false,
    session: cmd.session,
    // Every field is set here, so a resting order never changes shape (nor grows a property
    // store) when it is listed or amended.
    amending: null,
    userSlot: -1,
    restSeq: 0,
    execSeq: 0,
    stopPrice: cmd.stopPrice,
    stopDirection: cmd.stopDirection,
    trailingDelta: cmd.trailingDelta,
    ocoId: 0,
    oco: null,
    triggerMicro: 0,
    cancelReason: 0,
  };
}
