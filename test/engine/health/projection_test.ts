// Watch caches keep objects cut to what the fixed readers read (domain/health/projection.ts):
// every reader's result on cut objects equals its result on whole ones, and a reader that may
// read any field (kube-object) gets whole objects.
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { generateCluster } from "../../../src/sim/generate.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { projectObject, shapeFor } from "../../../src/domain/health/projection.ts";
import { readBinding } from "../../../src/domain/health/readers/index.ts";
import { resourceNeed, resourcesFor } from "../../../src/domain/health/resources.ts";
import { KubeEvidence } from "../../../src/engine/health/kube_evidence.ts";
import { ClusterEvidence } from "../../../src/engine/health/cluster_evidence.ts";
import { NODES } from "../../../src/adapters/kube/typed_reads.ts";
import type { KubeObjectLike } from "../../../src/domain/health/types.ts";
import { binding, inputs, NOW } from "../../domain/health/fixtures.ts";

type Obj = Record<string, unknown> & { metadata: Record<string, unknown> };
const KEYS = {
  node: "v1/Node",
  pod: "v1/Pod",
  pdb: "policy/v1/PodDisruptionBudget",
  deployment: "apps/v1/Deployment",
  statefulSet: "apps/v1/StatefulSet",
  daemonSet: "apps/v1/DaemonSet",
} as const;

function twin() {
  return startInprocTwin({
    description: generateCluster({ nodes: 12, pods: 150, pdbs: 14, seed: 3 }),
    manualTime: true,
  });
}

/** The twin's objects, whole, as a list hands them out. */
async function wholeObjects(): Promise<Record<string, Obj[]>> {
  const t = twin();
  try {
    const out: Record<string, Obj[]> = {};
    for (const key of Object.values(KEYS)) {
      const n = resourceNeed(
        key.slice(0, key.lastIndexOf("/")),
        key.slice(key.lastIndexOf("/") + 1),
      );
      out[key] = (await t.kube.listObjects(n)).items.map((o) => structuredClone(o) as Obj);
    }
    return out;
  } finally {
    t.stop();
  }
}

const rec = (v: unknown) => v as Record<string, unknown>;
const status = (o: Obj) => rec(o["status"]);
const spec = (o: Obj) => rec(o["spec"]);

/**
 * Every field a reader judges, set on some object to a value that changes its judgement, so a
 * shape that dropped the field would change a result below.
 */
