/**
 * CI's fixed simulation budget (docs/dst.md): 500 seeds of the `ci` profile (3–6 nodes, plans of
 * at most two nodes, every fault kind and controller event drawn), split over two test files so a
 * parallel test run spreads them over the cores. A failure prints each failing seed with its
 * invariant and shrunk schedule; `deno task dst --seed S --profile ci` replays it.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { describeFailure, runCampaign } from "../../../src/app/dst/campaign.ts";

export const BUDGET = 500;

const catalogue = await Deno.readFile(new URL("../../../catalogue/talos.yaml", import.meta.url));

/** Runs `seeds` seeds from `first` and asserts that every invariant held on each. */
export async function holdsOn(first: number, seeds: number): Promise<void> {
  const report = await runCampaign({ first, seeds, catalogue, profile: "ci" });
  assertEquals(report.failures.map(describeFailure), []);
  assertEquals(report.seeds, seeds);
  // Not vacuous: seeds complete rollouts, and others halt on their faults.
  assert((report.ends["completed"] ?? 0) > seeds / 10, JSON.stringify(report.ends));
  assert((report.ends["halted"] ?? 0) > seeds / 10, JSON.stringify(report.ends));
}
