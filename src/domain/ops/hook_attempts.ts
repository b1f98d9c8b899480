/**
 * The attempts a plan's node hooks take per step. Each hook's Job create is a journaled attempt of
 * the step's operation (docs/operating.md#node-hooks), so the operation's attempt budget must hold
 * them on top of the step's own mutations: otherwise a plan with hooks would run out of attempts
 * before its last phase (or its post hook) and hold for a reason nobody declared.
 */
import type { OperatedPlan } from "../plan/schema.ts";

export function hookAttempts(plan: OperatedPlan): number {
  return (plan.spec.hooks ?? []).reduce((n, h) => n + (h.pre ? 1 : 0) + (h.post ? 1 : 0), 0);
}
