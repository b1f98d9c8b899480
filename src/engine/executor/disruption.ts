/**
 * The bounds of the node disruption phases (cordon, drain, uncordon) for the plan kinds that take
 * a node out of service: a TalosUpgrade binds each of them; a ConfigApply whose change needs an
 * explicit reboot binds one `apply` deadline, and its disruption phases are held to it (each call
 * within its transport seconds, the drain within its verification seconds), so every bound still
 * comes from the plan's bytes. A drain's attempt records a transport deadline that covers the
 * whole drain bound: its evictions are sent under that one attempt, and none after its deadline.
 */
import type { ConfigApplyPlan, PhaseDeadline, TalosUpgradePlan } from "../../domain/plan/schema.ts";

/** A plan whose steps may cordon, drain and uncordon a node. */
export type DisruptingPlan = TalosUpgradePlan | ConfigApplyPlan;

/** The deadlines and the drain bound the disruption phases run under. */
export interface DisruptionBounds {
  readonly cordon: PhaseDeadline;
  /** The drain attempt's deadlines; its transport deadline is never shorter than the drain bound. */
  readonly drain: PhaseDeadline;
  readonly uncordon: PhaseDeadline;
  /** The drain's client wait (not proof that draining stopped). */
  readonly drainTimeoutSeconds: number;
  /** The bound of each Kubernetes call of the drain (a list, an eviction, a pod read). */
  readonly drainCallSeconds: number;
}

/** The bounds `plan` binds for its disruption phases. */
export function disruptionBounds(plan: DisruptingPlan): DisruptionBounds {
  if (plan.kind === "TalosUpgrade") {
    const d = plan.spec.phases.deadlines;
    return {
      cordon: d.cordon,
      drain: d.drain,
      uncordon: d.uncordon,
      // Plan check refuses a drain bound longer than the drain's transport deadline.
      drainTimeoutSeconds: plan.spec.phases.drainTimeoutSeconds,
      drainCallSeconds: d.drain.transportSeconds,
    };
  }
  const apply = plan.spec.phases.deadlines.apply;
  return {
    cordon: apply,
    drain: {
      transportSeconds: apply.verificationSeconds,
      verificationSeconds: apply.verificationSeconds,
    },
    uncordon: apply,
    drainTimeoutSeconds: apply.verificationSeconds,
    drainCallSeconds: apply.transportSeconds,
  };
}
