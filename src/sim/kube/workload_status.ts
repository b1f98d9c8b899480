/**
 * Workload status, as the Deployment, StatefulSet and DaemonSet controllers would write it:
 * recomputed from the pods each workload owns whenever a pod, node or workload changes, with
 * `observedGeneration` following `metadata.generation`. Health readers judge rollouts by these
 * fields, so the twin must keep them true to the pods it runs.
 */
import type { Obj, ResourceType, Store } from "./store.ts";
import { jsonEqual } from "./json_equal.ts";
import { templateKey } from "./rollout.ts";
import { REVISION_LABEL, revisionOf } from "./daemonset_rollout.ts";

type R = Record<string, unknown>;

interface Owner {
  readonly kind?: string;
  readonly name?: string;
  readonly controller?: boolean;
}

function ownerOf(o: Obj): Owner | undefined {
  const refs = (o.metadata["ownerReferences"] ?? []) as Owner[];
  return refs.find((r) => r.controller) ?? refs[0];
}

function podReady(p: Obj): boolean {
  const conds = ((p["status"] as R | undefined)?.["conditions"] ?? []) as {
    type: string;
    status: string;
  }[];
  return p.metadata.deletionTimestamp === undefined &&
    conds.some((c) => c.type === "Ready" && c.status === "True");
}

/** Starts keeping workload status current; returns a function that stops it. */
export function startWorkloadStatus(store: Store): () => void {
  const t = (g: string, p: string) => store.findType(g, "v1", p);
  const pods = t("", "pods"), nodes = t("", "nodes");
  const deploys = t("apps", "deployments"), sets = t("apps", "statefulsets");
  const daemons = t("apps", "daemonsets"), rsets = t("apps", "replicasets");
  if (!pods || !nodes) return () => {};
  let queued = false;
  /**
   * The store's version when the last recompute ended. A recompute reads only stored objects, and
   * every stored change moves the version, so at the same version it would find what the last one
   * wrote and change nothing: skipped. (The recompute after our own status writes is such a one.)
   */
  let computedAt: number | undefined;
  const sync = () => {
    if (queued) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      if (store.resourceVersion === computedAt) return;
      recompute(store, { pods, nodes, deploys, sets, daemons, rsets });
      computedAt = store.resourceVersion;
    });
  };
  // Our own status writes come back as events too; the version check then skips the recompute.
  const stops = [pods, nodes, deploys, sets, daemons, rsets].filter((x): x is ResourceType => !!x)
    .map((x) => store.watch(x, sync));
  sync();
  return () => stops.forEach((s) => s());
}

interface Types {
  pods: ResourceType;
  nodes: ResourceType;
  deploys: ResourceType | undefined;
  sets: ResourceType | undefined;
  daemons: ResourceType | undefined;
  rsets: ResourceType | undefined;
}

/**
 * A stored object's template key and DaemonSet revision, computed once per stored version instead
 * of on every recompute (a stable JSON of each template, and a SHA-256 for each DaemonSet, per
 * pod event; issue 16). Keyed by the object itself: the store never changes an object it holds
 * (`create` and `put` store a fresh copy, and a write makes a new object with a new
 * resourceVersion), and an object it hands out is also the one its watch history replays, so it
 * must not be changed in place by anyone; a new version is a new key, and a version no longer
 * held is dropped with it (weak keys).
 */
const templateKeys = new WeakMap<Obj, string>();
const revisions = new WeakMap<Obj, string>();

function storedTemplateKey(o: Obj): string {
  let k = templateKeys.get(o);
  if (k === undefined) {
    templateKeys.set(o, k = templateKey((o["spec"] as R | undefined)?.["template"]));
  }
  return k;
}

function storedRevision(o: Obj): string {
  let r = revisions.get(o);
  if (r === undefined) revisions.set(o, r = revisionOf(o));
  return r;
}

/** Appends to a key's list (a copy of the list per pod made the grouping quadratic). */
function push(m: Map<string, Obj[]>, k: string, o: Obj): void {
  const list = m.get(k);
  if (list) list.push(o);
  else m.set(k, [o]);
}

