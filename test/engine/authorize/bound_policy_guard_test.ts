/**
 * The bound health policy (engine/authorize/bound_policy.ts) is used only when it is the file the
 * plan binds, at its digest, written for the plan's cluster (tools/mutants/reconcile_rules.json).
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../../../src/domain/plan/digest.ts";
import { parsePlan } from "../../../src/domain/plan/parse.ts";
import { boundHealthPolicy } from "../../../src/engine/authorize/bound_policy.ts";
import type { BoundFileSource } from "../../../src/ports/dispatch.ts";
import { ROOT } from "../../_helpers/twin_world.ts";

const PLAN_PATH = "plans/talos-v1.14.2.yaml";
const POLICY = "policies/home-ops.yaml";

/** The example plan binding `policy` (at its own digest) and the files holding that policy. */
async function bindingPolicy(policy: string) {
  const bytes = new TextEncoder().encode(policy);
  const sha = await sha256Hex(bytes);
  const text = (await Deno.readTextFile(join(ROOT, PLAN_PATH))).replace(
    /(healthPolicy:\n {4}path: .*\n {4}sha256: )[0-9a-f]{64}/,
    `$1${sha}`,
  );
  const parsed = await parsePlan(new TextEncoder().encode(text), { file: PLAN_PATH });
  const files: BoundFileSource = {
    describe: () => "test files",
    read: (path) =>
      Promise.resolve(
        path === POLICY ? { status: "read", bytes } : { status: "missing", detail: "not here" },
      ),
  };
  return { plan: parsed.plan, files };
}

Deno.test("bound policy guard: a policy written for another cluster is refused even at the bound digest", async () => {
  const policy = await Deno.readTextFile(join(ROOT, POLICY));
  const own = await bindingPolicy(policy);
  const ok = await boundHealthPolicy(own.plan, own.files);
  assertEquals([ok.ok, ok.ok && ok.policy.cluster], [true, "home-ops"]);

  const other = policy.replace("  cluster: home-ops\n", "  cluster: prod-eu\n");
  assertEquals(other === policy, false);
  const foreign = await bindingPolicy(other);
  const r = await boundHealthPolicy(foreign.plan, foreign.files);
  assertEquals(r.ok ? "used" : r.reason, "HealthPolicyClusterMismatch");
});
