/**
 * The requests a load generator sends, built and signed on the fly (docs/API.md 3: HMAC-SHA256 hex of
 * the exact body bytes). Deterministic for a seed.
 *
 * create-order mix (per request): 50% passive limit (buy below / sell above the mid, 1..50 steps
 * away: they rest), 30% crossing limit (buy 1..3 steps above / sell 1..3 steps below the mid: they
 * trade with resting orders of other users), 20% market; buy and sell evenly; the three pairs evenly.
 * Supply (passive) and demand (crossing + market) balance, so the book stays about the same size.
 *
 * Users: a closed-loop connection (slot i of n) only ever sends for users i, i + n, i + 2n, ... in
 * turn, so no user has two orders in flight at once; the open loop takes users round-robin. This
 * matters: a market buy holds the user's whole available quote balance until its pair worker has
 * matched it (src/core/exchange.ts createOrder), so any concurrent order of the same user that needs that
 * currency is refused 400 "Insufficient funds" however well the user is funded.
 *
 * The `mix` workload also cancels: `cancelShare` of the requests cancel one of the user's passive
 * orders (ids taken from earlier acks that showed `amountUsed` 0). Such an order may have been filled
 * since; that cancel then answers 400 `errors.orderId`, an expected race counted apart.
 */
import { signText } from "../../src/client/index.ts";
// mulberry32, so that every run offers the same sequence of orders.
import { mulberry32 as prng } from "../../test/support/prng.ts";
import { amountOf, type BenchUser, LEVELS, PAIR_PLANS, priceAt, type Workload } from "./common.ts";
import type { HttpRequestSpec } from "./http-clients.ts";

export type Kind = "create" | "cancel" | "get-book" | "get-pairs";

export interface BenchRequest extends HttpRequestSpec {
  kind: Kind;
  user: number;
  /** A passive limit order: its id is kept for a later cancel if the ack shows it resting. */
  passive: boolean;
}

interface PairStrings {
  name: string;
  /** Prices for k = -LEVELS..LEVELS at index k + LEVELS. */
  prices: string[];
  amount: string;
}

const PAIRS: PairStrings[] = PAIR_PLANS.map((plan) => ({
  name: plan.name,
  prices: Array.from({ length: 2 * LEVELS + 1 }, (_, i) => priceAt(plan, i - LEVELS)),
  amount: amountOf(plan),
}));

const ID_PREFIX = Buffer.from('{"id":', "latin1");
const RESTING = Buffer.from('"amountUsed":0,', "latin1");

export class RequestFlow {
  private readonly rnd: () => number;
  /** Resting (passive, unfilled at ack) order ids per user, for cancels. */
  private readonly resting: number[][];
  private readonly signers: ((text: string) => string)[];
  private pairCursor = 0;
  private roundRobin = 0;
  /** Per closed-loop slot: how many requests it has sent (picks its next user). */
  private readonly slotTurns: number[];

  constructor(
    private readonly users: readonly BenchUser[],
    private readonly workload: Workload,
    seed: number,
    private readonly cancelShare: number,
    private readonly trackOrders: boolean,
    private readonly slots: number,
  ) {
    this.rnd = prng(seed);
    this.slotTurns = new Array<number>(Math.max(1, slots)).fill(0);
    this.resting = users.map(() => []);
    this.signers = users.map((u) => (text: string) => signText(u.secretKey, text));
  }

  /** The user of the next request: slot-owned users (closed loop, `slot` >= 0) or round-robin. */
  private pickUser(slot: number): number {
    const n = this.users.length;
    if (slot < 0 || this.slots <= 0 || n < this.slots) return this.roundRobin++ % n;
    const owned = Math.floor((n - 1 - slot) / this.slots) + 1; // users slot, slot + slots, ... below n
    return slot + (this.slotTurns[slot]++ % owned) * this.slots;
  }

