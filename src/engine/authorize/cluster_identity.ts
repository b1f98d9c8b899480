/**
 * The identity of the cluster connected to, read from the cluster: Talos's `Infos.cluster.talos.dev`
 * resource on the node about to be changed. The answer comes from the machine, so a kubeconfig or
 * talosconfig pointing at another cluster, or a node name that now reaches another cluster's
 * machine, shows up as another name — never as the plan's own `metadata.cluster` read back.
 */
import { CLUSTER_INFO_RESOURCE, parseClusterInfo } from "../../domain/cluster_info.ts";
import { CairnError } from "../../domain/errors.ts";
import type { ClusterIdentitySource } from "../../ports/dispatch.ts";
import type { Talos } from "../../ports/talos.ts";

/** A ClusterIdentitySource over the Talos port; each read is bounded by `timeoutMs`. */
export function talosClusterIdentity(talos: Talos, timeoutMs: number): ClusterIdentitySource {
  return {
    async read(node) {
      const r = await talos.resource(node, CLUSTER_INFO_RESOURCE, { timeoutMs });
      const info = parseClusterInfo(r.yamlSpec);
      if (!info) {
        throw new CairnError({
          reason: "ClusterIdentityUnreadable",
          message: `${CLUSTER_INFO_RESOURCE.type}/${CLUSTER_INFO_RESOURCE.id} on ${node} ` +
            `names no cluster`,
        });
      }
      return {
        name: info.clusterName,
        id: info.clusterId,
        source: `${CLUSTER_INFO_RESOURCE.type}/${CLUSTER_INFO_RESOURCE.id} read from ${node}`,
      };
    },
  };
}
