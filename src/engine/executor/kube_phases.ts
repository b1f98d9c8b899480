import type { KubeObject, KubeResourceRef } from "../../ports/kube.ts";
import { type CordonFact, decideUncordon } from "../cordon_ownership.ts";
import type { StepState } from "./deps.ts";
import { type DisruptingPlan, disruptionBounds } from "./disruption.ts";
import { halt, type PhaseResult, proceed, unresolved } from "./halt.ts";
import { errorText, mutate, type Sent } from "./mutation.ts";

export const NODES: KubeResourceRef = {
  group: "",
  version: "v1",
  plural: "nodes",
  namespaced: false,
};

/** A step that may take its node out of service (TalosUpgrade, ConfigApply with a reboot). */
type Step = StepState<DisruptingPlan>;

function deadlines(s: Step) {
  return disruptionBounds(s.bound.plan);
}

/**
 * The bound of one Kubernetes read in a phase: its transport deadline (one RPC), converted to
 * the adapter's wall clock. A read past it throws `KubeTimeout` and is unreadable, never a pass.
 */
export function kubeReadOptions(s: Step, phase: "cordon" | "drain" | "uncordon") {
  return { timeoutMs: s.deps.callTimeoutMs(deadlines(s)[phase].transportSeconds * 1000) };
}

async function fact(s: Step, phase: "cordon" | "uncordon", detail: Record<string, unknown>) {
  await s.deps.journal.recordPhase({
    operationId: s.operationId,
    token: s.token,
    phase,
    kind: "fact",
    detail,
    nowMs: s.deps.clock.now(),
  });
}

/**
 * Cordons the node and records its provenance. A node that is already unschedulable is left
 * alone and recorded as not ours, so nothing later undoes someone else's cordon.
 */
export async function cordonPhase(s: Step): Promise<PhaseResult<CordonFact>> {
  let node;
  try {
    node = await s.deps.kube.getNode(s.node, kubeReadOptions(s, "cordon"));
  } catch (e) {
    return halt(unresolved("NodeUnreadable", errorText(e)));
  }
  if (!node) return halt(unresolved("NodeNotFound", `node ${s.node} is not in the cluster`));
  if (node.unschedulable) {
    const f: CordonFact = {
      priorUnschedulable: true,
      cordonedByOperation: false,
      resourceVersionAfterCordon: undefined,
    };
    await fact(s, "cordon", { ...f, resourceVersionObserved: node.resourceVersion });
    return proceed(f);
  }
  const rv = node.resourceVersion;
  const r = await mutate(s, {
    phase: "cordon",
    request: { verb: "patch", node: s.node, unschedulable: true, resourceVersion: rv },
    route: "kube-apiserver",
    deadline: deadlines(s).cordon,
    send: async (timeoutMs): Promise<Sent<string>> => {
      // Past its deadline the patch throws: a transport failure, the attempt unaccounted.
      const out = await s.deps.kube.cordon(s.node, rv, { timeoutMs });
      if (out.kind === "applied") {
        return {
          responseClass: "accepted",
          detail: `applied rv=${out.resourceVersion}`,
          value: out.resourceVersion,
        };
      }
      // A resourceVersion conflict or a missing node is the server's own answer: it accounts for
      // the attempt, but it is not a validation rejection, so it never makes the operation
      // `rejected`.
      return { responseClass: "target-error", detail: `${out.kind}: ${out.message}` };
    },
  });
  if (r.kind === "refused") return halt(unresolved(r.reason, r.detail));
  if (r.sent.responseClass !== "accepted") {
    return halt(unresolved("CordonNotApplied", r.sent.detail));
  }
  const f: CordonFact = {
    priorUnschedulable: false,
    cordonedByOperation: true,
    resourceVersionAfterCordon: r.sent.value,
  };
  await fact(s, "cordon", { ...f });
  return proceed(f);
}

/**
 * Uncordons only an operation-owned cordon whose ownership evidence is unchanged; anything else
 * is recorded and left for a human (docs/recovery.md#cordon-provenance).
 */
export async function uncordonPhase(s: Step, cordon: CordonFact): Promise<PhaseResult> {
  let obj: KubeObject | undefined;
  try {
    obj = await s.deps.kube.getObject(NODES, s.node, undefined, kubeReadOptions(s, "uncordon"));
  } catch (e) {
    return halt(unresolved("NodeUnreadable", errorText(e)));
  }
  if (!obj) return halt(unresolved("NodeNotFound", `node ${s.node} is not in the cluster`));
  const decision = decideUncordon(cordon, obj);
  if (decision.kind === "leave") {
    await fact(s, "uncordon", {
      decision: "leave",
      reason: decision.reason,
      detail: decision.detail,
    });
    return proceed(undefined);
  }
  const r = await mutate(s, {
    phase: "uncordon",
    request: {
      verb: "patch",
      node: s.node,
      unschedulable: null,
      resourceVersion: decision.resourceVersion,
    },
    route: "kube-apiserver",
    deadline: deadlines(s).uncordon,
    send: async (timeoutMs): Promise<Sent<string>> => {
      const out = await s.deps.kube.uncordon(s.node, decision.resourceVersion, { timeoutMs });
      return out.kind === "applied"
        ? { responseClass: "accepted", detail: `applied rv=${out.resourceVersion}` }
        : { responseClass: "target-error", detail: `${out.kind}: ${out.message}` };
    },
  });
  if (r.kind === "refused") return halt(unresolved(r.reason, r.detail));
  if (r.sent.responseClass !== "accepted") {
    return halt(unresolved("UncordonNotApplied", r.sent.detail));
  }
  await fact(s, "uncordon", { decision: "uncordoned" });
  return proceed(undefined);
}