  /** The next request; `slot` is the closed-loop connection index, -1 in the open loop. */
  next(slot = -1): BenchRequest {
    switch (this.workload) {
      case "get-book": {
        const pair = PAIRS[this.pairCursor++ % PAIRS.length];
        return {
          kind: "get-book",
          user: -1,
          passive: false,
          method: "GET",
          path: `/1.0/trade/pairs/${pair.name}/orders`,
          headers: {},
          body: "",
        };
      }
      case "get-pairs":
        return {
          kind: "get-pairs",
          user: -1,
          passive: false,
          method: "GET",
          path: "/1.0/trade/pairs",
          headers: {},
          body: "",
        };
      case "mix": {
        const user = this.pickUser(slot);
        if (this.rnd() < this.cancelShare) {
          const ids = this.resting[user];
          if (ids.length > 0) {
            const at = Math.floor(this.rnd() * ids.length);
            const id = ids[at];
            ids[at] = ids[ids.length - 1];
            ids.pop();
            return this.signed("cancel", user, false, "/1.0/trade/cancel-order", `{"orderId":${id}}`);
          }
        }
        return this.create(user);
      }
      default:
        return this.create(this.pickUser(slot));
    }
  }

  private create(user: number): BenchRequest {
    const r = this.rnd();
    const pair = PAIRS[Math.floor(this.rnd() * PAIRS.length)];
    const buy = this.rnd() < 0.5;
    const side = buy ? "buy" : "sell";
    let body: string;
    let passive = false;
    if (r < 0.5) {
      const k = 1 + Math.floor(this.rnd() * LEVELS);
      const price = pair.prices[LEVELS + (buy ? -k : k)];
      body = `{"pairName":"${pair.name}","tradeType":"limit","directionType":"${side}","price":"${price}","amount":"${pair.amount}"}`;
      passive = true;
    } else if (r < 0.8) {
      const k = 1 + Math.floor(this.rnd() * 3);
      const price = pair.prices[LEVELS + (buy ? k : -k)];
      body = `{"pairName":"${pair.name}","tradeType":"limit","directionType":"${side}","price":"${price}","amount":"${pair.amount}"}`;
    } else {
      body = `{"pairName":"${pair.name}","tradeType":"market","directionType":"${side}","amount":"${pair.amount}"}`;
    }
    return this.signed("create", user, passive, "/1.0/trade/create-order", body);
  }

  private signed(kind: Kind, user: number, passive: boolean, path: string, body: string): BenchRequest {
    return {
      kind,
      user,
      passive,
      method: "POST",
      path,
      headers: {
        "Content-Type": "application/json",
        Authorization: this.users[user].apiToken,
        "X-Signature": this.signers[user](body),
      },
      body,
    };
  }

  /**
   * Checks an answer's shape; for a create ack returns the order id (else 0), and remembers
   * a resting passive order for a later cancel.
   */
  verify(req: BenchRequest, status: number, body: Buffer): { ok: boolean; orderId: number } {
    if (status !== 200) return { ok: false, orderId: 0 };
    switch (req.kind) {
      case "create": {
        if (body.length < 8 || body.compare(ID_PREFIX, 0, ID_PREFIX.length, 0, ID_PREFIX.length) !== 0)
          return { ok: false, orderId: 0 };
        let id = 0;
        for (let i = ID_PREFIX.length, c = body[i]; c >= 48 && c <= 57; c = body[++i])
          id = id * 10 + (c - 48);
        if (this.trackOrders && req.passive && body.indexOf(RESTING) !== -1) this.resting[req.user].push(id);
        return { ok: id > 0, orderId: id };
      }
      case "cancel":
        return { ok: body.length === 2 && body[0] === 0x5b && body[1] === 0x5d, orderId: 0 }; // []
      case "get-book":
        return {
          ok: body.length > 8 && body[0] === 0x7b /* { */ && body[body.length - 1] === 0x7d,
          orderId: 0,
        };
      default:
        return {
          ok: body.length > 2 && body[0] === 0x5b /* [ */ && body[body.length - 1] === 0x5d,
          orderId: 0,
        };
    }
  }

  /** Whether a non-200 answer is the expected race of a cancel (400 on `orderId`). */
  static expectedError(req: BenchRequest, status: number, body: Buffer): boolean {
    return req.kind === "cancel" && status === 400 && body.indexOf('"orderId"') !== -1;
  }
}
