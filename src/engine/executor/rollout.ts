import type { BoundPlan, ExecutorDeps } from "./deps.ts";
import { stepKey } from "./digests.ts";
import { resumeNodeStep, runNodeStep } from "./node_step.ts";
import { runSteps, type StepsOutcome } from "./step_loop.ts";

export { takeOverStale } from "./step_loop.ts";

/** How a rollout ended: every node completed, or the first node that did not. */
export type RolloutOutcome = StepsOutcome;

/**
 * Runs a TalosUpgrade plan node by node in plan order (workers first, control planes last, one
 * at a time) through the shared step loop (`step_loop.ts`: takeover, resume is not rerun, the operating hold before each commitment, the
 * first node that does not complete stops the rollout).
 */
export async function runRollout(deps: ExecutorDeps, bound: BoundPlan): Promise<RolloutOutcome> {
  return await runSteps(deps, bound, {
    steps: bound.plan.spec.nodes.map((node) => ({ key: stepKey(node.name), node })),
    run: (step) => runNodeStep(deps, bound, step.node),
    // Taken over in flight: classified from fresh readings and continued, never rerun.
    resume: (step, op) => resumeNodeStep(deps, bound, step.node, op),
  });
}