function recompute(store: Store, t: Types): void {
  const byOwner = new Map<string, Obj[]>();
  const rsOwner = new Map<string, string>();
  const rsOf = new Map<string, Obj[]>();
  for (const rs of t.rsets ? store.list(t.rsets) : []) {
    const o = ownerOf(rs);
    if (o?.kind === "Deployment") {
      rsOwner.set(`${rs.metadata.namespace}/${rs.metadata.name}`, `${o.name}`);
      const k = `${rs.metadata.namespace}/${o.name}`;
      push(rsOf, k, rs);
    }
  }
  /**
   * Which of a Deployment's pods run its current template: those of the ReplicaSet holding that
   * template. A Deployment never changed since it was made (generation 1) counts all its pods,
   * as described ReplicaSets may spell the template differently; after a template change, none
   * until the rollout has made the new ReplicaSet (`rollout.ts`).
   */
  const updated = (dep: Obj, owned: Obj[]): number => {
    const want = storedTemplateKey(dep);
    const current = (rsOf.get(`${dep.metadata.namespace}/${dep.metadata.name}`) ?? []).find((rs) =>
      storedTemplateKey(rs) === want
    );
    if (!current) return (dep.metadata.generation ?? 1) === 1 ? owned.length : 0;
    return owned.filter((p) => ownerOf(p)?.name === current.metadata.name).length;
  };
  for (const p of store.list(t.pods)) {
    const o = ownerOf(p);
    if (!o?.kind || !o.name) continue;
    const ns = p.metadata.namespace;
    const key = o.kind === "ReplicaSet"
      ? rsOwner.has(`${ns}/${o.name}`)
        ? `Deployment/${ns}/${rsOwner.get(`${ns}/${o.name}`)}`
        : undefined
      : `${o.kind}/${ns}/${o.name}`;
    if (o.kind === "ReplicaSet") {
      const rsKey = `ReplicaSet/${ns}/${o.name}`;
      push(byOwner, rsKey, p);
    }
    if (!key) continue;
    push(byOwner, key, p);
  }
  const write = (type: ResourceType, kind: string, status: (o: Obj, pods: Obj[]) => R) => {
    for (const o of store.list(type)) {
      const owned = (byOwner.get(`${kind}/${o.metadata.namespace}/${o.metadata.name}`) ?? [])
        .filter((p) => p.metadata.deletionTimestamp === undefined);
      const next = { ...status(o, owned), observedGeneration: o.metadata.generation ?? 1 };
      if (jsonEqual(next, o["status"] ?? {})) continue;
      store.put(type, { ...o, status: next });
    }
  };
  const replicas = (statefulSet: boolean) => (o: Obj, owned: Obj[]): R => {
    const ready = owned.filter(podReady).length;
    return {
      replicas: owned.length,
      updatedReplicas: statefulSet ? owned.length : updated(o, owned),
      readyReplicas: ready,
      availableReplicas: ready,
      ...(statefulSet ? { currentReplicas: owned.length } : {}),
    };
  };
  if (t.deploys) write(t.deploys, "Deployment", replicas(false));
  if (t.sets) write(t.sets, "StatefulSet", replicas(true));
  if (t.rsets) {
    write(t.rsets, "ReplicaSet", (_o, owned) => {
      const ready = owned.filter(podReady).length;
      return {
        replicas: owned.length,
        fullyLabeledReplicas: owned.length,
        readyReplicas: ready,
        availableReplicas: ready,
      };
    });
  }
  if (t.daemons) {
    write(t.daemons, "DaemonSet", (o, owned) => {
      const ready = owned.filter(podReady).length;
      // One pod per node it runs on; the twin keeps DaemonSet pods through drains and reboots,
      // and a node whose pod is being replaced (a rollout) still wants one.
      const all = byOwner.get(`DaemonSet/${o.metadata.namespace}/${o.metadata.name}`) ?? [];
      const nodes = new Set(all.map((p) => String((p["spec"] as R | undefined)?.["nodeName"])));
      // Pods made from the current template (its revision label); a DaemonSet never changed
      // since it was made counts described pods that carry no label.
      const rev = storedRevision(o);
      const updated = owned.filter((p) => {
        const label = p.metadata.labels?.[REVISION_LABEL];
        return label === rev || (label === undefined && (o.metadata.generation ?? 1) === 1);
      }).length;
      return {
        desiredNumberScheduled: nodes.size,
        currentNumberScheduled: owned.length,
        updatedNumberScheduled: updated,
        numberReady: ready,
        numberAvailable: ready,
        ...(nodes.size > ready ? { numberUnavailable: nodes.size - ready } : {}),
        numberMisscheduled: 0,
      };
    });
  }
}
