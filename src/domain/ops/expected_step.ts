/**
 * How long one node step of a TalosUpgrade is expected to take, for the maintenance-window fit:
 * the plan's `expectedStepMinutes` when it states one, otherwise the sum of the bounds the plan
 * already gives each phase (pull, install and reboot per hop; cordon, the drain bound, verification
 * and uncordon once). The sum is the step's worst case under its own deadlines, so a window that
 * admits it is never overrun by a step that keeps to them.
 */
import type { TalosUpgradePlan } from "../plan/schema.ts";

export function expectedStepMs(plan: TalosUpgradePlan): number {
  if (plan.spec.expectedStepMinutes !== undefined) return plan.spec.expectedStepMinutes * 60_000;
  const d = plan.spec.phases.deadlines;
  const perHop = d.pull.verificationSeconds + d.install.verificationSeconds +
    d.reboot.verificationSeconds;
  const once = d.cordon.verificationSeconds + plan.spec.phases.drainTimeoutSeconds +
    d.verify.verificationSeconds + d.uncordon.verificationSeconds;
  return (perHop * plan.spec.hops.length + once) * 1000;
}
