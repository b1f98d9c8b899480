/**
 * The Kubernetes API as cairn's core sees it: domain-shaped reads and the three writes a safe
 * drain needs (cordon, uncordon, evict). Types only. The adapter (`src/adapters/kube/`) turns
 * HTTP failures into reason codes at this boundary, so the core never sees an HTTP library.
 *
 * Expected outcomes (a stale resourceVersion, a PDB that says "not now", a pod already gone) are
 * returned as values. Transport and server failures (unreachable, 401/403, 5xx, malformed body)
 * are thrown as `CairnError` with a `Kube*` reason from the `kube` area of the catalogue.
 */
import type { Reason } from "../domain/reasons.ts";
import type { DeprecatedApiUse } from "../domain/k8s_upgrade/preflight.ts";

/** A node, reduced to what upgrade gates and cordon/drain steps look at. */
export interface KubeNode {
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly unschedulable: boolean;
  /** Condition Ready == "True". */
  readonly ready: boolean;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly taints: readonly KubeTaint[];
  /** status.nodeInfo: what the kubelet reports after each boot. */
  readonly kubeletVersion: string;
  readonly osImage: string;
  readonly bootID: string;
  /** `status.nodeInfo.systemUUID`: the machine's SMBIOS UUID as the kubelet read it ("" if absent). */
  readonly systemUUID: string;
  /** `status.nodeInfo.machineID`: the installed OS's /etc/machine-id ("" if absent). */
  readonly machineID: string;
  /** `status.addresses` of type InternalIP. */
  readonly internalIPs: readonly string[];
  readonly controlPlane: boolean;
}

export interface KubeTaint {
  readonly key: string;
  readonly value?: string;
  readonly effect: string;
}

/** The controller that owns a pod (ownerReferences entry with controller: true). */
export interface KubeOwner {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
}

/** A pod, reduced to what drain filters and health gates need. */
export interface KubePod {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly nodeName: string | undefined;
  /** status.phase: Pending | Running | Succeeded | Failed | Unknown. */
  readonly phase: string;
  /** Condition Ready == "True". */
  readonly ready: boolean;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly owner: KubeOwner | undefined;
  /** Owned by an apps/v1 DaemonSet. */
  readonly daemonSet: boolean;
  /** Static pod mirror (`kubernetes.io/config.mirror` annotation). */
  readonly mirror: boolean;
  /** Has at least one emptyDir volume. */
  readonly emptyDir: boolean;
  readonly terminationGracePeriodSeconds: number;
  /** Set once deletion started (RFC 3339). */
  readonly deletionTimestamp: string | undefined;
}

/** A PodDisruptionBudget with its status, as the eviction decision sees it. */
export interface KubePdb {
  readonly namespace: string;
  readonly name: string;
  readonly generation: number;
  readonly observedGeneration: number;
  readonly minAvailable: number | string | undefined;
  readonly maxUnavailable: number | string | undefined;
  /** spec.selector.matchLabels (matchExpressions are evaluated by the server, not summarised). */
  readonly selector: KubeLabelSelector | undefined;
  readonly unhealthyPodEvictionPolicy: string | undefined;
  readonly disruptionsAllowed: number;
  readonly currentHealthy: number;
  readonly desiredHealthy: number;
  readonly expectedPods: number;
}

export interface KubeLabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly {
    readonly key: string;
    readonly operator: string;
    readonly values?: readonly string[];
  }[];
}

/** Names any resource type, built-in or custom (e.g. `{group: "ceph.rook.io", version: "v1", plural: "cephclusters"}`). */
export interface KubeResourceRef {
  /** "" for the core group. */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/** An object as the API returns it (unstructured JSON). */
export type KubeObject = Readonly<Record<string, unknown>> & {
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly resourceVersion?: string;
    readonly uid?: string;
    readonly generation?: number;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly managedFields?: readonly Readonly<Record<string, unknown>>[];
  };
};

/**
 * Per-call bound: the adapter abandons the request after `timeoutMs` (wall-clock ms) and throws
 * `KubeTimeout`. The engine passes the time its phase has left, so no call can outlive it.
 */
export interface KubeCallOptions {
  readonly timeoutMs?: number;
}

/** Which objects of a collection. */
export interface KubeSelectorOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
}

