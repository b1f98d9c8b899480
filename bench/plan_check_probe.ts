// deno-lint-ignore-file no-console
/**
 * One cold `plan check` + `plan verify` of a plan, split into stages, for plan_check_bench.ts:
 * run in a fresh process each time, it prints one JSON object of wall milliseconds per stage
 * (and, as `<stage>Cpu`, the CPU milliseconds of each, every thread counted).
 * Each stage does what the CLI does, in the CLI's order, so each is measured cold:
 *   runtime   process start → this module's first statement (Deno boot, graph load)
 *   zod       the zod package (every schema module needs it)
 *   import    the two command modules and everything else they import (schemas, rules, trust)
 *   yaml      loading the plan's YAML (safe loader: one document, no duplicate keys, …)
 *   schema    validating the loaded value against the plan schema
 *   check     the rest of `checkPlanFile` (parse again, now warm; catalogue, bound files, rules)
 *   verify    the signature policy (ssh signatures, allowed signers)
 * `generalYaml` says whether the general YAML parser (the yaml package) was loaded by the end:
 * for plain plans, catalogues and policies it should not be.
 *
 *   deno run -A bench/plan_check_probe.ts DIR PLAN ALLOWED_SIGNERS NOW
 */

const runtime = performance.now(); // performance.timeOrigin is the process start
/**
 * CPU ms (user + system) of every thread of this process so far, from /proc (Linux); steadier
 * than wall time on a loaded machine. Read from /proc rather than node:process so the probe
 * itself does not start Deno's Node layer, which the commands no longer load. NaN elsewhere.
 */
const cpuNow = () => {
  try {
    let ns = 0;
    for (const t of Deno.readDirSync("/proc/self/task")) {
      ns += Number(Deno.readTextFileSync(`/proc/self/task/${t.name}/schedstat`).split(" ")[0]);
    }
    return ns / 1e6;
  } catch {
    return NaN;
  }
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
await import("zod");
const zodMs = lap("zod");
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
const { generalYamlLoaded } = await import("../src/domain/yaml_general.ts");
console.log(JSON.stringify({
  runtime,
  zod: zodMs,
  import: importMs,
  yaml: yamlMs,
  schema: schemaMs,
  check: checkMs,
  verify: verifyMs,
  generalYaml: generalYamlLoaded() ? 1 : 0,
  ...Object.fromEntries(Object.entries(cpu).map(([k, v]) => [`${k}Cpu`, v])),
}));
