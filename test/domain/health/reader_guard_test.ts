/**
 * The readers' fail-closed edges that readers_test.ts left undefended (tools/mutants/readers.json):
 * each case is one way a reader could say "pass" about a cluster a drain or a progression would
 * hurt.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { readBinding } from "../../../src/domain/health/readers/index.ts";
import { workloadFinding } from "../../../src/domain/health/readers/workloads.ts";
import { evaluateObject } from "../../../src/domain/health/readers/kube_object.ts";
import { podFinding } from "../../../src/domain/health/readers/pdb.ts";
import { parseHealthPolicy } from "../../../src/domain/health/policy_parse.ts";
import { importTuppr } from "../../../src/domain/health/tuppr.ts";
import { binding, inputs, node, NOW, pdb, pod } from "./fixtures.ts";

const PG = { selector: { matchLabels: { app: "pg" } } };

/** worker-1 runs pg-0 (and, when asked, pg-1 too); worker-2 runs nothing selected. */
function world(
  budgets: ReturnType<typeof pdb>[],
  pods = [pod("db", "pg-0", "worker-1", { app: "pg" })],
) {
  return {
    "v1/Node": [node("worker-1"), node("worker-2")],
    "v1/Pod": pods,
    "policy/v1/PodDisruptionBudget": budgets,
  };
}

const onWorker1 = (r: ReturnType<typeof readBinding>) =>
  r.findings.filter((f) => f.subject.startsWith("worker-1")).map((f) => [f.verdict, f.reason]);

Deno.test("a PDB spec that can never allow an eviction is a permanent blocker in each of its spellings", () => {
  const status = { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 2 };
  for (
    const spec of [
      { maxUnavailable: 0 },
      { maxUnavailable: "0%" },
      { maxUnavailable: "0" },
      { minAvailable: "100%" },
      { minAvailable: 2 }, // equal to the expected pods
      { minAvailable: 3 },
    ]
  ) {
    const f = podFinding("worker-1", pod("db", "pg-0", "worker-1", { app: "pg" }), [
      pdb("db", "pg", { ...PG, ...spec }, status),
    ]);
    assertEquals([f?.verdict, f?.reason, f?.blocker], [
      "fail",
      "PdbBlocksPermanently",
      "permanent",
    ], JSON.stringify(spec));
  }
  const one = podFinding("worker-1", pod("db", "pg-0", "worker-1", { app: "pg" }), [
    pdb("db", "pg", { ...PG, minAvailable: 1 }, { ...status, disruptionsAllowed: 1 }),
  ]);
  assertEquals(one, undefined, "minAvailable below the expected pods with a disruption left");
});

Deno.test("an unready pod under IfHealthyBudget is evictable only while currentHealthy reaches desiredHealthy", () => {
  const unready = pod("db", "pg-0", "worker-1", { app: "pg" }, { ready: false });
  const budget = (currentHealthy: number) =>
    pdb("db", "pg", { ...PG, maxUnavailable: 1 }, {
      disruptionsAllowed: 0,
      currentHealthy,
      desiredHealthy: 2,
      expectedPods: 3,
    });
  assertEquals(podFinding("worker-1", unready, [budget(2)]), undefined);
  const short = podFinding("worker-1", unready, [budget(1)]);
  assertEquals([short?.verdict, short?.reason], ["fail", "PdbBlocksTemporarily"]);
});

Deno.test("operator-handled excuses exactly the named budget, and never a pod several budgets select", () => {
  const blocked = pdb("db", "pg", { ...PG, maxUnavailable: 0 }, {
    disruptionsAllowed: 0,
    currentHealthy: 2,
    desiredHealthy: 2,
    expectedPods: 2,
  });
  const handled = (namespace: string, name: string) =>
    binding({
      reader: "pdb-feasibility",
      selection: { nodes: { names: ["worker-1"] } },
      operatorHandled: [{ namespace, name, reason: "CloudNativePG moves the primary itself" }],
    });
  const excused = readBinding(handled("db", "pg"), inputs(world([blocked])), NOW);
  assertEquals(excused.verdict, "pass");
  // The same name in another namespace is another budget.
  const elsewhere = readBinding(handled("other", "pg"), inputs(world([blocked])), NOW);
  assertEquals([elsewhere.verdict, onWorker1(elsewhere)], [
    "fail",
    [["fail", "PdbBlocksPermanently"]],
  ]);
  // A second budget selecting the same pod: the Eviction API refuses the pod whatever one of
  // the budgets is marked as.
  const second = pdb("db", "pg-extra", PG, { disruptionsAllowed: 1, expectedPods: 2 });
  const both = readBinding(handled("db", "pg"), inputs(world([blocked, second])), NOW);
  assertEquals([both.verdict, onWorker1(both)], ["fail", [["fail", "PdbMultipleMatch"]]]);
});

const REPLICAS = { replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 };

function workload(kind: "Deployment" | "StatefulSet", status: Record<string, unknown>) {
  return {
    apiVersion: "apps/v1",
    kind,
    metadata: { namespace: "db", name: "pg", generation: 2 },
    spec: { replicas: 3 },
    status: { observedGeneration: 2, ...status },
  };
}

