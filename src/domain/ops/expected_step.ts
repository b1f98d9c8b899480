/**
 * How long one step of a plan is expected to take, for the maintenance-window fit and the length of
 * an expected-noise silence: the plan's `expectedStepMinutes` when it states one, otherwise the sum
 * of the bounds the plan already gives the step's phases. The sum is the step's worst case under
 * its own deadlines, so a window that admits it is never overrun by a step that keeps to them.
 *
 * - TalosUpgrade: pull, install and reboot per hop; cordon, the drain bound, verification and
 *   uncordon once.
 * - KubernetesUpgrade: the image pull, the configuration change and the component's observation,
 *   each within the component's deadline (the longer of the control-plane and kubelet ones, since
 *   one bound covers every step of the plan).
 * - ConfigApply: the apply and the activation read; for a change that needs explicit activation
 *   also the reboot and the wait for the new boot.
 */
import type { OperatedPlan } from "../plan/schema.ts";

export function expectedStepMs(plan: OperatedPlan): number {
  if (plan.spec.expectedStepMinutes !== undefined) return plan.spec.expectedStepMinutes * 60_000;
  switch (plan.kind) {
    case "TalosUpgrade": {
      const d = plan.spec.phases.deadlines;
      const perHop = d.pull.verificationSeconds + d.install.verificationSeconds +
        d.reboot.verificationSeconds;
      const once = d.cordon.verificationSeconds + plan.spec.phases.drainTimeoutSeconds +
        d.verify.verificationSeconds + d.uncordon.verificationSeconds;
      return (perHop * plan.spec.hops.length + once) * 1000;
    }
    case "KubernetesUpgrade": {
      const d = plan.spec.phases.deadlines;
      const longest = Math.max(d.controlPlane.verificationSeconds, d.kubelet.verificationSeconds);
      return 3 * longest * 1000;
    }
    case "ConfigApply": {
      const phases = plan.spec.activation === "explicitActivation" ? 4 : 2;
      return phases * plan.spec.phases.deadlines.apply.verificationSeconds * 1000;
    }
  }
}
