import type { Binding } from "../../../src/domain/health/policy_schema.ts";
import { BindingSchema } from "../../../src/domain/health/policy_schema.ts";
import type {
  KubeObjectLike,
  ReadInputs,
  ResourceSnapshot,
  TalosNodeObservation,
} from "../../../src/domain/health/types.ts";

export const NOW = Date.UTC(2026, 11, 1, 9, 0, 0);

/** A binding as a policy file would give it (defaults applied). */
export function binding(raw: Record<string, unknown>): Binding {
  return BindingSchema.parse({ name: "b", ...raw });
}

/** The `nodes` reader over every node, and kubelet versions (the round tests' two bindings). */
export const nodesB = binding({ name: "nodes", reader: "nodes" });
export const versionsB = binding({
  name: "versions",
  reader: "node-versions",
  predicate: { kubeletVersion: "v1.35.2" },
});

export function live(items: KubeObjectLike[]): ResourceSnapshot {
  return {
    items,
    freshness: { state: "live", syncedAtMs: NOW - 5000, confirmedAtMs: NOW },
    memo: new Map(),
  };
}

export function inputs(
  resources: Record<string, KubeObjectLike[] | ResourceSnapshot>,
  extra: Partial<ReadInputs> & { talosObs?: TalosNodeObservation[] } = {},
): ReadInputs {
  const snaps = new Map(
    Object.entries(resources).map(([k, v]) => [k, Array.isArray(v) ? live(v) : v]),
  );
  const talos = new Map((extra.talosObs ?? []).map((o) => [o.node, o]));
  return {
    nowMs: NOW,
    kube: { resource: (k) => snaps.get(k) },
    talos: { node: (n) => talos.get(n) },
    ...(extra.target ? { target: extra.target } : {}),
  };
}

export function node(
  name: string,
  opts: { ready?: boolean; cordoned?: boolean; cp?: boolean } = {},
) {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      uid: `uid-${name}`,
      resourceVersion: "10",
      labels: opts.cp ? { "node-role.kubernetes.io/control-plane": "" } : {},
      annotations: {
        "extensions.talos.dev/schematic":
          "30684e2ddd0b9d61be817efe9f71ba839dc0e7610d8bc111fe7f70c6b29db08b",
      },
    },
    spec: opts.cordoned ? { unschedulable: true } : {},
    status: {
      conditions: [{ type: "Ready", status: opts.ready === false ? "False" : "True" }],
      nodeInfo: { osImage: "Talos (v1.13.9)", kubeletVersion: "v1.35.2" },
    },
  };
}

export function pod(
  ns: string,
  name: string,
  nodeName: string,
  labels: Record<string, string>,
  opts: { ready?: boolean; daemonSet?: boolean } = {},
) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      namespace: ns,
      name,
      uid: `uid-${ns}-${name}`,
      labels,
      ...(opts.daemonSet
        ? { ownerReferences: [{ kind: "DaemonSet", name: "ds", controller: true }] }
        : {}),
    },
    spec: { nodeName },
    status: {
      phase: "Running",
      conditions: [{ type: "Ready", status: opts.ready === false ? "False" : "True" }],
    },
  };
}

export function pdb(
  ns: string,
  name: string,
  spec: Record<string, unknown>,
  status: Record<string, unknown> | undefined,
  generation = 1,
) {
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { namespace: ns, name, uid: `uid-pdb-${name}`, resourceVersion: "7", generation },
    spec,
    ...(status ? { status: { observedGeneration: generation, ...status } } : {}),
  };
}
