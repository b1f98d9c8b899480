/**
 * The Kubernetes side of the twin's control plane (sim/talos/k8s_components.ts is the machine
 * side), for descriptions with `kubernetesComponents`:
 * - the bootstrap manifests Talos applies (kube-proxy's DaemonSet and ServiceAccount, and CoreDNS
 *   when the description has it), each with a `managedFields` entry of Talos's field manager
 *   `talos` (operation Apply) owning what it applied;
 * - the manifest inventory `kube-system/talos-bootstrap-manifests-inventory` (Talos's
 *   `constants.KubernetesBootstrapManifestsInventoryName`) listing them, or its absence;
 * - mirror pods of each control plane's static pods as the kubelets report them;
 * - fault `gitops-field-manager` (point `kube.bootstrap`, target an object name, default
 *   `coredns`; `params.manager`, default `kustomize-controller`): from the next static pod
 *   report on (mid-run), a GitOps controller also applies that object's replicas and images;
 * - the apiserver's `apiserver_requested_deprecated_apis` gauge (served at `/metrics`).
 */
import type { ClusterDescription } from "../cluster_description.ts";
import type { FaultSchedule } from "../faults.ts";
import type { StaticPodReport } from "../talos/k8s_components.ts";
import { IMAGE_REPOSITORIES } from "../talos/k8s_components.ts";
import { containerStatuses, type Controllers, podConditions } from "./controllers.ts";
import { clone, fieldSetOf } from "./patch.ts";
import { isoSeconds, type Obj, type Store } from "./store.ts";
import { compareVersions, parseVersion } from "../../domain/version.ts";

type R = Record<string, unknown>;

/** Where Talos keeps the bootstrap manifest inventory. */
export const INVENTORY = {
  namespace: "kube-system",
  name: "talos-bootstrap-manifests-inventory",
} as const;

const TALOS = "talos";

function meta(o: R): R {
  return (o.metadata ?? {}) as R;
}

/** The fields an apply of `o` owns (apiVersion, kind and server fields excluded). */
function appliedFields(o: R): Record<string, unknown> {
  const fields = fieldSetOf({ metadata: { labels: meta(o).labels }, spec: o.spec, data: o.data });
  if (!meta(o).labels) delete (fields["f:metadata"] as R | undefined)?.["f:labels"];
  for (const k of Object.keys(fields)) {
    const v = fields[k] as R;
    if (v && Object.keys(v).length === 0 && o[k.slice(2)] === undefined) delete fields[k];
  }
  return fields;
}

function withTalosOwnership(o: R, atMs: number): R {
  const copy = clone(o) as R;
  const m = meta(copy);
  m.managedFields = [{
    manager: TALOS,
    operation: "Apply",
    apiVersion: copy.apiVersion,
    time: isoSeconds(atMs),
    fieldsType: "FieldsV1",
    fieldsV1: appliedFields(copy),
  }];
  copy.metadata = m;
  return copy;
}

/** cli-utils' object id as inventories list it: `<namespace>_<name>_<group>_<kind>`. */
function inventoryKey(o: R): string {
  const group = String(o.apiVersion).includes("/") ? String(o.apiVersion).split("/")[0] : "";
  return `${meta(o).namespace ?? ""}_${meta(o).name}_${group}_${o.kind}`;
}

/** The description with the bootstrap manifests and the inventory added (a copy). */
export function withKubernetesComponents(d: ClusterDescription): ClusterDescription {
  const k8s = d.spec.kubernetesComponents;
  if (!k8s) return d;
  const at = Date.parse(d.spec.startTime);
  const proxyImage = `${IMAGE_REPOSITORIES["kube-proxy"]}:${d.spec.kubernetesVersion}`;
  const bootstrap: R[] = [
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "kube-proxy", namespace: "kube-system" },
    },
    {
      apiVersion: "apps/v1",
      kind: "DaemonSet",
      metadata: {
        name: "kube-proxy",
        namespace: "kube-system",
        labels: { "k8s-app": "kube-proxy" },
      },
      spec: {
        selector: { matchLabels: { "k8s-app": "kube-proxy" } },
        template: {
          metadata: { labels: { "k8s-app": "kube-proxy" } },
          spec: {
            hostNetwork: true,
            serviceAccountName: "kube-proxy",
            terminationGracePeriodSeconds: 1,
            tolerations: [{ operator: "Exists" }],
            containers: [{ name: "kube-proxy", image: proxyImage }],
          },
        },
      },
    },
  ].map((o) => withTalosOwnership(o, at));
  const objects = d.spec.objects.map((o) => {
    const isCoreDns = o.kind === "Deployment" && meta(o).namespace === "kube-system" &&
      meta(o).name === "coredns";
    if (!isCoreDns) return o;
    const owned = withTalosOwnership(o, at);
    bootstrap.push(owned);
    return owned;
  });
  const inventory: R[] = k8s.inventory === "present"
    ? [{
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: INVENTORY.name, namespace: INVENTORY.namespace },
      data: Object.fromEntries(bootstrap.map((o) => [inventoryKey(o), ""])),
    }]
    : [];
  return {
    ...d,
    spec: {
      ...d.spec,
      objects: [...objects, ...bootstrap.filter((o) => !objects.includes(o)), ...inventory],
    },
  };
}

