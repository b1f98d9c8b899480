/**
 * What a cold `cairn plan check` of a plain plan loads: the general YAML parser (the yaml
 * package, some 100 ms of a cold start with Deno's Node layer) only when a file needs it. Run in
 * a fresh process, since other tests load the parser in theirs.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";

const ROOT = fromFileUrl(new URL("../../", import.meta.url));

/** checkPlanFile on `plan` in a fresh process: its verdict and whether the parser was loaded. */
async function coldCheck(plan: string): Promise<{ ok: boolean; generalYaml: boolean }> {
  const code = `
    const { checkPlanFile } = await import("./src/app/plan_check_run.ts");
    const { generalYamlLoaded } = await import("./src/domain/yaml_general.ts");
    const r = await checkPlanFile(${JSON.stringify(plan)}, {
      nowMs: Date.parse("2026-11-25T00:00:00Z"),
      cwd: Deno.cwd(),
    });
    console.log(JSON.stringify({ ok: r.ok, generalYaml: generalYamlLoaded() }));`;
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", code],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  ok(r.success, new TextDecoder().decode(r.stderr));
  return JSON.parse(new TextDecoder().decode(r.stdout));
}

Deno.test("plan check of a plain plan, catalogue and policy never loads the general YAML parser", async () => {
  assertEquals(await coldCheck("plans/talos-v1.14.2.yaml"), { ok: true, generalYaml: false });
});

Deno.test("a plan with a problem to locate loads it, and is refused", async () => {
  const plan = "fixtures/plans/invalid/NodeListInvalid--duplicate-node.yaml";
  assertEquals(await coldCheck(plan), { ok: false, generalYaml: true });
});
