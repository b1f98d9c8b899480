import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { readBinding } from "../../../src/domain/health/readers/index.ts";
import { binding, inputs, node, NOW, pdb, pod } from "./fixtures.ts";

const deployment = (generation: number, observedGeneration: number, ready = 3) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: {
    namespace: "default",
    name: "web",
    uid: "uid-web",
    resourceVersion: "55",
    generation,
  },
  spec: { replicas: 3 },
  status: {
    observedGeneration,
    replicas: 3,
    updatedReplicas: 3,
    readyReplicas: ready,
    availableReplicas: ready,
  },
});

Deno.test("workloads reader fails a Deployment whose status is from an older generation", () => {
  const b = binding({ reader: "workloads", selection: { kinds: ["Deployment"] } });
  const r = readBinding(b, inputs({ "apps/v1/Deployment": [deployment(4, 3)] }), NOW);
  assertEquals(r.verdict, "fail");
  assertEquals(r.reason, "HealthGenerationStale");
  assertEquals(r.basis[0]?.generation, 4);
  assertEquals(r.basis[0]?.observedGeneration, 3);
  assertEquals(r.basis[0]?.uid, "uid-web");
  const ok = readBinding(b, inputs({ "apps/v1/Deployment": [deployment(4, 4)] }), NOW);
  assertEquals(ok.verdict, "pass");
  const short = readBinding(b, inputs({ "apps/v1/Deployment": [deployment(4, 4, 2)] }), NOW);
  assertEquals([short.verdict, short.reason], ["fail", "WorkloadNotReady"]);
});

Deno.test("workloads reader reports a workload without status as unreadable, never pass", () => {
  const b = binding({ reader: "workloads", selection: { kinds: ["StatefulSet"] } });
  const sts = { metadata: { namespace: "db", name: "pg", generation: 1 }, spec: { replicas: 1 } };
  const r = readBinding(b, inputs({ "apps/v1/StatefulSet": [sts] }), NOW);
  assertEquals([r.verdict, r.reason], ["unreadable", "HealthStatusMissing"]);
});

const ceph = (status?: Record<string, unknown>) => ({
  apiVersion: "ceph.rook.io/v1",
  kind: "CephCluster",
  metadata: {
    namespace: "rook-ceph",
    name: "rook-ceph",
    uid: "uid-ceph",
    resourceVersion: "9",
    generation: 2,
  },
  spec: {},
  ...(status ? { status } : {}),
});
const cephBinding = binding({
  reader: "kube-object",
  healthCheck: {
    apiVersion: "ceph.rook.io/v1",
    kind: "CephCluster",
    name: "rook-ceph",
    namespace: "rook-ceph",
    expr: "status.ceph.health in ['HEALTH_OK']",
  },
});

Deno.test("CEL reader reports a custom resource with no status as unreadable, never pass", () => {
  // A predicate that would be true on tuppr's empty status map must not pass here.
  const lenient = binding({
    reader: "kube-object",
    healthCheck: { apiVersion: "ceph.rook.io/v1", kind: "CephCluster", expr: "!has(status.ceph)" },
  });
  const r = readBinding(lenient, inputs({ "ceph.rook.io/v1/CephCluster": [ceph()] }), NOW);
  assertEquals([r.verdict, r.reason], ["unreadable", "HealthStatusMissing"]);
});

Deno.test("CEL reader binds object and status as tuppr does and checks observedGeneration", () => {
  const key = "ceph.rook.io/v1/CephCluster";
  const ok = ceph({ observedGeneration: 2, ceph: { health: "HEALTH_OK" } });
  assertEquals(readBinding(cephBinding, inputs({ [key]: [ok] }), NOW).verdict, "pass");
  const warn = ceph({ observedGeneration: 2, ceph: { health: "HEALTH_WARN" } });
  const w = readBinding(cephBinding, inputs({ [key]: [warn] }), NOW);
  assertEquals([w.verdict, w.reason], ["fail", "HealthCheckFailed"]);
  const old = ceph({ observedGeneration: 1, ceph: { health: "HEALTH_OK" } });
  assertEquals(
    readBinding(cephBinding, inputs({ [key]: [old] }), NOW).reason,
    "HealthGenerationStale",
  );
  const absent = readBinding(cephBinding, inputs({ [key]: [ceph({ phase: "Ready" })] }), NOW);
  assertEquals([absent.verdict, absent.reason], ["unreadable", "HealthCelError"]);
  const missing = readBinding(cephBinding, inputs({ [key]: [] }), NOW);
  assertEquals([missing.verdict, missing.reason], ["fail", "HealthObjectNotFound"]);
  const byObject = binding({
    reader: "kube-object",
    selection: { apiVersion: "ceph.rook.io/v1", kind: "CephCluster" },
    predicate: { cel: "object.metadata.name == 'rook-ceph' && status.ceph.health == 'HEALTH_OK'" },
  });
  assertEquals(readBinding(byObject, inputs({ [key]: [ok] }), NOW).verdict, "pass");
});

