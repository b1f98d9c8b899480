/**
 * The control loops the drain path depends on, run on the virtual clock: pod termination over
 * the grace period, ReplicaSet/StatefulSet/operator pods recreated on another schedulable node,
 * DaemonSet pods kept one per node, PDB status recomputed from pod readiness, and node
 * readiness/nodeInfo driven by the Talos side of the twin.
 */
import { ProxyRoutes } from "./proxy_routes.ts";
import type { SimClock } from "../clock.ts";
import type { FaultSchedule } from "../faults.ts";
import { matchesSelector } from "./selectors.ts";
import { isoSeconds, type Obj, type ResourceType, Store } from "./store.ts";
import { clone } from "./patch.ts";
import { daemonSetOf, NEVER_READY, replacementPod } from "./daemonset_rollout.ts";
import type { KubeLabelSelector } from "../../ports/kube.ts";

type R = Record<string, unknown>;
const rec = (v: unknown): R => (v && typeof v === "object" ? v as R : {});

/** Virtual seconds a pod takes to exit after SIGTERM unless it ignores it. */
const DEFAULT_SHUTDOWN_S = 2;
/** Virtual seconds from pod creation to Ready. */
const DEFAULT_START_S = 5;
/** Virtual delay before the disruption controller observes a changed PDB spec. */
export const PDB_SYNC_MS = 1000;

export class Controllers {
  readonly pods: ResourceType;
  readonly nodes: ResourceType;
  readonly pdbs: ResourceType;
  /** What the proxy subresource answers per route (products' health endpoints). */
  readonly routes = new ProxyRoutes();
  #dirtyNs = new Set<string>();
  #flushQueued = false;
  #nameSeq = 0;
  #syncPending = new Set<string>();
  /** Pods bound to each node, and per controller the pods it has on each node (placement). */
  readonly #index = new PodIndex();
  readonly #podIpCounter = new Map<string, number>();
  /** Eligible node names per pod scheduling shape; dropped whenever any node changes. */
  readonly #eligible = new Map<string, readonly string[]>();