Deno.test("a Deployment or StatefulSet is ready only with every replica updated, ready and available", () => {
  for (const kind of ["Deployment", "StatefulSet"] as const) {
    assertEquals(workloadFinding(kind, workload(kind, REPLICAS)).verdict, "pass");
    for (const field of ["replicas", "updatedReplicas", "readyReplicas", "availableReplicas"]) {
      const f = workloadFinding(kind, workload(kind, { ...REPLICAS, [field]: 2 }));
      assertEquals([f.verdict, f.reason], ["fail", "WorkloadNotReady"], `${kind} ${field}`);
    }
  }
  const rolling = workloadFinding(
    "StatefulSet",
    workload("StatefulSet", { ...REPLICAS, currentRevision: "pg-1", updateRevision: "pg-2" }),
  );
  assertEquals([rolling.verdict, rolling.reason], ["fail", "WorkloadNotReady"]);
  const rolled = workloadFinding(
    "StatefulSet",
    workload("StatefulSet", { ...REPLICAS, currentRevision: "pg-2", updateRevision: "pg-2" }),
  );
  assertEquals(rolled.verdict, "pass");
});

Deno.test("a DaemonSet is ready only with every scheduled pod current, ready, available and none misscheduled", () => {
  const ds = (status: Record<string, unknown>) => ({
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { namespace: "kube-system", name: "cilium", generation: 1 },
    status: { observedGeneration: 1, ...status },
  });
  const full = {
    desiredNumberScheduled: 4,
    currentNumberScheduled: 4,
    updatedNumberScheduled: 4,
    numberReady: 4,
    numberAvailable: 4,
    numberMisscheduled: 0,
  };
  assertEquals(workloadFinding("DaemonSet", ds(full)).verdict, "pass");
  for (
    const over of [
      { currentNumberScheduled: 3 },
      { updatedNumberScheduled: 3 },
      { numberReady: 3 },
      { numberAvailable: 3 },
      { numberMisscheduled: 1 },
    ]
  ) {
    const f = workloadFinding("DaemonSet", ds({ ...full, ...over }));
    assertEquals([f.verdict, f.reason], ["fail", "WorkloadNotReady"], JSON.stringify(over));
  }
});

Deno.test("a CEL predicate that returns no boolean is unreadable, however truthy its value", () => {
  const cluster = {
    apiVersion: "ceph.rook.io/v1",
    kind: "CephCluster",
    metadata: { namespace: "rook-ceph", name: "rook-ceph", generation: 1 },
    status: { observedGeneration: 1, ceph: { health: "HEALTH_OK" }, phase: "Ready" },
  };
  for (const expr of ["status.ceph.health", "status.phase", "1", "[true]"]) {
    const f = evaluateObject("CephCluster", cluster, expr);
    assertEquals([f.verdict, f.reason], ["unreadable", "HealthCelError"], expr);
  }
  assertEquals(evaluateObject("CephCluster", cluster, "status.phase == 'Ready'").verdict, "pass");
});

Deno.test("a named object is read in its own namespace: a same-named object elsewhere says nothing", () => {
  const b = binding({
    reader: "kube-object",
    healthCheck: {
      apiVersion: "ceph.rook.io/v1",
      kind: "CephCluster",
      name: "rook-ceph",
      namespace: "rook-ceph",
      expr: "status.ceph.health in ['HEALTH_OK']",
    },
  });
  const decoy = {
    apiVersion: "ceph.rook.io/v1",
    kind: "CephCluster",
    metadata: { namespace: "sandbox", name: "rook-ceph", uid: "uid-decoy", generation: 1 },
    status: { observedGeneration: 1, ceph: { health: "HEALTH_OK" } },
  };
  const r = readBinding(b, inputs({ "ceph.rook.io/v1/CephCluster": [decoy] }), NOW);
  assertEquals([r.verdict, r.reason], ["fail", "HealthObjectNotFound"]);
});

const member = (id: string, hostname: string, isLearner = false) => ({ id, hostname, isLearner });
const MEMBERS = [member("1", "cp-1"), member("2", "cp-2"), member("3", "cp-3")];
const etcdAt = (
  n: string,
  id: string,
  over: { errors?: string[]; alarms?: string[]; members?: typeof MEMBERS; at?: number } = {},
) => ({
  node: n,
  observedAtMs: over.at ?? NOW - 1000,
  etcd: {
    members: over.members ?? MEMBERS,
    memberId: id,
    errors: over.errors ?? [],
    alarms: over.alarms ?? [],
  },
});
const etcdB = binding({
  reader: "talos-etcd",
  selection: { names: ["cp-1", "cp-2", "cp-3"] },
  requiredCoverage: 3,
});
const etcdReasons = (talosObs: ReturnType<typeof etcdAt>[] | object[], target?: string) => {
  const r = readBinding(
    etcdB,
    inputs({}, {
      talosObs: talosObs as never,
      ...(target ? { target: { node: target, operationOwnedCordon: false } } : {}),
    }),
    NOW,
  );
  return [r.verdict, [
    ...new Set(r.findings.filter((f) => f.verdict !== "pass").map((f) => f.reason)),
  ]];
};

