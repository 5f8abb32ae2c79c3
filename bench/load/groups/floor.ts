/**
 * Group floor: the design floor (bench/load/floor-server.ts), closed loop alternating with the bare
 * POST, then open loops at --floor-rates. Runs after the measured exchange is stopped.
 */
import { FLOOR_RATES } from "../flags.ts";
import { measure, measurePair, totalThroughput } from "../measure.ts";
import { addRow, command } from "../rows.ts";
import type { ServerProcess } from "../servers.ts";
import type { GroupContext } from "../setup.ts";

export async function runFloor({ base, bare }: GroupContext, floor: ServerProcess): Promise<void> {
  console.log("design floor (the shape's hand-offs and one persisted row, no business logic):");
  const name = "design floor: POST -> pair worker -> writer (one row, FULL) -> ack";
  const [c, f] = await measurePair(
    { ...base, label: "bare POST", server: bare, realServer: false, workload: "create", mode: "closed" },
    {
      ...base,
      label: "design floor",
      server: floor,
      realServer: false,
      workload: "create",
      mode: "closed",
    },
  );
  addRow(`${name}, max (closed loop)`, f, null, {
    target: "floor",
    mode: "closed",
    ceiling: totalThroughput(c),
    command: command("floor"),
  });
  for (const rate of FLOOR_RATES) {
    const o = await measure({
      ...base,
      label: `design floor @${rate}/s`,
      server: floor,
      realServer: false,
      workload: "create",
      mode: "open",
      rate,
      seed: 7,
    });
    addRow(`${name}, open loop ${rate}/s`, o, null, {
      target: "floor",
      mode: "open",
      offered: rate,
      command: command("floor"),
    });
  }
}
