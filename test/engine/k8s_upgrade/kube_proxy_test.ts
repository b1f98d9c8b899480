/**
 * kube-proxy in a KubernetesUpgrade on the 7-node in-process twin: moved after the control plane
 * (each control plane's `cluster.proxy.image`, then the DaemonSet by the last control plane's
 * operation), rolled by the twin's DaemonSet controller one node at a time, and observed rolled
 * before the operation completes; a kube-proxy pod that never becomes ready leaves the operation
 * not completed; a GitOps manager owning kube-proxy's containers refuses before the commitment
 * and stops the operation before the change.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { k8sRollout } from "../../_helpers/k8s_world.ts";
import type { Obj } from "../../../src/sim/kube/store.ts";
import type { InprocTwin } from "../../../src/sim/inproc/cluster.ts";

type R = Record<string, unknown>;

function proxyImage(twin: InprocTwin): string {
  const t = twin.store.findType("apps", "v1", "daemonsets")!;
  const ds = twin.store.get(t, "kube-system", "kube-proxy")!;
  const tpl = (ds.spec as R).template as { spec: { containers: { image: string }[] } };
  return tpl.spec.containers[0]!.image;
}

/** A GitOps controller's Apply entry owning kube-proxy's container image. */
function gitopsOwnsProxyImage(twin: InprocTwin): void {
  const t = twin.store.findType("apps", "v1", "daemonsets")!;
  const ds = twin.store.get(t, "kube-system", "kube-proxy")!;
  const next: Obj = structuredClone(ds);
  next.metadata.managedFields = [
    ...(ds.metadata.managedFields ?? []),
    {
      manager: "kustomize-controller",
      operation: "Apply",
      apiVersion: "apps/v1",
      fieldsType: "FieldsV1",
      fieldsV1: {
        "f:spec": {
          "f:template": {
            "f:spec": {
              "f:containers": { 'k:{"name":"kube-proxy"}': { ".": {}, "f:image": {} } },
            },
          },
        },
      },
    },
  ];
  twin.store.put(t, next);
}

/** The bootstrap inventory without kube-proxy's DaemonSet (the preflight does not read it). */
function inventoryWithoutDaemonSet(twin: InprocTwin): void {
  const t = twin.store.findType("", "v1", "configmaps")!;
  const cm = twin.store.get(t, "kube-system", "talos-bootstrap-manifests-inventory")!;
  const data = { ...(cm.data as Record<string, string>) };
  delete data["kube-system_kube-proxy_apps_DaemonSet"];
  twin.store.put(t, { ...cm, data });
}

Deno.test("kube-proxy rolls one node at a time and completes only once every pod is observed at the target", async () => {
  const w = await k8sRollout();
  try {
    // Watch the twin's pods: the most kube-proxy pods unavailable at one moment.
    const pods = w.twin.store.findType("", "v1", "pods")!;
    const down = new Set<string>();
    let most = 0;
    w.twin.store.watch(pods, (e) => {
      const p = e.object;
      if ((p.metadata.labels as R | undefined)?.["k8s-app"] !== "kube-proxy") return;
      const ready = (((p.status as R | undefined)?.conditions ?? []) as R[])
        .some((c) => c.type === "Ready" && c.status === "True");
      const gone = e.type === "DELETED";
      if (!gone && (!ready || p.metadata.deletionTimestamp)) down.add(p.metadata.name);
      else down.delete(p.metadata.name);
      most = Math.max(most, down.size);
    });
    const out = await w.run();
    assertEquals(out.state, "completed", JSON.stringify(out.nodes.at(-1)));
    assertEquals(proxyImage(w.twin), "registry.k8s.io/kube-proxy:v1.36.0");
    // maxUnavailable 1: the DaemonSet controller replaced one node's pod at a time.
    assertEquals(most, 1);
    const ops = await Promise.all(
      (await w.journal.listOperations()).map(async (o) => (await w.journal.showOperation(o.id))!),
    );
    const steps = ops.map((o) => o.operation.step);
    // After every static pod, before every kubelet.
    const first = steps.indexOf("cp-1/k8s/kube-proxy");
    assert(
      steps.slice(0, first).every((k) => /kube-(apiserver|controller-manager|scheduler)$/.test(k)),
    );
    assert(steps.slice(first + 3).every((k) => k.endsWith("/k8s/kubelet")));
    const mover = ops.find((o) => o.operation.step === "cp-3/k8s/kube-proxy")!;
    const change = mover.attempts.find((a) => a.phase === "kube-proxy-image")!;
    const seen = mover.phases.find((p) => p.phase === "component-observed")!;
    // The change's answer is not the postcondition: the rollout was observed after it, rolled.
    assert(seen.atMs > change.sentAtMs);
    const detail = JSON.stringify(seen.detail);
    assert(detail.includes("7 of 7 pod(s) at v1.36.0 and ready"), detail);
    assert(detail.includes("desired 7, updated 7, available 7"), detail);
    // `completed` is granted by the journal only on an established completion read.
    assertEquals(mover.operation.state, "completed");
    // The other control planes' operations changed their configuration, not the DaemonSet.
    for (const cp of ["cp-1", "cp-2"]) {
      const op = ops.find((o) => o.operation.step === `${cp}/k8s/kube-proxy`)!;
      assertEquals(op.attempts.map((a) => a.phase), ["component-config"]);
      assertEquals(op.operation.state, "completed");
    }
  } finally {
    await w.close();
  }
});

