/**
 * Reads the facts the KubernetesUpgrade preflight judges (domain/k8s_upgrade/preflight.ts), with
 * reads only: Talos `Version` and COSI `State.Get`, Kubernetes GET/LIST and `/metrics`. The
 * inventory ConfigMap and its namespace are read with a plain GET: a 404 is recorded as missing
 * and stays missing (docs/safeguards.md#preview-writes-nothing: never the create-on-read path of an inventory factory).
 * A Secret listed in the inventory is never read (its ownership stays unknown, which refuses).
 *
 * The inventory is the one Talos's manifest sync keeps through siderolabs/go-kubernetes
 * (`kubernetes/ssa/internal/inventory/configmap/inventory.go`): a ConfigMap whose data keys are
 * cli-utils object ids with empty values. That library's `NewInventory` creates a missing
 * ConfigMap and `AssureInventoryNamespace` a missing namespace on read: cairn never calls either.
 */
import type { Journal } from "../../ports/journal.ts";
import type { Kube, KubeResourceRef } from "../../ports/kube.ts";
import type { Talos } from "../../ports/talos.ts";
import { type BootstrapObject, managedFieldsOf } from "../../domain/k8s_upgrade/ownership.ts";
import type {
  InventoryFacts,
  NodeFacts,
  PreflightEvidence,
  Reading,
} from "../../domain/k8s_upgrade/preflight.ts";
import type { ComponentVersion } from "../../domain/k8s_upgrade/skew.ts";
import { holdsScope } from "../../domain/operation.ts";
import { parse } from "yaml";
import { ContentMemo } from "../../domain/content_memo.ts";

/** Where Talos keeps the bootstrap manifest inventory (`constants.KubernetesInventoryNamespace`). */
export const INVENTORY = {
  namespace: "kube-system",
  name: "talos-bootstrap-manifests-inventory",
} as const;

/** The control-plane static pods, in the order Talos upgrades them (`talos_managed.go`). */
export const STATIC_PODS = ["kube-apiserver", "kube-controller-manager", "kube-scheduler"] as const;
export type StaticPod = (typeof STATIC_PODS)[number];

const CONFIGMAPS: KubeResourceRef = {
  group: "",
  version: "v1",
  plural: "configmaps",
  namespaced: true,
};
const NAMESPACES: KubeResourceRef = {
  group: "",
  version: "v1",
  plural: "namespaces",
  namespaced: false,
};
const DAEMONSETS: KubeResourceRef = {
  group: "apps",
  version: "v1",
  plural: "daemonsets",
  namespaced: true,
};

/** Kinds a bootstrap inventory may list, by group and kind (Secrets deliberately absent). */
const KINDS: Readonly<Record<string, KubeResourceRef>> = {
  "/ServiceAccount": { group: "", version: "v1", plural: "serviceaccounts", namespaced: true },
  "/ConfigMap": CONFIGMAPS,
  "/Service": { group: "", version: "v1", plural: "services", namespaced: true },
  "apps/Deployment": { group: "apps", version: "v1", plural: "deployments", namespaced: true },
  "apps/DaemonSet": DAEMONSETS,
  "rbac.authorization.k8s.io/ClusterRole": {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    plural: "clusterroles",
    namespaced: false,
  },
  "rbac.authorization.k8s.io/ClusterRoleBinding": {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    plural: "clusterrolebindings",
    namespaced: false,
  },
  "rbac.authorization.k8s.io/Role": {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    plural: "roles",
    namespaced: true,
  },
  "rbac.authorization.k8s.io/RoleBinding": {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    plural: "rolebindings",
    namespaced: true,
  },
};

/** The COSI id of a node's static pod status. */
export function staticPodStatusRef(component: StaticPod, node: string) {
  return {
    namespace: "k8s",
    type: "StaticPodStatuses.kubernetes.talos.dev",
    id: `kube-system/${component}-${node}`,
  } as const;
}

/** The tag of an image reference; undefined when it has none. */
export function imageTag(image: string): string | undefined {
  const noDigest = image.split("@")[0]!;
  const slash = noDigest.lastIndexOf("/");
  const colon = noDigest.lastIndexOf(":");
  return colon > slash ? noDigest.slice(colon + 1) : undefined;
}

/** What a node reports about one static pod (its status as Talos keeps it). */
export interface StaticPodReading {
  readonly version: string | undefined;
  readonly ready: boolean;
  /** The COSI resource version (Talos's config version of the pod). */
  readonly resourceVersion: string;
}

