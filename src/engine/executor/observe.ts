import type { Actor } from "../../ports/journal.ts";
import type { KubeNode } from "../../ports/kube.ts";
import { digestOf, identityText } from "./digests.ts";
import type { StepState } from "./deps.ts";

/** The controller as a journal actor. */
export function controllerActor(owner: string): Actor {
  return { identity: owner, role: "controller" };
}

/**
 * Re-observes the machine's identity and records it as `evidence` for this plan (and operation,
 * once there is one). The basis is allocated before the remote read, so "after" means a higher
 * basis. A node that cannot be read is recorded with an `absent:` digest, which no comparison
 * accepts: a machine that cannot be observed cannot be dispatched to.
 */
export async function observeEvidence(
  s: Pick<StepState, "deps" | "bound" | "node"> & { readonly operationId?: string },
  /** Bound of the node read, phase time (default: the plan's verify transport deadline). */
  transportMs = s.bound.plan.spec.phases.deadlines.verify.transportSeconds * 1000,
): Promise<string> {
  const { journal, kube, clock, owner } = s.deps;
  const actor = controllerActor(owner);
  const basis = await journal.startObservation(s.node, actor, clock.now());
  let node: KubeNode | undefined;
  let readError = "";
  try {
    // A read past its deadline is unreadable: recorded `absent:`, which no comparison accepts.
    node = await kube.getNode(s.node, { timeoutMs: s.deps.callTimeoutMs(transportMs) });
  } catch (e) {
    readError = e instanceof Error ? e.message : String(e);
  }
  const cluster = s.bound.plan.metadata.cluster;
  const digest = node
    ? await digestOf(
      identityText(cluster, {
        name: node.name,
        role: node.controlPlane ? "controlplane" : "worker",
      }),
    )
    : `absent:${readError || "node not found"}`.slice(0, 200);
  const rec = await journal.recordObservation({
    machine: s.node,
    purpose: "evidence",
    planDigest: s.bound.digest,
    ...(s.operationId ? { operationId: s.operationId } : {}),
    basis,
    digest,
    objectUid: node?.uid ?? "",
    resourceVersion: node?.resourceVersion ?? "",
    observedGeneration: 0,
    observedAtMs: clock.now(),
    summary: node
      ? `node ${node.name} ready=${node.ready} unschedulable=${node.unschedulable} os=${node.osImage}`
      : `node ${s.node} unreadable`,
    actor,
  });
  return rec.id;
}
