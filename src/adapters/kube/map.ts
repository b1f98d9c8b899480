/**
 * Raw Kubernetes JSON → the port's domain shapes. The adapter maps from the wire objects (not the
 * library's typed models, which turn timestamps into Date objects and drop unknown fields), so
 * what cairn records is exactly what the server sent.
 */
import type {
  KubeLabelSelector,
  KubeNode,
  KubeObject,
  KubeOwner,
  KubePdb,
  KubePod,
  KubeTaint,
} from "../../ports/kube.ts";

type R = Record<string, unknown>;
const rec = (v: unknown): R => (v !== null && typeof v === "object" ? v as R : {});
const str = (v: unknown): string => (typeof v === "string" ? v : "");
const num = (v: unknown, dflt = 0): number => (typeof v === "number" ? v : dflt);
const strMap = (v: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(rec(v))) if (typeof x === "string") out[k] = x;
  return out;
};

function conditionTrue(obj: KubeObject, type: string): boolean {
  const conditions = rec(obj.status).conditions;
  return Array.isArray(conditions) &&
    conditions.some((c) => rec(c).type === type && rec(c).status === "True");
}

function taints(v: unknown): KubeTaint[] {
  if (!Array.isArray(v)) return [];
  return v.map((t) => {
    const x = rec(t);
    return {
      key: str(x.key),
      effect: str(x.effect),
      ...(typeof x.value === "string" ? { value: x.value } : {}),
    };
  });
}

export function toKubeNode(obj: KubeObject): KubeNode {
  const meta = rec(obj.metadata), spec = rec(obj.spec);
  const info = rec(rec(obj.status).nodeInfo);
  const labels = strMap(meta.labels);
  return {
    name: str(meta.name),
    uid: str(meta.uid),
    resourceVersion: str(meta.resourceVersion),
    unschedulable: spec.unschedulable === true,
    ready: conditionTrue(obj, "Ready"),
    labels,
    annotations: strMap(meta.annotations),
    taints: taints(spec.taints),
    kubeletVersion: str(info.kubeletVersion),
    osImage: str(info.osImage),
    bootID: str(info.bootID),
    systemUUID: str(info.systemUUID),
    machineID: str(info.machineID),
    internalIPs:
      (Array.isArray(rec(obj.status).addresses) ? rec(obj.status).addresses as unknown[] : [])
        .map(rec).filter((a) => a.type === "InternalIP").map((a) => str(a.address)),
    controlPlane: "node-role.kubernetes.io/control-plane" in labels,
  };
}

function controllerOf(meta: R): KubeOwner | undefined {
  const refs = Array.isArray(meta.ownerReferences) ? meta.ownerReferences : [];
  const ref = refs.map(rec).find((r) => r.controller === true);
  if (!ref) return undefined;
  return {
    apiVersion: str(ref.apiVersion),
    kind: str(ref.kind),
    name: str(ref.name),
    uid: str(ref.uid),
  };
}

export function toKubePod(obj: KubeObject): KubePod {
  const meta = rec(obj.metadata), spec = rec(obj.spec);
  const owner = controllerOf(meta);
  const annotations = strMap(meta.annotations);
  const volumes = Array.isArray(spec.volumes) ? spec.volumes.map(rec) : [];
  return {
    namespace: str(meta.namespace),
    name: str(meta.name),
    uid: str(meta.uid),
    resourceVersion: str(meta.resourceVersion),
    nodeName: typeof spec.nodeName === "string" && spec.nodeName !== "" ? spec.nodeName : undefined,
    phase: str(rec(obj.status).phase) || "Unknown",
    ready: conditionTrue(obj, "Ready"),
    labels: strMap(meta.labels),
    annotations,
    owner,
    daemonSet: owner?.kind === "DaemonSet" && owner.apiVersion === "apps/v1",
    mirror: "kubernetes.io/config.mirror" in annotations,
    emptyDir: volumes.some((v) => v.emptyDir !== undefined),
    terminationGracePeriodSeconds: num(spec.terminationGracePeriodSeconds, 30),
    deletionTimestamp: typeof meta.deletionTimestamp === "string"
      ? meta.deletionTimestamp
      : undefined,
  };
}

function intOrString(v: unknown): number | string | undefined {
  return typeof v === "number" || typeof v === "string" ? v : undefined;
}

function selectorOf(v: unknown): KubeLabelSelector | undefined {
  if (v === null || typeof v !== "object") return undefined;
  const s = rec(v);
  const exprs = Array.isArray(s.matchExpressions) ? s.matchExpressions.map(rec) : undefined;
  return {
    ...(s.matchLabels !== undefined ? { matchLabels: strMap(s.matchLabels) } : {}),
    ...(exprs
      ? {
        matchExpressions: exprs.map((e) => ({
          key: str(e.key),
          operator: str(e.operator),
          ...(Array.isArray(e.values) ? { values: e.values.map(str) } : {}),
        })),
      }
      : {}),
  };
}

export function toKubePdb(obj: KubeObject): KubePdb {
  const meta = rec(obj.metadata), spec = rec(obj.spec), status = rec(obj.status);
  return {
    namespace: str(meta.namespace),
    name: str(meta.name),
    generation: num(meta.generation, 1),
    observedGeneration: num(status.observedGeneration),
    minAvailable: intOrString(spec.minAvailable),
    maxUnavailable: intOrString(spec.maxUnavailable),
    selector: selectorOf(spec.selector),
    unhealthyPodEvictionPolicy: typeof spec.unhealthyPodEvictionPolicy === "string"
      ? spec.unhealthyPodEvictionPolicy
      : undefined,
    disruptionsAllowed: num(status.disruptionsAllowed),
    currentHealthy: num(status.currentHealthy),
    desiredHealthy: num(status.desiredHealthy),
    expectedPods: num(status.expectedPods),
  };
}