/** Reads one static pod's status from its node; throws when it cannot be read. */
export async function readStaticPod(
  talos: Talos,
  address: string,
  component: StaticPod,
  node: string,
  timeoutMs: number,
): Promise<StaticPodReading> {
  const r = await talos.resource(address, staticPodStatusRef(component, node), { timeoutMs });
  // Every poll reads each control plane's pods, and a pod answers the same text until it changes:
  // parsed once per text (a YAML parse per read was a share of a simulated seed, issue 16).
  const s = podStatuses.get(
    `${component}\u0000${r.yamlSpec}`,
    () => podStatusOf(component, r.yamlSpec),
  );
  return { version: s.version, ready: s.ready, resourceVersion: r.version };
}

/** What a static pod's status text says; a text that is not YAML throws, as it always did. */
const podStatuses = new ContentMemo<{ version: string | undefined; ready: boolean }>(64);

function podStatusOf(
  component: StaticPod,
  yamlSpec: string,
): { version: string | undefined; ready: boolean } {
  const status = parse(yamlSpec) as {
    conditions?: { type?: string; status?: string }[];
    containerStatuses?: { name?: string; image?: string }[];
  } | null;
  const container = status?.containerStatuses?.find((c) => c.name === component) ??
    status?.containerStatuses?.[0];
  return {
    version: container?.image ? imageTag(container.image) : undefined,
    ready: (status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True"),
  };
}

/** What the reader needs. */
export interface EvidencePorts {
  readonly kube: Kube;
  readonly talos: Talos;
  /** The journal, for partial OS rollouts; absent at a preview without one. */
  readonly journal?: Pick<Journal, "listOperations" | "getPlan">;
}

/** The plan's nodes and cluster. */
export interface EvidenceScope {
  readonly cluster: string;
  readonly nodes: readonly {
    readonly name: string;
    readonly role: "controlplane" | "worker";
    readonly address: string;
  }[];
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

async function reading<T>(f: () => Promise<T>): Promise<Reading<T>> {
  try {
    return { ok: true, value: await f() };
  } catch (e) {
    return { ok: false, error: message(e) };
  }
}

/** Reads everything the preflight judges; every read bounded by `timeoutMs`. */
export async function readPreflightEvidence(
  p: EvidencePorts,
  scope: EvidenceScope,
  timeoutMs: number,
): Promise<PreflightEvidence> {
  const opts = { timeoutMs };
  const nodes: NodeFacts[] = [];
  const components: ComponentVersion[] = [];
  for (const n of scope.nodes) {
    const [talosVersion, node] = await Promise.all([
      p.talos.version(n.address, opts).then((v) => v.tag, () => undefined),
      p.kube.getNode(n.name, opts).catch(() => undefined),
    ]);
    nodes.push({
      name: n.name,
      role: n.role,
      talosVersion,
      kubeletVersion: node?.kubeletVersion || undefined,
    });
    if (n.role !== "controlplane") continue;
    for (const c of STATIC_PODS) {
      const pod = await readStaticPod(p.talos, n.address, c, n.name, timeoutMs)
        .catch(() => undefined);
      components.push({ component: c, node: n.name, version: pod?.version });
    }
  }
  const proxy = await reading(() =>
    p.kube.getObject(DAEMONSETS, "kube-proxy", "kube-system", opts)
  );
  const proxyImage = proxy.ok
    ? ((proxy.value?.spec as { template?: { spec?: { containers?: { image?: string }[] } } })
      ?.template?.spec?.containers?.[0]?.image)
    : undefined;
  // kube-proxy runs from one DaemonSet: its image is the cluster's kube-proxy version.
  components.push({
    component: "kube-proxy",
    node: "cluster",
    version: proxyImage ? imageTag(proxyImage) : undefined,
  });
  const inventory = await reading(async (): Promise<InventoryFacts> => {
    const cm = await p.kube.getObject(CONFIGMAPS, INVENTORY.name, INVENTORY.namespace, opts);
    const ns = await p.kube.getObject(NAMESPACES, INVENTORY.namespace, undefined, opts);
    return {
      present: cm !== undefined,
      namespacePresent: ns !== undefined,
      ...(cm?.metadata?.uid ? { uid: cm.metadata.uid } : {}),
      ...(cm?.metadata?.resourceVersion ? { resourceVersion: cm.metadata.resourceVersion } : {}),
      ...(cm ? { entries: Object.keys((cm.data ?? {}) as Record<string, unknown>) } : {}),
    };
  });
  const entries = inventory.ok ? inventory.value.entries : undefined;
  const bootstrap: Reading<readonly BootstrapObject[]> = entries === undefined
    ? {
      ok: false,
      error: inventory.ok ? "no inventory lists the bootstrap objects" : inventory.error,
    }
    : await reading(() => readBootstrapObjects(p.kube, entries, timeoutMs));
  return {
    nodes,
    components,
    osRollout: await osRollout(p.journal, scope.cluster),
    deprecatedApis: await reading(() => p.kube.requestedDeprecatedApis(opts)),
    inventory,
    bootstrap,
  };
}

/** Each inventory entry (`<namespace>_<name>_<group>_<kind>`) read with its managedFields. */
async function readBootstrapObjects(
  kube: Kube,
  entries: readonly string[],
  timeoutMs: number,
): Promise<BootstrapObject[]> {
  const out: BootstrapObject[] = [];
  for (const entry of entries.slice().sort()) {
    const { ns, name, group, kind } = parseObjectId(entry);
    const label = `${kind} ${ns ? `${ns}/` : ""}${name}`;
    const ref = KINDS[`${group ?? ""}/${kind ?? ""}`];
    if (!ref || !name) {
      // Unknown kinds and Secrets are not read: their ownership stays unknown.
      out.push({ ref: label, uid: "", resourceVersion: "", managedFields: [] });
      continue;
    }
    const o = await kube.getObject(ref, name, ns || undefined, { timeoutMs });
    if (!o) throw new Error(`${label} is listed in the inventory but does not exist`);
    out.push({
      ref: label,
      uid: o.metadata?.uid ?? "",
      resourceVersion: o.metadata?.resourceVersion ?? "",
      managedFields: managedFieldsOf(o.metadata?.managedFields) ?? [],
    });
  }
  return out;
}

/**
 * Whether an OS rollout on the cluster is partial in the journal: an operation of a TalosUpgrade
 * plan that still holds its scope, or a TalosUpgrade plan some of whose steps completed and others
 * not (and that was not revoked or cancelled).
 */
async function osRollout(
  journal: EvidencePorts["journal"],
  cluster: string,
): Promise<PreflightEvidence["osRollout"]> {
  if (!journal) {
    return { partial: false, unread: true, detail: "no journal was given to read" };
  }
  const ops = (await journal.listOperations()).filter((o) => o.cluster === cluster);
  const digests = [...new Set(ops.map((o) => o.planDigest))];
  const partial: string[] = [];
  for (const digest of digests) {
    const plan = await journal.getPlan(digest);
    if (plan?.kind !== "TalosUpgrade") continue;
    const mine = ops.filter((o) => o.planDigest === digest);
    for (const o of mine.filter((o) => holdsScope(o.state))) {
      partial.push(`operation ${o.id} of ${plan.name} on ${o.machine} is ${o.state}`);
    }
    const done = new Set(mine.filter((o) => o.state === "completed").map((o) => o.step));
    const ended = plan.state === "revoked" || plan.state === "cancelled";
    if (!ended && done.size > 0 && done.size < plan.steps.length) {
      partial.push(`${plan.name} completed ${done.size} of ${plan.steps.length} nodes`);
    }
  }
  return partial.length > 0
    ? { partial: true, detail: partial.join("; ") }
    : { partial: false, detail: `no TalosUpgrade operation or plan of ${cluster} is partial` };
}

/**
 * A cli-utils object id `<namespace>_<name>_<group>_<kind>`; a `:` in a name (RBAC) is written
 * `__`, so the name is what lies between the first and the last two separators.
 */
export function parseObjectId(
  id: string,
): { ns: string; name: string; group: string; kind: string } {
  const first = id.indexOf("_");
  const last = id.lastIndexOf("_");
  const beforeLast = id.lastIndexOf("_", last - 1);
  if (first < 0 || beforeLast <= first) return { ns: "", name: "", group: "", kind: "" };
  return {
    ns: id.slice(0, first),
    name: id.slice(first + 1, beforeLast).replaceAll("__", ":"),
    group: id.slice(beforeLast + 1, last),
    kind: id.slice(last + 1),
  };
}
