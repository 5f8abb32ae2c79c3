/**
 * docs/OPERATIONS.md against what it describes:
 *
 *   the log table     every message the server logs (each logger call under src/, read with the
 *                     TypeScript parser) has a row with its level, and every row is still logged
 *   the systemd unit  deploy/exchange.service, read as systemd reads its settings: the server it
 *                     starts (its ExecStart flags and Environment= lines through the server's own
 *                     settings parser) listens on 127.0.0.1, or with the unit's TLS lines
 *                     uncommented on every interface with TLS; node is found on the unit's PATH;
 *                     the start limits the guide gives are the unit's
 *   the install       copies the packed package (`npm pack`: the package's `files`), so no .git,
 *                     database or backups; a restore starts the server on a copy of a backup
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import ts from "typescript";
import { parseSettings } from "../../src/config/settings.ts";
import { REPO_ROOT } from "../e2e/harness.ts";

const LEVELS = new Set(["error", "warn", "info", "debug"]);
/** What the server logs through: the process's logger, a logger passed in, the stream hub's error log. */
const LOGGERS = /^(log\(\)|log|processLog\(\)|readiness)$/;
/** Stands for the interpolated part of a message. */
const HOLE = "…";

/** Every .ts file under `dir`, at any depth. */
function sources(dir: string): string[] {
  return readdirSync(join(REPO_ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name));
}

/** The text of a message argument, HOLE for each interpolation; every branch of a `?:`, joined `+`. */
function texts(node: ts.Expression): string[] {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return [node.text];
  if (ts.isTemplateExpression(node))
    return [node.head.text + node.templateSpans.map((s) => HOLE + s.literal.text).join("")];
  if (ts.isConditionalExpression(node)) return [...texts(node.whenTrue), ...texts(node.whenFalse)];
  if (ts.isParenthesizedExpression(node)) return texts(node.expression);
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken)
    return texts(node.left).flatMap((l) => texts(node.right).map((r) => l + r));
  return [];
}

/** `[level, message]` of every logger call with a literal message under src/. */
function loggedMessages(): [string, string, string][] {
  const out: [string, string, string][] = [];
  for (const file of sources("src")) {
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node) && node.arguments.length > 0) {
        const callee = node.expression;
        const last = node.arguments[node.arguments.length - 1];
        const where = `${file.slice(REPO_ROOT.length + 1)}:${source.getLineAndCharacterOfPosition(node.pos).line + 1}`;
        if (
          ts.isPropertyAccessExpression(callee) &&
          LEVELS.has(callee.name.text) &&
          LOGGERS.test(callee.expression.getText(source))
        )
          for (const t of texts(last)) out.push([callee.name.text, t, where]);
        // The stream hub's own `log`, which boot.ts points at the error level.
        if (callee.getText(source) === "this.log" && file.endsWith("stream/hub.ts"))
          for (const t of texts(last)) out.push(["error", t, where]);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return out;
}

