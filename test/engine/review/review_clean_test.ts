import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { initialState, PRIMARY_PIN_SET, renovateBump } from "../../../src/sim/gitops/mod.ts";
import { GitOpsRepo } from "../../_helpers/gitops_review.ts";

const SEED = 42;

Deno.test("a clean bump of each of the 16 components has no finding", async () => {
  const base = initialState({ seed: SEED });
  await using repo = await GitOpsRepo.create(base);
  const components = Object.keys(PRIMARY_PIN_SET).sort();
  assertEquals(components.length, 16);
  for (const component of components) {
    const bump = renovateBump(base, PRIMARY_PIN_SET[component]!, "patch");
    const r = await repo.review(
      await repo.branch(`renovate/${component}`, bump.state, bump.message),
    );
    assertEquals(
      r.result.findings,
      [],
      `${component}: ${JSON.stringify(r.result.findings, null, 1)}`,
    );
    assertEquals(r.result.verdict, "clean", component);
    const moved = r.result.components.filter((c) => c.moved).map((c) => c.name);
    assertEquals(moved, [component]);
    const c = r.result.components.find((x) => x.name === component)!;
    assert(c.judged.length > 0 && c.judged.every((j) => j.line >= 1), component);
  }
});