function perturb(all: Record<string, Obj[]>): void {
  const nodes = all[KEYS.node]!, pods = all[KEYS.pod]!, pdbs = all[KEYS.pdb]!;
  const deployments = all[KEYS.deployment]!, daemonSets = all[KEYS.daemonSet]!;
  spec(nodes[0]!).unschedulable = true;
  spec(nodes[1]!).unschedulable = true;
  status(nodes[2]!).conditions = [{ type: "Ready", status: "False", reason: "KubeletDown" }];
  delete status(nodes[3]!).conditions;
  rec(status(nodes[4]!).nodeInfo).osImage = "Talos (v1.14.2)";
  rec(status(nodes[5]!).nodeInfo).kubeletVersion = "v1.36.0";
  rec(nodes[6]!.metadata).annotations = { "extensions.talos.dev/schematic": "a".repeat(64) };
  rec(nodes[7]!.metadata).labels = { ...rec(nodes[7]!.metadata.labels), zone: "b" };
  nodes[8]!["status"] = "not an object";
  rec(nodes[9]!.metadata).generation = 4;
  status(nodes[9]!).observedGeneration = 3;

  // Pods of Deployments on one node (DaemonSet pods are never evicted anyway).
  const onNode = (i: number) =>
    pods.filter((p) =>
      spec(p).nodeName === rec(nodes[i]!.metadata).name &&
      rec((p.metadata.ownerReferences as unknown[])[0]).kind !== "DaemonSet"
    );
  const [mirror, succeeded, unready, unscheduled, foreign] = onNode(10);
  // A mirror pod is not evicted: the budget that selects only it does not block the drain.
  rec(mirror!.metadata).annotations = { "kubernetes.io/config.mirror": "abc" };
  rec(mirror!.metadata).labels = { static: "yes" };
  pdbs.push({
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name: "static", namespace: rec(mirror!.metadata).namespace, generation: 1 },
    spec: { maxUnavailable: 0, selector: { matchLabels: { static: "yes" } } },
    status: { observedGeneration: 1, disruptionsAllowed: 0, expectedPods: 1 },
  });
  status(succeeded!).phase = "Succeeded";
  status(unready!).conditions = [{ type: "Ready", status: "False" }];
  delete spec(unscheduled!).nodeName;
  rec(foreign!.metadata).ownerReferences = [{
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    name: "x",
    uid: "u",
    controller: true,
  }];

  // Budgets: each one blocks in its own way.
  spec(pdbs[0]!).maxUnavailable = 0;
  delete spec(pdbs[0]!).minAvailable;
  spec(pdbs[1]!).minAvailable = "100%";
  spec(pdbs[2]!).minAvailable = 99;
  status(pdbs[3]!).disruptionsAllowed = 0;
  rec(pdbs[4]!.metadata).generation = 7;
  delete pdbs[5]!["status"];
  spec(pdbs[6]!).selector = null;
  spec(pdbs[7]!).unhealthyPodEvictionPolicy = "AlwaysAllow";
  spec(pdbs[8]!).unhealthyPodEvictionPolicy = "Sometimes";
  status(pdbs[9]!).currentHealthy = 0;
  status(pdbs[10]!).desiredHealthy = 5;
  status(pdbs[11]!).expectedPods = 1;
  spec(pdbs[11]!).minAvailable = 1;
  // Two budgets over one workload's pods: the Eviction API refuses such pods.
  pdbs.push({ ...structuredClone(pdbs[12]!), metadata: { ...pdbs[12]!.metadata, name: "twin" } });
  // A not-Ready pod under each budget whose unhealthy-pod policy or health counts are perturbed.
  for (const i of [7, 8, 9, 10]) {
    const app = rec(rec(spec(pdbs[i]!).selector).matchLabels).app;
    const p = pods.find((p) => rec(p.metadata.labels).app === app && spec(p).nodeName)!;
    status(p).conditions = [{ type: "Ready", status: "False" }];
  }

  rec(deployments[0]!.metadata).generation = 5;
  status(deployments[1]!).readyReplicas = 0;
  spec(deployments[2]!).replicas = 40;
  status(deployments[3]!).updatedReplicas = 0;
  status(deployments[4]!).availableReplicas = 0;
  status(deployments[5]!).replicas = 99;
  delete deployments[6]!["status"];
  status(daemonSets[0]!).numberMisscheduled = 1;
  daemonSets.push(
    ...["currentNumberScheduled", "updatedNumberScheduled", "numberReady", "numberAvailable"]
      .map((f, i) => {
        const d = structuredClone(daemonSets[0]!);
        rec(d.metadata).name = `ds-${i}`;
        status(d).numberMisscheduled = 0;
        status(d)[f] = 0;
        return d;
      }),
  );
  const sts = structuredClone(deployments[7]!);
  sts["kind"] = "StatefulSet";
  status(sts).updateRevision = "r2";
  status(sts).currentRevision = "r1";
  all[KEYS.statefulSet] = [sts];
}

const BINDINGS = [
  binding({ reader: "nodes" }),
  binding({ reader: "nodes", selection: { labelSelector: { matchLabels: { zone: "b" } } } }),
  binding({
    reader: "node-versions",
    predicate: { talosVersion: "v1.13.9", kubeletVersion: "v1.35.2", schematic: "b".repeat(64) },
  }),
  binding({
    reader: "talos-services",
    selection: { labelSelector: { matchLabels: { zone: "b" } } },
    predicate: { services: ["kubelet"] },
  }),
  binding({ reader: "talos-etcd" }),
  binding({
    reader: "workloads",
    selection: { kinds: ["Deployment", "StatefulSet", "DaemonSet"] },
  }),
  binding({
    reader: "workloads",
    selection: {
      kinds: ["Deployment"],
      labelSelector: { matchExpressions: [{ key: "app", operator: "Exists" }] },
    },
  }),
  binding({ reader: "pdb-feasibility" }),
  binding({ reader: "pdb-feasibility", failOnTemporary: false }),
  binding({ reader: "pdb-feasibility", selection: { nodes: "target" } }),
  binding({
    reader: "broker-streams",
    product: "nats-jetstream",
    selection: { namespace: "team-000", labelSelector: { matchLabels: {} } },
  }),
];

