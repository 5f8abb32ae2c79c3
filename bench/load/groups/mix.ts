/** Group mix: create + cancel (CANCEL_SHARE cancels), open loop at MIX_RATE and closed loop. */
import { CANCEL_SHARE, MIX_RATE } from "../flags.ts";
import { measure } from "../measure.ts";
import { addRow, command } from "../rows.ts";
import type { GroupContext } from "../setup.ts";

export async function runMix({ base, ex, ceilings }: GroupContext): Promise<void> {
  console.log(`create + cancel (${CANCEL_SHARE * 100}% cancels):`);
  const o = await measure({
    ...base,
    label: `exchange mix @${MIX_RATE}/s`,
    server: ex.server,
    realServer: true,
    workload: "mix",
    mode: "open",
    rate: MIX_RATE,
    seed: 4,
  });
  addRow(`create+cancel open loop ${MIX_RATE}/s: all`, o, null, {
    target: "exchange",
    mode: "open",
    offered: MIX_RATE,
    ceiling: ceilings.post ?? null,
    command: command("mix"),
  });
  addRow(`create+cancel open loop ${MIX_RATE}/s: create-order`, o, "create", {
    target: "exchange",
    mode: "open",
    command: command("mix"),
  });
  addRow(`create+cancel open loop ${MIX_RATE}/s: cancel-order`, o, "cancel", {
    target: "exchange",
    mode: "open",
    command: command("mix"),
  });
  const c = await measure({
    ...base,
    label: "exchange mix closed",
    server: ex.server,
    realServer: true,
    workload: "mix",
    mode: "closed",
    seed: 5,
  });
  addRow("create+cancel max (closed loop): all", c, null, {
    target: "exchange",
    mode: "closed",
    ceiling: ceilings.post ?? null,
    command: command("mix"),
  });
  addRow("create+cancel max (closed loop): cancel-order", c, "cancel", {
    target: "exchange",
    mode: "closed",
    command: command("mix"),
  });
}
