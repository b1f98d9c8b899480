/**
 * The scheduler's part the twin needs for rollouts: a pod that could not be placed (its only
 * eligible node was cordoned, as for a node-pinned Ceph OSD) stays Pending until a node becomes
 * eligible again, then is bound there and starts after the usual start delay. Node readiness is
 * mirrored onto the pods of the node, as the kubelet and node lifecycle controller do.
 */
import type { SimClock } from "../clock.ts";
import {
  containerStatuses,
  type Controllers,
  podConditions,
  withContainersReady,
} from "./controllers.ts";
import type { Obj, Store } from "./store.ts";

const START_MS = 5_000;

type R = Record<string, unknown>;

function rec(v: unknown): R {
  return (v ?? {}) as R;
}

function nodeReady(n: Obj | undefined): boolean {
  const conds = (rec(n?.["status"])["conditions"] ?? []) as { type: string; status: string }[];
  return conds.some((c) => c.type === "Ready" && c.status === "True");
}

function podIsReady(p: Obj): boolean {
  const conds = (rec(p["status"])["conditions"] ?? []) as { type: string; status: string }[];
  return conds.some((c) => c.type === "Ready" && c.status === "True");
}

/** Starts placing pending pods and mirroring node readiness; returns a function that stops it. */
export function startScheduler(o: { store: Store; clock: SimClock; controllers: Controllers }) {
  const { store, clock, controllers } = o;
  let queued = false;
  const pass = () => {
    if (queued) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      placePending(store, clock, controllers);
      mirrorReadiness(store, controllers);
    });
  };
  return store.watch(controllers.nodes, pass);
}

function placePending(store: Store, clock: SimClock, c: Controllers): void {
  for (const pod of store.list(c.pods)) {
    const spec = rec(pod["spec"]);
    if (spec["nodeName"] || pod.metadata.deletionTimestamp) continue;
    if (rec(pod["status"])["phase"] !== "Pending") continue;
    const node = c.pickNode(pod);
    if (!node) continue;
    const bound = store.put(c.pods, {
      ...pod,
      spec: { ...spec, nodeName: node },
      status: {
        ...rec(pod["status"]),
        phase: "Pending",
        conditions: podConditions(false, true),
        containerStatuses: containerStatuses(spec, false, false),
      },
    });
    const { namespace, name, uid } = bound.metadata;
    clock.schedule(START_MS, () => {
      const cur = store.get(c.pods, namespace, name);
      if (!cur || cur.metadata.uid !== uid || cur.metadata.deletionTimestamp) return;
      const ready = nodeReady(store.get(c.nodes, undefined, node));
      store.put(c.pods, {
        ...cur,
        status: {
          ...rec(cur["status"]),
          phase: "Running",
          conditions: podConditions(ready, true),
          containerStatuses: containerStatuses(cur["spec"], true, ready, clock.now()),
          ...c.podAddress(cur["spec"], node),
        },
      });
    });
  }
}

function mirrorReadiness(store: Store, c: Controllers): void {
  const ready = new Map(store.list(c.nodes).map((n) => [n.metadata.name, nodeReady(n)]));
  for (const pod of store.list(c.pods)) {
    const node = rec(pod["spec"])["nodeName"] as string | undefined;
    if (!node || rec(pod["status"])["phase"] !== "Running" || pod.metadata.deletionTimestamp) {
      continue;
    }
    const want = ready.get(node) ?? false;
    if (podIsReady(pod) === want) continue;
    store.put(c.pods, {
      ...pod,
      status: {
        ...rec(pod["status"]),
        conditions: podConditions(want, true),
        containerStatuses: withContainersReady(pod, want),
      },
    });
  }
}
