// `npm start` (TypeScript through tsx) and `npm run start:prod` (`--prod`: the build in dist/):
// runs the server in a child `node` with the flags chosen for this machine (scripts/node-flags.mjs),
// forwards SIGINT, SIGTERM and SIGHUP to it, and exits as it exits. Every other argument goes to
// the server (src/main.ts: the flags in README.md "Running it").
//
//   node scripts/start.mjs [--prod] [server flags...]
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { serverNodeFlags } from "./node-flags.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const prod = args[0] === "--prod";
const serverArgs = prod ? args.slice(1) : args;
let flags;
try {
  flags = serverNodeFlags();
} catch (err) {
  console.error(`config error: ${err.message}`);
  process.exit(1);
}
const entry = prod ? [join(root, "dist/src/main.js")] : ["--import", "tsx", join(root, "src/main.ts")];
const child = spawn(process.execPath, [...flags, ...entry, ...serverArgs], { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
child.on("error", (err) => {
  console.error(`cannot start the server: ${err.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal !== null) {
    // Die the way the server died, so a supervisor sees the same end.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
