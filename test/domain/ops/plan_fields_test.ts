/** The operating fields of a plan are checked where they are written: located, with a reason. */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { parseCatalogue } from "../../../src/domain/catalogue.ts";
import { checkPlan } from "../../../src/domain/plan/checks.ts";
import { buildTalosUpgradePlanYaml } from "../../../src/domain/plan/example.ts";
import { located, safeParsePlan } from "../../../src/domain/plan/parse.ts";
import { expectedStepMs } from "../../../src/domain/ops/expected_step.ts";

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

async function shipped(path: string, extra: string) {
  const text = await Deno.readTextFile(new URL(`../../../${path}`, import.meta.url));
  const p = await safeParsePlan(enc.encode(text + extra), { file: path });
  assert(p.ok, JSON.stringify(!p.ok && p.problems));
  return p.parsed;
}

Deno.test("a KubernetesUpgrade's or ConfigApply's breakpoints are checked as a TalosUpgrade's are", async () => {
  const breakpoints = (after: string[]) =>
    "  breakpoints:\n" + after.map((a, i) => `    - name: b${i}\n      after: ${a}\n`).join("");
  const config = await shipped(
    "plans/config-apply-ntp.yaml",
    breakpoints(["worker-1", "nobody", "cp-1"]),
  );
  const issues = (p: typeof config) =>
    located(p.source, checkPlan(p.plan, { nowMs: 0, catalogue }))
      .filter((i) => i.reason === "BreakpointInvalid").map((i) => i.message);
  assertEquals(issues(config), [
    "Breakpoint b1 follows nobody, which is not a node of this plan",
    "Breakpoint b2 follows the last node cp-1: nothing would wait for it",
  ]);
  // A KubernetesUpgrade leaves a control plane again after its own components, so a breakpoint
  // after a last control plane holds something; after a last worker it would not.
  const k8s = await shipped(
    "plans/kubernetes-v1.36.0-talos-v1.13.9.yaml",
    breakpoints(["cp-1", "nobody", "worker-4"]),
  );
  assertEquals(issues(k8s), [
    "Breakpoint b1 follows nobody, which is not a node of this plan",
    "Breakpoint b2 follows the last node worker-4: nothing would wait for it",
  ]);
});

Deno.test("the expected step of a KubernetesUpgrade or ConfigApply is the sum of its phase bounds unless stated", async () => {
  const k8s = await shipped("plans/kubernetes-v1.36.0-talos-v1.13.9.yaml", "");
  assert(k8s.plan.kind === "KubernetesUpgrade");
  // Pull, configuration change and observation, each within the longer (900 s) component bound.
  assertEquals(expectedStepMs(k8s.plan), 3 * 900_000);
  const ntp = await shipped("plans/config-apply-ntp.yaml", "");
  assert(ntp.plan.kind === "ConfigApply");
  // Apply and activation read, 300 s each; a change that needs a reboot adds the reboot and boot.
  assertEquals(expectedStepMs(ntp.plan), 2 * 300_000);
  assertEquals(
    expectedStepMs({ ...ntp.plan, spec: { ...ntp.plan.spec, activation: "explicitActivation" } }),
    4 * 300_000,
  );
  const stated = await shipped("plans/config-apply-ntp.yaml", "  expectedStepMinutes: 7\n");
  assert(stated.plan.kind === "ConfigApply");
  assertEquals(expectedStepMs(stated.plan), 7 * 60_000);
});
