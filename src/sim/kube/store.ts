/**
 * The simulator's object store: one resourceVersion counter for all objects (as etcd's revision),
 * uid/generation/creationTimestamp stamped on create, a bounded event history that watches
 * replay from (older versions get 410 Gone), and fan-out to open watches.
 */
import { createHash } from "node:crypto";
import { jsonEqual } from "./json_equal.ts";
import { clone } from "./patch.ts";

export type Obj = Record<string, unknown> & { metadata: Meta };
export interface Meta extends Record<string, unknown> {
  name: string;
  namespace?: string;
  uid?: string | undefined;
  resourceVersion?: string | undefined;
  generation?: number;
  creationTimestamp?: string | undefined;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: Array<Record<string, unknown>>;
  managedFields?: Array<Record<string, unknown>>;
}

/** One served resource type. */
export interface ResourceType {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  readonly shortNames?: readonly string[];
  readonly subresources?: readonly string[];
  readonly verbs?: readonly string[];
}

export const groupVersion = (t: { group: string; version: string }): string =>
  t.group === "" ? t.version : `${t.group}/${t.version}`;

export type EventType = "ADDED" | "MODIFIED" | "DELETED";

export interface StoredEvent {
  readonly rv: number;
  readonly type: EventType;
  readonly type_key: string;
  readonly object: Obj;
}

export type Watcher = (event: StoredEvent) => void;

/** Thrown when a watch or list asks for a version older than the history keeps. */
export class GoneError extends Error {}

const BUILTIN: ResourceType[] = [
  {
    group: "batch",
    version: "v1",
    kind: "Job",
    plural: "jobs",
    namespaced: true,
    subresources: ["status"],
  },
  {
    group: "",
    version: "v1",
    kind: "Namespace",
    plural: "namespaces",
    namespaced: false,
    shortNames: ["ns"],
  },
  {
    group: "",
    version: "v1",
    kind: "Node",
    plural: "nodes",
    namespaced: false,
    shortNames: ["no"],
    subresources: ["status"],
  },
  {
    group: "",
    version: "v1",
    kind: "Pod",
    plural: "pods",
    namespaced: true,
    shortNames: ["po"],
    subresources: ["status", "eviction"],
  },
  {
    group: "",
    version: "v1",
    kind: "ConfigMap",
    plural: "configmaps",
    namespaced: true,
    shortNames: ["cm"],
  },
  {
    group: "",
    version: "v1",
    kind: "Event",
    plural: "events",
    namespaced: true,
    shortNames: ["ev"],
  },
  {
    group: "",
    version: "v1",
    kind: "Service",
    plural: "services",
    namespaced: true,
    shortNames: ["svc"],
  },
  {
    group: "",
    version: "v1",
    kind: "PersistentVolumeClaim",
    plural: "persistentvolumeclaims",
    namespaced: true,
    shortNames: ["pvc"],
  },
  {
    group: "policy",
    version: "v1",
    kind: "PodDisruptionBudget",
    plural: "poddisruptionbudgets",
    namespaced: true,
    shortNames: ["pdb"],
    subresources: ["status"],
  },
  {
    group: "apps",
    version: "v1",
    kind: "Deployment",
    plural: "deployments",
    namespaced: true,
    shortNames: ["deploy"],
    subresources: ["status"],
  },
  {
    group: "apps",
    version: "v1",
    kind: "ReplicaSet",
    plural: "replicasets",
    namespaced: true,
    shortNames: ["rs"],
    subresources: ["status"],
  },
  {
    group: "apps",
    version: "v1",
    kind: "StatefulSet",
    plural: "statefulsets",
    namespaced: true,
    shortNames: ["sts"],
    subresources: ["status"],
  },
  {
    group: "apps",
    version: "v1",
    kind: "DaemonSet",
    plural: "daemonsets",
    namespaced: true,
    shortNames: ["ds"],
    subresources: ["status"],
  },
  {
    group: "",
    version: "v1",
    kind: "ServiceAccount",
    plural: "serviceaccounts",
    namespaced: true,
    shortNames: ["sa"],
  },
  {
    group: "",
    version: "v1",
    kind: "Secret",
    plural: "secrets",
    namespaced: true,
  },
  {
    group: "networking.k8s.io",
    version: "v1",
    kind: "NetworkPolicy",
    plural: "networkpolicies",
    namespaced: true,
    shortNames: ["netpol"],
  },
  // RBAC objects are stored and served (kubectl applies them; tests read them back); the twin
  // authorises by certificate and token only and does not evaluate them.
  {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "ClusterRole",
    plural: "clusterroles",
    namespaced: false,
  },
  {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "ClusterRoleBinding",
    plural: "clusterrolebindings",
    namespaced: false,
  },
  {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "Role",
    plural: "roles",
    namespaced: true,
  },
  {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "RoleBinding",
    plural: "rolebindings",
    namespaced: true,
  },
  {
    group: "coordination.k8s.io",
    version: "v1",
    kind: "Lease",
    plural: "leases",
    namespaced: true,
  },
  {
    group: "events.k8s.io",
    version: "v1",
    kind: "Event",
    plural: "events",
    namespaced: true,
    // No short name: as on a real apiserver, `ev` is the core group's Event only.
  },
];