Deno.test("every fixed reader judges the cut objects as it judges the whole ones", async () => {
  const whole = await wholeObjects();
  perturb(whole);
  const cut = Object.fromEntries(
    Object.entries(whole).map(([key, items]) => {
      const shape = shapeFor(key);
      assert(shape, key);
      return [key, items.map((o) => projectObject(o as KubeObjectLike, shape))];
    }),
  );
  // The cut objects are smaller: this is what the caches gain.
  const size = (x: unknown) => JSON.stringify(x).length;
  assert(size(cut[KEYS.pod]) < size(whole[KEYS.pod]) * 0.75);
  const names = whole[KEYS.node]!.map((n) => String(n.metadata.name));
  for (const target of [undefined, { node: names[0]!, operationOwnedCordon: true }]) {
    // The perturbed nodes have no Talos reading: their Node objects' versions are judged.
    const talosObs = names.slice(8).map((node) => ({
      node,
      observedAtMs: NOW,
      version: "v1.13.9",
    }));
    const extra = { talosObs, ...(target ? { target } : {}) };
    const outcomes = new Set<string>();
    for (const b of BINDINGS) {
      const expected = readBinding(
        b,
        inputs(whole as Record<string, KubeObjectLike[]>, extra),
        NOW,
      );
      const got = readBinding(b, inputs(cut, extra), NOW);
      assertEquals(got, expected, JSON.stringify(b));
      for (const f of expected.findings) outcomes.add(f.reason);
    }
    // The perturbations reach the readers (each would pass on an untouched cluster).
    for (
      const reason of [
        "NodeCordoned",
        "NodeNotReady",
        "HealthStatusMissing",
        "NodeVersionMismatch",
        "NodeKubeletMismatch",
        "NodeSchematicMismatch",
        "WorkloadNotReady",
        "HealthGenerationStale",
        "PdbBlocksPermanently",
        "PdbBlocksTemporarily",
        "PdbMultipleMatch",
        "PdbPolicyUnknown",
      ]
    ) assert(outcomes.has(reason), reason);
  }
});

Deno.test("a cache keeps cut objects until a reader of any field needs the resource, then whole ones", async () => {
  const t = twin();
  const evidence = new KubeEvidence(t.kube, t.clock);
  try {
    const pdb = binding({ reader: "pdb-feasibility" });
    assert(resourcesFor(pdb).every((n) => n.shape !== undefined));
    await evidence.prepare(pdb);
    const pods = () => evidence.view().resource(KEYS.pod)!.items;
    assert(pods().length > 0);
    assert(pods().every((p) => (p["spec"] as Record<string, unknown>)["containers"] === undefined));
    // Watch events are cut too.
    const first = t.store.list(t.controllers.pods)[0]!;
    t.store.put(t.controllers.pods, {
      ...first,
      metadata: { ...first.metadata, labels: { a: "b" } },
    });
    const seen = () => pods().find((p) => p.metadata?.name === first.metadata.name)!;
    for (let i = 0; i < 200 && seen().metadata?.labels?.["a"] === undefined; i++) {
      await new Promise((r) => setTimeout(r, 1));
    }
    const changed = seen();
    assertEquals(changed.metadata?.labels, { a: "b" });
    assertEquals((changed["spec"] as Record<string, unknown>)["containers"], undefined);

    const image = binding({
      reader: "kube-object",
      selection: { apiVersion: "v1", kind: "Pod", namespace: "team-000" },
      predicate: { cel: "object.spec.containers.all(c, c.image != '')" },
    });
    await evidence.prepare(image);
    assert(
      pods().every((p) => Array.isArray((p["spec"] as Record<string, unknown>)["containers"])),
    );
    const r = readBinding(image, { ...inputs({}), kube: evidence.view() }, t.clock.now());
    assertEquals([r.verdict, r.reason], ["pass", "HealthCheckPassed"]);
    // A fixed reader's need later does not cut the cache again.
    await evidence.prepare(pdb);
    assert(
      pods().every((p) => Array.isArray((p["spec"] as Record<string, unknown>)["containers"])),
    );
  } finally {
    evidence.stop();
    t.stop();
  }
});

Deno.test("Talos reads go to the InternalIP the cut Node objects report", async () => {
  const t = twin();
  const asked: string[] = [];
  const talos = {
    version: (address: string) => (asked.push(address), Promise.resolve({ tag: "v1.13.9" })),
    serviceList: () => Promise.resolve([]),
    etcdMembers: () => Promise.resolve([]),
    etcdStatus: () => Promise.resolve({ memberId: "1", errors: [] }),
  };
  const evidence = new ClusterEvidence(t.kube, talos as never, t.clock);
  try {
    // A binding that judges the Talos version (only then does it read Talos).
    const b = binding({
      reader: "node-versions",
      predicate: { talosVersion: "v1.13.9", kubeletVersion: "v1.35.2" },
    });
    await evidence.prepare(b, t.clock.now() + 10_000, new AbortController().signal);
    const internal = (await t.kube.listObjects(NODES)).items.map((n) =>
      (rec(n["status"]).addresses as { type: string; address: string }[])
        .find((a) => a.type === "InternalIP")!.address
    );
    assert(internal.length > 0);
    assertEquals(asked.sort(), internal.sort());
  } finally {
    evidence.stop();
    t.stop();
  }
});