/** Writes the mirror pods of `node`'s static pods as its kubelet reports them. */
export function syncMirrorPods(
  c: Controllers,
  faults: FaultSchedule,
  reports: readonly StaticPodReport[],
): void {
  const pods = c.store.findType("", "v1", "pods")!;
  for (const p of reports) {
    const name = `${p.component}-${p.node}`;
    const spec = {
      nodeName: p.node,
      hostNetwork: true,
      priorityClassName: "system-node-critical",
      containers: [{ name: p.component, image: p.image }],
    };
    const cur = c.store.get(pods, "kube-system", name);
    const next: Obj = {
      ...(cur ? clone(cur) : {}),
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        ...(cur ? cur.metadata : {}),
        name,
        namespace: "kube-system",
        labels: { "k8s-app": p.component, tier: "control-plane" },
        annotations: {
          "kubernetes.io/config.mirror": `mirror-${p.configVersion}`,
          "kubernetes.io/config.source": "file",
          "talos.dev/config-version": String(p.configVersion),
        },
      },
      spec,
      status: {
        phase: "Running",
        conditions: podConditions(p.ready, true),
        containerStatuses: containerStatuses(spec, true, p.ready, p.startedAtMs),
        ...c.podAddress(spec, p.node),
      },
    };
    if (cur) c.store.put(pods, next);
    else c.store.create(pods, next);
  }
  // Mid-run: the GitOps controller shows up with the first replaced pod, not at start-up.
  if (reports.some((p) => p.configVersion > 1)) gitopsAppears(c, faults);
}

/** A GitOps controller starts applying fields of a bootstrap object (fault, see module doc). */
function gitopsAppears(c: Controllers, faults: FaultSchedule): void {
  const armed = faults.remaining().find((f) =>
    f.point === "kube.bootstrap" && f.kind === "gitops-field-manager"
  );
  if (!armed) return;
  const target = armed.target ?? "coredns";
  const f = faults.take("kube.bootstrap", target, c.clock.now());
  if (!f) return;
  for (const plural of ["deployments", "daemonsets"]) {
    const t = c.store.findType("apps", "v1", plural)!;
    const cur = c.store.get(t, "kube-system", target);
    if (!cur) continue;
    const next = clone(cur);
    const containers = ((cur.spec as R | undefined)?.template as R | undefined)?.spec as
      | R
      | undefined;
    const names = ((containers?.containers ?? []) as R[]).map((x) => String(x.name));
    next.metadata.managedFields = [
      ...(cur.metadata.managedFields ?? []),
      {
        manager: String(f.params?.["manager"] ?? "kustomize-controller"),
        operation: "Apply",
        apiVersion: "apps/v1",
        time: isoSeconds(c.clock.now()),
        fieldsType: "FieldsV1",
        fieldsV1: {
          "f:spec": {
            ...(plural === "deployments" ? { "f:replicas": {} } : {}),
            "f:template": {
              "f:spec": {
                "f:containers": Object.fromEntries(
                  names.map((
                    n,
                  ) => [`k:${JSON.stringify({ name: n })}`, { ".": {}, "f:image": {} }]),
                ),
              },
            },
          },
        },
      },
    ];
    c.store.put(t, next);
    return;
  }
}

/** The apiserver's deprecated-API gauge in the Prometheus text format. */
export function deprecatedApiMetrics(d: ClusterDescription): string {
  const uses = d.spec.kubernetesComponents?.deprecatedApiRequests ?? [];
  const lines = [
    "# HELP apiserver_requested_deprecated_apis [STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.",
    "# TYPE apiserver_requested_deprecated_apis gauge",
    ...uses.map((u) =>
      `apiserver_requested_deprecated_apis{group="${u.group}",removed_release="${u.removedRelease}",resource="${u.resource}",subresource="",version="${u.version}"} 1`
    ),
  ];
  return lines.join("\n") + "\n";
}

/**
 * What `/version` answers through the load-balanced endpoint: the oldest ready apiserver among
 * the mirror pods (a client may reach any of them; the oldest is what it can count on), or the
 * description's version when no apiserver is modelled.
 */
export function servedVersion(store: Store, fallback: string): string {
  const pods = store.findType("", "v1", "pods");
  if (!pods) return fallback;
  const versions = store.list(pods, "kube-system")
    .filter((p) => (p.metadata.labels as R | undefined)?.["k8s-app"] === "kube-apiserver")
    .filter((p) =>
      (((p.status as R | undefined)?.conditions ?? []) as R[]).some((c) =>
        c.type === "Ready" && c.status === "True"
      )
    )
    .map((p) => String(((p.spec as R).containers as R[])[0]?.image ?? ""))
    .map((image) => image.slice(image.lastIndexOf(":") + 1))
    .filter((v) => /^v\d+\.\d+\.\d+$/.test(v))
    .sort((a, b) => compareVersions(parseVersion(a), parseVersion(b)));
  return versions[0] ?? fallback;
}
