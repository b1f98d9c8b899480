import type { Binding } from "./policy_schema.ts";
import { kubeObjectCheck } from "./policy_parse.ts";
import { EMQX, PROMETHEUS } from "./product_kinds.ts";
import { type Shape, shapeFor } from "./projection.ts";

/** A resource type a binding needs, named the way the Kubernetes API paths name it. */
export interface ResourceNeed {
  /** Watch-cache key, `apiVersion/Kind`. */
  readonly key: string;
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /**
   * What the binding's reader reads of each object (`projection.ts`); absent: whole objects (a
   * CEL predicate or a product reader may read any field).
   */
  readonly shape?: Shape;
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

/** A need of a fixed reader, which reads only its kind's projected fields. */
function projected(need: ResourceNeed): ResourceNeed {
  const shape = shapeFor(need.key);
  return shape ? { ...need, shape } : need;
}

const NODE = projected(resourceNeed("v1", "Node"));
const POD = projected(resourceNeed("v1", "Pod"));
const PDB = projected(resourceNeed("policy/v1", "PodDisruptionBudget"));

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
      return b.selection.kinds.map((k) => projected(resourceNeed("apps/v1", k)));
    case "pdb-feasibility":
      return [NODE, POD, PDB];
    case "object-store-endpoint":
    case "alertmanager-alerts":
      return [];
    case "broker-streams":
      return [POD];
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
