/**
 * One question: what does writing the server's own strings without JSON escaping save per body?
 * The shipped serializers (src/wire/schemas.ts) mark the strings the server composes from
 * characters that never need escaping (`word`: pair names, limit/buy, times, integers as text) with
 * fast-json-stringify's "unsafe" format; the baseline is the same schema with that format removed
 * (every string scanned for characters to escape, as before). Same views, same output: checked
 * before timing.
 *
 *   npx tsx bench/http/serialize.bench.ts
 */
import fastJson from "fast-json-stringify";
import { Bench } from "tinybench";
import { orderWithUpdateSchema, publicTradeSchema, userTradeSchema } from "../../src/wire/schemas.ts";
import { taskNs } from "./task-time.ts";

/** A copy of `schema` with every "unsafe" format removed: each of its strings is escaped. */
function escaping(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(escaping);
  if (typeof schema !== "object" || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) if (!(k === "format" && v === "unsafe")) out[k] = escaping(v);
  return out;
}

const compile = (schema: unknown) =>
  fastJson(schema as Parameters<typeof fastJson>[0]) as (d: unknown) => string;

const cases = [
  {
    name: "order (create-order answer)",
    schema: orderWithUpdateSchema,
    view: {
      id: 1234567,
      pairName: "btc_usdt",
      tradeType: "limit",
      directionType: "buy",
      price: 30000.5,
      amount: 0.001,
      amountUsed: 0,
      isCancelled: false,
      createTime: "2026-11-25 16:20:01",
      updateTime: "2026-11-25 16:20:01",
    },
  },
  {
    name: "user trade (user_history)",
    schema: userTradeSchema,
    view: {
      id: 987654,
      pairName: "eth_usdt",
      tradeType: "market",
      directionType: "sell",
      price: 2000.1,
      amount: 0.01,
      tradeTime: "2026-11-25 16:20:01",
      fee: 0.00002,
      feeCurrency: "usdt",
    },
  },
  {
    name: "public trade (history)",
    schema: publicTradeSchema,
    view: {
      directionType: "buy",
      tradeType: "limit",
      price: 0.05,
      amount: 0.01,
      tradeTime: 1795000000,
      eventTimeMicro: "1795000000123456",
    },
  },
];

const bench = new Bench({ time: 1000, warmupTime: 200 });
let sink = 0;
for (const c of cases) {
  const shipped = compile(c.schema);
  const baseline = compile(escaping(c.schema));
  if (shipped(c.view) !== baseline(c.view)) throw new Error(`${c.name}: the two serializers differ`);
  bench
    .add(`${c.name}: every string escaped (baseline)`, () => {
      sink += baseline(c.view).length;
    })
    .add(`${c.name}: server words unescaped (shipped)`, () => {
      sink += shipped(c.view).length;
    });
}
await bench.run();
const rows = bench.tasks.map((t) => ({ task: t.name, "ns/body": Math.round(taskNs(t).mean) }));
console.table(rows);
for (let i = 0; i < rows.length; i += 2) {
  console.log(
    `${cases[i / 2].name}: baseline / shipped ${(rows[i]["ns/body"] / rows[i + 1]["ns/body"]).toFixed(2)}x`,
  );
}
if (sink === 0) throw new Error("nothing serialized");
