/**
 * CI's fixed simulation budget (docs/dst.md): 500 seeds of the `ci` profile (3–6 nodes, plans of
 * at most three nodes, every fault kind and controller event drawn), the invariants checked
 * after every step, zero violations. A failure prints each failing seed with its invariant and
 * shrunk schedule; `deno task dst --seed S --profile ci` replays it.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { describeFailure, runCampaign } from "../../../src/app/dst/campaign.ts";
import { runSeed } from "../../../src/app/dst/run_seed.ts";

const catalogue = await Deno.readFile(new URL("../../../catalogue/talos.yaml", import.meta.url));
const BUDGET = 500;

Deno.test("dst: the CI budget of 500 seeds holds every invariant", async () => {
  const report = await runCampaign({ first: 1, seeds: BUDGET, catalogue, profile: "ci" });
  assertEquals(report.failures.map(describeFailure), []);
  assertEquals(report.seeds, BUDGET);
  // Not vacuous: seeds complete rollouts, and others halt on their faults.
  assert((report.ends["completed"] ?? 0) > BUDGET / 10, JSON.stringify(report.ends));
  assert((report.ends["halted"] ?? 0) > BUDGET / 10, JSON.stringify(report.ends));
});

Deno.test("dst: a seed replays the same run", async () => {
  const a = await runSeed({ seed: 4242, catalogue, profile: "ci" });
  const b = await runSeed({ seed: 4242, catalogue, profile: "ci" });
  assertEquals(a, b);
});