  constructor(
    readonly store: Store,
    readonly clock: SimClock,
    readonly faults: FaultSchedule,
  ) {
    this.pods = store.findType("", "v1", "pods")!;
    this.nodes = store.findType("", "v1", "nodes")!;
    this.pdbs = store.findType("policy", "v1", "poddisruptionbudgets")!;
    store.watch(this.pods, (e) => {
      this.#index.apply(e.type, e.object);
      this.#markDirty(e.object.metadata.namespace ?? "");
    });
    store.watch(this.nodes, () => this.#eligible.clear());
    store.watch(this.pdbs, (e) => {
      const o = e.object, st = rec(o.status), ns = o.metadata.namespace ?? "";
      if (e.type === "DELETED") return;
      // One pending sync per namespace: it recomputes every PDB there anyway.
      const stale = (st.observedGeneration as number | undefined) !== o.metadata.generation;
      if (!stale || this.#syncPending.has(ns)) return;
      this.#syncPending.add(ns);
      clock.schedule(PDB_SYNC_MS, () => {
        this.#syncPending.delete(ns);
        this.syncPdbs(ns);
      });
    });
  }

  // ---- pods -----------------------------------------------------------------------------

  /** Graceful delete: deletionTimestamp now, removal once the container exits or grace ends. */
  deletePod(pod: Obj, graceSeconds?: number): Obj | undefined {
    const spec = rec(pod.spec), status = rec(pod.status);
    const grace = graceSeconds ?? (spec.terminationGracePeriodSeconds as number | undefined) ?? 30;
    const phase = status.phase as string | undefined;
    const unscheduled = !spec.nodeName;
    if (grace <= 0 || unscheduled || phase === "Succeeded" || phase === "Failed") {
      return this.#removePod(pod);
    }
    if (pod.metadata.deletionTimestamp) return pod;
    const next = clone(pod);
    next.metadata.deletionTimestamp = isoSeconds(this.clock.now() + grace * 1000);
    next.metadata.deletionGracePeriodSeconds = grace;
    const stays = this.faults.take("kube.pod", pod.metadata.name, this.clock.now())?.kind ===
        "ignore-sigterm"
      ? grace
      : Math.min(
        grace,
        Number(pod.metadata.annotations?.["sim.cairn.dev/shutdown-seconds"] ?? DEFAULT_SHUTDOWN_S),
      );
    const uid = pod.metadata.uid;
    this.clock.schedule(stays * 1000, () => {
      const cur = this.store.get(this.pods, pod.metadata.namespace, pod.metadata.name);
      if (cur && cur.metadata.uid === uid) this.#removePod(cur);
    });
    const terminating = this.store.put(this.pods, next);
    // A ReplicaSet no longer counts a terminating pod: its replacement is created now, while the
    // old pod shuts down (as Kubernetes does), not once it is gone.
    if (replicaSetOwned(pod)) this.#replace(terminating);
    return terminating;
  }

  #removePod(pod: Obj): Obj | undefined {
    const gone = this.store.remove(this.pods, pod.metadata.namespace, pod.metadata.name);
    // A terminating ReplicaSet pod was replaced when its deletion began.
    if (gone && !(gone.metadata.deletionTimestamp && replicaSetOwned(gone))) this.#replace(gone);
    return gone;
  }

  /** Recreates a pod that its controller wants back. */
  #replace(gone: Obj): void {
    const owner = (gone.metadata.ownerReferences ?? []).find((o) => o.controller === true);
    if (!owner) return;
    const kind = owner.kind as string;
    if (kind === "DaemonSet") {
      const node = rec(gone.spec).nodeName as string | undefined;
      if (!node || !this.store.get(this.nodes, undefined, node)) return;
      // The DaemonSet's current template, not the pod that left (a rollout replaces it so).
      const ds = daemonSetOf(this.store, gone);
      const next = ds ? replacementPod(ds, gone, node, this.faults, this.clock.now()) : gone;
      this.createPod(next, node);
      return;
    }
    if (kind === "ReplicaSet" && this.#replicaSetHasEnough(gone, owner)) return;
    const name = kind === "ReplicaSet" ? undefined : gone.metadata.name;
    const node = this.pickNode(gone, rec(gone.spec).nodeName as string | undefined);
    this.createPod(gone, node, name);
  }

  /**
   * Whether the pod's ReplicaSet already runs as many pods as it wants (it was scaled down by a
   * rolling update). A ReplicaSet the store does not hold keeps its pods, as before.
   */
  #replicaSetHasEnough(gone: Obj, owner: { name?: unknown; uid?: unknown }): boolean {
    const ns = gone.metadata.namespace;
    const rsType = this.store.findType("apps", "v1", "replicasets");
    const rs = rsType && this.store.get(rsType, ns, String(owner.name));
    if (!rs || rs.metadata.uid !== owner.uid) return false;
    const live = this.store.list(this.pods, ns).filter((p) =>
      !p.metadata.deletionTimestamp &&
      (p.metadata.ownerReferences ?? []).some((o) => o.uid === owner.uid)
    ).length;
    return live >= Number(rec(rs.spec).replicas ?? 1);
  }

  /**
   * Creates a pod from a template pod (or a workload template) and starts it on `node`: after
   * the start delay, or at once (`running`, for pods that exist when the twin starts).
   */
  createPod(
    template: Obj,
    node: string | undefined,
    name?: string,
    running = false,
  ): Obj | undefined {
    const prefix = (template.metadata.generateName as string | undefined) ??
      `${ownerName(template) ?? template.metadata.name}-`;
    const pod: Obj = {
      metadata: {
        name: name ?? `${prefix}${this.#suffix(prefix)}`,
        namespace: template.metadata.namespace ?? "default",
        labels: { ...template.metadata.labels },
        annotations: { ...template.metadata.annotations },
        ownerReferences: clone(template.metadata.ownerReferences ?? []),
      },
      spec: { ...clone(rec(template.spec)), ...(node ? { nodeName: node } : {}) },
      status: running && node
        ? {
          phase: "Running",
          startTime: isoSeconds(this.clock.now()),
          conditions: podConditions(true, true),
          containerStatuses: containerStatuses(template.spec, true, true, this.clock.now()),
          ...this.podAddress(template.spec, node),
        }
        : {
          phase: "Pending",
          conditions: podConditions(false, node !== undefined),
          containerStatuses: containerStatuses(template.spec, false, false),
        },
    };
    if (!node) delete rec(pod.spec).nodeName;
    delete pod.metadata.annotations!["kubernetes.io/config.mirror"];
    const created = this.store.create(this.pods, pod);
    if (created && node && !running) {
      const start = Number(
        template.metadata.annotations?.["sim.cairn.dev/start-seconds"] ?? DEFAULT_START_S,
      );
      const uid = created.metadata.uid;
      this.clock.schedule(
        start * 1000,
        () => this.#startPod(pod.metadata.namespace!, pod.metadata.name, uid),
      );
    }
    return created;
  }

