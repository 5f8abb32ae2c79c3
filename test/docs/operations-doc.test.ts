/**
 * docs/OPERATIONS.md against what it describes:
 *
 *   the log table     every message the server logs (each logger call under src/, read with the
 *                     TypeScript parser) has a row with its level, and every row is still logged
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import ts from "typescript";
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
});
