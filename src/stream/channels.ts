/**
 * The `streams` list of a stream upgrade (docs/API.md 12.1), parsed from the raw query string without
 * touching anything else: which channels, and every reason to refuse the list.
 *
 *   exchanges                 all pairs' 24 h records
 *   status                    every pair's status, then each change  (docs/API.md 12.2)
 *   orders:{pair}             the aggregated book of a pair
 *   history:{pair}            the pair's public trades
 *   bbo:{pair}                the pair's best bid and offer      (docs/API.md 7.6.1)
 *   orders_l3:{pair}          the pair's book order by order      (docs/API.md 7.6.2)
 *   user_orders:{uid}         the caller's orders      (needs a signed upgrade, docs/API.md 12.1)
 *   user_history:{uid}        the caller's trades      (needs a signed upgrade)
 */
import { Code } from "../errors/catalogue.ts";

/** At most this many entries in one list, duplicates included (docs/API.md 12.1). */
export const MAX_STREAMS = 100;

/** Errors reported in one 400 body: enough to fix a list, bounded for a hostile one. */
const MAX_REPORTED = 10;

export const CH_EXCHANGES = 0;
export const CH_ORDERS = 1;
export const CH_HISTORY = 2;
export const CH_USER_ORDERS = 3;
export const CH_USER_HISTORY = 4;
export const CH_BBO = 5;
export const CH_ORDERS_L3 = 6;
export const CH_STATUS = 7;

export type ChannelKind =
  | typeof CH_EXCHANGES
  | typeof CH_ORDERS
  | typeof CH_HISTORY
  | typeof CH_USER_ORDERS
  | typeof CH_USER_HISTORY
  | typeof CH_BBO
  | typeof CH_ORDERS_L3
  | typeof CH_STATUS;

/** Kinds that take an argument, by name. A Map: a client's text never reads a prototype (`constructor`). */
const KINDS: ReadonlyMap<string, ChannelKind> = new Map<string, ChannelKind>([
  ["orders", CH_ORDERS],
  ["history", CH_HISTORY],
  ["user_orders", CH_USER_ORDERS],
  ["user_history", CH_USER_HISTORY],
  ["bbo", CH_BBO],
  ["orders_l3", CH_ORDERS_L3],
]);

export interface Channel {
  readonly kind: ChannelKind;
  /** The channel name as subscribed: the `stream` field of its messages and its uWS topic. */
  readonly name: string;
  /** Pair index for the pair channels (`orders`, `history`, `bbo`, `orders_l3`), else -1. */
  readonly pair: number;
  /** The uid as written for user channels, else "". */
  readonly uid: string;
}

export interface StreamList {
  /** Distinct channels in the order first listed. */
  readonly channels: Channel[];
  /** `[code, offending entry]` of every problem found (at most MAX_REPORTED); empty when valid. */
  readonly errors: [number, string?][];
}

/**
 * Parses the `streams` parameter(s) of a raw query string. The value may be URL-encoded; several
 * `streams` parameters are one list. Entries are trimmed; an entry listed twice (for user channels:
 * the same uid in any letter case) is subscribed once but counts towards MAX_STREAMS.
 */
export function parseStreams(query: string, pairIndex: (name: string) => number | undefined): StreamList {
  const channels: Channel[] = [];
  const errors: [number, string?][] = [];
  const fail = (code: number, extra?: string) => {
    if (errors.length < MAX_REPORTED) errors.push(extra === undefined ? [code] : [code, extra]);
  };

  const entries: string[] = [];
  let found = false;
  for (const part of query === "" ? [] : query.split("&")) {
    if (part !== "streams" && !part.startsWith("streams=")) continue;
    found = true;
    let value: string;
    try {
      value = decodeURIComponent(part.slice(8).replace(/\+/g, " "));
    } catch {
      fail(Code.STREAMS_MALFORMED, part.slice(8, 72));
      continue;
    }
    if (value !== "") for (const e of value.split(",")) entries.push(e.trim());
  }
  if (errors.length > 0) return { channels, errors };
  if (!found || entries.every((e) => e === "")) {
    fail(Code.STREAMS_EMPTY);
    return { channels, errors };
  }
  if (entries.length > MAX_STREAMS) fail(Code.STREAMS_TOO_MANY, String(entries.length));

  const seen = new Set<string>();
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    if (entry === "") {
      fail(Code.STREAMS_MALFORMED, `empty entry ${i + 1}`);
      continue;
    }
    const colon = entry.indexOf(":");
    const kindText = colon === -1 ? entry : entry.slice(0, colon);
    const arg = colon === -1 ? "" : entry.slice(colon + 1);
    let channel: Channel;
    if (colon === -1 && kindText === "exchanges") {
      channel = { kind: CH_EXCHANGES, name: entry, pair: -1, uid: "" };
    } else if (colon === -1 && kindText === "status") {
      channel = { kind: CH_STATUS, name: entry, pair: -1, uid: "" };
    } else {
      const kind = colon === -1 ? undefined : KINDS.get(kindText);
      if (kind === undefined || arg === "") {
        fail(Code.STREAMS_UNKNOWN_CHANNEL, entry);
        continue;
      }
      if (kind !== CH_USER_ORDERS && kind !== CH_USER_HISTORY) {
        const pair = pairIndex(arg);
        if (pair === undefined) {
          fail(Code.STREAMS_UNKNOWN_PAIR, entry);
          continue;
        }
        channel = { kind, name: entry, pair, uid: "" };
      } else {
        channel = { kind, name: entry, pair: -1, uid: arg };
      }
    }
    const key = channel.uid === "" ? entry : `${kindText}:${arg.toLowerCase()}`;
    if (seen.has(key)) continue;
    seen.add(key);
    channels.push(channel);
  }
  return { channels, errors };
}