  #startPod(ns: string, name: string, uid: string | undefined): void {
    const cur = this.store.get(this.pods, ns, name);
    if (!cur || cur.metadata.uid !== uid || cur.metadata.deletionTimestamp) return;
    const node = this.store.get(this.nodes, undefined, rec(cur.spec).nodeName as string);
    const ready = node !== undefined && nodeReady(node) &&
      cur.metadata.annotations?.[NEVER_READY] !== "true";
    this.store.put(this.pods, {
      ...cur,
      status: {
        ...rec(cur.status),
        phase: "Running",
        startTime: isoSeconds(this.clock.now()),
        conditions: podConditions(ready, true),
        containerStatuses: containerStatuses(cur.spec, true, ready, this.clock.now()),
        ...this.podAddress(cur.spec, rec(cur.spec).nodeName as string),
      },
    });
  }

  /**
   * The addresses a pod starting on `node` gets: the node's own for host-network pods, else the
   * next one in the node's pod range (10.244.<node ordinal>.0/24, as a CNI hands them out).
   */
  podAddress(spec: unknown, node: string): { hostIP?: string; podIP?: string; podIPs?: R[] } {
    const n = this.store.get(this.nodes, undefined, node);
    const hostIP = ((rec(n?.status).addresses ?? []) as R[])
      .find((a) => a.type === "InternalIP")?.address as string | undefined;
    let ip: string | undefined;
    if (rec(spec).hostNetwork === true) ip = hostIP;
    else {
      const names = this.store.list(this.nodes).map((x) => x.metadata.name).sort();
      const ordinal = names.indexOf(node);
      if (ordinal >= 0) {
        const next = (this.#podIpCounter.get(node) ?? 1) % 254 + 1;
        this.#podIpCounter.set(node, next);
        ip = `10.244.${ordinal}.${next}`;
      }
    }
    return {
      ...(hostIP ? { hostIP } : {}),
      ...(ip ? { podIP: ip, podIPs: [{ ip }] } : {}),
    };
  }

  #suffix(prefix: string): string {
    const alphabet = "bcdfghjklmnpqrstvwxz2456789";
    let n = (this.#nameSeq++ * 7919 + prefix.length * 104729) % 14348907;
    let s = "";
    for (let i = 0; i < 5; i++) {
      s += alphabet[n % alphabet.length];
      n = Math.floor(n / alphabet.length) + i * 3;
    }
    return s;
  }

  /**
   * The schedulable node that tolerates the pod with the fewest siblings (same controller), then
   * the fewest pods, then the first name. One pass over the nodes with counts kept up to date
   * from pod events: placing 30,000 pods must not rescan every pod for each.
   */
  pickNode(pod: Obj, avoid?: string): string | undefined {
    const ownerUid = (pod.metadata.ownerReferences ?? [])[0]?.uid as string | undefined;
    const siblings = ownerUid ? this.#index.siblings(ownerUid) : undefined;
    let best: string | undefined, bestSib = 0, bestCount = 0;
    for (const name of this.#eligibleNodes(rec(pod.spec))) {
      if (name === avoid) continue;
      const sib = siblings?.get(name) ?? 0, count = this.#index.count(name);
      if (best === undefined || sib < bestSib || (sib === bestSib && count < bestCount)) {
        best = name, bestSib = sib, bestCount = count;
      }
    }
    return best;
  }

  /** Ready, schedulable nodes matching a pod's selector and tolerations, cached per shape. */
  #eligibleNodes(spec: R): readonly string[] {
    const key = JSON.stringify([spec.nodeSelector ?? {}, spec.tolerations ?? []]);
    let names = this.#eligible.get(key);
    if (names) return names;
    const selector = Object.entries(rec(spec.nodeSelector) as Record<string, string>);
    const tolerations = (spec.tolerations ?? []) as R[];
    names = this.store.list(this.nodes).filter((n) =>
      !rec(n.spec).unschedulable && nodeReady(n) &&
      selector.every(([k, v]) => n.metadata.labels?.[k] === v) &&
      tolerates(tolerations, (rec(n.spec).taints ?? []) as R[])
    ).map((n) => n.metadata.name);
    this.#eligible.set(key, names);
    return names;
  }

  // ---- nodes ------------------------------------------------------------------------------

  /** The Talos side reports a node down (reboot) or back up. Pods on it follow. */
  setNodeReady(name: string, ready: boolean): void {
    const node = this.store.get(this.nodes, undefined, name);
    if (!node) return;
    const status = rec(node.status);
    const now = isoSeconds(this.clock.now());
    const conditions = ((status.conditions ?? []) as R[]).filter((c) => c.type !== "Ready");
    conditions.push({
      type: "Ready",
      status: ready ? "True" : "Unknown",
      reason: ready ? "KubeletReady" : "NodeStatusUnknown",
      message: ready ? "kubelet is posting ready status" : "Kubelet stopped posting node status.",
      lastHeartbeatTime: now,
      lastTransitionTime: now,
    });
    this.store.put(this.nodes, { ...node, status: { ...status, conditions } });
    for (const p of this.#index.podsOn(name, this.store, this.pods)) {
      if (p.metadata.deletionTimestamp) continue;
      if (!ready) {
        this.store.put(this.pods, {
          ...p,
          status: {
            ...rec(p.status),
            conditions: podConditions(false, true),
            containerStatuses: withContainersReady(p, false),
          },
        });
      } else {this.clock.schedule(DEFAULT_START_S * 1000, () =>
          this.#startPod(p.metadata.namespace!, p.metadata.name, p.metadata.uid));}
    }
  }

  /** The Talos side reports what the kubelet says after a boot. */
  setNodeInfo(
    name: string,
    info: NodeInfoFacts,
  ): void {
    const node = this.store.get(this.nodes, undefined, name);
    if (!node) return;
    const { schematic, ...facts } = info;
    const status = rec(node.status);
    const nodeInfo: R = { ...rec(status.nodeInfo), ...facts };
    if (info.kubeletVersion) nodeInfo.kubeProxyVersion = info.kubeletVersion;
    // Talos publishes the schematic id (64 hex, too long for a label value) as an annotation.
    const annotations = { ...(node.metadata.annotations ?? {}) };
    if (schematic) annotations["extensions.talos.dev/schematic"] = schematic;
    const metadata = { ...node.metadata, annotations };
    this.store.put(this.nodes, { ...node, metadata, status: { ...status, nodeInfo } });
  }

  // ---- PDBs -------------------------------------------------------------------------------

  #markDirty(ns: string): void {
    this.#dirtyNs.add(ns);
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    queueMicrotask(() => {
      this.#flushQueued = false;
      const dirty = [...this.#dirtyNs];
      this.#dirtyNs.clear();
      for (const n of dirty) this.syncPdbs(n);
    });
  }

  /** Recomputes the status of every PDB in a namespace (the disruption controller). */
  syncPdbs(ns: string): void {
    const pdbs = this.store.list(this.pdbs, ns);
    if (pdbs.length === 0) return;
    const pods = this.store.list(this.pods, ns);
    const byLabel = labelIndex(pods);
    for (const pdb of pdbs) {
      const candidates = candidatesFor(rec(pdb.spec).selector, pods, byLabel);
      const status = computePdbStatus(pdb, candidates, (kind, name) => this.#scale(ns, kind, name));
      const old = rec(pdb.status);
      this.store.put(this.pdbs, { ...pdb, status: { ...old, ...status } });
    }
  }

  #scale(ns: string, kind: string, name: string): number | undefined {
    const plural = kind === "ReplicaSet"
      ? "replicasets"
      : kind === "StatefulSet"
      ? "statefulsets"
      : undefined;
    if (!plural) return undefined;
    const t = this.store.findType("apps", "v1", plural)!;
    const o = this.store.get(t, ns, name);
    return o ? Number(rec(o.spec).replicas ?? 1) : undefined;
  }
}

/** `key=value` → pods carrying that label, so each PDB looks only at pods that can match. */
function labelIndex(pods: readonly Obj[]): Map<string, Obj[]> {
  const m = new Map<string, Obj[]>();
  for (const p of pods) {
    for (const [k, v] of Object.entries(p.metadata.labels ?? {})) {
      const key = `${k}=${v}`;
      const list = m.get(key);
      if (list) list.push(p);
      else m.set(key, [p]);
    }
  }
  return m;
}

function candidatesFor(
  selector: unknown,
  pods: readonly Obj[],
  byLabel: Map<string, Obj[]>,
): readonly Obj[] {
  const first = Object.entries(rec(rec(selector).matchLabels))[0];
  return first ? byLabel.get(`${first[0]}=${String(first[1])}`) ?? [] : pods;
}

/** Pod placement counts, kept current from the pod watch. */
class PodIndex {
  #byNode = new Map<string, Map<string, string>>();
  #byOwner = new Map<string, Map<string, number>>();
  #placed = new Map<string, { node: string; owner: string | undefined }>();

  apply(type: string, pod: Obj): void {
    const key = `${pod.metadata.namespace ?? ""}/${pod.metadata.name}`;
    const was = this.#placed.get(key);
    const node = rec(pod.spec).nodeName as string | undefined;
    const owner = (pod.metadata.ownerReferences ?? [])[0]?.uid as string | undefined;
    if (was && (type === "DELETED" || was.node !== node || was.owner !== owner)) {
      this.#byNode.get(was.node)?.delete(key);
      if (was.owner) bump(this.#byOwner, was.owner, was.node, -1);
      this.#placed.delete(key);
    }
    if (type === "DELETED" || !node || this.#placed.has(key)) return;
    this.#placed.set(key, { node, owner });
    let onNode = this.#byNode.get(node);
    if (!onNode) this.#byNode.set(node, onNode = new Map());
    onNode.set(key, pod.metadata.name);
    if (owner) bump(this.#byOwner, owner, node, 1);
  }

  count(node: string): number {
    return this.#byNode.get(node)?.size ?? 0;
  }

  siblings(ownerUid: string): ReadonlyMap<string, number> | undefined {
    return this.#byOwner.get(ownerUid);
  }

  /** The current objects of the pods bound to `node`. */
  podsOn(node: string, store: Store, pods: ResourceType): Obj[] {
    const out: Obj[] = [];
    for (const [key, name] of this.#byNode.get(node) ?? []) {
      const p = store.get(pods, key.slice(0, key.indexOf("/")), name);
      if (p) out.push(p);
    }
    return out;
  }
}

function bump(m: Map<string, Map<string, number>>, owner: string, node: string, by: number): void {
  let perNode = m.get(owner);
  if (!perNode) m.set(owner, perNode = new Map());
  const n = (perNode.get(node) ?? 0) + by;
  if (n > 0) perNode.set(node, n);
  else perNode.delete(node);
  if (perNode.size === 0) m.delete(owner);
}

function ownerName(o: Obj): string | undefined {
  return (o.metadata.ownerReferences ?? []).find((r) => r.controller === true)?.name as
    | string
    | undefined;
}

function replicaSetOwned(pod: Obj): boolean {
  return (pod.metadata.ownerReferences ?? []).some((o) =>
    o.controller === true && o.kind === "ReplicaSet"
  );
}

export function nodeReady(node: Obj): boolean {
  return ((rec(node.status).conditions ?? []) as R[]).some((c) =>
    c.type === "Ready" && c.status === "True"
  );
}

export function podReady(pod: Obj): boolean {
  return ((rec(pod.status).conditions ?? []) as R[]).some((c) =>
    c.type === "Ready" && c.status === "True"
  );
}

/**
 * The kubelet's per-container report for a pod of `spec`: running (and ready when the pod is) or
 * still being created. `kubectl get pods` counts READY from it, `kubectl describe` shows it.
 */
export function containerStatuses(
  spec: unknown,
  running: boolean,
  ready: boolean,
  startedAtMs?: number,
): R[] {
  const containers = (rec(spec).containers ?? []) as R[];
  return containers.map((c) => ({
    name: c.name,
    image: c.image,
    imageID: "",
    ready: running && ready,
    started: running,
    restartCount: 0,
    state: running
      ? { running: startedAtMs === undefined ? {} : { startedAt: isoSeconds(startedAtMs) } }
      : { waiting: { reason: "ContainerCreating" } },
  }));
}

/** The pod's container statuses with readiness set (running ones only), made up if missing. */
export function withContainersReady(pod: Obj, ready: boolean): R[] {
  const running = rec(pod.status).phase === "Running";
  const current = rec(pod.status).containerStatuses as R[] | undefined;
  if (!current) return containerStatuses(pod.spec, running, ready);
  return current.map((c) => ({ ...c, ready: ready && rec(c.state).running !== undefined }));
}

export function podConditions(ready: boolean, scheduled: boolean): R[] {
  const s = (b: boolean) => (b ? "True" : "False");
  return [
    { type: "PodScheduled", status: s(scheduled) },
    { type: "Initialized", status: s(scheduled) },
    { type: "ContainersReady", status: s(ready) },
    { type: "Ready", status: s(ready) },
  ];
}

function tolerates(tolerations: R[], taints: R[]): boolean {
  return taints.filter((t) => t.effect === "NoSchedule" || t.effect === "NoExecute").every((t) =>
    tolerations.some((tol) =>
      (tol.operator === "Exists" && (tol.key === undefined || tol.key === t.key)) ||
      (tol.key === t.key && (tol.operator === "Exists" || tol.value === t.value))
    )
  );
}

function scaled(v: unknown, total: number, roundUp: boolean): number {
  if (typeof v === "number") return v;
  const pct = Number(String(v).replace("%", ""));
  const x = (pct * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

/** The disruption controller's arithmetic (protocols B2). */
export function computePdbStatus(
  pdb: Obj,
  podsInNs: readonly Obj[],
  scaleOf: (kind: string, name: string) => number | undefined,
): R {
  const spec = rec(pdb.spec);
  const selector = spec.selector as KubeLabelSelector | undefined;
  const pods = podsInNs.filter((p) => matchesSelector(selector, p.metadata.labels ?? {}));
  const live = pods.filter((p) => !p.metadata.deletionTimestamp);
  const healthy = live.filter(podReady).length;
  let expected = 0;
  const seen = new Set<string>();
  for (const p of pods) {
    const ref = (p.metadata.ownerReferences ?? []).find((r) => r.controller === true);
    const scale = ref ? scaleOf(ref.kind as string, ref.name as string) : undefined;
    if (scale === undefined) {
      if (!p.metadata.deletionTimestamp) expected++;
    } else if (!seen.has(ref!.uid as string)) {
      seen.add(ref!.uid as string);
      expected += scale;
    }
  }
  let desired: number;
  if (spec.minAvailable !== undefined) desired = scaled(spec.minAvailable, expected, true);
  else if (spec.maxUnavailable !== undefined) {
    desired = Math.max(0, expected - scaled(spec.maxUnavailable, expected, true));
  } else desired = expected;
  const allowed = Math.max(0, healthy - desired);
  return {
    observedGeneration: pdb.metadata.generation ?? 1,
    currentHealthy: healthy,
    desiredHealthy: desired,
    expectedPods: expected,
    disruptionsAllowed: allowed,
    conditions: [{
      type: "DisruptionAllowed",
      status: allowed > 0 ? "True" : "False",
      reason: allowed > 0 ? "SufficientPods" : "InsufficientPods",
      observedGeneration: pdb.metadata.generation ?? 1,
    }],
  };
}

/** What the kubelet reports in `status.nodeInfo` (plus the schematic annotation Talos sets). */
export interface NodeInfoFacts {
  readonly osImage?: string;
  readonly kubeletVersion?: string;
  readonly bootID?: string;
  readonly schematic?: string;
  /** SMBIOS system UUID (`status.nodeInfo.systemUUID`). */
  readonly systemUUID?: string;
  /** `/etc/machine-id` of the installed OS (`status.nodeInfo.machineID`). */
  readonly machineID?: string;
}

/** Maps the Talos side's news about a machine to the kubelet's nodeInfo facts. */
export function nodeInfoFacts(info: {
  readonly bootId: string;
  readonly osImage: string;
  readonly kubeletVersion: string;
  readonly schematic?: string;
  readonly systemUuid?: string;
  readonly machineId?: string;
}): NodeInfoFacts {
  return {
    bootID: info.bootId,
    osImage: info.osImage,
    kubeletVersion: info.kubeletVersion,
    ...(info.schematic ? { schematic: info.schematic } : {}),
    ...(info.systemUuid ? { systemUUID: info.systemUuid } : {}),
    ...(info.machineId ? { machineID: info.machineId } : {}),
  };
}
