/**
 * Node hooks around a committed step of a kind that classifies where it halts (a KubernetesUpgrade
 * component, a ConfigApply node): the pre hooks run first, before anything is sent to the node; the
 * post hooks the step then owes run exactly once, before the step's operation is classified, so
 * their Job creates are still admitted by the journal (docs/operating.md#node-hooks). A halt runs
 * them through `haltUnresolved` (step_outcome.ts); a step about to verify runs them itself and
 * holds, unresolved, when one did not succeed. A TalosUpgrade composes the same hooks in
 * `node_step.ts`.
 */
import type { OperatedPlan } from "../../domain/plan/schema.ts";
import { runPostHooks, runPreHooks } from "../operating/hooks.ts";
import type { StepState } from "./deps.ts";
import type { Halt } from "./halt.ts";

/** The post hooks a step owes; `run` runs them the first time only. */
export interface OwedPostHooks {
  /** `stepSucceeded`: the step's own mutations all succeeded (hooks without a pre then run too). */
  run(stepSucceeded: boolean): Promise<Halt | undefined>;
}

/**
 * Runs the step's pre hooks and leaves the post hooks it owes on the step state. Returns the halt
 * of a pre hook that did not succeed (nothing else may be sent to the node then).
 */
export async function startHooks(s: StepState<OperatedPlan>): Promise<Halt | undefined> {
  if (!s.bound.plan.spec.hooks?.length) return undefined;
  const pre = await runPreHooks(s);
  let ran = false;
  s.postHooks = {
    async run(stepSucceeded) {
      if (ran) return undefined;
      ran = true;
      return await runPostHooks(s, pre.attempted, stepSucceeded);
    },
  };
  return pre.halt;
}

/**
 * Before a step whose mutations were all accepted verifies: the post hooks it owes; a halt when one
 * did not succeed. `succeeded`: the step's postcondition was observed (hooks without a pre run).
 */
export async function postHooksBeforeVerifying(
  s: StepState<OperatedPlan>,
  succeeded: boolean,
): Promise<Halt | undefined> {
  return await s.postHooks?.run(succeeded);
}
