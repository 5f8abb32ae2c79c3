/** Group create-open: create-order open loop at --rates, with the ack → `user_orders` latency. */

import { RATES, STREAM_USERS } from "../flags.ts";
import { measure } from "../measure.ts";
import { addRow, command, notes } from "../rows.ts";
import type { GroupContext } from "../setup.ts";

export async function runCreateOpen(
  { base, ex, ceilings }: GroupContext,
  maxRate: number | null,
): Promise<void> {
  console.log("create-order at fixed offered rates (open loop, latency from the scheduled send):");
  for (const r of RATES) {
    const rate = r === "max" ? maxRate : r;
    if (rate === null || rate <= 0) {
      notes.push(`create-order open loop at "max" skipped: no closed-loop maximum measured in this run`);
      continue;
    }
    const e = await measure({
      ...base,
      label: `exchange create-order @${rate}/s`,
      server: ex.server,
      realServer: true,
      workload: "create",
      mode: "open",
      rate,
      streamUsers: STREAM_USERS,
      seed: 3,
    });
    const name =
      r === "max" ? `create-order open loop at max (${rate}/s)` : `create-order open loop ${rate}/s`;
    addRow(name, e, "create", {
      target: "exchange",
      mode: "open",
      offered: rate,
      ceiling: ceilings.post ?? null,
      command: command("create-open", ` --rates ${r}`),
    });
  }
}
