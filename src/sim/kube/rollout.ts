/**
 * The Deployment controller's rolling update, for a practice cluster: when a Deployment's pod
 * template changes (`kubectl rollout restart`, `kubectl set image`), a new ReplicaSet takes over
 * one pod at a time — a new pod is started (one surge pod at most), and once it is Ready an old
 * one is scaled away and terminates gracefully — so `kubectl rollout status` waits, reports
 * progress and completes as on a real cluster. Runs on the twin's clock.
 */
import { createHash } from "node:crypto";
import type { SimClock } from "../clock.ts";
import type { Controllers } from "./controllers.ts";
import { templatePod } from "./load.ts";
import { clone } from "./patch.ts";
import type { Obj, ResourceType, Store } from "./store.ts";

type R = Record<string, unknown>;

const rec = (v: unknown): R => (v && typeof v === "object" ? v as R : {});

/** Virtual time between two steps of a rollout. */
const STEP_MS = 1_000;

/**
 * JSON with sorted keys: two templates are the same template whatever their key order. Built by
 * concatenation, without an array of parts per level (the status controller keys every template
 * on each recompute, issue 16); an array's hole stays an empty slot, as `map` and `join` left it.
 */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) {
    let out = "[";
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out += ",";
      if (i in v) out += stableJson(v[i]);
    }
    return out + "]";
  }
  if (v && typeof v === "object") {
    const keys = Object.keys(v).sort();
    let out = "{";
    for (let i = 0; i < keys.length; i++) {
      if (i > 0) out += ",";
      out += `${JSON.stringify(keys[i])}:${stableJson((v as R)[keys[i]!])}`;
    }
    return out + "}";
  }
  return JSON.stringify(v) ?? "null";
}

const controlledBy = (o: Obj, owner: Obj) =>
  (o.metadata.ownerReferences ?? []).some((r) =>
    r.controller === true && r.uid === owner.metadata.uid
  );

/**
 * A pod template's identity: its content, without the hash label its ReplicaSet adds. Only the
 * top level and its metadata are copied (to swap the labels), not the whole template: the key
 * only reads it. (An array's JSON has no `metadata`, so an array template keys as it is.)
 */
export function templateKey(template: unknown): string {
  const tpl = rec(template);
  if (Array.isArray(tpl)) return stableJson(tpl);
  const meta = rec(tpl.metadata);
  const labels = { ...rec(meta.labels) };
  delete labels["pod-template-hash"];
  return stableJson({ ...tpl, metadata: { ...meta, labels } });
}

/**
 * The ReplicaSet that runs `dep`'s current template: the one whose template is the
 * Deployment's, else (a described ReplicaSet written differently) the only one it owns.
 */
export function currentReplicaSet(dep: Obj, owned: readonly Obj[]): Obj | undefined {
  const want = templateKey(rec(dep.spec).template);
  return owned.find((rs) => templateKey(rec(rs.spec).template) === want) ??
    (owned.length === 1 ? owned[0] : undefined);
}