Deno.test("readers are unreadable on a stale or disconnected cache, whatever the content", () => {
  const b = binding({ reader: "nodes" });
  const stale = {
    items: [node("cp-1")],
    freshness: { state: "stale" as const, syncedAtMs: NOW - 1000, staleSinceMs: NOW - 10 },
  };
  const r = readBinding(b, inputs({ "v1/Node": stale }), NOW);
  assertEquals([r.verdict, r.reason], ["unreadable", "HealthCacheStale"]);
  const old = {
    items: [node("cp-1")],
    freshness: { state: "live" as const, confirmedAtMs: NOW - 120_000 },
  };
  assertEquals(readBinding(b, inputs({ "v1/Node": old }), NOW).reason, "HealthObservationTooOld");
});

Deno.test("nodes reader tolerates only the named target's operation-owned cordon", () => {
  const b = binding({ reader: "nodes" });
  const nodes = [node("cp-1"), node("worker-1", { cordoned: true })];
  assertEquals(readBinding(b, inputs({ "v1/Node": nodes }), NOW).reason, "NodeCordoned");
  const owned = inputs({ "v1/Node": nodes }, {
    target: { node: "worker-1", operationOwnedCordon: true },
  });
  assertEquals(readBinding(b, owned, NOW).verdict, "pass");
  const notOwned = inputs({ "v1/Node": nodes }, {
    target: { node: "worker-1", operationOwnedCordon: false },
  });
  assertEquals(readBinding(b, notOwned, NOW).reason, "NodeCordoned");
  const other = inputs({ "v1/Node": nodes }, {
    target: { node: "cp-1", operationOwnedCordon: true },
  });
  assertEquals(readBinding(b, other, NOW).reason, "NodeCordoned");
  const down = [node("cp-1", { ready: false })];
  assertEquals(readBinding(b, inputs({ "v1/Node": down }), NOW).reason, "NodeNotReady");
});

function pdbWorld(budget: ReturnType<typeof pdb>) {
  return {
    "v1/Node": [node("worker-1"), node("worker-2"), node("worker-3")],
    "v1/Pod": [
      pod("db", "pg-0", "worker-1", { app: "pg" }),
      pod("db", "pg-1", "worker-2", { app: "pg" }),
      pod("web", "web-0", "worker-3", { app: "web" }),
      pod("kube-system", "cilium-x", "worker-3", { app: "pg" }, { daemonSet: true }),
    ],
    "policy/v1/PodDisruptionBudget": [budget],
  };
}

function perNode(r: ReturnType<typeof readBinding>) {
  return Object.fromEntries(
    r.findings.map((f) => [f.subject.split(" ")[0], [f.verdict, f.reason, f.blocker]]),
  );
}

Deno.test("a PDB with disruptionsAllowed 0 blocks only the nodes whose pods it matches", () => {
  const b = binding({ reader: "pdb-feasibility" });
  const budget = pdb("db", "pg", { selector: { matchLabels: { app: "pg" } }, maxUnavailable: 1 }, {
    disruptionsAllowed: 0,
    currentHealthy: 1,
    desiredHealthy: 1,
    expectedPods: 2,
  });
  const r = readBinding(b, inputs(pdbWorld(budget)), NOW);
  assertEquals(r.verdict, "fail");
  assertEquals(perNode(r), {
    "worker-1": ["fail", "PdbBlocksTemporarily", "temporary"],
    "worker-2": ["fail", "PdbBlocksTemporarily", "temporary"],
    "worker-3": ["pass", "HealthCheckPassed", undefined],
  });
  const target = binding({ reader: "pdb-feasibility", selection: { nodes: "target" } });
  const t3 = readBinding(
    target,
    inputs(pdbWorld(budget), { target: { node: "worker-3", operationOwnedCordon: false } }),
    NOW,
  );
  assertEquals(t3.verdict, "pass");
  assert(t3.basis.some((x) => x.kind === "Node" && x.name === "worker-3"));
});