Deno.test("etcd fails on an alarm, a member list the nodes disagree on, or a member no node reports", () => {
  const healthy = [etcdAt("cp-1", "1"), etcdAt("cp-2", "2"), etcdAt("cp-3", "3")];
  assertEquals(etcdReasons(healthy), ["pass", []]);
  assertEquals(
    etcdReasons([etcdAt("cp-1", "1", { alarms: ["NOSPACE"] }), healthy[1]!, healthy[2]!]),
    ["fail", ["EtcdAlarmActive"]],
  );
  const four = [...MEMBERS, member("4", "cp-4")];
  assertEquals(
    etcdReasons([healthy[0]!, healthy[1]!, etcdAt("cp-3", "3", { members: four })]),
    ["fail", ["EtcdMemberUnhealthy"]],
  );
  // Every selected node healthy, but the member list names a fourth member nobody reports on.
  const withGhost = ["cp-1", "cp-2", "cp-3"].map((n, i) =>
    etcdAt(n, String(i + 1), { members: four })
  );
  assertEquals(etcdReasons(withGhost), ["fail", ["EtcdMemberUnhealthy", "EtcdQuorumAtRisk"]]);
});

Deno.test("etcd without a target must keep quorum after any one member leaves", () => {
  // Two of three healthy: one more leaving loses quorum.
  const obs = [etcdAt("cp-1", "1"), etcdAt("cp-2", "2"), etcdAt("cp-3", "3", { errors: ["slow"] })];
  const [verdict, reasons] = etcdReasons(obs);
  assertEquals(verdict, "fail");
  assertEquals((reasons as string[]).includes("EtcdQuorumAtRisk"), true);
});

Deno.test("etcd is unreadable for a control plane that returned no etcd status, was not read, or was read too long ago", () => {
  const healthy = [etcdAt("cp-1", "1"), etcdAt("cp-2", "2"), etcdAt("cp-3", "3")];
  const noEtcd = { node: "cp-3", observedAtMs: NOW - 1000 };
  assertEquals(etcdReasons([healthy[0]!, healthy[1]!, noEtcd]), ["unreadable", [
    "HealthResultMissing",
  ]]);
  assertEquals(etcdReasons([healthy[0]!, healthy[1]!]), ["unreadable", ["HealthResultMissing"]]);
  const old = etcdAt("cp-3", "3", { at: NOW - 3_600_000 });
  assertEquals(etcdReasons([healthy[0]!, healthy[1]!, old]), ["unreadable", [
    "HealthObservationTooOld",
  ]]);
});

Deno.test("a Talos service passes only Running and not reported unhealthy", () => {
  const svc = binding({
    reader: "talos-services",
    selection: { names: ["cp-1"] },
    predicate: { services: ["kubelet"] },
  });
  const read = (s: Record<string, unknown>) =>
    readBinding(
      svc,
      inputs({}, {
        talosObs: [{
          node: "cp-1",
          observedAtMs: NOW,
          services: [{ id: "kubelet", ...s }],
        }] as never,
      }),
      NOW,
    ).verdict;
  assertEquals(read({ state: "Running", healthy: true }), "pass");
  assertEquals(read({ state: "Starting", healthy: true }), "fail");
  assertEquals(read({ state: "Finished" }), "fail");
  assertEquals(read({ state: "Running", healthy: false }), "fail");
});

Deno.test("a health policy whose YAML aliases expand past the budget is a problem, not an exception", () => {
  const levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
  for (let i = 1; i < 8; i++) {
    const prev = String.fromCharCode(96 + i);
    const name = String.fromCharCode(97 + i);
    levels.push(
      `${name}: &${name} [*${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}]`,
    );
  }
  const text =
    `apiVersion: cairn.dev/v1alpha1\nkind: HealthPolicy\nmetadata: {name: t, cluster: home-ops}\n${
      levels.join("\n")
    }\nspec: {bindings: []}\n`;
  const r = parseHealthPolicy(text, "bomb.yaml");
  assertEquals(r.ok, false);
  assertEquals(!r.ok && r.problems.map((p) => p.reason), ["AliasBudgetExceeded"]);
});

Deno.test("a tuppr manifest whose YAML aliases expand past the budget is a problem, not an exception", () => {
  const levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
  for (let i = 1; i < 8; i++) {
    const prev = String.fromCharCode(96 + i);
    levels.push(
      `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${
        Array(10).fill(`*${prev}`).join(", ")
      }]`,
    );
  }
  const text = `kind: TalosUpgrade\n${levels.join("\n")}\nspec: {healthChecks: []}\n`;
  const r = importTuppr(text, "tuppr.yaml", "home-ops");
  assertEquals(!r.ok && r.problems.map((p) => p.reason), ["AliasBudgetExceeded"]);
});
