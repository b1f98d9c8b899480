/**
 * What a watch cache keeps of each object for the fixed readers. A cluster's Pods, Nodes and
 * budgets held whole (spec, container statuses, managedFields) cost most of a reconciler's
 * memory, while the readers judge a few fields of each. A cache that serves only the fixed
 * readers (nodes, node-versions, talos-*, workloads, pdb-feasibility, broker-streams, and the
 * engine's Talos addressing and route targets) keeps these fields and nothing else; a cache that
 * a `kube-object` or product binding reads (a CEL predicate may read any field) keeps whole
 * objects. test/domain/health/projection_test.ts holds every reader's verdict on projected
 * objects equal to its verdict on whole ones.
 */
import type { KubeObjectLike } from "./types.ts";

/**
 * What of a value is kept: `true` all of it; `[shape]` every entry of an array, each by `shape`;
 * an object: those keys of a plain object, each by its own shape. A value whose type differs
 * from its shape (a status that is a string, conditions that are not an array) is kept as it
 * is, so a reader judges it exactly as it would the whole object.
 */
export type Shape = true | readonly [Shape] | { readonly [key: string]: Shape };

const ID = {
  name: true,
  namespace: true,
  uid: true,
  resourceVersion: true,
  generation: true,
} as const;
const CONDITIONS = [{ type: true, status: true }] as const;
/** Every kind: self-description and identity (keys, evidence basis, stale-list checks). */
const TOP = { apiVersion: true, kind: true } as const;

export const NODE_SHAPE: Shape = {
  ...TOP,
  metadata: {
    ...ID,
    labels: true,
    annotations: { "extensions.talos.dev/schematic": true },
  },
  spec: { unschedulable: true },
  status: {
    observedGeneration: true,
    conditions: CONDITIONS,
    nodeInfo: { osImage: true, kubeletVersion: true },
    addresses: true,
  },
};

export const POD_SHAPE: Shape = {
  ...TOP,
  metadata: {
    ...ID,
    labels: true,
    annotations: { "kubernetes.io/config.mirror": true },
    ownerReferences: [{ apiVersion: true, kind: true, name: true, uid: true, controller: true }],
  },
  spec: { nodeName: true },
  status: { phase: true, conditions: CONDITIONS },
};

export const PDB_SHAPE: Shape = {
  ...TOP,
  metadata: ID,
  spec: {
    selector: true,
    minAvailable: true,
    maxUnavailable: true,
    unhealthyPodEvictionPolicy: true,
  },
  status: {
    observedGeneration: true,
    disruptionsAllowed: true,
    currentHealthy: true,
    desiredHealthy: true,
    expectedPods: true,
  },
};

export const WORKLOAD_SHAPE: Shape = {
  ...TOP,
  metadata: { ...ID, labels: true },
  spec: { replicas: true },
  status: {
    observedGeneration: true,
    replicas: true,
    updatedReplicas: true,
    readyReplicas: true,
    availableReplicas: true,
    currentRevision: true,
    updateRevision: true,
    desiredNumberScheduled: true,
    currentNumberScheduled: true,
    updatedNumberScheduled: true,
    numberReady: true,
    numberAvailable: true,
    numberMisscheduled: true,
  },
};

/** The shape of each resource the fixed readers read, by watch-cache key. */
const SHAPES: ReadonlyMap<string, Shape> = new Map([
  ["v1/Node", NODE_SHAPE],
  ["v1/Pod", POD_SHAPE],
  ["policy/v1/PodDisruptionBudget", PDB_SHAPE],
  ["apps/v1/Deployment", WORKLOAD_SHAPE],
  ["apps/v1/StatefulSet", WORKLOAD_SHAPE],
  ["apps/v1/DaemonSet", WORKLOAD_SHAPE],
]);

export function shapeFor(key: string): Shape | undefined {
  return SHAPES.get(key);
}

const plain = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** `v` cut to `shape` (see `Shape`); never mutates `v`. */
export function project(v: unknown, shape: Shape): unknown {
  if (shape === true) return v;
  if (Array.isArray(shape)) {
    return Array.isArray(v) ? v.map((x) => project(x, (shape as readonly [Shape])[0])) : v;
  }
  if (!plain(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, s] of Object.entries(shape as Record<string, Shape>)) {
    if (Object.hasOwn(v, k)) out[k] = project(v[k], s);
  }
  return out;
}

/** Objects already cut by `projectObject`: the cache and the port may both apply it, once. */
const PROJECTED = new WeakSet<object>();

/** An object cut to `shape`; an object it already cut is returned as it is. */
export function projectObject<T extends KubeObjectLike>(o: T, shape: Shape): T {
  if (PROJECTED.has(o)) return o;
  const out = project(o, shape) as T;
  if (plain(out)) PROJECTED.add(out);
  return out;
}