/** Known custom kinds, so that scope and plural are right when the description holds them. */
const KNOWN_CUSTOM: Readonly<
  Record<string, {
    plural: string;
    namespaced: boolean;
    /** The short names its CRD declares (`kubectl get ks`), for this group only. */
    short?: { readonly group: string; readonly names: readonly string[] };
  }>
> = {
  ClusterIssuer: { plural: "clusterissuers", namespaced: false },
  ClusterSecretStore: { plural: "clustersecretstores", namespaced: false },
  GitRepository: {
    plural: "gitrepositories",
    namespaced: true,
    short: { group: "source.toolkit.fluxcd.io", names: ["gitrepo"] },
  },
  HelmRepository: {
    plural: "helmrepositories",
    namespaced: true,
    short: { group: "source.toolkit.fluxcd.io", names: ["helmrepo"] },
  },
  OCIRepository: {
    plural: "ocirepositories",
    namespaced: true,
    short: { group: "source.toolkit.fluxcd.io", names: ["ocirepo"] },
  },
  Kustomization: {
    plural: "kustomizations",
    namespaced: true,
    short: { group: "kustomize.toolkit.fluxcd.io", names: ["ks"] },
  },
  HelmRelease: {
    plural: "helmreleases",
    namespaced: true,
    short: { group: "helm.toolkit.fluxcd.io", names: ["hr"] },
  },
  CephBlockPool: { plural: "cephblockpools", namespaced: true },
};

export const typeKey = (t: { group: string; plural: string }): string =>
  t.group === "" ? t.plural : `${t.plural}.${t.group}`;

const objKey = (ns: string | undefined, name: string): string => `${ns ?? ""}/${name}`;

export interface StoreOptions {
  /** How many events watches can replay (older → 410). */
  readonly historySize?: number;
  readonly now: () => number;
}

export class Store {
  readonly types = new Map<string, ResourceType>();
  #objects = new Map<string, Map<string, Obj>>();
  #rv = 1;
  #history: StoredEvent[] = [];
  #historyStart = 0;
  #watchers = new Map<string, Set<Watcher>>();
  /** type → namespace → key → object, for namespaced lists without a full scan. */
  #byNs = new Map<string, Map<string, Map<string, Obj>>>();
  #sorted = new Map<string, readonly Obj[]>();
  #sortedNs = new Map<string, readonly Obj[]>();
  #uidSeq = 0;
  readonly #historySize: number;
  readonly #now: () => number;

  constructor(opts: StoreOptions) {
    this.#historySize = opts.historySize ?? 10_000;
    this.#now = opts.now;
    for (const t of BUILTIN) this.register(t);
  }