Deno.test("a kube-proxy pod that never becomes ready: the operation is not completed and the rollout stops before the kubelets", async () => {
  const w = await k8sRollout({
    faults: [{ kind: "daemon-pod-not-ready", point: "kube.daemonPod", target: "worker-2" }],
  });
  try {
    const out = await w.run();
    assertEquals(out.state, "halted");
    const last = out.nodes.at(-1)!;
    assertEquals([last.node, last.state, last.reason], [
      "cp-3",
      "failed",
      "VerificationHealthFailed",
    ]);
    // Both the rollout read and the post-gate (DaemonSets ready) saw it.
    assert(/not ready: kube-proxy-\w+ on worker-2/.test(last.detail), last.detail);
    assert(last.detail.includes("health=fail; postconditions=contradicted"), last.detail);
    // The template was changed, the rollout stalled at worker-2 (maxUnavailable 1).
    assertEquals(proxyImage(w.twin), "registry.k8s.io/kube-proxy:v1.36.0");
    const ops = await w.journal.listOperations();
    const proxy = ops.find((o) => o.step === "cp-3/k8s/kube-proxy")!;
    assertEquals(proxy.state, "failed");
    assert(!ops.some((o) => o.step.endsWith("/k8s/kubelet")), "no kubelet was touched");
  } finally {
    await w.close();
  }
});

Deno.test("a GitOps manager owning kube-proxy's image refuses its operation before the commitment (the inventory does not list it)", async () => {
  const w = await k8sRollout();
  try {
    inventoryWithoutDaemonSet(w.twin);
    gitopsOwnsProxyImage(w.twin);
    const out = await w.run();
    assertEquals(out.state, "refused");
    const stop = out.nodes.at(-1)!;
    assertEquals([stop.node, stop.state, stop.reason], [
      "cp-1",
      "not-committed",
      "KubeProxyOwnedElsewhere",
    ]);
    assert(
      stop.detail.includes(
        "DaemonSet kube-system/kube-proxy field .spec.template.spec.containers[name=kube-proxy]",
      ),
      stop.detail,
    );
    assert(stop.detail.includes("owned by kustomize-controller (Apply)"), stop.detail);
    // The nine static pod operations completed; no kube-proxy operation was committed.
    const ops = await w.journal.listOperations();
    assertEquals(ops.length, 9);
    assertEquals(proxyImage(w.twin), "registry.k8s.io/kube-proxy:v1.35.2");
    assertEquals(w.twin.kube.stats.mutating, 0);
  } finally {
    await w.close();
  }
});

Deno.test("a GitOps manager appearing after the DaemonSet's operation was committed stops it before the change", async () => {
  const w = await k8sRollout();
  try {
    inventoryWithoutDaemonSet(w.twin);
    let commits = 0;
    const out = await w.run({
      observer: {
        onOperationState: (e) => {
          // cp-3's fourth commitment is its kube-proxy operation (the one that moves the DaemonSet).
          if (e.node === "cp-3" && e.state === "committed" && ++commits === 4) {
            gitopsOwnsProxyImage(w.twin);
          }
        },
      },
    });
    assertEquals(out.state, "halted");
    const stop = out.nodes.at(-1)!;
    assertEquals([stop.node, stop.state, stop.reason], [
      "cp-3",
      "unresolved",
      "KubeProxyOwnedElsewhere",
    ]);
    assert(stop.detail.includes("owned by kustomize-controller"), stop.detail);
    // Its configuration was changed; the DaemonSet never was.
    assertEquals(proxyImage(w.twin), "registry.k8s.io/kube-proxy:v1.35.2");
    assertEquals(w.twin.kube.stats.mutating, 0);
    const op = (await w.journal.listOperations()).find((o) => o.step === "cp-3/k8s/kube-proxy")!;
    const shown = (await w.journal.showOperation(op.id))!;
    assertEquals(shown.attempts.map((a) => a.phase), ["component-config"]);
  } finally {
    await w.close();
  }
});
