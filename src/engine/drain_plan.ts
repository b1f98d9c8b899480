import type { KubePod, PodRef } from "../ports/kube.ts";

/**
 * Drain planning (docs/recovery.md#drain-deadlines-are-planned): which pods on a node the drain
 * will evict, which it leaves alone and why, and whether the plan's drain bound can cover the
 * termination grace periods of what it evicts. A client wait shorter than a pod's grace period
 * cannot establish that the pod stopped, so such a plan is refused unless it binds an explicit,
 * reviewed partial-drain recovery entry. The bound is never silently raised.
 */

/** Why a pod on the node is not evicted. */
export type DrainSkipReason = "DaemonSetPod" | "MirrorPod" | "TerminalPod" | "AlreadyTerminating";

/** Why a pod stops the drain plan. */
export type DrainBlockReason = "GraceExceedsDrainBound" | "UnreplicatedPod";

export interface DrainPlanInput {
  readonly node: string;
  readonly pods: readonly KubePod[];
  readonly drainBoundSeconds: number;
  /** The plan binds a reviewed partial-drain recovery entry for this node (or all nodes). */
  readonly partialDrainAuthorized: boolean;
}

export interface DrainBlocker {
  readonly pod: PodRef;
  readonly reason: DrainBlockReason;
  readonly graceSeconds: number;
}

export interface DrainPlan {
  readonly node: string;
  readonly evict: readonly PodRef[];
  readonly skipped: readonly { readonly pod: PodRef; readonly reason: DrainSkipReason }[];
  readonly blockers: readonly DrainBlocker[];
  /** The longest grace period among evicted pods (seconds). */
  readonly longestGraceSeconds: number;
  /**
   * `ok`: the bound covers every grace period; `partial`: it does not, but the plan authorises a
   * reviewed partial drain; `refused`: it does not and nothing authorises it, or a pod has no
   * controller (evicting it would lose it; cairn never forces).
   */
  readonly verdict: "ok" | "partial" | "refused";
}

function ref(p: KubePod): PodRef {
  return { namespace: p.namespace, name: p.name };
}

function skipReason(p: KubePod): DrainSkipReason | undefined {
  if (p.mirror) return "MirrorPod";
  if (p.daemonSet) return "DaemonSetPod";
  if (p.phase === "Succeeded" || p.phase === "Failed") return "TerminalPod";
  if (p.deletionTimestamp !== undefined) return "AlreadyTerminating";
  return undefined;
}

/** Plans the drain of one node. Pure; pod order is preserved for deterministic reports. */
export function planDrain(input: DrainPlanInput): DrainPlan {
  const evict: PodRef[] = [];
  const skipped: { pod: PodRef; reason: DrainSkipReason }[] = [];
  const blockers: DrainBlocker[] = [];
  let longest = 0;
  for (const pod of input.pods) {
    const skip = skipReason(pod);
    if (skip) {
      skipped.push({ pod: ref(pod), reason: skip });
      continue;
    }
    const grace = pod.terminationGracePeriodSeconds;
    if (pod.owner === undefined) {
      blockers.push({ pod: ref(pod), reason: "UnreplicatedPod", graceSeconds: grace });
      continue;
    }
    evict.push(ref(pod));
    longest = Math.max(longest, grace);
    if (grace > input.drainBoundSeconds) {
      blockers.push({ pod: ref(pod), reason: "GraceExceedsDrainBound", graceSeconds: grace });
    }
  }
  const unreplicated = blockers.some((b) => b.reason === "UnreplicatedPod");
  const graceBlocked = blockers.some((b) => b.reason === "GraceExceedsDrainBound");
  const verdict = unreplicated
    ? "refused"
    : !graceBlocked
    ? "ok"
    : input.partialDrainAuthorized
    ? "partial"
    : "refused";
  return { node: input.node, evict, skipped, blockers, longestGraceSeconds: longest, verdict };
}