Deno.test("PDB feasibility shows permanent and temporary blockers apart", () => {
  const b = binding({ reader: "pdb-feasibility", failOnTemporary: false });
  const strict = pdb("db", "pg", { selector: { matchLabels: { app: "pg" } }, minAvailable: 2 }, {
    disruptionsAllowed: 0,
    currentHealthy: 2,
    desiredHealthy: 2,
    expectedPods: 2,
  });
  const r = readBinding(b, inputs(pdbWorld(strict)), NOW);
  assertEquals(perNode(r)["worker-1"], ["fail", "PdbBlocksPermanently", "permanent"]);
  const zero = pdb("db", "pg", { selector: { matchLabels: { app: "pg" } }, maxUnavailable: 0 }, {
    disruptionsAllowed: 0,
    currentHealthy: 2,
    desiredHealthy: 2,
    expectedPods: 2,
  });
  assertEquals(
    perNode(readBinding(b, inputs(pdbWorld(zero)), NOW))["worker-2"]?.[1],
    "PdbBlocksPermanently",
  );
  const temp = pdb("db", "pg", { selector: { matchLabels: { app: "pg" } }, maxUnavailable: 1 }, {
    disruptionsAllowed: 0,
    currentHealthy: 1,
    desiredHealthy: 1,
    expectedPods: 2,
  });
  const t = readBinding(b, inputs(pdbWorld(temp)), NOW);
  assertEquals(t.verdict, "pass"); // reported, not failed, with failOnTemporary: false
  assertEquals(perNode(t)["worker-1"], ["pass", "PdbBlocksTemporarily", "temporary"]);
});

Deno.test("PDB feasibility honours observedGeneration and unhealthyPodEvictionPolicy", () => {
  const b = binding({ reader: "pdb-feasibility", selection: { nodes: { names: ["worker-1"] } } });
  const lagging = pdb("db", "pg", { selector: { matchLabels: { app: "pg" } }, maxUnavailable: 1 }, {
    disruptionsAllowed: 1,
    currentHealthy: 2,
    desiredHealthy: 1,
    expectedPods: 2,
  }, 3);
  const lag = { ...lagging, status: { ...lagging.status, observedGeneration: 2 } };
  assertEquals(readBinding(b, inputs(pdbWorld(lag)), NOW).reason, "HealthGenerationStale");
  // pg-0 unready, budget exhausted: evictable only with AlwaysAllow.
  const world = (policy?: string) => {
    const w = pdbWorld(pdb("db", "pg", {
      selector: { matchLabels: { app: "pg" } },
      maxUnavailable: 1,
      ...(policy ? { unhealthyPodEvictionPolicy: policy } : {}),
    }, { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 2 }));
    w["v1/Pod"][0] = pod("db", "pg-0", "worker-1", { app: "pg" }, { ready: false });
    return w;
  };
  assertEquals(readBinding(b, inputs(world("AlwaysAllow")), NOW).verdict, "pass");
  assertEquals(readBinding(b, inputs(world("IfHealthyBudget")), NOW).verdict, "pass"); // 1 >= 1
  assertEquals(readBinding(b, inputs(world("Sometimes")), NOW).reason, "PdbPolicyUnknown");
  const two = pdbWorld(
    pdb("db", "pg2", { selector: { matchLabels: { app: "pg" } } }, { disruptionsAllowed: 1 }),
  );
  two["policy/v1/PodDisruptionBudget"].push(
    pdb("db", "pg", { selector: { matchLabels: { app: "pg" } } }, { disruptionsAllowed: 1 }),
  );
  assertEquals(readBinding(b, inputs(two), NOW).reason, "PdbMultipleMatch");
  const noStatus = pdbWorld(
    pdb("db", "pg", { selector: { matchLabels: { app: "pg" } } }, undefined),
  );
  assertEquals(readBinding(b, inputs(noStatus), NOW).verdict, "unreadable");
});

const member = (id: string, hostname: string, isLearner = false) => ({ id, hostname, isLearner });
const MEMBERS = [member("1", "cp-1"), member("2", "cp-2"), member("3", "cp-3")];
const etcdObs = (n: string, id: string, errors: string[] = [], members = MEMBERS) => ({
  node: n,
  observedAtMs: NOW - 1000,
  etcd: { members, memberId: id, errors, alarms: [] },
});

