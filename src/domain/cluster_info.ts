/**
 * The cluster's own name, as Talos publishes it: the COSI resource `Infos.cluster.talos.dev`,
 * id `current`, namespace `cluster`, whose spec carries `clusterId` and `clusterName` (the
 * machine configuration's `cluster.id` and `cluster.clusterName`). Every node of a Talos cluster
 * reports the same values; a node of another cluster reports its own.
 */
import { parse } from "yaml";
import { ContentMemo } from "./content_memo.ts";

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
  const info = yamlSpec.length <= KEPT_TEXT_MAX
    ? parsed.get(yamlSpec, () => parseText(yamlSpec))
    : parseText(yamlSpec);
  return info && { ...info };
}

/**
 * Answers by text: the identity is read from the node about to be changed before every commitment
 * and dispatch, and a cluster publishes one text, so the same YAML was parsed again each time
 * (about 0.6 % of a simulated seed's CPU, issue 16). The answer depends on the text alone (the
 * text is the key); each caller gets its own copy. A text longer than an identity's few lines is
 * parsed but not kept.
 */
const parsed = new ContentMemo<ClusterInfo | undefined>(64);
const KEPT_TEXT_MAX = 4096;

function parseText(yamlSpec: string): ClusterInfo | undefined {
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
