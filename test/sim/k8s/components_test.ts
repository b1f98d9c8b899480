/**
 * The twin's Kubernetes components (issue 14 part 3) on the in-process twin: static pods and
 * their versions on both sides, the machine configuration as Talos serves it, a configuration
 * change replacing a static pod and restarting a kubelet, kube-proxy and the bootstrap manifests
 * with Talos's managedFields, the inventory, deprecated-API requests, and the two rehearsal
 * faults (a GitOps field manager appearing, an apiserver that does not come back).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { parse } from "yaml";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import type { ClusterDescription } from "../../../src/sim/cluster_description.ts";
import type { Fault } from "../../../src/sim/faults.ts";
import { homeOps } from "../../_helpers/inproc_world.ts";

const T = { timeoutMs: 5_000 };
const PODS = { group: "", version: "v1", plural: "pods", namespaced: true };
const CM = { group: "", version: "v1", plural: "configmaps", namespaced: true };
const DEPLOY = { group: "apps", version: "v1", plural: "deployments", namespaced: true };
const DS = { group: "apps", version: "v1", plural: "daemonsets", namespaced: true };

async function twinWith(
  k8s: NonNullable<ClusterDescription["spec"]["kubernetesComponents"]>,
  faults: Fault[] = [],
) {
  const d = await homeOps();
  d.spec.kubernetesComponents = k8s;
  return startInprocTwin({ description: d, faults });
}

const COMPONENTS: NonNullable<ClusterDescription["spec"]["kubernetesComponents"]> = {
  inventory: "present",
  restartSeconds: 20,
  deprecatedApiRequests: [],
};

function image(o: Record<string, unknown> | undefined): string {
  const spec = o?.spec as { containers: { image: string }[] };
  return spec.containers[0]!.image;
}

Deno.test("control planes run static pods at the description's version, seen on both sides", async () => {
  const twin = await twinWith(COMPONENTS);
  try {
    const mirror = await twin.kube.getObject(PODS, "kube-apiserver-cp-2", "kube-system");
    assertEquals(image(mirror), "registry.k8s.io/kube-apiserver:v1.35.2");
    const status = await twin.talos.resource("10.5.0.4", {
      namespace: "k8s",
      type: "StaticPodStatuses.kubernetes.talos.dev",
      id: "kube-system/kube-scheduler-cp-2",
    }, T);
    const pod = parse(status.yamlSpec) as {
      containerStatuses: { image: string; ready: boolean }[];
    };
    assertEquals(pod.containerStatuses[0], {
      ...pod.containerStatuses[0]!,
      image: "registry.k8s.io/kube-scheduler:v1.35.2",
      ready: true,
    });
    const config = await twin.talos.resource("10.5.0.6", {
      namespace: "config",
      type: "MachineConfigs.config.talos.dev",
      id: "v1alpha1",
    }, T);
    assert(config.yamlSpec.includes("ghcr.io/siderolabs/kubelet:v1.35.2"));
    assertEquals((await twin.kube.serverVersion()).gitVersion, "v1.35.2");
    // Workers run no static pods.
    assertEquals(
      await twin.kube.getObject(PODS, "kube-apiserver-worker-1", "kube-system"),
      undefined,
    );
  } finally {
    twin.stop();
  }
});

Deno.test("a configuration naming a new image replaces the static pod; a new kubelet image restarts the kubelet", async () => {
  const twin = await twinWith(COMPONENTS);
  try {
    const node = twin.cluster.nodes.get("cp-1")!;
    const next = node.machineConfig.active
      .replace("kube-apiserver:v1.35.2", "kube-apiserver:v1.36.0")
      .replace("kubelet:v1.35.2", "kubelet:v1.36.0");
    node.applyConfiguration({ data: next, mode: "NO_REBOOT", dryRun: false, tryTimeoutMs: 0 });
    let mirror = await twin.kube.getObject(PODS, "kube-apiserver-cp-1", "kube-system");
    assertEquals(image(mirror), "registry.k8s.io/kube-apiserver:v1.36.0");
    assert(JSON.stringify(mirror?.status).includes('"type":"Ready","status":"False"'));
    await twin.clock.sleep(21_000);
    mirror = await twin.kube.getObject(PODS, "kube-apiserver-cp-1", "kube-system");
    assert(JSON.stringify(mirror?.status).includes('"type":"Ready","status":"True"'));
    assertEquals((await twin.kube.getNode("cp-1"))?.kubeletVersion, "v1.36.0");
    // The endpoint answers with the oldest ready apiserver.
    assertEquals((await twin.kube.serverVersion()).gitVersion, "v1.35.2");
  } finally {
    twin.stop();
  }
});

Deno.test("fault static-pod-not-ready: the replaced apiserver never becomes ready", async () => {
  const twin = await twinWith(COMPONENTS, [
    { kind: "static-pod-not-ready", point: "talos.staticPod", target: "cp-2" },
  ]);
  try {
    const node = twin.cluster.nodes.get("cp-2")!;
    node.applyConfiguration({
      data: node.machineConfig.active.replace("kube-apiserver:v1.35.2", "kube-apiserver:v1.36.0"),
      mode: "NO_REBOOT",
      dryRun: false,
      tryTimeoutMs: 0,
    });
    await twin.clock.sleep(600_000);
    const mirror = await twin.kube.getObject(PODS, "kube-apiserver-cp-2", "kube-system");
    assertEquals(image(mirror), "registry.k8s.io/kube-apiserver:v1.36.0");
    assert(JSON.stringify(mirror?.status).includes('"type":"Ready","status":"False"'));
  } finally {
    twin.stop();
  }
});

Deno.test("bootstrap manifests carry Talos's managedFields; the inventory lists them", async () => {
  const twin = await twinWith(COMPONENTS);
  try {
    const proxy = await twin.kube.getObject(DS, "kube-proxy", "kube-system");
    const fields = proxy?.metadata?.managedFields ?? [];
    assertEquals(fields.map((f) => [f.manager, f.operation]), [["talos", "Apply"]]);
    const inv = await twin.kube.getObject(
      CM,
      "talos-bootstrap-manifests-inventory",
      "kube-system",
    );
    assertEquals(
      Object.keys(inv?.data as Record<string, string>).sort(),
      [
        "kube-system_coredns_apps_Deployment",
        "kube-system_kube-proxy_A_ServiceAccount".replace("_A_", "__"),
        "kube-system_kube-proxy_apps_DaemonSet",
      ].sort(),
    );
    const missing = await twinWith({ ...COMPONENTS, inventory: "missing" });
    try {
      assertEquals(
        await missing.kube.getObject(CM, "talos-bootstrap-manifests-inventory", "kube-system"),
        undefined,
      );
    } finally {
      missing.stop();
    }
  } finally {
    twin.stop();
  }
});

Deno.test("fault gitops-field-manager: a GitOps manager starts owning coredns fields mid-run", async () => {
  const twin = await twinWith(COMPONENTS, [
    { kind: "gitops-field-manager", point: "kube.bootstrap", target: "coredns" },
  ]);
  try {
    const before = await twin.kube.getObject(DEPLOY, "coredns", "kube-system");
    assertEquals((before?.metadata?.managedFields ?? []).map((f) => f.manager), ["talos"]);
    const node = twin.cluster.nodes.get("cp-1")!;
    node.applyConfiguration({
      data: node.machineConfig.active.replace("kube-scheduler:v1.35.2", "kube-scheduler:v1.36.0"),
      mode: "NO_REBOOT",
      dryRun: false,
      tryTimeoutMs: 0,
    });
    const after = await twin.kube.getObject(DEPLOY, "coredns", "kube-system");
    assertEquals((after?.metadata?.managedFields ?? []).map((f) => f.manager), [
      "talos",
      "kustomize-controller",
    ]);
  } finally {
    twin.stop();
  }
});

Deno.test("requests to deprecated APIs are served as the apiserver's gauge", async () => {
  const twin = await twinWith({
    ...COMPONENTS,
    deprecatedApiRequests: [{
      group: "flowcontrol.apiserver.k8s.io",
      version: "v1beta3",
      resource: "flowschemas",
      removedRelease: "1.32",
    }],
  });
  try {
    assertEquals(await twin.kube.requestedDeprecatedApis(), [{
      group: "flowcontrol.apiserver.k8s.io",
      version: "v1beta3",
      resource: "flowschemas",
      removedRelease: "1.32",
    }]);
  } finally {
    twin.stop();
  }
});
