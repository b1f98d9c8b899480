/** The operating fields of a plan are checked where they are written: located, with a reason. */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { parseCatalogue } from "../../../src/domain/catalogue.ts";
import { checkPlan } from "../../../src/domain/plan/checks.ts";
import { buildTalosUpgradePlanYaml } from "../../../src/domain/plan/example.ts";
import { located, safeParsePlan } from "../../../src/domain/plan/parse.ts";

const enc = new TextEncoder();
const catBytes = await Deno.readFile(new URL("../../../catalogue/talos.yaml", import.meta.url));
const catalogue = await parseCatalogue(catBytes, "catalogue/talos.yaml");
const base = buildTalosUpgradePlanYaml({ catalogueSha256: catalogue.sha256, nodes: 3 });

Deno.test("a malformed maintenance window is refused at parse with its location", async () => {
  const text = base +
    '  windows:\n    - start: "0 2 * * 6"\n      durationMinutes: 60\n      timeZone: Europe/Berlin\n' +
    '    - start: "0 26 * * *"\n      durationMinutes: 60\n      timeZone: UTC\n';
  const r = await safeParsePlan(enc.encode(text), { file: "w.yaml" });
  assert(!r.ok);
  assertEquals(r.problems.map((p) => [p.reason, p.message]), [[
    "MaintenanceWindowInvalid",
    'maintenance window: hour field "26" is out of 0-23',
  ]]);
  assert(r.problems[0]!.location?.path?.includes("windows"), JSON.stringify(r.problems[0]));
});

Deno.test("a breakpoint after a node the plan lacks, or after its last node, is refused", async () => {
  const r = await safeParsePlan(enc.encode(base), { file: "b.yaml" });
  assert(r.ok && r.parsed.plan.kind === "TalosUpgrade");
  const names = r.parsed.plan.spec.nodes.map((n) => n.name);
  const text = base +
    `  breakpoints:\n    - name: ok\n      after: ${names[0]}\n` +
    `    - name: stray\n      after: nobody\n    - name: last\n      after: ${names.at(-1)}\n`;
  const p = await safeParsePlan(enc.encode(text), { file: "b.yaml" });
  assert(p.ok);
  const issues = located(p.parsed.source, checkPlan(p.parsed.plan, { nowMs: 0, catalogue }))
    .filter((i) => i.reason === "BreakpointInvalid").map((i) => i.message);
  assertEquals(issues, [
    "Breakpoint stray follows nobody, which is not a node of this plan",
    `Breakpoint last follows the last node ${names.at(-1)}: nothing would wait for it`,
  ]);
});
