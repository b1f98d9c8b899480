/**
 * A small model of the CloudNativePG operator's switchover (seed 004, CloudNative-PG: "the primary
 * PDB allows 0 disruptions by design, so a node drain blocks until CNPG has switched over").
 * When the node running a Cluster's primary becomes unschedulable, the operator promotes a ready
 * replica on a schedulable node after `switchoverSeconds` of virtual time; the old primary is
 * then a replica, covered by the replica PDB, and its eviction can proceed.
 */
import type { SimClock } from "../clock.ts";
import type { Obj, ResourceType, Store } from "./store.ts";

const ROLE = "cnpg.io/instanceRole";
const CLUSTER = "cnpg.io/cluster";

export interface CnpgOptions {
  readonly store: Store;
  readonly clock: SimClock;
  readonly switchoverSeconds?: number;
}

function labels(o: Obj): Record<string, string> {
  return (o.metadata.labels ?? {}) as Record<string, string>;
}

function nodeOf(o: Obj): string | undefined {
  return (o["spec"] as { nodeName?: string } | undefined)?.nodeName;
}

function isReady(o: Obj): boolean {
  const conds = (o["status"] as { conditions?: { type: string; status: string }[] } | undefined)
    ?.conditions ?? [];
  return conds.some((c) => c.type === "Ready" && c.status === "True");
}

function withRole(o: Obj, role: "primary" | "replica"): Obj {
  return {
    ...o,
    metadata: { ...o.metadata, labels: { ...labels(o), [ROLE]: role, role } },
  };
}

/** Starts the switchover model; returns a function that stops it. */
export function startCnpgOperator(o: CnpgOptions): () => void {
  const { store, clock } = o;
  const nodes = store.findType("", "v1", "nodes");
  const pods = store.findType("", "v1", "pods");
  const clusters = store.findType("postgresql.cnpg.io", "v1", "clusters");
  if (!nodes || !pods || !clusters) return () => {};
  const pending = new Set<string>();
  const unschedulable = (name: string | undefined) =>
    name !== undefined &&
    (store.get(nodes, undefined, name)?.["spec"] as { unschedulable?: boolean } | undefined)
        ?.unschedulable === true;
  const check = () => {
    for (const primary of store.list(pods).filter((p) => labels(p)[ROLE] === "primary")) {
      const key = `${primary.metadata.namespace}/${labels(primary)[CLUSTER]}`;
      if (!unschedulable(nodeOf(primary)) || pending.has(key)) continue;
      pending.add(key);
      clock.schedule((o.switchoverSeconds ?? 10) * 1000, () => {
        pending.delete(key);
        switchover(
          store,
          { pods, clusters },
          primary.metadata.namespace!,
          labels(primary)[CLUSTER]!,
          unschedulable,
        );
      });
    }
  };
  return store.watch(nodes, check);
}

function switchover(
  store: Store,
  t: { pods: ResourceType; clusters: ResourceType },
  ns: string,
  cluster: string,
  unschedulable: (node: string | undefined) => boolean,
): void {
  const members = store.list(t.pods, ns).filter((p) => labels(p)[CLUSTER] === cluster);
  const primary = members.find((p) => labels(p)[ROLE] === "primary");
  if (!primary || !unschedulable(nodeOf(primary))) return;
  const next = members.find((p) =>
    labels(p)[ROLE] === "replica" && isReady(p) && !unschedulable(nodeOf(p)) &&
    p.metadata.deletionTimestamp === undefined
  );
  if (!next) return;
  store.put(t.pods, withRole(primary, "replica"));
  store.put(t.pods, withRole(next, "primary"));
  const c = store.get(t.clusters, ns, cluster);
  if (c) {
    store.put(t.clusters, {
      ...c,
      status: { ...(c["status"] as object | undefined), currentPrimary: next.metadata.name },
    });
  }
}
