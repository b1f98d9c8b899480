/**
 * The bound health policy is the policy: a policy file named on the command line (apply,
 * rehearse, plan preview) is accepted only when it is byte for byte the one the plan binds; any
 * other is refused with both digests named.
 */
import { ok as assert, rejects } from "node:assert/strict";
import { join } from "node:path";
import { requireBoundPolicy } from "../../src/app/run_plan.ts";
import { CairnError } from "../../src/domain/errors.ts";
import { parsePlan } from "../../src/domain/plan/parse.ts";
import { ROOT } from "../_helpers/twin_world.ts";

const PLAN = join(ROOT, "plans/talos-v1.14.2.yaml");
const TUPPR = "b9f0df7b6d9761115fa5a88b7167c0636a7f2b6e595e3734b4c7a2f6d8f9d35d";

async function plan() {
  return (await parsePlan(await Deno.readFile(PLAN), { file: PLAN })).plan;
}

Deno.test("a --health-policy with another digest is refused, naming both digests", async () => {
  const p = await plan();
  await rejects(
    () => requireBoundPolicy(join(ROOT, "fixtures/health/tuppr-talosupgrade.yaml"), p),
    (e: unknown) => {
      assert(e instanceof CairnError && e.reason === "HealthPolicyOverrideMismatch", String(e));
      assert(e.message.includes(TUPPR), "names the given file's digest");
      assert(e.message.includes(p.spec.healthPolicy.sha256), "names the bound digest");
      return true;
    },
  );
});

Deno.test("a --health-policy that is the bound file byte for byte is accepted", async () => {
  const p = await plan();
  await requireBoundPolicy(join(ROOT, "fixtures/health/home-ops.yaml"), p);
});
