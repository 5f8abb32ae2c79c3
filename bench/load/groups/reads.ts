/** Group reads: GET book and GET pairs, bare then exchange (the book still exactly 50 + 50). */

import { LEVELS } from "../common.ts";
import { measurePair, totalThroughput } from "../measure.ts";
import { addRow, command } from "../rows.ts";
import type { GroupContext } from "../setup.ts";

export async function runReads({ base, bare, ex, ceilings }: GroupContext): Promise<void> {
  console.log(`reads (closed loop, book ${LEVELS}+${LEVELS} levels):`);
  for (const [workload, name] of [
    ["get-book", "GET /1.0/trade/pairs/{pair}/orders"],
    ["get-pairs", "GET /1.0/trade/pairs"],
  ] as const) {
    const [c, e] = await measurePair(
      { ...base, label: `bare ${name}`, server: bare, realServer: false, workload, mode: "closed" },
      {
        ...base,
        label: `exchange ${name}`,
        server: ex.server,
        realServer: true,
        workload,
        mode: "closed",
      },
    );
    ceilings[workload] = totalThroughput(c);
    addRow(`bare uWS ceiling: ${name}`, c, null, {
      target: "bare-uws",
      mode: "closed",
      command: command("reads"),
    });
    addRow(name, e, null, {
      target: "exchange",
      mode: "closed",
      ceiling: ceilings[workload],
      command: command("reads"),
    });
  }
}