/** A bounded LIST (every page within the one deadline). */
export interface KubeListOptions extends KubeSelectorOptions, KubeCallOptions {
  /**
   * Applied to each item as its page arrives, so that a long list never holds every whole
   * object at once (a watch cache keeps only what its readers read). The items returned are
   * what it returns; an implementation without pages applies it to each item all the same.
   */
  readonly project?: (o: KubeObject) => KubeObject;
}

/** A complete list (the adapter follows `continue` tokens) and the collection's resourceVersion. */
export interface KubeList<T> {
  readonly items: readonly T[];
  readonly resourceVersion: string;
}

export type KubeWatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK";

export interface KubeWatchEvent {
  readonly type: KubeWatchEventType;
  readonly object: KubeObject;
}

/** A watch is long-lived: it ends on its signal, never on a call deadline. */
export interface KubeWatchOptions extends KubeSelectorOptions {
  /** Start after this version; omitted = from now. */
  readonly resourceVersion?: string;
  readonly signal?: AbortSignal;
}

/**
 * How a watch ended: `aborted` (the caller's signal), `closed` (the server ended the stream;
 * re-watch from the last version), `expired` (410 Gone: the version is too old; re-list),
 * `failed` (any other error, with its reason).
 */
export type KubeWatchEnd =
  | { readonly kind: "aborted" }
  | { readonly kind: "closed" }
  | { readonly kind: "expired" }
  | { readonly kind: "failed"; readonly reason: Reason; readonly message: string };

/** Result of a cordon/uncordon with a resourceVersion precondition. */
export type CordonOutcome =
  | {
    readonly kind: "applied";
    /** spec.unschedulable before the write (from the object read as the precondition). */
    readonly priorUnschedulable: boolean;
    readonly resourceVersion: string;
  }
  /** The node changed since `expectedResourceVersion` (409): re-read and decide again. */
  | { readonly kind: "conflict"; readonly message: string }
  | { readonly kind: "not-found"; readonly message: string };

/** Result of one eviction request (protocols B1). */
export type EvictionOutcome =
  /** 2xx and not a Failure Status: the pod is now terminating (watch it go). */
  | { readonly kind: "accepted" }
  /** 429: a PDB allows no disruption now (or its status is stale, or API rate limiting). */
  | {
    readonly kind: "blocked";
    readonly httpStatus: number;
    readonly message: string;
    readonly retryAfterSeconds: number | undefined;
    /** Status details.causes[].type, e.g. `DisruptionBudget`. */
    readonly causes: readonly string[];
  }
  /** 404: the pod no longer exists. */
  | { readonly kind: "gone" }
  /** Refused for a reason retrying will not fix (multiple PDBs, 403, namespace terminating…). */
  | {
    readonly kind: "failed";
    readonly reason: Reason;
    readonly httpStatus: number;
    readonly message: string;
  };

export interface KubeServerVersion {
  readonly gitVersion: string;
  readonly major: string;
  readonly minor: string;
}

export interface EvictOptions extends KubeCallOptions {
  /** Omitted = the pod's terminationGracePeriodSeconds. */
  readonly gracePeriodSeconds?: number;
  readonly dryRun?: boolean;
}

export interface PodRef {
  readonly namespace: string;
  readonly name: string;
}

/**
 * A named read-only route through the API server's proxy subresource
 * (`/api/v1/namespaces/NS/{pods|services}/NAME:PORT/proxy/PATH`): how a health reader reaches a
 * product's own health endpoint (an object store's S3 root, a broker server's monitoring port)
 * with the cluster's existing credentials, never a new secret and never an arbitrary URL.
 */
export interface KubeProxyTarget {
  readonly namespace: string;
  readonly kind: "pod" | "service";
  readonly name: string;
  /** Port name or number, as the proxy subresource takes it. */
  readonly port: string;
  /** Absolute path on that port, without a query (`/healthz`, `/`). */
  readonly path: string;
}

export interface KubeProxyOptions extends KubeCallOptions {
  /** The answer's body is cut at this many bytes (`truncated` says so). */
  readonly maxBytes: number;
}

/** What the route answered: any HTTP status is an answer; no answer throws. */
export interface KubeProxyAnswer {
  readonly status: number;
  readonly body: string;
  readonly truncated: boolean;
}

/** The Kubernetes port. */
/**
 * The answer to a create (POST): the object stored, already there (409), or refused by the server
 * before anything was stored (validation 400/422, forbidden 403, an unknown namespace 404). Any
 * other answer (429, 5xx) and a transport failure throw: whether it was stored is not known.
 */
