/**
 * Loads a cluster description into the store: nodes from their Talos/Kubernetes facts, objects
 * as written, custom kinds registered from the objects themselves, and workload pods created for
 * Deployments, StatefulSets and DaemonSets that the description does not spell out pod by pod.
 */
import { withKubernetesComponents } from "./bootstrap.ts";
import { type ClusterDescription, machineUuidOf, type SimNode } from "../cluster_description.ts";
import { containerStatuses, type Controllers, podConditions } from "./controllers.ts";
import { isoSeconds, type Obj } from "./store.ts";
import { defaultWorkload } from "./defaults.ts";
import { daemonPod } from "./daemonset_rollout.ts";
import { clone } from "./patch.ts";
import { createHash } from "node:crypto";

type R = Record<string, unknown>;
const rec = (v: unknown): R => (v && typeof v === "object" ? v as R : {});

function nodeObject(n: SimNode, now: string): Obj {
  const cp = n.role === "controlplane";
  return {
    metadata: {
      name: n.name,
      labels: {
        "kubernetes.io/hostname": n.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": n.arch,
        "beta.kubernetes.io/arch": n.arch,
        "beta.kubernetes.io/os": "linux",
        ...(cp ? { "node-role.kubernetes.io/control-plane": "" } : {}),
        ...n.labels,
      },
      annotations: { "talos.dev/schematic": n.schematic },
    },
    spec: {
      ...(n.unschedulable ? { unschedulable: true } : {}),
      ...(cp
        ? { taints: [{ key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" }] }
        : {}),
    },
    status: {
      conditions: [{
        type: "Ready",
        status: n.ready ? "True" : "Unknown",
        reason: "KubeletReady",
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      }],
      addresses: [{ type: "InternalIP", address: n.address }, {
        type: "Hostname",
        address: n.name,
      }],
      capacity: { cpu: "8", memory: "32Gi", pods: "110" },
      allocatable: { cpu: "8", memory: "31Gi", pods: "110" },
      nodeInfo: {
        osImage: `Talos (${n.talosVersion})`,
        kubeletVersion: n.kubeletVersion,
        kubeProxyVersion: n.kubeletVersion,
        bootID: bootId(n.name, 0),
        machineID: createHash("sha256").update(`machine/${n.name}`).digest("hex").slice(0, 32),
        systemUUID: machineUuidOf(n),
        architecture: n.arch,
        operatingSystem: "linux",
        kernelVersion: "6.12.40-talos",
        containerRuntimeVersion: "containerd://2.1.4",
      },
    },
  };
}

/** A deterministic boot id for a node's n-th boot. */
export function bootId(name: string, boot: number): string {
  const h = createHash("sha256").update(`boot/${name}/${boot}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${
    h.slice(20, 32)
  }`;
}

const short = (s: string, n: number) => createHash("sha256").update(s).digest("hex").slice(0, n);

/** Creates every node and object of the description; returns the number of objects stored. */
export function loadDescription(c: Controllers, described: ClusterDescription): void {
  const d = withKubernetesComponents(described);
  const now = isoSeconds(c.clock.now());
  for (const n of d.spec.nodes) c.store.create(c.nodes, nodeObject(n, now));
  const namespaces = new Set<string>(["default", "kube-system", "kube-node-lease", "kube-public"]);
  for (const o of d.spec.objects) {
    const ns = rec(o.metadata).namespace;
    if (typeof ns === "string") namespaces.add(ns);
  }
  const nsType = c.store.findType("", "v1", "namespaces")!;
  for (const ns of namespaces) {
    c.store.create(nsType, {
      metadata: { name: ns },
      spec: { finalizers: ["kubernetes"] },
      status: { phase: "Active" },
    });
  }
  for (const raw of d.spec.objects) {
    const o = raw as Obj;
    const t = c.store.typeOfKind(String(o.apiVersion), String(o.kind)) ??
      c.store.registerFromObject(
        String(o.apiVersion),
        String(o.kind),
        o.metadata.namespace !== undefined,
      );
    if (t.kind === "Pod") {
      o.status ??= { phase: "Running", conditions: podConditions(true, true) };
      const status = o.status as R;
      // A described pod says how it runs; the kubelet's container report follows from that.
      status.containerStatuses ??= containerStatuses(
        o.spec,
        status.phase === "Running",
        ((status.conditions ?? []) as R[]).some((x) => x.type === "Ready" && x.status === "True"),
        c.clock.now(),
      );
      const node = rec(o.spec).nodeName;
      if (status.phase === "Running" && typeof node === "string" && status.podIP === undefined) {
        Object.assign(status, c.podAddress(o.spec, node));
      }
    }
    if (t.group === "apps") defaultWorkload(o);
    c.store.create(t, o);
  }
  c.routes.load(d.spec.routes);
  expandWorkloads(c);
  for (const ns of namespaces) c.syncPdbs(ns);
  createNodeLeases(c);
}

/**
 * Each kubelet's heartbeat Lease in kube-node-lease, as on a real cluster (`kubectl describe
 * node` reads it). Renewed once, at load: nothing in the twin expires node leases.
 */
function createNodeLeases(c: Controllers): void {
  const leases = c.store.findType("coordination.k8s.io", "v1", "leases");
  if (!leases) return;
  const renewTime = new Date(c.clock.now()).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
  for (const node of c.store.list(c.nodes)) {
    const name = node.metadata.name;
    c.store.create(leases, {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        name,
        namespace: "kube-node-lease",
        ownerReferences: [{ apiVersion: "v1", kind: "Node", name, uid: node.metadata.uid }],
      },
      spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime },
    });
  }
}

/** A pod for workload `w`'s template, owned (as controller) by `owner` of kind `ownerKind`. */
export function templatePod(w: Obj, ownerKind: string, owner: Obj): Obj {
  const tpl = rec(rec(w.spec).template);
  const meta = rec(tpl.metadata);
  return {
    metadata: {
      name: owner.metadata.name,
      namespace: owner.metadata.namespace!,
      labels: { ...(meta.labels as Record<string, string> | undefined) },
      annotations: { ...(meta.annotations as Record<string, string> | undefined) },
      ownerReferences: [{
        apiVersion: "apps/v1",
        kind: ownerKind,
        name: owner.metadata.name,
        uid: owner.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      }],
    },
    spec: { terminationGracePeriodSeconds: 30, ...clonePlain(rec(tpl.spec)) },
  };
}

const clonePlain = (v: R): R => clone(v);

/** Starts the pods a workload wants; at load time they come up Running and Ready at once. */
function expandWorkloads(c: Controllers): void {
  const t = (plural: string) => c.store.findType("apps", "v1", plural)!;
  // Owner uids that already have dependents: one pass, not one scan per workload.
  const ownersOf = (objs: readonly Obj[]) =>
    new Set(objs.flatMap((o) => (o.metadata.ownerReferences ?? []).map((r) => r.uid)));
  const withRs = ownersOf(c.store.list(t("replicasets")));
  for (const dep of c.store.list(t("deployments"))) {
    if (withRs.has(dep.metadata.uid)) continue;
    const hash = short(`${dep.metadata.namespace}/${dep.metadata.name}`, 10).replace(
      /[0-9]/g,
      (d) => "bcdfghjklm"[Number(d)]!,
    );
    const tpl = rec(rec(dep.spec).template);
    c.store.create(t("replicasets"), {
      metadata: {
        name: `${dep.metadata.name}-${hash}`,
        namespace: dep.metadata.namespace!,
        labels: { ...(rec(tpl.metadata).labels as Record<string, string>) },
        ownerReferences: [{
          apiVersion: "apps/v1",
          kind: "Deployment",
          name: dep.metadata.name,
          uid: dep.metadata.uid,
          controller: true,
        }],
      },
      spec: {
        replicas: rec(dep.spec).replicas ?? 1,
        selector: rec(dep.spec).selector,
        template: tpl,
      },
    });
  }
  const withPods = ownersOf(c.store.list(c.pods));
  const owned = (o: Obj) => withPods.has(o.metadata.uid);
  for (const kind of ["ReplicaSet", "StatefulSet"] as const) {
    for (const w of c.store.list(t(kind === "ReplicaSet" ? "replicasets" : "statefulsets"))) {
      if (owned(w)) continue;
      const replicas = Number(rec(w.spec).replicas ?? 1);
      for (let i = 0; i < replicas; i++) {
        const tpl = templatePod(w, kind, w);
        const node = c.pickNode(tpl);
        const name = kind === "StatefulSet" ? `${w.metadata.name}-${i}` : undefined;
        if (kind === "StatefulSet") {
          tpl.metadata.labels!["statefulset.kubernetes.io/pod-name"] = name!;
        }
        c.createPod(tpl, node, name, true);
      }
    }
  }
  for (const ds of c.store.list(t("daemonsets"))) {
    if (owned(ds)) continue;
    const tpl = daemonPod(ds);
    for (const node of c.store.list(c.nodes)) c.createPod(tpl, node.metadata.name, undefined, true);
  }
}
