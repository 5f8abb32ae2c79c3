/**
 * Group create-closed: the bare POST ceiling, then create-order closed loop on the exchange (max).
 * The ceiling is measured for create-open and mix too; the maximum only when it is asked for.
 */

import { ONLY, RATES } from "../flags.ts";
import { measure, measurePair, type RunParams, totalThroughput } from "../measure.ts";
import { addRow, command } from "../rows.ts";
import type { GroupContext } from "../setup.ts";

/** Resolves the exchange's closed-loop create-order maximum (null when not measured). */
export async function runCreateClosed({ base, bare, ex, ceilings }: GroupContext): Promise<number | null> {
  let maxRate: number | null = null;
  console.log("create-order ceiling and maximum (closed loop):");
  const bareParams: RunParams = {
    ...base,
    label: "bare POST",
    server: bare,
    realServer: false,
    workload: "create",
    mode: "closed",
  };
  const realParams: RunParams = {
    ...base,
    label: "exchange create-order",
    server: ex.server,
    realServer: true,
    workload: "create",
    mode: "closed",
    readProbe: true,
    seed: 2,
  };
  const wantMax = ONLY.has("create-closed") || RATES.includes("max");
  const [c, e] = wantMax ? await measurePair(bareParams, realParams) : [await measure(bareParams), null];
  ceilings.post = totalThroughput(c);
  addRow("bare uWS ceiling: POST (same signed create-order requests)", c, null, {
    target: "bare-uws",
    mode: "closed",
    command: command("create-closed"),
  });
  if (e !== null) {
    addRow("create-order max (closed loop)", e, "create", {
      target: "exchange",
      mode: "closed",
      ceiling: ceilings.post,
      command: command("create-closed"),
    });
    maxRate = Math.round(totalThroughput(e));
  }
  return maxRate;
}
