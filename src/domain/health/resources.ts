import type { Binding } from "./policy_schema.ts";
import { kubeObjectCheck } from "./policy_parse.ts";
import { EMQX, PROMETHEUS } from "./product_kinds.ts";

/** A resource type a binding needs, named the way the Kubernetes API paths name it. */
export interface ResourceNeed {
  /** Watch-cache key, `apiVersion/Kind`. */
  readonly key: string;
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

const CLUSTER_SCOPED = new Set([
  "Node",
  "Namespace",
  "ClusterIssuer",
  "PersistentVolume",
  "StorageClass",
  "CustomResourceDefinition",
  "ClusterRole",
  "ClusterRoleBinding",
  "ClusterSecretStore",
]);

/** `Kind` → plural resource name by the API's regular English rules. */
export function pluralOf(kind: string): string {
  const k = kind.toLowerCase();
  if (/(s|x|z|ch|sh)$/.test(k)) return k + "es";
  if (/[^aeiou]y$/.test(k)) return k.slice(0, -1) + "ies";
  return k + "s";
}

export function resourceNeed(apiVersion: string, kind: string, plural?: string): ResourceNeed {
  const slash = apiVersion.indexOf("/");
  const [group, version] = slash < 0
    ? ["", apiVersion]
    : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
  return {
    key: `${apiVersion}/${kind}`,
    group,
    version,
    plural: plural ?? pluralOf(kind),
    namespaced: !CLUSTER_SCOPED.has(kind),
  };
}

const NODE = resourceNeed("v1", "Node");

/** The Kubernetes resource types a binding reads. */
export function resourcesFor(b: Binding): ResourceNeed[] {
  switch (b.reader) {
    case "nodes":
    case "node-versions":
      return [NODE];
    case "talos-etcd":
    case "talos-services":
      return b.selection.names && !b.selection.labelSelector ? [] : [NODE];
    case "workloads":
      return b.selection.kinds.map((k) => resourceNeed("apps/v1", k));
    case "pdb-feasibility":
      return [NODE, resourceNeed("v1", "Pod"), resourceNeed("policy/v1", "PodDisruptionBudget")];
    case "object-store-endpoint":
    case "alertmanager-alerts":
      return [];
    case "broker-streams":
      return [resourceNeed("v1", "Pod")];
    case "metrics-storage":
      return [resourceNeed(PROMETHEUS.apiVersion, PROMETHEUS.kind)];
    case "mqtt-cluster":
      return [resourceNeed(EMQX.apiVersion, EMQX.kind)];
    case "kube-object": {
      const { selection } = kubeObjectCheck(b);
      return [resourceNeed(selection.apiVersion, selection.kind, selection.plural)];
    }
  }
}
