/**
 * Binding and running a KubernetesUpgrade plan: recorded and approved in the journal with one
 * step per component and node (componentSteps), the plan's dispatch check, then the Kubernetes
 * check of rows 23–25 (recorded; a refusal or a hold sends nothing), then operation by operation
 * in rollout order through `runComponentStep`; the first that does not complete stops the rollout.
 * Pure orchestration over ports, like `engine/executor/run_plan.ts` for a TalosUpgrade.
 */
import { hookAttempts } from "../../domain/ops/hook_attempts.ts";
import type { ParsedPlan } from "../../domain/plan/parse.ts";
import type { KubernetesUpgradePlan } from "../../domain/plan/schema.ts";
import type { Journal, StepBinding } from "../../ports/journal.ts";
import type { BoundPlan } from "../executor/deps.ts";
import { digestOf, identityText } from "../executor/digests.ts";
import { authorizeRollout } from "../executor/dispatch_gate.ts";
import { journalInEpoch } from "../executor/journal_in_epoch.ts";
import type { NodeOutcome } from "../executor/node_step.ts";
import type { RolloutOutcome } from "../executor/rollout.ts";
import { runSteps } from "../executor/step_loop.ts";
import {
  type BindInputs,
  dispatchAuthority,
  type ExecuteOptions,
  executionDeps,
  planOfKind,
  recordApprovedPlan,
} from "../executor/run_plan.ts";
import { checkKubernetes } from "./preflight_check.ts";
import { componentPostText, componentSteps, runComponentStep } from "./step.ts";

/** Refuses anything but a KubernetesUpgrade plan. */
export function asKubernetesUpgrade(parsed: ParsedPlan): KubernetesUpgradePlan {
  return planOfKind(parsed, "KubernetesUpgrade", "are not run by the KubernetesUpgrade executor");
}

/** One step per component and node: the machine's identity before, the component at `to` after. */
export async function kubernetesStepBindings(plan: KubernetesUpgradePlan): Promise<StepBinding[]> {
  const cluster = plan.metadata.cluster;
  return await Promise.all(
    componentSteps(plan).map(async (s) => ({
      step: s.key,
      machine: s.node.name,
      preDigest: await digestOf(identityText(cluster, s.node)),
      postDigest: await digestOf(
        componentPostText(cluster, s.node.name, s.component, plan.spec.to, true),
      ),
    })),
  );
}

/** Records the plan and its approval; returns what the executor runs. */
export async function bindKubernetesUpgrade(
  journal: Journal,
  o: BindInputs,
): Promise<BoundPlan<KubernetesUpgradePlan>> {
  const plan = asKubernetesUpgrade(o.parsed);
  return await recordApprovedPlan(journal, o, plan, {
    // Pull and configuration change per operation, its node hooks' Job creates, plus the plan's
    // retry allowance for reads.
    maxAttempts: 2 + hookAttempts(plan) + plan.spec.retry.maxAttempts,
    steps: await kubernetesStepBindings(plan),
  });
}

function stoppedBefore(
  plan: KubernetesUpgradePlan,
  s: { reason: NodeOutcome["reason"]; detail: string; refused: boolean },
): RolloutOutcome {
  return {
    state: s.refused ? "refused" : "halted",
    nodes: [{
      node: plan.spec.nodes[0]!.name,
      operationId: undefined,
      state: "not-committed",
      reason: s.reason,
      detail: s.detail,
      refused: s.refused,
    }],
  };
}

/**
 * Runs the rollout: the dispatch check and the Kubernetes check first (a refusal sends nothing
 * and is recorded), then operation by operation with fresh health evidence gated by the plan's
 * bound health policy.
 */
export async function executeKubernetesUpgrade(
  o: Omit<ExecuteOptions, "bound"> & { readonly bound: BoundPlan<KubernetesUpgradePlan> },
): Promise<RolloutOutcome> {
  const plan = o.bound.plan;
  const authority = dispatchAuthority(plan, o.authority, { ...o, talos: o.cluster.talos });
  const journal = journalInEpoch(o.journal, o.epoch);
  const pre = await authorizeRollout(journal, o.owner, o.bound.digest, authority);
  if (!pre.ok) {
    return stoppedBefore(plan, { ...pre.stop, refused: pre.stop.verdict === "refused" });
  }
  const k8s = await checkKubernetes({
    journal,
    owner: o.owner,
    digest: o.bound.digest,
    plan,
    cluster: o.cluster,
    nowMs: () => o.clock.now(),
    timeoutMs: o.callTimeoutMs(plan.spec.phases.deadlines.controlPlane.transportSeconds * 1000),
  });
  if (k8s.stop) {
    o.log.warn("kubernetes check did not pass", { reason: k8s.stop.reason });
    return stoppedBefore(plan, k8s.stop);
  }
  const { deps, evidence } = await executionDeps(o, plan, { policy: pre.policy, authority });
  try {
    // A crashed controller's live operations are taken over (unresolved), never rerun.
    return await runSteps(deps, o.bound, {
      steps: componentSteps(plan),
      label: (step) => step.component,
      run: (step) => runComponentStep(deps, o.bound, step),
    });
  } finally {
    evidence.stop();
  }
}
