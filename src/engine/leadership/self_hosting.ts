/**
 * Self-hosting safety (seed 004's incident: a controller's leader pod on the node being drained
 * loses leadership mid-job, the job is marked failed, the node left cordoned and upgraded).
 * Before a node's step begins — before its commitment, so before any cordon — the leader checks
 * whether the node hosts its own pod. If it does and another ready replica runs on another node,
 * it hands the Lease over and stops; the new leader finds the earlier nodes completed in the
 * journal and takes this node's step from the start. With no such replica the step is held:
 * draining the node would evict the only executor mid-step.
 */
import type { Reason } from "../../domain/reasons.ts";
import type { Kube, KubePod, PodRef } from "../../ports/kube.ts";
import type { Logger } from "../../ports/logger.ts";
import type { Leadership } from "./elector.ts";

/** What the rollout does before a node's step. */
export type SelfHostingDecision =
  | { readonly kind: "proceed" }
  /** The Lease was handed over: stop the run; the new leader takes the step. */
  | { readonly kind: "handed-over"; readonly reason: Reason; readonly detail: string }
  /** Nothing may start: hold the step (no commitment, nothing sent). */
  | { readonly kind: "held"; readonly reason: Reason; readonly detail: string };

/** The rollout's check before each node's step. */
export interface SelfHosting {
  beforeNode(node: string): Promise<SelfHostingDecision>;
}

/**
 * The pure decision: `self` is this replica's pod as read now (undefined: not found), `peers`
 * the pods of the replica selector. A peer counts when it is Ready, not terminating and bound to
 * another node than the one about to be drained.
 */
export function decideSelfHosting(
  node: string,
  self: KubePod | undefined,
  selfRef: PodRef,
  peers: readonly KubePod[],
): { kind: "proceed" } | { kind: "hand-over"; peer: string } | {
  kind: "held";
  reason: Reason;
  detail: string;
} {
  if (!self) {
    return {
      kind: "held",
      reason: "SelfPodUnknown",
      detail: `this replica's pod ${selfRef.namespace}/${selfRef.name} was not found`,
    };
  }
  if (self.nodeName !== node) return { kind: "proceed" };
  const peer = peers.find((p) =>
    p.name !== self.name && p.ready && p.deletionTimestamp === undefined &&
    p.nodeName !== undefined && p.nodeName !== node
  );
  if (!peer) {
    return {
      kind: "held",
      reason: "SelfHostedNoStandby",
      detail: `node ${node} hosts this replica (${self.name}) and no other ready replica runs ` +
        `on another node`,
    };
  }
  return { kind: "hand-over", peer: `${peer.name} on ${peer.nodeName}` };
}

export interface SelfHostingOptions {
  readonly kube: Pick<Kube, "getPod" | "listPods">;
  /** This replica's pod (the downward API's namespace and name). */
  readonly self: PodRef;
  /** Label selector of cairn's replicas in `self.namespace`. */
  readonly replicaSelector: string;
  readonly leadership: Pick<Leadership, "release">;
  readonly log: Logger;
  /** Deadline of each read (wall-clock ms). */
  readonly timeoutMs: number;
}

/** The check over the Kubernetes port and the election. */
export function selfHostingGuard(o: SelfHostingOptions): SelfHosting {
  return {
    async beforeNode(node) {
      let self: KubePod | undefined, peers: readonly KubePod[];
      try {
        self = await o.kube.getPod(o.self, { timeoutMs: o.timeoutMs });
        peers = (await o.kube.listPods(undefined, {
          namespace: o.self.namespace,
          labelSelector: o.replicaSelector,
          timeoutMs: o.timeoutMs,
        })).items;
      } catch (e) {
        // Unread is not "elsewhere": hold rather than guess.
        return {
          kind: "held",
          reason: "SelfPodUnknown",
          detail: `this replica's pod could not be read: ${e instanceof Error ? e.message : e}`,
        };
      }
      const d = decideSelfHosting(node, self, o.self, peers);
      if (d.kind !== "hand-over") return d;
      const released = await o.leadership.release(`node ${node} hosts this replica`);
      const detail = `node ${node} hosts this replica (${o.self.name}); leadership ` +
        `${released ? "handed over" : "dropped"} before its step, for ${d.peer} to take it`;
      o.log.warn("leadership handed over before draining this replica's node", {
        node,
        reason: "LeadershipHandedOver",
      });
      return { kind: "handed-over", reason: "LeadershipHandedOver", detail };
    },
  };
}