  register(t: ResourceType): void {
    this.types.set(typeKey(t), t);
    if (!this.#objects.has(typeKey(t))) this.#objects.set(typeKey(t), new Map());
  }

  /** Registers a custom kind from an object's apiVersion/kind (plural: lower-case + s). */
  registerFromObject(apiVersion: string, kind: string, namespaced: boolean): ResourceType {
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
    const known = KNOWN_CUSTOM[kind];
    const plural = known?.plural ?? pluralOf(kind);
    const existing = this.types.get(typeKey({ group: group!, plural }));
    if (existing) return existing;
    const t: ResourceType = {
      group: group!,
      version: version!,
      kind,
      plural,
      namespaced: known?.namespaced ?? namespaced,
      ...(known?.short && known.short.group === group ? { shortNames: known.short.names } : {}),
      subresources: ["status"],
    };
    this.register(t);
    return t;
  }

  /** The resource type for a kind in an apiVersion. */
  typeOfKind(apiVersion: string, kind: string): ResourceType | undefined {
    for (const t of this.types.values()) {
      if (groupVersion(t) === apiVersion && t.kind === kind) return t;
    }
    return undefined;
  }

  findType(group: string, version: string, plural: string): ResourceType | undefined {
    const t = this.types.get(typeKey({ group, plural }));
    return t && t.version === version ? t : undefined;
  }

  get resourceVersion(): number {
    return this.#rv;
  }

  /** The oldest version a watch may start after. */
  get oldestWatchable(): number {
    return this.#historyStart;
  }

  get(t: ResourceType, ns: string | undefined, name: string): Obj | undefined {
    return this.#objects.get(typeKey(t))?.get(objKey(t.namespaced ? ns : undefined, name));
  }

  /**
   * Objects of a type (all namespaces when `ns` is undefined), sorted by namespace/name. The
   * sorted array is cached until the type changes, so paged LISTs and controllers do not re-sort
   * tens of thousands of pods per call; callers must not mutate it.
   */
  list(t: ResourceType, ns?: string): readonly Obj[] {
    const key = typeKey(t);
    if (ns === undefined || !t.namespaced) {
      let all = this.#sorted.get(key);
      if (!all) this.#sorted.set(key, all = sortedValues(this.#objects.get(key)));
      return all;
    }
    const cacheKey = `${key}\u0000${ns}`;
    let inNs = this.#sortedNs.get(cacheKey);
    if (!inNs) this.#sortedNs.set(cacheKey, inNs = sortedValues(this.#byNs.get(key)?.get(ns)));
    return inNs;
  }

  #index(t: ResourceType, key: string, obj: Obj | undefined): void {
    const tk = typeKey(t);
    this.#sorted.delete(tk);
    if (!t.namespaced) return;
    const ns = key.slice(0, key.indexOf("/"));
    this.#sortedNs.delete(`${tk}\u0000${ns}`);
    let byNs = this.#byNs.get(tk);
    if (!byNs) this.#byNs.set(tk, byNs = new Map());
    let m = byNs.get(ns);
    if (!m) byNs.set(ns, m = new Map());
    if (obj) m.set(key, obj);
    else m.delete(key);
  }

