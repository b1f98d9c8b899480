/** The execution report of an in-process rollout, rendered as a real run publishes it. */
import { rehearsalReport } from "../../src/app/rehearsal_report.ts";
import { parsePlan } from "../../src/domain/plan/parse.ts";
import type { RolloutOutcome } from "../../src/engine/executor/rollout.ts";
import type { InprocWorld } from "./inproc_world.ts";

export async function inprocReport(w: InprocWorld, outcome: RolloutOutcome): Promise<string> {
  const record = await w.journal.getPlan(w.bound.digest);
  const parsed = await parsePlan(new TextEncoder().encode(record!.bytes), { file: "plan.yaml" });
  return rehearsalReport({
    journal: w.journal,
    parsed,
    planPath: "plans/talos-v1.14.2.yaml",
    requiredApprovals: 1,
    outcome,
    generatedAt: w.twin.clock.now(),
  });
}
