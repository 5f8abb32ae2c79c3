/** The suite's one waiting helper (test/wait.ts): what it returns, and what its timeout says. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sleepUntil, waitFor } from "./wait.ts";

describe("waitFor", () => {
  test("returns the first value of the check that is not false, null or undefined", async () => {
    let calls = 0;
    const values = [false, null, undefined, 0, 7] as const;
    const got = await waitFor(() => values[calls++], { what: "a value", intervalMs: 0 });
    assert.equal(got, 0, "0 is a value");
    assert.equal(calls, 4);
  });

  test("awaits an async check and retries one that throws", async () => {
    let calls = 0;
    const got = await waitFor(
      async () => {
        calls++;
        if (calls < 3) throw new Error("not yet");
        return "ready";
      },
      { what: "an async value", intervalMs: 0 },
    );
    assert.equal(got, "ready");
    assert.equal(calls, 3);
  });

  test("fails naming what it waited for, the check's last error and the detail", async () => {
    await assert.rejects(
      waitFor(
        () => {
          throw new Error("still 3 rows");
        },
        { what: "the fourth row", timeoutMs: 30, detail: () => "rows 1, 2, 3" },
      ),
      (error: Error) => {
        assert.match(error.message, /^timed out after \d+ ms waiting for the fourth row/);
        assert.match(error.message, /last check threw: still 3 rows/);
        assert.match(error.message, /rows 1, 2, 3$/);
        return true;
      },
    );
  });
});

describe("sleepUntil", () => {
  test("returns once the wall clock has reached the instant", async () => {
    const at = Date.now() + 30;
    await sleepUntil(at);
    assert.ok(Date.now() >= at);
  });
});