/** Starts rolling Deployments whose template changed; returns a function that stops it. */
export function startDeploymentRollouts(
  deps: { store: Store; clock: SimClock; controllers: Controllers },
): () => void {
  const { store, clock, controllers } = deps;
  const t = (p: string) => store.findType("apps", "v1", p);
  const deployments = t("deployments"), replicaSets = t("replicasets");
  if (!deployments || !replicaSets) return () => {};
  const rolling = new Set<string>();
  let stopped = false;
  const key = (o: Obj) => `${o.metadata.namespace}/${o.metadata.name}`;

  const step = (ns: string, name: string) => {
    if (stopped) return;
    const dep = store.get(deployments, ns, name);
    if (!dep) return void rolling.delete(`${ns}/${name}`);
    const owned = store.list(replicaSets, ns).filter((rs) => controlledBy(rs, dep));
    const desired = Number(rec(dep.spec).replicas ?? 1);
    const want = templateKey(rec(dep.spec).template);
    const current = owned.find((rs) => templateKey(rec(rs.spec).template) === want) ??
      createReplicaSet(store, replicaSets, dep);
    const pods = store.list(controllers.pods, ns).filter((p) => !p.metadata.deletionTimestamp);
    const podsOf = (rs: Obj) => pods.filter((p) => controlledBy(p, rs));
    const fresh = podsOf(current);
    const freshReady = fresh.filter(isReady);
    const old = owned.filter((rs) => rs !== current && rs.metadata.uid !== current.metadata.uid);
    const oldPods = old.flatMap(podsOf);
    if (oldPods.length === 0 && fresh.length >= desired) {
      scale(store, replicaSets, current, desired);
      for (const rs of old) scale(store, replicaSets, rs, 0);
      return void rolling.delete(`${ns}/${name}`);
    }
    // Scale an old pod away once a new one is Ready to stand in for it.
    if (oldPods.length > 0 && oldPods.length + freshReady.length > desired) {
      const victim = oldPods[0]!;
      const rs = old.find((r) => controlledBy(victim, r))!;
      scale(store, replicaSets, rs, podsOf(rs).length - 1);
      controllers.deletePod(victim);
    } else if (fresh.length < desired && fresh.length === freshReady.length) {
      // One surge pod at a time: the next starts once the last one is Ready.
      scale(store, replicaSets, current, fresh.length + 1);
      const pod = templatePod(current, "ReplicaSet", current);
      delete (pod.metadata as R).name;
      controllers.createPod(pod, controllers.pickNode(pod));
    }
    clock.schedule(STEP_MS, () => step(ns, name));
  };

  // Only a template that changes while the twin runs starts a rollout: described ReplicaSets
  // written differently from their Deployment are left as they are.
  const seen = new Map<string, string>();
  for (const dep of store.list(deployments)) {
    seen.set(key(dep), templateKey(rec(dep.spec).template));
  }
  const unwatch = store.watch(deployments, (e) => {
    const dep = e.object, k = key(dep);
    if (e.type === "DELETED") return void seen.delete(k);
    const tpl = templateKey(rec(dep.spec).template);
    const before = seen.get(k);
    seen.set(k, tpl);
    if (before === undefined || before === tpl || rolling.has(k)) return;
    rolling.add(k);
    clock.schedule(0, () => step(dep.metadata.namespace!, dep.metadata.name));
  });
  return () => {
    stopped = true;
    unwatch();
  };
}

function isReady(p: Obj): boolean {
  return ((rec(p.status).conditions ?? []) as R[]).some((c) =>
    c.type === "Ready" && c.status === "True"
  );
}

function scale(store: Store, type: ResourceType, rs: Obj, replicas: number): void {
  const cur = store.get(type, rs.metadata.namespace, rs.metadata.name);
  if (!cur || rec(cur.spec).replicas === replicas) return;
  store.put(type, { ...cur, spec: { ...rec(cur.spec), replicas } });
}

/** The new ReplicaSet for the Deployment's template, named by its hash as the controller does. */
function createReplicaSet(store: Store, type: ResourceType, dep: Obj): Obj {
  const tpl = clone(rec(rec(dep.spec).template));
  const hash = createHash("sha256").update(stableJson(tpl)).digest("hex").slice(0, 10)
    .replace(/[0-9]/g, (d) => "bcdfghjklm"[Number(d)]!);
  const meta = rec(tpl.metadata);
  meta.labels = { ...rec(meta.labels), "pod-template-hash": hash };
  tpl.metadata = meta;
  const name = `${dep.metadata.name}-${hash}`;
  const existing = store.get(type, dep.metadata.namespace, name);
  if (existing) return existing;
  return store.create(type, {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: {
      name,
      namespace: dep.metadata.namespace!,
      labels: { ...(rec(meta.labels) as Record<string, string>) },
      ownerReferences: [{
        apiVersion: "apps/v1",
        kind: "Deployment",
        name: dep.metadata.name,
        uid: dep.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      }],
    },
    spec: { replicas: 0, selector: rec(dep.spec).selector, template: tpl },
  })!;
}
