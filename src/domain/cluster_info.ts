/**
 * The cluster's own name, as Talos publishes it: the COSI resource `Infos.cluster.talos.dev`,
 * id `current`, namespace `cluster`, whose spec carries `clusterId` and `clusterName` (the
 * machine configuration's `cluster.id` and `cluster.clusterName`). Every node of a Talos cluster
 * reports the same values; a node of another cluster reports its own.
 */
import { parse } from "yaml";

/** Where Talos keeps the cluster's identity (COSI State.Get coordinates). */
export const CLUSTER_INFO_RESOURCE = {
  namespace: "cluster",
  type: "Infos.cluster.talos.dev",
  id: "current",
} as const;

/** The parsed spec of the cluster Info resource. */
export interface ClusterInfo {
  readonly clusterName: string;
  readonly clusterId: string;
}

/**
 * Parses the resource's `yaml_spec`; undefined when it does not name a cluster (an unreadable
 * identity is never taken for a match).
 */
export function parseClusterInfo(yamlSpec: string): ClusterInfo | undefined {
  let doc: unknown;
  try {
    doc = parse(yamlSpec, { maxAliasCount: 0 });
  } catch {
    return undefined;
  }
  if (typeof doc !== "object" || doc === null) return undefined;
  const { clusterName, clusterId } = doc as Record<string, unknown>;
  if (typeof clusterName !== "string" || clusterName === "") return undefined;
  return { clusterName, clusterId: typeof clusterId === "string" ? clusterId : "" };
}
