// deno-lint-ignore-file no-console
/**
 * One cold `plan check` + `plan verify` of a plan, split into stages, for plan_check_bench.ts:
 * run in a fresh process each time, it prints one JSON object of wall milliseconds per stage
 * (and, as `<stage>Cpu`, the CPU milliseconds of each).
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
import process from "node:process";

const runtime = performance.now(); // performance.timeOrigin is the process start
/** CPU ms (user + system) this process used so far: steadier than wall time on a loaded machine. */
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const runtimeCpu = cpuNow();
const [dir, planFile, signersFile, now] = Deno.args as [string, string, string, string];
let t = performance.now();
let c = runtimeCpu;
const cpu: Record<string, number> = { runtime: runtimeCpu };
/** Wall ms since the previous lap; the CPU ms go to `cpu[name]`. */
const lap = (name?: string) => {
  const n = performance.now();
  const d = n - t;
  t = n;
  const nc = cpuNow();
  if (name) cpu[name] = nc - c;
  c = nc;
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
const importMs = lap("import");
const bytes = await Deno.readFile(`${dir}/${planFile}`);
lap();
const loaded = loadYaml(bytes, { file: planFile });
const yamlMs = lap("yaml");
if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
const schema = PlanSchema.safeParse(loaded.loaded.value);
const schemaMs = lap("schema");
if (!schema.success) throw new Error(String(schema.error));
const nowMs = Date.parse(now);
const result = await checkPlanFile(planFile, { nowMs, cwd: dir });
const checkMs = lap("check");
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
const verifyMs = lap("verify");
if (!verdict.ok) throw new Error(verdict.summary);
console.log(JSON.stringify({
  runtime,
  import: importMs,
  yaml: yamlMs,
  schema: schemaMs,
  check: checkMs,
  verify: verifyMs,
  ...Object.fromEntries(Object.entries(cpu).map(([k, v]) => [`${k}Cpu`, v])),
}));