  /** Stores a new object, stamping server fields. Returns undefined if it exists. */
  create(t: ResourceType, input: Obj): Obj | undefined {
    const ns = t.namespaced ? input.metadata.namespace ?? "default" : undefined;
    const map = this.#objects.get(typeKey(t))!;
    if (map.has(objKey(ns, input.metadata.name))) return undefined;
    const obj = clone(input);
    obj.apiVersion = groupVersion(t);
    obj.kind = t.kind;
    if (ns !== undefined) obj.metadata.namespace = ns;
    else delete obj.metadata.namespace;
    obj.metadata.uid ??= this.#uid(typeKey(t), ns, obj.metadata.name);
    obj.metadata.generation = 1;
    obj.metadata.creationTimestamp ??= isoSeconds(this.#now());
    obj.metadata.resourceVersion = String(++this.#rv);
    map.set(objKey(ns, obj.metadata.name), obj);
    this.#index(t, objKey(ns, obj.metadata.name), obj);
    this.#emit(t, "ADDED", obj);
    return obj;
  }

  /**
   * Replaces a stored object (caller checked preconditions); bumps generation on spec change.
   * The server fields are stamped on a shallow copy (its top level and metadata, keys in the same
   * order as in a deep copy) and compared with the stored object first: a write that changes
   * nothing (the disruption controller's, a third of all writes in a DST seed) returns the stored
   * object without copying the whole input, and a change stores a deep copy as before.
   */
  put(t: ResourceType, obj: Obj): Obj {
    const ns = t.namespaced ? obj.metadata.namespace : undefined;
    const map = this.#objects.get(typeKey(t))!;
    const old = map.get(objKey(ns, obj.metadata.name));
    const next: Obj = { ...obj, metadata: { ...obj.metadata } };
    next.apiVersion = groupVersion(t);
    next.kind = t.kind;
    if (old) {
      next.metadata.uid = old.metadata.uid;
      next.metadata.creationTimestamp = old.metadata.creationTimestamp;
      const specChanged = !jsonEqual(old.spec, next.spec);
      next.metadata.generation = (old.metadata.generation ?? 1) + (specChanged ? 1 : 0);
      // The whole object's JSON is unchanged only if its spec's and its status's are (a member's
      // text is part of the whole's): a spec or status write is found changed without comparing
      // everything else first.
      if (!specChanged && jsonEqual(old.status, next.status)) {
        if (jsonEqual(stripRv(old), stripRv(next))) return old;
      }
    }
    const stored = clone(next);
    stored.metadata.resourceVersion = String(++this.#rv);
    map.set(objKey(ns, stored.metadata.name), stored);
    this.#index(t, objKey(ns, stored.metadata.name), stored);
    this.#emit(t, "MODIFIED", stored);
    return stored;
  }

  remove(t: ResourceType, ns: string | undefined, name: string): Obj | undefined {
    const map = this.#objects.get(typeKey(t))!;
    const key = objKey(t.namespaced ? ns : undefined, name);
    const old = map.get(key);
    if (!old) return undefined;
    map.delete(key);
    this.#index(t, key, undefined);
    const gone = clone(old);
    gone.metadata.resourceVersion = String(++this.#rv);
    this.#emit(t, "DELETED", gone);
    return gone;
  }

  /** Events of a type after `rv`; throws GoneError when `rv` fell out of the history. */
  eventsSince(t: ResourceType, rv: number): StoredEvent[] {
    if (rv < this.#historyStart) throw new GoneError(`too old resource version: ${rv}`);
    const key = typeKey(t);
    return this.#history.filter((e) => e.rv > rv && e.type_key === key);
  }

  watch(t: ResourceType, w: Watcher): () => void {
    const key = typeKey(t);
    let set = this.#watchers.get(key);
    if (!set) this.#watchers.set(key, set = new Set());
    set.add(w);
    return () => set!.delete(w);
  }

  get watcherCount(): number {
    let n = 0;
    for (const s of this.#watchers.values()) n += s.size;
    return n;
  }

  #emit(t: ResourceType, type: EventType, obj: Obj): void {
    const e: StoredEvent = { rv: this.#rv, type, type_key: typeKey(t), object: obj };
    this.#history.push(e);
    // Trim in batches: splicing the front of the array at every event is quadratic.
    if (this.#history.length >= 2 * this.#historySize) {
      const dropped = this.#history.splice(0, this.#history.length - this.#historySize);
      this.#historyStart = dropped[dropped.length - 1]!.rv;
    }
    for (const w of this.#watchers.get(typeKey(t)) ?? []) w(e);
  }

  #uid(type: string, ns: string | undefined, name: string): string {
    const h = createHash("sha256").update(`${type}/${ns ?? ""}/${name}/${this.#uidSeq++}`)
      .digest("hex");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${
      h.slice(20, 32)
    }`;
  }
}

function sortedValues(m: Map<string, Obj> | undefined): readonly Obj[] {
  if (!m) return [];
  return [...m.keys()].sort().map((k) => m.get(k)!);
}

function stripRv(o: Obj): unknown {
  return { ...o, metadata: { ...o.metadata, resourceVersion: undefined } };
}

export function pluralOf(kind: string): string {
  const lower = kind.toLowerCase();
  if (lower.endsWith("y") && !/[aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  if (/(s|x|ch|sh)$/.test(lower)) return `${lower}es`;
  return `${lower}s`;
}

/**
 * RFC 3339 with second precision, as the API server writes timestamps. The last second's text is
 * kept: the twin stamps many objects within one virtual second, and a Date and two strings per
 * stamp were a measurable share of a seed (issue 16); the text depends on the second alone.
 */
export function isoSeconds(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s !== lastSecond) {
    lastText = new Date(s * 1000).toISOString().replace(".000Z", "Z");
    lastSecond = s;
  }
  return lastText;
}

let lastSecond: number | undefined;
let lastText = "";