export type CreateOutcome =
  | { readonly kind: "created"; readonly uid: string; readonly resourceVersion: string }
  | { readonly kind: "exists"; readonly message: string }
  | { readonly kind: "rejected"; readonly code: number; readonly message: string };

/**
 * The answer to a container image change with a resourceVersion precondition: applied (the
 * object's new version and generation, which say nothing about the pods: those are observed), the
 * object changed since it was read (409), gone (404), or refused before anything was stored
 * (400/403/422). Any other answer (429, 5xx) and a transport failure throw.
 */
export type PatchOutcome =
  | {
    readonly kind: "applied";
    readonly resourceVersion: string;
    readonly generation: number;
  }
  | { readonly kind: "conflict"; readonly message: string }
  | { readonly kind: "not-found"; readonly message: string }
  | { readonly kind: "rejected"; readonly code: number; readonly message: string };

/** One container's image in a workload's pod template, changed only at a known version. */
export interface ContainerImageChange {
  readonly container: string;
  readonly image: string;
  /** The resourceVersion the caller judged; the server refuses (409) if the object moved. */
  readonly expectedResourceVersion: string;
}

export interface Kube {
  serverVersion(): Promise<KubeServerVersion>;
  /** Requested deprecated APIs, from the apiserver's `/metrics` (`apiserver_requested_deprecated_apis`). */
  requestedDeprecatedApis(opts?: KubeCallOptions): Promise<readonly DeprecatedApiUse[]>;
  /** undefined when the node does not exist. */
  getNode(name: string, opts?: KubeCallOptions): Promise<KubeNode | undefined>;
  listNodes(opts?: { readonly labelSelector?: string }): Promise<KubeList<KubeNode>>;
  /** Pods bound to `onNode` (field selector spec.nodeName), or all pods when omitted. */
  listPods(onNode?: string, opts?: KubeListOptions): Promise<KubeList<KubePod>>;
  getPod(ref: PodRef, opts?: KubeCallOptions): Promise<KubePod | undefined>;
  listPdbs(opts?: KubeListOptions): Promise<KubeList<KubePdb>>;
  /** Sets spec.unschedulable=true only if the node is still at `expectedResourceVersion`. */
  cordon(
    node: string,
    expectedResourceVersion: string,
    opts?: KubeCallOptions,
  ): Promise<CordonOutcome>;
  /** Clears spec.unschedulable only if the node is still at `expectedResourceVersion`. */
  uncordon(
    node: string,
    expectedResourceVersion: string,
    opts?: KubeCallOptions,
  ): Promise<CordonOutcome>;
  evict(pod: PodRef, opts?: EvictOptions): Promise<EvictionOutcome>;
  /** Unstructured read of any resource (CephCluster, Kustomization, …); undefined = 404. */
  getObject(
    ref: KubeResourceRef,
    name: string,
    namespace?: string,
    opts?: KubeCallOptions,
  ): Promise<KubeObject | undefined>;
  listObjects(ref: KubeResourceRef, opts?: KubeListOptions): Promise<KubeList<KubeObject>>;
  /** Creates one object (node hooks' Jobs); a mutation, so only through the mutation path. */
  createObject(
    ref: KubeResourceRef,
    namespace: string | undefined,
    body: Readonly<Record<string, unknown>>,
    opts?: KubeCallOptions,
  ): Promise<CreateOutcome>;
  /** One GET through the proxy subresource, bounded in time and size. */
  proxyGet(target: KubeProxyTarget, opts: KubeProxyOptions): Promise<KubeProxyAnswer>;
  /**
   * Sets one container's image in a workload's pod template (a strategic merge patch keyed by
   * the container's name, under cairn's field manager), only if the object is still at
   * `change.expectedResourceVersion`. Nothing else of the object is written.
   */
  setContainerImage(
    ref: KubeResourceRef,
    namespace: string,
    name: string,
    change: ContainerImageChange,
    opts?: KubeCallOptions,
  ): Promise<PatchOutcome>;
  /** Streams events until the watch ends; resolves with how it ended. */
  watch(
    ref: KubeResourceRef,
    opts: KubeWatchOptions,
    onEvent: (event: KubeWatchEvent) => void,
  ): Promise<KubeWatchEnd>;
}
