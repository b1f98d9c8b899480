// deno-lint-ignore-file no-console
/**
 * One cold `plan check` + `plan verify` of a plan, split into stages, for plan_check_bench.ts:
 * run in a fresh process each time, it prints one JSON object of wall milliseconds per stage.
 * Each stage does what the CLI does, in the CLI's order, so each is measured cold:
 *   runtime   process start → this module's first statement (Deno boot, graph load)
 *   import    the two command modules and everything they import (yaml, zod, schemas)
 *   yaml      loading the plan's YAML (safe loader: one document, no duplicate keys, …)
 *   schema    validating the loaded value against the plan schema
 *   check     the rest of `checkPlanFile` (parse again, now warm; catalogue, bound files, rules)
 *   verify    the signature policy (ssh signatures, allowed signers)
 *
 *   deno run -A bench/plan_check_probe.ts DIR PLAN ALLOWED_SIGNERS NOW
 */
const runtime = performance.now(); // performance.timeOrigin is the process start
const [dir, planFile, signersFile, now] = Deno.args as [string, string, string, string];
let t = performance.now();
const lap = () => {
  const n = performance.now();
  const d = n - t;
  t = n;
  return d;
};
const [{ checkPlanFile }, { loadYaml }, { PlanSchema }, verifyRun, signersMod, policyMod] =
  await Promise.all([
    import("../src/app/plan_check_run.ts"),
    import("../src/domain/plan/yaml_load.ts"),
    import("../src/domain/plan/schema.ts"),
    import("../src/app/plan_verify_run.ts"),
    import("../src/domain/trust/allowed_signers.ts"),
    import("../src/domain/trust/policy.ts"),
    import("../src/cli/plan_check.ts"),
    import("../src/cli/plan_verify.ts"),
  ]);
const importMs = lap();
const bytes = await Deno.readFile(`${dir}/${planFile}`);
lap();
const loaded = loadYaml(bytes, { file: planFile });
const yamlMs = lap();
if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
const schema = PlanSchema.safeParse(loaded.loaded.value);
const schemaMs = lap();
if (!schema.success) throw new Error(String(schema.error));
const nowMs = Date.parse(now);
const result = await checkPlanFile(planFile, { nowMs, cwd: dir });
const checkMs = lap();
if (!result.ok) throw new Error(JSON.stringify(result.problems));
const inputs = await verifyRun.readPlanVerifyInputs(
  `${dir}/${planFile}`,
  `${dir}/${signersFile}`,
);
const verdict = await policyMod.evaluatePolicy({
  plan: inputs.plan,
  signatures: inputs.signatures,
  signers: signersMod.parseAllowedSigners(inputs.signersText, signersFile),
  author: "alice@example.com",
  requiredApprovals: 1,
  atMs: nowMs,
});
const verifyMs = lap();
if (!verdict.ok) throw new Error(verdict.summary);
console.log(JSON.stringify({
  runtime,
  import: importMs,
  yaml: yamlMs,
  schema: schemaMs,
  check: checkMs,
  verify: verifyMs,
}));
