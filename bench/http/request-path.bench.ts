/**
 * Question: what does the main thread's JavaScript spend per signed create-order before the core
 * (src/http/route.ts's steps without uWS): authentication (token lookup, HMAC-SHA256 of the body,
 * constant-time compare), the body's JSON (with the exact-number check), strict-field and order
 * validation? Each step is timed alone and then all together, on the bodies bench:load sends; and
 * the create-order shortcut (src/http/fast-order.ts) against the general path it stands in for.
 *
 *   npx tsx bench/http/request-path.bench.ts
 *
 * The signature check alone is also timed against the way it was made before (an Hmac object per
 * request), in the same process. A bound request (docs/API.md 3: X-Timestamp, the HMAC of
 * `<timestamp>\n<METHOD>\n<path>\n<body>` fed into the pads piece by piece, the window check) is
 * timed beside the unbound one.
 *
 * The duplicate-key check of parseJsonBody (src/wire/json-body.ts) is timed against the parse
 * without it (`parseJsonText`) on the order bodies, on a session frame holding one (every session
 * call pays it) and on a batch of 20 orders (a 2 KB body, nested): a difference of a few hundred ns
 * on a shared two-core machine, so in rounds of the order without, with, with, without (a drift
 * over the round falls on both), and the medians over the rounds.
 *
 * Checksum: every body authenticates, parses and validates (a failure throws).
 */
import { createHmac } from "node:crypto";
import { Bench } from "tinybench";
import { HmacKey, verifySignature } from "../../src/accounts/hmac.ts";
import { Users } from "../../src/accounts/users.ts";
import { loadConfig } from "../../src/config/config-file.ts";
import { CREATE_FIELDS, validateOrder } from "../../src/entry/validate.ts";
import { authenticate, authenticateBound } from "../../src/http/auth.ts";
import { fastOrderParser } from "../../src/http/fast-order.ts";
import { parseJsonBody, parseJsonText } from "../../src/wire/json-body.ts";
import { taskNs } from "./task-time.ts";

const config = loadConfig(new URL("../../data/config.json", import.meta.url).pathname);
const users = new Users();
const TOKEN = "t".repeat(64);
const SECRET = "s".repeat(64);
users.add(0, "00000000-0000-0000-0000-000000000000");
users.addKey(TOKEN, 0, SECRET, false);

/** One X-Timestamp for the whole run; each check is made "now" at that instant. */
const NOW = Date.now();
const TIMESTAMP = String(NOW);
const PATH = "/1.0/trade/create-order";
const BOUND = { timestamp: TIMESTAMP, recvWindow: "", path: PATH };

const bodies = [
  '{"pairName":"btc_usdt","tradeType":"limit","directionType":"buy","price":"99990.5","amount":"0.01"}',
  '{"pairName":"eth_usdt","tradeType":"limit","directionType":"sell","price":"3001.25","amount":"0.1"}',
  '{"pairName":"eth_btc","tradeType":"market","directionType":"buy","amount":"0.1"}',
].map((text) => {
  const raw = Buffer.from(text);
  const boundSig = createHmac("sha256", SECRET)
    .update(`${TIMESTAMP}\nPOST\n${PATH}\n`)
    .update(raw)
    .digest("hex");
  return { raw, text, sig: createHmac("sha256", SECRET).update(raw).digest("hex"), boundSig };
});

/** A session call holding an order body, and a batch of 20 order bodies (duplicate-key check). */
const frames = bodies.map((b, k) =>
  Buffer.from(`{"id":${k + 1},"method":"order.create","params":${b.text}}`),
);
const batch = Buffer.from(
  `{"orders":[${Array.from({ length: 20 }, (_, k) => bodies[k % 3].text).join(",")}]}`,
);

const fast = fastOrderParser(config);
const hmacKey = new HmacKey(SECRET);
const secretBytes = Buffer.from(SECRET);
const decoded = Buffer.alloc(32);
/** The verification before the key's pads were prepared: an Hmac object per request (the baseline). */
const verifyByHmacObject = (payload: Buffer, hex: string): boolean => {
  if (decoded.write(hex, "hex") !== 32) return false;
  const digest = createHmac("sha256", secretBytes).update(payload).digest("binary");
  let diff = 0;
  for (let j = 0; j < 32; j++) diff |= digest.charCodeAt(j) ^ decoded[j];
  return diff === 0;
};
let i = 0;
let checksum = 0;
const next = () => bodies[i++ % bodies.length];

