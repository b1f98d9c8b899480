/**
 * A ConfigApply's explicit reboot takes its node out of service as a TalosUpgrade does
 * (docs/config-apply.md#the-reboot): before the reboot the node is cordoned (its provenance
 * recorded: a node someone else had cordoned is left as it is and never counted as cairn's) and
 * drained through the Eviction API only (`executor/drain_phase.ts`, the same eviction loop); after
 * the node is observed back, a fresh round of the node readers must pass before cairn lifts a
 * cordon, and it lifts only its own one with unchanged ownership evidence
 * (`executor/kube_phases.ts`, `cordon_ownership.ts`). Each write is its own journaled operation
 * phase through the one mutation path; the bounds come from the plan's `apply` deadline
 * (`executor/disruption.ts`).
 */
import type { ConfigApplyPlan } from "../../domain/plan/schema.ts";
import type { CordonFact } from "../cordon_ownership.ts";
import type { StepState } from "../executor/deps.ts";
import { drainPhase } from "../executor/drain_phase.ts";
import { halt, type PhaseResult, unresolved } from "../executor/halt.ts";
import { cordonPhase, uncordonPhase } from "../executor/kube_phases.ts";
import { NODE_READERS } from "../executor/verify_phase.ts";
import { haltReason } from "../executor/health_elsewhere.ts";

type Step = StepState<ConfigApplyPlan>;

/** Cordon, then drain; a halt leaves the cordon recorded and in place (never undone to look green). */
export async function cordonAndDrain(s: Step): Promise<PhaseResult<CordonFact>> {
  const c = await cordonPhase(s);
  if (!c.ok) return c;
  const d = await drainPhase(s);
  if (!d.ok) return d;
  return c;
}

/**
 * After the reboot was observed: node rounds (the operation's own cordon allowed) until one
 * passes or the apply's verification window ends, then the uncordon of an owned cordon. A round
 * that does not pass keeps the cordon and leaves the step unresolved.
 */
export async function verifyThenUncordon(s: Step, cordon: CordonFact): Promise<PhaseResult> {
  const { clock, health, pollIntervalMs } = s.deps;
  const until = clock.now() +
    s.bound.plan.spec.phases.deadlines.apply.verificationSeconds * 1000;
  const owned = cordon.cordonedByOperation;
  while (true) {
    const r = await health.round("verify", {
      target: { node: s.node, operationOwnedCordon: owned },
      operationId: s.operationId,
      readers: NODE_READERS,
    });
    if (r.verdict === "pass") break;
    if (clock.now() >= until || s.deps.signal?.aborted) {
      return halt(
        unresolved(
          haltReason(r, "VerificationHealthFailed", "VerificationHealthUnreadable"),
          `${r.reason}: ${r.message}; the node stays cordoned`,
        ),
      );
    }
    await clock.sleep(Math.min(pollIntervalMs, Math.max(1, until - clock.now())), s.deps.signal);
  }
  return await uncordonPhase(s, cordon);
}
