/**
 * `failsOnlyElsewhere`: a round that fails only on findings about other nodes than its target
 * shows nothing about the target; anything it cannot lay at one other node's door stays the
 * target's (issue 16, seed 193 of the full profile: an operator's cordon of another node).
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import type { HealthPolicy } from "../../../src/domain/health/policy_parse.ts";
import { readBinding } from "../../../src/domain/health/readers/index.ts";
import { evaluateRound, failsOnlyElsewhere } from "../../../src/domain/health/round.ts";
import type {
  BindingResult,
  Finding,
  TalosNodeObservation,
} from "../../../src/domain/health/types.ts";
import { binding, inputs, node, nodesB, NOW, versionsB } from "./fixtures.ts";

const svcB = binding({
  name: "services",
  reader: "talos-services",
  selection: { names: ["worker-1", "worker-2"] },
  predicate: { services: ["kubelet"] },
});
const etcdB = binding({
  name: "etcd",
  reader: "talos-etcd",
  selection: { names: ["cp-1", "cp-2", "cp-3"] },
  requiredCoverage: 3,
});
const policy = (...bindings: HealthPolicy["bindings"]): HealthPolicy => ({
  name: "p",
  cluster: "c",
  bindings,
  doc: undefined as never,
});
const window = { startedAtMs: NOW - 1000, deadlineMs: NOW + 30_000 };
const target = { node: "worker-1", operationOwnedCordon: true };

function round(
  p: HealthPolicy,
  nodes: ReturnType<typeof node>[],
  talosObs: TalosNodeObservation[] = [],
) {
  const ins = inputs({ "v1/Node": nodes }, { target, talosObs });
  return evaluateRound(p, window, p.bindings.map((b) => readBinding(b, ins, NOW - 1000)));
}

Deno.test("a round failing only on another node's cordon or readiness fails elsewhere", () => {
  const p = policy(nodesB, versionsB);
  const cordoned = round(p, [
    node("worker-1", { cordoned: true }),
    node("worker-2", {
      cordoned: true,
    }),
  ]);
  assertEquals([cordoned.verdict, cordoned.reason], ["fail", "NodeCordoned"]);
  assertEquals(failsOnlyElsewhere(cordoned, "worker-1"), true);
  const notReady = round(p, [node("worker-1"), node("worker-2", { ready: false })]);
  assertEquals(failsOnlyElsewhere(notReady, "worker-1"), true);
  // The same round judged for worker-2 is worker-2's own failure.
  assertEquals(failsOnlyElsewhere(notReady, "worker-2"), false);
});

/** A node's Talos reading with kubelet Running and healthy, or Failed. */
function kubelet(n: string, healthy: boolean): TalosNodeObservation {
  return {
    node: n,
    observedAtMs: NOW,
    services: [{ id: "kubelet", state: healthy ? "Running" : "Failed", healthy }],
  };
}

Deno.test("any failing finding about the target keeps the round the target's", () => {
  const p = policy(nodesB, versionsB);
  const both = round(p, [node("worker-1", { ready: false }), node("worker-2", { cordoned: true })]);
  assertEquals(failsOnlyElsewhere(both, "worker-1"), false);
  // A Talos service failing on the target while another node is cordoned.
  const svc = round(
    policy(nodesB, svcB),
    [node("worker-1"), node("worker-2", { cordoned: true })],
    [kubelet("worker-1", false), kubelet("worker-2", true)],
  );
  assertEquals([svc.verdict, failsOnlyElsewhere(svc, "worker-1")], ["fail", false]);
  // The same service failing on the other node only is elsewhere.
  const svcElsewhere = round(policy(nodesB, svcB), [node("worker-1"), node("worker-2")], [
    kubelet("worker-1", true),
    kubelet("worker-2", false),
  ]);
  assertEquals([svcElsewhere.verdict, failsOnlyElsewhere(svcElsewhere, "worker-1")], [
    "fail",
    true,
  ]);
});

Deno.test("cluster-wide findings and coverage failures are nobody's but the target's", () => {
  const member = (id: string, hostname: string) => ({ id, hostname, isLearner: false });
  const members = [member("1", "cp-1"), member("2", "cp-2"), member("3", "cp-3")];
  const obs = (n: string, id: string, errors: string[] = []) => ({
    node: n,
    observedAtMs: NOW,
    etcd: { members, memberId: id, errors, alarms: [] },
  });
  const ins = inputs({}, {
    target: { node: "cp-1", operationOwnedCordon: false },
    talosObs: [obs("cp-1", "1"), obs("cp-2", "2", ["slow disk"]), obs("cp-3", "3", ["slow"])],
  });
  const etcd = evaluateRound(policy(etcdB), window, [readBinding(etcdB, ins, NOW - 1000)]);
  // cp-2's and cp-3's members are named, but the quorum finding is about the cluster.
  assertEquals(etcd.verdict, "fail");
  assertEquals(failsOnlyElsewhere(etcd, "cp-1"), false);

  const short = binding({ name: "nodes", reader: "nodes", requiredCoverage: 5 });
  const few = round(policy(short), [node("worker-1"), node("worker-2")]);
  assertEquals([few.verdict, few.reason], ["fail", "HealthSelectionEmpty"]);
  assertEquals(failsOnlyElsewhere(few, "worker-1"), false);
});

const result = (name: string, verdict: BindingResult["verdict"], findings: Finding[]) => ({
  binding: name,
  reader: name,
  verdict,
  reason: verdict === "pass" ? "HealthCheckPassed" as const : "NodeCordoned" as const,
  message: "",
  coverage: { required: 1, observed: 1 },
  findings,
  basis: [],
  startedAtMs: NOW,
  completedAtMs: NOW,
});
const elsewhere: Finding = {
  subject: "worker-2",
  node: "worker-2",
  verdict: "fail",
  reason: "NodeCordoned",
  message: "unschedulable",
};

Deno.test("every failing binding must fail elsewhere; passing and unreadable ones do not count", () => {
  const p = policy(
    binding({ name: "a", reader: "nodes" }),
    binding({ name: "b", reader: "nodes" }),
  );
  const judge = (b: ReturnType<typeof result>) =>
    failsOnlyElsewhere(evaluateRound(p, window, [result("a", "fail", [elsewhere]), b]), "worker-1");
  assertEquals(judge(result("b", "pass", [])), true);
  assertEquals(judge(result("b", "unreadable", [])), true);
  // A workload or PDB finding names no node.
  const workload: Finding = { ...elsewhere, subject: "db/pg" };
  delete (workload as { node?: string }).node;
  assertEquals(judge(result("b", "fail", [workload])), false);
  assertEquals(judge(result("b", "fail", [])), false);
  // Rounds that did not fail fail nowhere.
  const passing = evaluateRound(p, window, [result("a", "pass", []), result("b", "pass", [])]);
  assertEquals(failsOnlyElsewhere(passing, "worker-1"), false);
  const unread = evaluateRound(p, window, [
    result("a", "unreadable", [elsewhere]),
    result("b", "pass", []),
  ]);
  assertEquals(failsOnlyElsewhere(unread, "worker-1"), false);
});
