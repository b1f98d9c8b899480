import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { componentReading, componentSteps } from "../../../src/engine/k8s_upgrade/step.ts";
import { parseObjectId } from "../../../src/engine/k8s_upgrade/read_evidence.ts";
import { k8sPlan } from "../../_helpers/k8s_world.ts";

const AT = { talosVersion: "v1.36.0", talosReady: true, kubeVersion: "v1.36.0", kubeReady: true };

Deno.test("a static pod is established only at the target and ready on both sides", () => {
  assertEquals(componentReading("kube-apiserver", AT, "v1.36.0"), "established");
  // Readiness unread on one side: nothing differs, nothing is established.
  assertEquals(
    componentReading("kube-apiserver", { ...AT, kubeReady: undefined }, "v1.36.0"),
    "unreadable",
  );
  assertEquals(
    componentReading("kube-scheduler", { ...AT, talosVersion: undefined }, "v1.36.0"),
    "unreadable",
  );
  assertEquals(
    componentReading("kube-apiserver", { ...AT, talosReady: false }, "v1.36.0"),
    "contradicted",
  );
  assertEquals(
    componentReading("kube-controller-manager", { ...AT, kubeVersion: "v1.35.2" }, "v1.36.0"),
    "contradicted",
  );
});

Deno.test("a kubelet is read from its Node alone", () => {
  const node = {
    talosVersion: undefined,
    talosReady: undefined,
    kubeVersion: "v1.36.0",
    kubeReady: true,
  };
  assertEquals(componentReading("kubelet", node, "v1.36.0"), "established");
  assertEquals(
    componentReading("kubelet", { ...node, kubeReady: undefined }, "v1.36.0"),
    "unreadable",
  );
});

Deno.test("rollout order: each control-plane component on every control plane, kube-proxy, then the kubelets", async () => {
  const { plan } = await k8sPlan();
  assertEquals(componentSteps(plan).map((s) => s.key).slice(0, 4), [
    "cp-1/k8s/kube-apiserver",
    "cp-2/k8s/kube-apiserver",
    "cp-3/k8s/kube-apiserver",
    "cp-1/k8s/kube-controller-manager",
  ]);
  assertEquals(componentSteps(plan).slice(9).map((s) => s.key), [
    "cp-1/k8s/kube-proxy",
    "cp-2/k8s/kube-proxy",
    "cp-3/k8s/kube-proxy",
    "cp-1/k8s/kubelet",
    "cp-2/k8s/kubelet",
    "cp-3/k8s/kubelet",
    "worker-1/k8s/kubelet",
    "worker-2/k8s/kubelet",
    "worker-3/k8s/kubelet",
    "worker-4/k8s/kubelet",
  ]);
});

Deno.test("inventory object ids: namespaced, cluster-scoped and RBAC names with a colon", () => {
  assertEquals(parseObjectId("kube-system_coredns_apps_Deployment"), {
    ns: "kube-system",
    name: "coredns",
    group: "apps",
    kind: "Deployment",
  });
  assertEquals(
    parseObjectId("_system__node-proxier_rbac.authorization.k8s.io_ClusterRoleBinding"),
    {
      ns: "",
      name: "system:node-proxier",
      group: "rbac.authorization.k8s.io",
      kind: "ClusterRoleBinding",
    },
  );
  assertEquals(parseObjectId("kube-system_kube-proxy__ServiceAccount"), {
    ns: "kube-system",
    name: "kube-proxy",
    group: "",
    kind: "ServiceAccount",
  });
});
