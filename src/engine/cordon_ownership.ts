import type { KubeObject } from "../ports/kube.ts";

/**
 * Cordon provenance (docs/recovery.md#cordon-provenance): Kubernetes' boolean `spec.unschedulable`
 * alone does not establish who cordoned a node. cairn records, when it cordons, whether the node
 * was already unschedulable and the field manager that wrote the change; it may later uncordon only
 * a cordon it owns whose ownership evidence is unchanged. Everything else is left to humans.
 */

/** The field manager cairn writes with; ownership of `spec.unschedulable` is read from it. */
export const CAIRN_FIELD_MANAGER = "cairn";

/** What was recorded when the operation cordoned (or found cordoned) the node. */
export interface CordonFact {
  /** spec.unschedulable was already true before the operation acted: not ours. */
  readonly priorUnschedulable: boolean;
  /** The operation's own cordon write was applied. */
  readonly cordonedByOperation: boolean;
  /** resourceVersion returned by the cordon write. */
  readonly resourceVersionAfterCordon: string | undefined;
}

export type UncordonDecision =
  | { readonly kind: "uncordon"; readonly resourceVersion: string }
  | {
    readonly kind: "leave";
    readonly reason:
      | "NotOwnedCordon"
      | "AlreadySchedulable"
      | "CordonOwnershipChanged"
      | "CordonOwnershipUnknown"
      | "TalosOwnedCordon";
    readonly detail: string;
  };

interface ManagedFieldsEntry {
  readonly manager?: unknown;
  readonly subresource?: unknown;
  readonly fieldsV1?: unknown;
}

/** Managers whose fieldsV1 own `spec.unschedulable` of a node object (main resource only). */
export function unschedulableOwners(node: KubeObject): string[] {
  const entries = (node.metadata?.managedFields ?? []) as readonly ManagedFieldsEntry[];
  const owners: string[] = [];
  for (const e of entries) {
    if (e.subresource !== undefined && e.subresource !== "") continue;
    const f = e.fieldsV1 as Record<string, Record<string, unknown>> | undefined;
    if (f?.["f:spec"]?.["f:unschedulable"] !== undefined && typeof e.manager === "string") {
      owners.push(e.manager);
    }
  }
  return owners;
}

/**
 * Decides whether the operation may uncordon `node` now, from the recorded fact and a fresh read.
 */
export function decideUncordon(fact: CordonFact, node: KubeObject): UncordonDecision {
  if (fact.priorUnschedulable || !fact.cordonedByOperation) {
    return {
      kind: "leave",
      reason: "NotOwnedCordon",
      detail: "the node was cordoned before the operation",
    };
  }
  const spec = (node["spec"] ?? {}) as { unschedulable?: unknown };
  if (spec.unschedulable !== true) {
    return {
      kind: "leave",
      reason: "AlreadySchedulable",
      detail: "spec.unschedulable is no longer true",
    };
  }
  const annotations = node.metadata?.annotations ?? {};
  if (annotations["talos.dev/cordoned"] === "true") {
    return {
      kind: "leave",
      reason: "TalosOwnedCordon",
      detail:
        "Talos marked this cordon as its own (talos.dev/cordoned); Talos uncordons it on boot",
    };
  }
  const owners = unschedulableOwners(node);
  if (owners.length === 0) {
    return {
      kind: "leave",
      reason: "CordonOwnershipUnknown",
      detail: "no managedFields entry owns spec.unschedulable",
    };
  }
  if (owners.some((o) => o !== CAIRN_FIELD_MANAGER)) {
    return {
      kind: "leave",
      reason: "CordonOwnershipChanged",
      detail: `spec.unschedulable is owned by ${owners.join(", ")}`,
    };
  }
  const rv = node.metadata?.resourceVersion;
  if (rv === undefined) {
    return {
      kind: "leave",
      reason: "CordonOwnershipUnknown",
      detail: "the node has no resourceVersion",
    };
  }
  return { kind: "uncordon", resourceVersion: rv };
}
