/**
 * A KubernetesUpgrade rehearsed on the 7-node in-process twin (issue 14 must-show): every
 * control-plane component one node at a time, then every kubelet, each an operation with a
 * pre-pull and a configuration change through the mutation path, each component observed at the
 * target version on both sides; the two rehearsal faults (a GitOps field manager appearing
 * mid-run, an apiserver that does not come back on one node) stop the rollout where they must.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { workingTreeBoundFiles } from "../../../src/adapters/repo/bound_file_reader.ts";
import { startInprocRollout } from "../../../src/app/inproc_rollout.ts";
import { homeOps } from "../../_helpers/inproc_world.ts";
import { k8sRollout } from "../../_helpers/k8s_world.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";
import { ROOT } from "../../_helpers/twin_world.ts";

const PODS = { group: "", version: "v1", plural: "pods", namespaced: true };
const DAEMONSETS = { group: "apps", version: "v1", plural: "daemonsets", namespaced: true };

Deno.test("a Kubernetes minor rehearsed on the 7-node twin: every component observed at v1.36.0", async () => {
  const w = await k8sRollout();
  try {
    const out = await w.run();
    assertEquals(out.state, "completed", JSON.stringify(out.nodes.at(-1)));
    // 3 static pods × 3 control planes, kube-proxy on each control plane, then 7 kubelets.
    assertEquals(out.nodes.length, 19);
    assert(out.nodes.every((n) => n.state === "completed"));
    const order = out.nodes.map((n) => n.node);
    assertEquals(order.slice(0, 12), [
      "cp-1",
      "cp-2",
      "cp-3",
      "cp-1",
      "cp-2",
      "cp-3",
      "cp-1",
      "cp-2",
      "cp-3",
      "cp-1",
      "cp-2",
      "cp-3",
    ]);
    // kube-proxy rolled: the DaemonSet's template, status and every pod at the target.
    const ds = (await w.twin.kube.getObject(DAEMONSETS, "kube-proxy", "kube-system"))!;
    const dsSpec = ds.spec as { template: { spec: { containers: { image: string }[] } } };
    assertEquals(dsSpec.template.spec.containers[0]!.image, "registry.k8s.io/kube-proxy:v1.36.0");
    const st = ds.status as Record<string, number>;
    assertEquals(
      [
        st.observedGeneration,
        st.desiredNumberScheduled,
        st.updatedNumberScheduled,
        st.numberAvailable,
      ],
      [ds.metadata!.generation, 7, 7, 7],
    );
    const proxies = (await w.twin.kube.listPods(undefined, {
      namespace: "kube-system",
      labelSelector: "k8s-app=kube-proxy",
    })).items;
    assertEquals(proxies.length, 7);
    assert(proxies.every((p) => p.ready));
    for (const p of proxies) {
      const raw = (await w.twin.kube.getObject(PODS, p.name, "kube-system"))!;
      const image = (raw.spec as { containers: { image: string }[] }).containers[0]!.image;
      assertEquals(image, "registry.k8s.io/kube-proxy:v1.36.0", p.name);
    }
    for (const cp of ["cp-1", "cp-2", "cp-3"]) {
      for (const c of ["kube-apiserver", "kube-controller-manager", "kube-scheduler"]) {
        const pod = await w.twin.kube.getObject(PODS, `${c}-${cp}`, "kube-system");
        const image = (pod?.spec as { containers: { image: string }[] }).containers[0]!.image;
        assertEquals(image, `registry.k8s.io/${c}:v1.36.0`);
      }
    }
    for (const n of (await w.twin.kube.listNodes()).items) {
      assertEquals(n.kubeletVersion, "v1.36.0");
    }
    assertEquals((await w.twin.kube.serverVersion()).gitVersion, "v1.36.0");
    // Each operation: one pull and one configuration change, each accounted; its component
    // observed; the completion read established it.
    const ops = await Promise.all(
      (await w.journal.listOperations()).map(async (o) => (await w.journal.showOperation(o.id))!),
    );
    assertEquals(ops.length, 19);
    for (const op of ops) {
      const proxy = op.operation.step.endsWith("/k8s/kube-proxy");
      // kube-proxy is not pre-pulled; the last control plane's operation changes the DaemonSet.
      assertEquals(
        op.attempts.map((a) => [a.phase, a.responseClass]),
        proxy
          ? [
            ["component-config", "accepted"],
            ...(op.operation.step === "cp-3/k8s/kube-proxy"
              ? [["kube-proxy-image", "accepted"]]
              : []),
          ]
          : [
            ["pull", "accepted"],
            ["component-config", "accepted"],
          ],
        op.operation.step,
      );
      const observed = op.phases.filter((p) => p.phase === "component-observed");
      assertEquals(observed.length, 1);
      assert(JSON.stringify(observed[0]!.detail).includes("v1.36.0"));
      // `completed` is granted by the journal only on an established completion read.
      assertEquals(op.operation.state, "completed");
    }
    // 16 pulls and 19 applies to the twin's Talos; one Kubernetes write, kube-proxy's image.
    assertEquals(w.twin.talos.stats.totalMutating, 35);
    assertEquals(w.twin.kube.stats.mutating, 1);
  } finally {
    await w.close();
  }
});

Deno.test("a GitOps field manager appearing mid-run refuses the next commitment, naming object, field and both managers", async () => {
  const w = await k8sRollout({
    faults: [{ kind: "gitops-field-manager", point: "kube.bootstrap", target: "coredns" }],
  });
  try {
    const out = await w.run();
    assertEquals(out.state, "refused");
    assertEquals(out.nodes.map((n) => [n.node, n.state]), [
      ["cp-1", "completed"],
      ["cp-2", "not-committed"],
    ]);
    const stop = out.nodes[1]!;
    assertEquals(stop.reason, "BootstrapOwnershipOverlap");
    assert(stop.detail.includes("Deployment kube-system/coredns"), stop.detail);
    assert(stop.detail.includes("field .spec.replicas"), stop.detail);
    assert(stop.detail.includes("owned by talos and by kustomize-controller"), stop.detail);
    // Nothing was sent after the refusal: one pull and one apply, to cp-1 only.
    assertEquals(w.twin.talos.stats.totalMutating, 2);
  } finally {
    await w.close();
  }
});

Deno.test("an apiserver that does not come back on one node fails its operation and stops the rollout there", async () => {
  const w = await k8sRollout({
    faults: [{ kind: "static-pod-not-ready", point: "talos.staticPod", target: "cp-2" }],
  });
  try {
    const out = await w.run();
    assertEquals(out.state, "halted");
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["cp-1", "completed", "CompletionObserved"],
      ["cp-2", "failed", "ComponentVersionContradicted"],
    ]);
    assert(out.nodes[1]!.detail.includes("kube-apiserver v1.36.0 not ready"), out.nodes[1]!.detail);
    // cp-3 and every kubelet were never touched.
    assertEquals((await w.twin.kube.getNode("cp-3"))?.kubeletVersion, "v1.35.2");
    assertEquals(w.twin.talos.stats.totalMutating, 4);
  } finally {
    await w.close();
  }
});

Deno.test("nodes on mixed Talos versions refuse the rollout before any commitment; nothing is sent", async () => {
  const w = await k8sRollout({
    edit: (d) => {
      d.spec.nodes[5]!.talosVersion = "v1.14.2";
    },
  });
  try {
    const out = await w.run();
    assertEquals(out.state, "refused");
    assertEquals(out.nodes[0]!.reason, "KubernetesMixedTalosVersions");
    assert(out.nodes[0]!.detail.includes("worker-3=v1.14.2"), out.nodes[0]!.detail);
    assertEquals(await w.journal.listOperations(), []);
    assertEquals(w.twin.talos.stats.totalMutating + w.twin.kube.stats.mutating, 0);
  } finally {
    await w.close();
  }
});

Deno.test("an OS rollout left partial in the journal refuses the Kubernetes upgrade before any commitment", async () => {
  const w = await k8sRollout();
  try {
    // A TalosUpgrade on the same cluster and journal: worker-1 upgraded, worker-2 never back.
    const talosPlan = join(ROOT, "plans/talos-v1.14.2.yaml");
    const os = await startInprocRollout({
      description: await homeOps(),
      twin: w.twin,
      journal: w.journal,
      planBytes: await Deno.readFile(talosPlan),
      planFile: talosPlan,
      authority: { files: workingTreeBoundFiles(talosPlan) },
      log: new MemoryLogger(),
      faults: [{ kind: "no-return-from-reboot", point: "talos.boot", target: "worker-2" }],
    });
    const osOut = await os.run();
    assertEquals(osOut.state, "halted");
    const before = w.twin.talos.stats.totalMutating;
    const out = await w.run();
    assertEquals(out.state, "refused");
    assertEquals(out.nodes[0]!.reason, "KubernetesOsRolloutPartial");
    // Both facts of the journal: the held operation and the plan stopped part-way.
    assert(out.nodes[0]!.detail.includes("on worker-2 is unresolved"), out.nodes[0]!.detail);
    assert(
      out.nodes[0]!.detail.includes("talos-v1.14.2 completed 1 of 7 nodes"),
      out.nodes[0]!.detail,
    );
    assert(
      out.nodes[0]!.detail.includes("KubernetesMixedTalosVersions") ||
        out.nodes[0]!.detail.includes("mixed Talos versions"),
      out.nodes[0]!.detail,
    );
    assertEquals(w.twin.talos.stats.totalMutating, before, "nothing sent");
  } finally {
    await w.close();
  }
});

Deno.test("a controller stopped mid-operation: the next one takes the operation over as unresolved and never reruns it", async () => {
  const w = await k8sRollout();
  try {
    const stop = new AbortController();
    const first = await w.run({
      signal: stop.signal,
      observer: {
        // Stop right after the first configuration change was accepted, before it is observed.
        onAttemptResponse: (a) => {
          if (a.phase === "component-config") stop.abort();
        },
      },
    });
    assertEquals(first.state, "stopped");
    const sent = w.twin.talos.stats.totalMutating;
    assertEquals(sent, 2);
    const second = await w.run({ owner: "ctl_next" });
    assertEquals(second.state, "halted");
    assertEquals(second.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["cp-1", "unresolved", "OperationExists"],
    ]);
    const [op] = await w.journal.listOperations();
    assertEquals([op!.state, op!.owner], ["unresolved", "ctl_next"]);
    assertEquals(w.twin.talos.stats.totalMutating, sent, "resume is not rerun: nothing sent");
  } finally {
    await w.close();
  }
});
