/** One tab in indentation is one error, not a cascade of the parser's echoes of it. */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { loadYaml } from "../../../src/domain/plan/yaml_load.ts";

const enc = (s: string) => new TextEncoder().encode(s);

Deno.test("a tab-indented line yields exactly one PlanSyntaxInvalid, at the tab", () => {
  const text = "a: 1\nb:\n  c: 2\n\td: 3\n  e: 4\nf:\n  g: 5\n";
  const r = loadYaml(enc(text), { file: "p.yaml" });
  assertEquals(r.ok, false);
  if (r.ok) return;
  assertEquals(r.problems.length, 1, r.problems.map((p) => p.message).join("\n"));
  assertEquals(r.problems[0]!.location?.line, 4);
  assertEquals(r.problems[0]!.message.startsWith("Tabs are not allowed"), true);
});

Deno.test("several unrelated syntax errors without a tab are all reported", () => {
  const r = loadYaml(enc("a: 1\na: 2\nb: [1\n"), { file: "p.yaml" });
  assertEquals(r.ok, false);
  if (!r.ok) assertEquals(r.problems.length >= 2, true, JSON.stringify(r.problems));
});

Deno.test("a file that is not YAML at all lists ten problems and counts the rest in one line", () => {
  // Markdown given by mistake (`cairn plan sign README.md`): every line is a syntax error.
  const lines = Array.from({ length: 40 }, (_, i) => `Intro: line ${i} says \`cairn x\` here`);
  const text = ["# Title", "", ...lines.flatMap((l) => [l, "plain words: again: here"])].join("\n");
  const r = loadYaml(enc(text), { file: "README.md" });
  assertEquals(r.ok, false);
  if (r.ok) return;
  assertEquals(r.problems.length, 11, r.problems.map((p) => p.message).join("\n"));
  const last = r.problems.at(-1)!;
  assertEquals(
    /^\d+ more YAML syntax errors not shown \(is this file YAML\?\)$/.test(last.message),
    true,
    last.message,
  );
  assertEquals(last.location?.file, "README.md");
});

Deno.test("a syntax error quoting a long stretch of the file is cut; its location points there", () => {
  // The parser quotes the token it cannot read: here a 300-character table row.
  const long = "a: b\n| `cairn plan new talos\\|kubernetes` " + "y".repeat(300) + " |\n";
  const r = loadYaml(enc(long), { file: "p.yaml" });
  assertEquals(r.ok, false);
  if (r.ok) return;
  assertEquals(r.problems.some((p) => p.message.startsWith("Not a YAML token")), true);
  for (const p of r.problems) assertEquals(p.message.length <= 160, true, p.message);
  assertEquals(r.problems.some((p) => p.message.endsWith("…")), true);
});