Deno.test("etcd reader requires healthy members, no learners, and quorum without the target", () => {
  const b = binding({
    reader: "talos-etcd",
    selection: { names: ["cp-1", "cp-2", "cp-3"] },
    requiredCoverage: 3,
  });
  const healthy = [etcdObs("cp-1", "1"), etcdObs("cp-2", "2"), etcdObs("cp-3", "3")];
  assertEquals(readBinding(b, inputs({}, { talosObs: healthy }), NOW).verdict, "pass");
  const sick = [etcdObs("cp-1", "1"), etcdObs("cp-2", "2", ["slow disk"]), etcdObs("cp-3", "3")];
  const withTarget = inputs({}, {
    talosObs: sick,
    target: { node: "cp-1", operationOwnedCordon: false },
  });
  const r = readBinding(b, withTarget, NOW);
  assertEquals(r.verdict, "fail");
  assert(r.findings.some((f) => f.reason === "EtcdQuorumAtRisk"));
  const learner = MEMBERS.map((m, i) => i === 2 ? member("3", "cp-3", true) : m);
  const l = [
    etcdObs("cp-1", "1", [], learner),
    etcdObs("cp-2", "2", [], learner),
    etcdObs("cp-3", "3", [], learner),
  ];
  assert(
    readBinding(b, inputs({}, { talosObs: l }), NOW).findings.some((f) =>
      f.reason === "EtcdLearnerPresent"
    ),
  );
  const missing = readBinding(b, inputs({}, { talosObs: healthy.slice(0, 2) }), NOW);
  assertEquals(missing.verdict, "unreadable");
  const timedOut = [...healthy.slice(0, 2), {
    node: "cp-3",
    observedAtMs: NOW,
    error: { reason: "HealthReadTimedOut" as const, message: "deadline" },
  }];
  assertEquals(
    readBinding(b, inputs({}, { talosObs: timedOut }), NOW).reason,
    "HealthReadTimedOut",
  );
});

Deno.test("services and version readers compare each node with the expectation", () => {
  const svc = binding({
    reader: "talos-services",
    selection: { names: ["cp-1"] },
    predicate: { services: ["etcd", "kubelet"] },
  });
  const obs = (healthy: boolean) => [{
    node: "cp-1",
    observedAtMs: NOW,
    services: [{ id: "etcd", state: "Running", healthy: true }, {
      id: "kubelet",
      state: "Running",
      healthy,
    }],
  }];
  assertEquals(readBinding(svc, inputs({}, { talosObs: obs(true) }), NOW).verdict, "pass");
  assertEquals(
    readBinding(svc, inputs({}, { talosObs: obs(false) }), NOW).reason,
    "TalosServiceUnhealthy",
  );
  const ver = binding({
    reader: "node-versions",
    predicate: { talosVersion: "v1.14.2", kubeletVersion: "v1.35.2" },
  });
  const r = readBinding(ver, inputs({ "v1/Node": [node("worker-1")] }), NOW);
  assertEquals([r.verdict, r.reason], ["fail", "NodeVersionMismatch"]);
  const t = [{ node: "worker-1", observedAtMs: NOW, version: "v1.14.2" }];
  assertEquals(
    readBinding(ver, inputs({ "v1/Node": [node("worker-1")] }, { talosObs: t }), NOW).verdict,
    "pass",
  );
});

Deno.test("node-versions: a Talos reading is the basis only of a check that judged it", () => {
  const services = [{ node: "worker-1", observedAtMs: NOW, services: [] }];
  const withTalos = [{ node: "worker-1", observedAtMs: NOW, version: "v1.14.2" }];
  const sources = (predicate: Record<string, string>, talosObs: typeof withTalos) =>
    readBinding(
      binding({ reader: "node-versions", predicate }),
      inputs({ "v1/Node": [node("worker-1")] }, { talosObs }),
      NOW,
    ).basis.map((x) => x.source);
  // Another binding's Talos reading of the node (its services) is not this result's basis.
  assertEquals(sources({ kubeletVersion: "v1.35.2" }, services as never), ["watch-cache"]);
  assertEquals(sources({ kubeletVersion: "v1.35.2" }, withTalos), ["watch-cache"]);
  assertEquals(sources({ talosVersion: "v1.14.2" }, withTalos), ["watch-cache", "talos"]);
});

Deno.test("a selection with fewer subjects than the binding's requiredCoverage fails, even if all pass", () => {
  const b = binding({ reader: "nodes", requiredCoverage: 3 });
  const two = readBinding(b, inputs({ "v1/Node": [node("cp-1"), node("worker-1")] }), NOW);
  assertEquals([two.verdict, two.reason, two.coverage], [
    "fail",
    "HealthSelectionEmpty",
    { required: 3, observed: 2 },
  ]);
  const none = readBinding(b, inputs({ "v1/Node": [] }), NOW);
  assertEquals([none.verdict, none.reason], ["fail", "HealthSelectionEmpty"]);
  const three = [node("cp-1"), node("worker-1"), node("worker-2")];
  assertEquals(readBinding(b, inputs({ "v1/Node": three }), NOW).verdict, "pass");
});

Deno.test("nodes reader reports a node without status conditions as unreadable, never pass", () => {
  const b = binding({ reader: "nodes" });
  const { status: _status, ...bare } = node("worker-1");
  const r = readBinding(b, inputs({ "v1/Node": [node("cp-1"), bare] }), NOW);
  assertEquals([r.verdict, r.reason], ["unreadable", "HealthStatusMissing"]);
});
