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
