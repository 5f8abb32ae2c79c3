/**
 * Pair status (docs/API.md 11): `trading`, `cancelOnly` or `halted`, per pair, decided at R1. A user's
 * create or amend on a pair that is not trading is refused (PAIR_CANCEL_ONLY / PAIR_HALTED); a
 * user's cancel on a halted pair is refused (PAIR_HALTED). The safety cancels (dead-man's switch,
 * and later cancel-on-disconnect and market-maker protection) do not ask: they go through on every
 * pair. Kept in the database as meta 'pair_status:<pair>' (0, 1, 2) and restored at start; open
 * orders stay on the book whatever the status.
 */
import { Code } from "../errors/catalogue.ts";

export const TRADING = 0;
export const CANCEL_ONLY = 1;
export const HALTED = 2;

/** Wire names by status number. */
export const PAIR_STATUS_NAMES = ["trading", "cancelOnly", "halted"] as const;
export type PairStatusName = (typeof PAIR_STATUS_NAMES)[number];

/** The status number of a wire name, or -1 when it is none of them. */
export function pairStatusOf(name: unknown): number {
  return typeof name === "string" ? PAIR_STATUS_NAMES.indexOf(name as PairStatusName) : -1;
}

/** The meta key holding a pair's status. */
export function pairStatusKey(pairName: string): string {
  return `pair_status:${pairName}`;
}

export class PairStatuses {
  /** By pair index; a pair never set is trading. */
  private readonly status: number[] = [];

  get(pair: number): number {
    return this.status[pair] ?? TRADING;
  }

  set(pair: number, status: number): void {
    this.status[pair] = status;
  }

  /** The code refusing a user's create or amend on `pair`, 0 when it may go on. */
  refuseChange(pair: number): number {
    const s = this.get(pair);
    return s === TRADING ? 0 : s === CANCEL_ONLY ? Code.PAIR_CANCEL_ONLY : Code.PAIR_HALTED;
  }

  /** The code refusing a user's cancel on `pair`, 0 when it may go on. */
  refuseCancel(pair: number): number {
    return this.get(pair) === HALTED ? Code.PAIR_HALTED : 0;
  }
}
