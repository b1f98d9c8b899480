/**
 * The DaemonSet controller's rolling update (`updateStrategy: RollingUpdate`, maxUnavailable 1,
 * the default), on the twin's clock: every DaemonSet pod carries the `controller-revision-hash`
 * label of the template it was made from; when a DaemonSet's template changes, the controller
 * takes one node at a time whose pod runs an older revision, deletes that pod (graceful), and the
 * pod that replaces it on the same node is made from the current template (`daemonPod`, used by
 * `Controllers` whenever it recreates a DaemonSet pod). It moves to the next node only once no
 * pod of the DaemonSet is unavailable, so one pod that never becomes ready stalls the rollout
 * there, as on a real cluster. `workload_status.ts` counts `updatedNumberScheduled` by revision.
 *
 * Fault `daemon-pod-not-ready` (point `kube.daemonPod`, target a node, `params.daemonset`, default
 * kube-proxy): the next pod a rollout makes for that DaemonSet on that node starts and never
 * becomes ready.
 */
import { createHash } from "node:crypto";
import type { SimClock } from "../clock.ts";
import type { FaultSchedule } from "../faults.ts";
import type { Controllers } from "./controllers.ts";
import { clone } from "./patch.ts";
import { stableJson } from "./rollout.ts";
import type { Obj, ResourceType, Store } from "./store.ts";

type R = Record<string, unknown>;
const rec = (v: unknown): R => (v && typeof v === "object" ? v as R : {});

/** The label the DaemonSet controller puts on its pods (`apps.ControllerRevisionHashLabelKey`). */
export const REVISION_LABEL = "controller-revision-hash";
/**
 * A DaemonSet whose pods another simulated controller moves in place (the GitOps twin's chart
 * upgrades, `gitops.ts`, one pod per step): this controller leaves its rollouts alone.
 */
export const ROLLED_IN_PLACE = "sim.cairn.dev/rolled-in-place";
/** A pod the twin starts but never reports ready (set by the `daemon-pod-not-ready` fault). */
export const NEVER_READY = "sim.cairn.dev/never-ready";

/** Virtual time between two looks of a rollout. */
const STEP_MS = 1_000;

/** The revision of a DaemonSet's current template (a short hash of its content). */
export function revisionOf(ds: Obj): string {
  return createHash("sha256").update(stableJson(rec(ds.spec).template)).digest("hex").slice(0, 10);
}

/** The pod `ds` runs on `node` at its current revision (the caller sets the node and starts it). */
export function daemonPod(ds: Obj): Obj {
  const tpl = rec(rec(ds.spec).template);
  const meta = rec(tpl.metadata);
  const spec = clone(rec(tpl.spec));
  // The twin's DaemonSet pods run on every node, control planes included.
  spec.tolerations = [{ operator: "Exists" }];
  return {
    metadata: {
      name: ds.metadata.name,
      generateName: `${ds.metadata.name}-`,
      namespace: ds.metadata.namespace!,
      labels: {
        ...(meta.labels as Record<string, string> | undefined),
        [REVISION_LABEL]: revisionOf(ds),
      },
      annotations: { ...(meta.annotations as Record<string, string> | undefined) },
      ownerReferences: [{
        apiVersion: "apps/v1",
        kind: "DaemonSet",
        name: ds.metadata.name,
        uid: ds.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      }],
    },
    spec: { terminationGracePeriodSeconds: 30, ...spec },
  };
}

/** The DaemonSet controlling `pod`, if the store holds it. */
export function daemonSetOf(store: Store, pod: Obj): Obj | undefined {
  const owner = (pod.metadata.ownerReferences ?? []).find((o) => o.controller === true);
  if (owner?.kind !== "DaemonSet") return undefined;
  const t = store.findType("apps", "v1", "daemonsets");
  const ds = t && store.get(t, pod.metadata.namespace, String(owner.name));
  return ds && ds.metadata.uid === owner.uid ? ds : undefined;
}

/**
 * The replacement for a DaemonSet pod that left `node`: from the DaemonSet's current template;
 * a rollout's pod (a newer revision than the one that left) may be held down by the fault.
 */
export function replacementPod(
  ds: Obj,
  gone: Obj,
  node: string,
  faults: FaultSchedule,
  nowMs: number,
): Obj {
  const pod = daemonPod(ds);
  const newer = gone.metadata.labels?.[REVISION_LABEL] !== revisionOf(ds);
  const f = newer ? faults.peek("kube.daemonPod", node) : undefined;
  const target = String(f?.params?.["daemonset"] ?? "kube-proxy");
  if (f?.kind === "daemon-pod-not-ready" && target === ds.metadata.name) {
    faults.take("kube.daemonPod", node, nowMs);
    pod.metadata.annotations = { ...pod.metadata.annotations, [NEVER_READY]: "true" };
  }
  return pod;
}

function isReady(p: Obj): boolean {
  return ((rec(p.status).conditions ?? []) as R[]).some((c) =>
    c.type === "Ready" && c.status === "True"
  );
}

/** Starts rolling DaemonSets whose template changes; returns a function that stops it. */
export function startDaemonSetRollouts(
  deps: { store: Store; clock: SimClock; controllers: Controllers },
): () => void {
  const { store, clock, controllers } = deps;
  const daemons: ResourceType | undefined = store.findType("apps", "v1", "daemonsets");
  if (!daemons) return () => {};
  const rolling = new Set<string>();
  let stopped = false;
  const key = (o: Obj) => `${o.metadata.namespace}/${o.metadata.name}`;

  const step = (ns: string, name: string) => {
    if (stopped) return;
    const ds = store.get(daemons, ns, name);
    if (!ds) return void rolling.delete(`${ns}/${name}`);
    const want = revisionOf(ds);
    const owned = store.list(controllers.pods, ns).filter((p) =>
      (p.metadata.ownerReferences ?? []).some((o) =>
        o.controller === true && o.uid === ds.metadata.uid
      )
    );
    const old = owned
      .filter((p) => !p.metadata.deletionTimestamp && p.metadata.labels?.[REVISION_LABEL] !== want)
      .sort((a, b) => String(rec(a.spec).nodeName).localeCompare(String(rec(b.spec).nodeName)));
    if (old.length === 0) return void rolling.delete(`${ns}/${name}`);
    // maxUnavailable 1: a pod shutting down or not yet ready holds the next node back.
    const unavailable = owned.some((p) => p.metadata.deletionTimestamp || !isReady(p));
    if (!unavailable) controllers.deletePod(old[0]!);
    clock.schedule(STEP_MS, () => step(ns, name));
  };

  const seen = new Map<string, string>();
  for (const ds of store.list(daemons)) seen.set(key(ds), revisionOf(ds));
  const unwatch = store.watch(daemons, (e) => {
    const ds = e.object, k = key(ds);
    if (e.type === "DELETED") return void seen.delete(k);
    const rev = revisionOf(ds);
    const before = seen.get(k);
    seen.set(k, rev);
    if (ds.metadata.annotations?.[ROLLED_IN_PLACE] === "true") return;
    if (before === undefined || before === rev || rolling.has(k)) return;
    rolling.add(k);
    clock.schedule(0, () => step(ds.metadata.namespace!, ds.metadata.name));
  });
  return () => {
    stopped = true;
    unwatch();
  };
}
