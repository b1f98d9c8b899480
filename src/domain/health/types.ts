import type { Reason } from "../reasons.ts";
import type { Verdict } from "../verdict.ts";

/** The three outcomes a reader may report (declared once, in `domain/verdict.ts`). */
export type { Verdict };

/** A Kubernetes object as the API returns it (unstructured JSON), structurally typed. */
export type KubeObjectLike = Readonly<Record<string, unknown>> & {
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
    readonly generation?: number;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
};

/**
 * How fresh a watch cache is. `live`: listed, then watched without a break since; `stale`: the
 * watch ended and the cache has not re-listed; `unsynced`: never listed.
 * `confirmedAtMs` is the last moment the server confirmed the cache (list, event or bookmark).
 */
export interface CacheFreshness {
  readonly state: "live" | "stale" | "unsynced";
  readonly syncedAtMs?: number;
  readonly confirmedAtMs?: number;
  readonly staleSinceMs?: number;
  readonly resourceVersion?: string;
}

/** All objects of one kind as a watch cache holds them, plus memoised derived indexes. */
export interface ResourceSnapshot {
  readonly items: readonly KubeObjectLike[];
  readonly freshness: CacheFreshness;
  /**
   * Derived data keyed by name, valid for exactly this content. The cache hands out a new map
   * whenever its content changes, so readers can reuse indexes across rounds of a quiet cluster.
   */
  readonly memo?: Map<string, unknown>;
}

/** Kubernetes evidence by resource key (`v1/Node`, `apps/v1/Deployment`, `ceph.rook.io/v1/CephCluster`). */
export interface KubeView {
  resource(key: string): ResourceSnapshot | undefined;
}

/** One etcd member as the member list reports it. */
export interface EtcdMember {
  readonly id: string;
  readonly hostname: string;
  readonly isLearner: boolean;
}

/** What one control-plane node's Talos API said about etcd (EtcdStatus/EtcdAlarmList are local). */
export interface EtcdObservation {
  readonly members: readonly EtcdMember[];
  /** The local member's id, from EtcdStatus. */
  readonly memberId: string;
  /** EtcdStatus errors (empty = healthy). */
  readonly errors: readonly string[];
  readonly alarms: readonly string[];
}

export interface TalosServiceObservation {
  readonly id: string;
  readonly state: string;
  /** health.healthy; undefined when the service has no health check. */
  readonly healthy: boolean | undefined;
}

/** Everything read from one node's Talos API in one round. */
export interface TalosNodeObservation {
  readonly node: string;
  readonly observedAtMs: number;
  readonly version?: string;
  readonly schematic?: string;
  readonly services?: readonly TalosServiceObservation[];
  readonly etcd?: EtcdObservation;
  /** Set when the read failed or timed out; the node's evidence is then unreadable. */
  readonly error?: { readonly reason: Reason; readonly message: string };
}

export interface TalosView {
  node(name: string): TalosNodeObservation | undefined;
}

/** The named target of the running operation, whose own cordon is expected. */
export interface HealthTarget {
  readonly node: string;
  /** True when the journal records that this operation cordoned the node. */
  readonly operationOwnedCordon: boolean;
}

/** A named read-only route through the API server's proxy subresource (rows 17). */
export interface RouteTarget {
  readonly namespace: string;
  readonly kind: "pod" | "service";
  readonly name: string;
  readonly port: string;
  readonly path: string;
}

/** One GET of a route in one round: the answer, or why there was none. */
export interface RouteObservation {
  readonly target: RouteTarget;
  readonly observedAtMs: number;
  readonly answer?: { readonly status: number; readonly body: string; readonly truncated: boolean };
  readonly error?: { readonly reason: Reason; readonly message: string };
}

/** Route observations by binding and route key (`routeKey`). */
export interface RouteView {
  get(binding: string, key: string): RouteObservation | undefined;
}

/** Inputs a pure reader evaluates. */
export interface ReadInputs {
  readonly nowMs: number;
  readonly kube: KubeView;
  readonly talos: TalosView;
  /** Absent when the evidence source reads no routes: a route binding is then unreadable. */
  readonly routes?: RouteView;
  /** Absent when no Alertmanager is configured: an alert binding is then unreadable. */
  readonly alerts?: AlertView;
  readonly target?: HealthTarget;
}

/** A firing alert as read for an alert binding (labels and start are the evidence). */
export interface AlertSeen {
  readonly fingerprint: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly startsAt: string;
}

/** One Alertmanager read for one binding in one round. */
export interface AlertObservation {
  readonly observedAtMs: number;
  /** Where it was read (the Alertmanager's URL). */
  readonly source: string;
  readonly alerts?: readonly AlertSeen[];
  readonly error?: { readonly reason: Reason; readonly message: string };
}

/** Alertmanager reads of the current round, by binding name. */
export interface AlertView {
  get(binding: string): AlertObservation | undefined;
}

/** Identity, version and freshness of one piece of evidence. */
export interface ObservationBasis {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly observedGeneration?: number;
  readonly observedAtMs: number;
  readonly source: "watch-cache" | "talos" | "route" | "alertmanager";
  readonly cache?: CacheFreshness;
}

/** A per-subject finding (a node, a workload, a PDB on a node, an etcd member). */
export interface Finding {
  readonly subject: string;
  /**
   * The one node this finding is about, set by the readers that judge nodes (Ready and cordon,
   * versions, Talos services, an etcd member). A finding about the cluster, a workload or a PDB
   * has none: it cannot be laid at one node's door (see `failsOnlyElsewhere`).
   */
  readonly node?: string;
  readonly verdict: Verdict;
  readonly reason: Reason;
  readonly message: string;
  /** PDB feasibility: a blocker that no waiting will clear vs one that may clear. */
  readonly blocker?: "permanent" | "temporary";
}

/** One binding's result in one round. */
export interface BindingResult {
  readonly binding: string;
  readonly reader: string;
  readonly verdict: Verdict;
  readonly reason: Reason;
  readonly message: string;
  readonly coverage: { readonly required: number; readonly observed: number };
  /** Non-passing findings, plus passing ones when the reader has few subjects. */
  readonly findings: readonly Finding[];
  readonly basis: readonly ObservationBasis[];
  readonly startedAtMs: number;
  readonly completedAtMs: number;
}

/**
 * How a round reads its evidence. A `fresh` round (one that decides a terminal state: verification
 * and post-gate) must not judge from a watch cache, which may have missed events: every cache it
 * reads is listed again, once per round (`round` is the round's identity, shared by its bindings),
 * and a list that cannot be had leaves the binding unreadable.
 */
export interface EvidenceRead {
  readonly fresh: boolean;
  readonly round: object;
}

/**
 * Where a round's evidence comes from (implemented by `src/engine/health/`). `prepare` makes
 * the evidence a binding needs current (sync caches, call Talos) and may be aborted when the
 * binding's time is up; `inputs` then exposes what is held.
 */
export interface HealthEvidence {
  prepare(
    binding: import("./policy_schema.ts").Binding,
    deadlineMs: number,
    signal: AbortSignal,
    read?: EvidenceRead,
  ): Promise<void>;
  kubeView(): KubeView;
  talosView(): TalosView;
  /** The proxy routes read this round (sources without route access omit it). */
  routeView?(): RouteView;
  /** The Alertmanager reads of this round (sources without an Alertmanager omit it). */
  alertView?(): AlertView | undefined;
}
