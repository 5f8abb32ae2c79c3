/**
 * BENCHMARKS.md stays in step with the committed results: its load table is exactly what
 * bench/load/report.ts renders from bench/results/load.json, its matching table holds
 * bench/results/matching.json, and the comments that cite it name sections it has, never an entry
 * of the old dated log.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import {
  DOC_END,
  DOC_START,
  docBlockOf,
  type LoadResults,
  recordCommit,
  renderDocBlock,
  replaceDocBlock,
} from "../../bench/load/report.ts";
import { REPO_ROOT } from "../e2e/harness.ts";

const DOC_FILE = join(REPO_ROOT, "BENCHMARKS.md");
const LOAD_FILE = join(REPO_ROOT, "bench", "results", "load.json");
const doc = readFileSync(DOC_FILE, "utf8");
const load = (): LoadResults => JSON.parse(readFileSync(LOAD_FILE, "utf8")) as LoadResults;

/** Every `## ` and `### ` heading of the document. */
const headings = new Set(
  doc
    .split("\n")
    .filter((l) => /^#{2,3} /.test(l))
    .map((l) => l.replace(/^#+ /, "")),
);

/** Files under `dir` (recursively) whose names end in one of `exts`, build output aside. */
function sources(dir: string, exts: readonly string[]): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "dist" || name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path, exts));
    else if (exts.some((e) => name.endsWith(e))) out.push(path);
  }
  return out;
}

/** A file's text with comment line breaks joined, so a citation wrapped over two lines reads as one. */
function joined(text: string): string {
  return text.replace(/\n[ \t]*(?:\/\/|\*|--|#)?[ \t]*/g, " ");
}

describe("BENCHMARKS.md", () => {
  test("holds the load table report.ts renders from bench/results/load.json", () => {
    const block = docBlockOf(doc);
    assert.notEqual(block, null, `BENCHMARKS.md has no ${DOC_START} ... ${DOC_END} block`);
    assert.equal(
      block,
      renderDocBlock(load()),
      "the table differs from bench/results/load.json: run npx tsx bench/load/report.ts --write",
    );
  });

  test("the load table names the run's commit and machine, or says the commit was not recorded", () => {
    const results = load();
    const { commit: _, ...older } = results;
    const before = renderDocBlock(older);
    assert.match(before, /commit not recorded/);
    for (const fact of [results.machine.node, `${results.machine.cores} cores`, results.machine.cpu])
      assert.ok(before.includes(fact), `the block does not name ${fact}`);
    const sha = "0123456789abcdef0123456789abcdef01234567";
    assert.match(renderDocBlock({ ...results, commit: { sha, dirty: false } }), /commit 0123456[;,]/);
    assert.match(
      renderDocBlock({ ...results, commit: { sha, dirty: true } }),
      /commit 0123456 with uncommitted changes/,
    );
  });

  test("report.ts --write replaces the block and nothing else", () => {
    const dir = mkdtempSync(join(tmpdir(), "benchmarks-doc-"));
    try {
      const results = {
        ...load(),
        commit: { sha: "fedcba9876543210fedcba9876543210fedcba98", dirty: false },
      };
      const loadFile = join(dir, "load.json");
      const docFile = join(dir, "BENCHMARKS.md");
      writeFileSync(loadFile, JSON.stringify(results));
      writeFileSync(docFile, `# Title\n\nbefore\n\n${DOC_START}\nan old table\n${DOC_END}\n\nafter\n`);
      execFileSync(
        process.execPath,
        ["--import", "tsx", join(REPO_ROOT, "bench/load/report.ts"), "--write", loadFile, docFile],
        { cwd: REPO_ROOT, stdio: "pipe" },
      );
      const written = readFileSync(docFile, "utf8");
      assert.equal(
        written,
        `# Title\n\nbefore\n\n${DOC_START}\n${renderDocBlock(results)}\n${DOC_END}\n\nafter\n`,
      );
      assert.match(written, /commit fedcba9/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a document without exactly one pair of markers is refused", () => {
    assert.throws(() => replaceDocBlock("no markers\n", "x"), /exactly one/);
    assert.throws(() => replaceDocBlock(`${DOC_END}\n${DOC_START}\n`, "x"), /exactly one/);
    assert.throws(
      () => replaceDocBlock(`${DOC_START}\n${DOC_END}\n${DOC_START}\n${DOC_END}\n`, "x"),
      /exactly one/,
    );
  });

  test("is under 300 lines", () => {
    assert.ok(doc.split("\n").length < 300, `BENCHMARKS.md has ${doc.split("\n").length} lines`);
  });

  test("its matching table holds bench/results/matching.json", () => {
    const rows = JSON.parse(readFileSync(join(REPO_ROOT, "bench/results/matching.json"), "utf8")) as {
      workload: string;
      engine: string;
      opsPerSec: number;
      p50Ns: number;
      p99Ns: number;
      p999Ns: number;
      trades: number;
    }[];
    for (const r of rows) {
      const line = `| ${r.workload} | ${r.engine} | ${r.opsPerSec} | ${r.p50Ns} | ${r.p99Ns} | ${r.p999Ns} | ${r.trades} |`;
      assert.ok(doc.includes(line), `BENCHMARKS.md lacks ${line}`);
    }
  });

  test("comments cite sections it has, never an entry of the dated log", () => {
    const files = [
      ...["src", "workers", "bench", "scripts", "web", "test"].flatMap((d) =>
        sources(join(REPO_ROOT, d), [".ts", ".mjs", ".sql"]),
      ),
      join(REPO_ROOT, "README.md"),
      join(REPO_ROOT, "DECISIONS.md"),
      join(REPO_ROOT, "docs/ARCHITECTURE.md"),
    ];
    let cited = 0;
    for (const file of files) {
      if (file.endsWith("benchmarks-doc.test.ts")) continue;
      const text = joined(readFileSync(file, "utf8"));
      for (const m of text.matchAll(/BENCHMARKS\.md,? "([^"]+)"/g)) {
        cited++;
        assert.ok(headings.has(m[1]), `${file} cites BENCHMARKS.md "${m[1]}", which has no such section`);
      }
      const session = /BENCHMARKS\.md,?\s+[\w-]+ session\b/i.exec(text);
      assert.ok(session === null, `${file} cites a log entry: ${session?.[0]}`);
    }
    assert.ok(cited > 0, "no citation found: the pattern no longer matches how comments cite the document");
  });
});

describe("bench:load's record of the commit", () => {
  test("is HEAD, dirty only when a tracked file outside bench/results changed", () => {
    const dir = mkdtempSync(join(tmpdir(), "benchmarks-commit-"));
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
        cwd: dir,
        encoding: "utf8",
      }).trim();
    try {
      assert.equal(recordCommit(dir), null, "not a checkout yet");
      git("init", "-q");
      mkdirSync(join(dir, "bench", "results"), { recursive: true });
      writeFileSync(join(dir, "main.ts"), "1\n");
      writeFileSync(join(dir, "bench", "results", "load.json"), "{}\n");
      git("add", ".");
      git("commit", "-q", "-m", "first");
      const sha = git("rev-parse", "HEAD");
      assert.deepEqual(recordCommit(dir), { sha, dirty: false });
      writeFileSync(join(dir, "bench", "results", "load.json"), "{ }\n");
      writeFileSync(join(dir, "untracked.ts"), "2\n");
      assert.deepEqual(recordCommit(dir), { sha, dirty: false });
      writeFileSync(join(dir, "main.ts"), "2\n");
      assert.deepEqual(recordCommit(dir), { sha, dirty: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