const bench = new Bench({ time: 1500, warmup: true });
bench
  .add("authenticate (token, HMAC, compare)", () => {
    const b = next();
    const k = authenticate(users, TOKEN, b.sig, b.raw);
    if (typeof k === "number") throw new Error(`auth failed: ${k}`);
    checksum += k.userId;
  })
  .add("authenticate bound (token, time window, HMAC of the bound string, compare)", () => {
    const b = next();
    const k = authenticateBound(users, TOKEN, b.boundSig, b.raw, "POST", BOUND, NOW);
    if (typeof k === "number") throw new Error(`bound auth failed: ${k}`);
    checksum += k.userId;
  })
  .add("signature alone, baseline: createHmac object per request", () => {
    const b = next();
    if (!verifyByHmacObject(b.raw, b.sig)) throw new Error("signature");
    checksum++;
  })
  .add("signature alone: HmacKey pads, two one-shot crypto.hash (src/accounts/hmac.ts)", () => {
    const b = next();
    if (!verifySignature(hmacKey, b.raw, b.sig)) throw new Error("signature");
    checksum++;
  })
  .add("body: toString + JSON (exact-number check, duplicate-key check)", () => {
    const b = next();
    const o = parseJsonBody(b.raw.toString("utf8")) as Record<string, unknown>;
    checksum += (o.pairName as string).length;
  })
  .add("validateOrder (strict fields, decimals, bounds)", () => {
    const b = next();
    const v = validateOrder(JSON.parse(b.text), config, CREATE_FIELDS);
    if (v.errors.length > 0) throw new Error(`invalid: ${JSON.stringify(v.errors)}`);
    checksum += v.amount;
  })
  .add("all three", () => {
    const b = next();
    const k = authenticate(users, TOKEN, b.sig, b.raw);
    if (typeof k === "number") throw new Error(`auth failed: ${k}`);
    const o = parseJsonBody(b.raw.toString("utf8")) as Record<string, unknown>;
    const v = validateOrder(o, config, CREATE_FIELDS);
    if (v.errors.length > 0) throw new Error("invalid");
    checksum += v.amount;
  })
  .add("body + validation, general path (toString, JSON, validateOrder)", () => {
    const b = next();
    const v = validateOrder(
      parseJsonBody(b.raw.toString("utf8")) as Record<string, unknown>,
      config,
      CREATE_FIELDS,
    );
    if (v.errors.length > 0) throw new Error("invalid");
    checksum += v.amount;
  })
  .add("body + validation, create-order shortcut (src/http/fast-order.ts)", () => {
    const v = fast(next().raw);
    if (v === null) throw new Error("not taken");
    checksum += v.amount;
  })
  .add("all three, as the server runs them (the shortcut)", () => {
    const b = next();
    const k = authenticate(users, TOKEN, b.sig, b.raw);
    if (typeof k === "number") throw new Error(`auth failed: ${k}`);
    const v = fast(b.raw);
    if (v === null) throw new Error("not taken");
    checksum += v.amount;
  })
  .add("all three, as the server runs them (the shortcut), bound request", () => {
    const b = next();
    const k = authenticateBound(users, TOKEN, b.boundSig, b.raw, "POST", BOUND, NOW);
    if (typeof k === "number") throw new Error(`bound auth failed: ${k}`);
    const v = fast(b.raw);
    if (v === null) throw new Error("not taken");
    checksum += v.amount;
  });

await bench.run();

/** Rounds of tinybench, A B B A each: every label's medians of its p50s, and of (B - A) per round. */
async function abRounds(label: string, texts: readonly Buffer[], rounds = 7) {
  let k = 0;
  const without = () => {
    checksum += parseJsonText(texts[k++ % texts.length].toString("utf8")) === null ? 0 : 1;
  };
  const withCheck = () => {
    checksum += parseJsonBody(texts[k++ % texts.length].toString("utf8")) === null ? 0 : 1;
  };
  const a: number[] = [];
  const b: number[] = [];
  const d: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const round = new Bench({ time: 250, warmup: true });
    round.add("a1", without).add("b1", withCheck).add("b2", withCheck).add("a2", without);
    await round.run();
    const [a1, b1, b2, a2] = round.tasks.map((t) => taskNs(t).p50);
    a.push((a1 + a2) / 2);
    b.push((b1 + b2) / 2);
    d.push((b1 + b2 - a1 - a2) / 2);
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
  return {
    step: `duplicate-key check: ${label}`,
    "without ns (p50)": Math.round(median(a)),
    "with ns (p50)": Math.round(median(b)),
    "difference ns": Math.round(median(d)),
  };
}
const checkRows = [
  await abRounds(
    "order bodies (about 100 B)",
    bodies.map((b) => b.raw),
  ),
  await abRounds("session frames holding one", frames),
  await abRounds("batch of 20 orders (2 KB)", [batch]),
];

console.table(
  bench.tasks.map((t) => {
    const ns = taskNs(t);
    return { step: t.name, "ns/op (mean)": Math.round(ns.mean), "ns/op (p50)": Math.round(ns.p50) };
  }),
);
console.table(checkRows);
console.log(`checksum ${checksum}`);
