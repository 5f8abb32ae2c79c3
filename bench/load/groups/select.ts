/** Group select: the faster client on the bare POST (closed loop) drives every other run. */
import type { ClientKind } from "../common.ts";
import { SELECT_MS } from "../flags.ts";
import { measure, totalThroughput } from "../measure.ts";
import type { ServerProcess } from "../servers.ts";

export interface ClientChoice {
  chosen: ClientKind;
  raw: number | null;
  agent: number | null;
}

export async function selectClient(bare: ServerProcess): Promise<ClientChoice> {
  console.log("select client (closed loop, bare POST):");
  const raw = await measure({
    label: "raw net",
    server: bare,
    realServer: false,
    workload: "create",
    mode: "closed",
    client: "raw",
    durationMs: SELECT_MS,
    warmupMs: 300,
  });
  const agent = await measure({
    label: "http.Agent",
    server: bare,
    realServer: false,
    workload: "create",
    mode: "closed",
    client: "agent",
    durationMs: SELECT_MS,
    warmupMs: 300,
  });
  const r = Math.round(totalThroughput(raw));
  const a = Math.round(totalThroughput(agent));
  const clientChoice: ClientChoice = { chosen: r >= a ? "raw" : "agent", raw: r, agent: a };
  console.log(`  -> ${clientChoice.chosen} (raw ${r}/s, agent ${a}/s)`);
  return clientChoice;
}