/** `[level, pattern]` of each message of the log table: a placeholder (`N`, `URL`, `...`) matches anything. */
function tableMessages(doc: string): [string, RegExp, string][] {
  const start = doc.indexOf("| msg | level | fields | when |");
  assert.ok(start >= 0, "OPERATIONS.md has the log table");
  const rows = doc.slice(start).split("\n\n")[0].split("\n").slice(2);
  return rows.flatMap((row) => {
    const [, msg, level] = row.split(/(?<!\\)\|/).map((c) => c.trim());
    return [...msg.matchAll(/`([^`]+)`/g)].map(([, m]): [string, RegExp, string] => {
      const pattern = m
        .replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
        .replace(/\\\.\\\.\\\./g, ".+")
        .replace(/\b[A-Z][A-Z0-9_]*\b/g, ".+");
      return [level, new RegExp(`^${pattern}$`), m];
    });
  });
}

describe("docs/OPERATIONS.md", () => {
  const doc = readFileSync(join(REPO_ROOT, "docs/OPERATIONS.md"), "utf8");

  test("the log table has a row, at its level, for every message the server logs", () => {
    const logged = loggedMessages();
    assert.ok(logged.length > 20, `found only ${logged.length} logger calls`);
    const table = tableMessages(doc);
    const missing = logged
      .filter(([level, msg]) => !table.some(([l, pattern]) => l === level && pattern.test(msg)))
      .map(([level, msg, where]) => `${level} "${msg}" (${where})`);
    assert.deepEqual(missing, [], "messages logged without a row in the log table of docs/OPERATIONS.md");
  });

  test("every row of the log table is a message the server still logs", () => {
    const logged = loggedMessages();
    const stale = tableMessages(doc)
      .filter(([level, pattern]) => !logged.some(([l, msg]) => l === level && pattern.test(msg)))
      .map(([level, , m]) => `${level} "${m}"`);
    assert.deepEqual(stale, [], "rows of the log table no logger call writes");
  });

  const unit = readFileSync(join(REPO_ROOT, "deploy/exchange.service"), "utf8");

  /** The unit's settings as systemd reads them: `# ` comments dropped, `\` lines joined; `uncomment`: `#Key=` lines too. */
  function settings(uncomment = false): [string, string][] {
    return unit
      .replace(/\\\n/g, " ")
      .split("\n")
      .map((line) => (uncomment ? line.replace(/^#(?=[A-Z][A-Za-z]*=)/, "") : line).trim())
      .filter((line) => /^[A-Z][A-Za-z]*=/.test(line))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]);
  }

  /** What the server the unit starts would run with: its flags after `--prod` and its Environment=. */
  function serverSettings(uncomment = false) {
    const all = settings(uncomment);
    const exec = all.find(([k]) => k === "ExecStart")![1].split(/\s+/);
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of all)
      if (k === "Environment") env[v.slice(0, v.indexOf("="))] = v.slice(v.indexOf("=") + 1);
    return { exec, env, settings: parseSettings(exec.slice(exec.indexOf("--prod") + 1), env) };
  }

  test("the unit's server listens on 127.0.0.1, and on every interface with TLS only when its TLS lines are uncommented", () => {
    const plain = serverSettings().settings;
    assert.equal(plain.host, "127.0.0.1");
    assert.equal(plain.tlsCert, undefined);
    assert.equal(plain.port, 8080);
    assert.equal(plain.backupDir, "/var/lib/exchange/backups");
    const tls = serverSettings(true).settings;
    assert.equal(tls.host, "0.0.0.0");
    assert.equal(tls.tlsCert, "/etc/exchange/tls/cert.pem");
    assert.equal(tls.tlsKey, "/etc/exchange/tls/key.pem");
    assert.match(doc, /listens on `127\.0\.0\.1:8080` only/);
  });

  test("the unit finds node on its own PATH, not at a fixed place", () => {
    const { exec, env } = serverSettings();
    assert.deepEqual(exec.slice(0, 3), ["/usr/bin/env", "node", "/opt/exchange/scripts/start.mjs"]);
    assert.ok(env.PATH?.split(":").includes("/usr/bin") === true, `PATH=${env.PATH}`);
    assert.ok(doc.includes(`\`${env.PATH}\``), "OPERATIONS.md names the unit's PATH");
  });

  test("the restart and start limits the guide gives are the unit's", () => {
    const value = (key: string) => {
      const found = settings().filter(([k]) => k === key);
      assert.equal(found.length, 1, key);
      return found[0][1];
    };
    for (const key of ["Restart", "RestartSec", "StartLimitBurst", "StartLimitIntervalSec", "TimeoutStopSec"])
      assert.ok(doc.includes(`\`${key}=${value(key)}\``), `OPERATIONS.md gives ${key}=${value(key)}`);
    const burst = Number(value("StartLimitBurst"));
    assert.ok(doc.includes(`at most ${burst} starts in ${value("StartLimitIntervalSec")} s`));
    assert.ok(doc.includes(`the first start and ${burst - 1} restarts, ${value("RestartSec")} s`));
  });

  test("the install copies the packed package: no .git, no database, no backups", () => {
    const install = doc.slice(doc.indexOf("## Install as a service"), doc.indexOf("## TLS"));
    assert.doesNotMatch(install, /cp -r \. /);
    assert.match(install, /npm pack/);
    assert.match(install, /tar -xzf exchange-server-[\d.]+\.tgz -C \/opt\/exchange/);
    const packed = JSON.parse(
      execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
        cwd: REPO_ROOT,
        encoding: "utf8",
      }),
    ) as [{ files: { path: string }[] }];
    const files = packed[0].files.map((f) => f.path);
    assert.ok(files.includes("scripts/start.mjs") && files.includes("data/config.json"), files.join(" "));
    const unwanted = files.filter((f) => /^\.git\/|^data\/(?!config\.json$)|backups|node_modules\//.test(f));
    assert.deepEqual(unwanted, []);
  });

  test("a restore starts the server on a copy of a backup, never on the file in the backup folder", () => {
    const restore = doc.slice(doc.indexOf("## Backup and restore"), doc.indexOf("## Pair status"));
    assert.match(restore, /Never start a server on a file in the backup folder/);
    assert.match(restore, /cp backups\/<file> exchange\.db/);
    assert.doesNotMatch(restore, /--db [^\s`]*backups/);
  });
});
