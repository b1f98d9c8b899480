import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { planDrain } from "../../src/engine/drain_plan.ts";
import { pod } from "../_helpers/kube_builders.ts";

const base = { node: "worker-1", drainBoundSeconds: 600, partialDrainAuthorized: false };

Deno.test("planDrain() evicts replicated pods and leaves DaemonSet, mirror, terminal and terminating pods", () => {
  const plan = planDrain({
    ...base,
    pods: [
      pod("web"),
      pod("cilium", { daemonSet: true }),
      pod("kube-apiserver", { mirror: true }),
      pod("job-done", { phase: "Succeeded" }),
      pod("leaving", { deletionTimestamp: "2026-12-01T09:00:00Z" }),
    ],
  });
  assertEquals(plan.evict.map((p) => p.name), ["web"]);
  assertEquals(plan.skipped.map((s) => s.reason), [
    "DaemonSetPod",
    "MirrorPod",
    "TerminalPod",
    "AlreadyTerminating",
  ]);
  assertEquals(plan.verdict, "ok");
});

Deno.test("planDrain() refuses a drain bound shorter than an evicted pod's grace period", () => {
  const plan = planDrain({ ...base, pods: [pod("pg", { terminationGracePeriodSeconds: 1800 })] });
  assertEquals(plan.verdict, "refused");
  assertEquals(plan.blockers, [{
    pod: { namespace: "default", name: "pg" },
    reason: "GraceExceedsDrainBound",
    graceSeconds: 1800,
  }]);
  assertEquals(plan.longestGraceSeconds, 1800);
});

Deno.test("planDrain() marks a short bound 'partial' only when the plan binds a reviewed partial drain", () => {
  const plan = planDrain({
    ...base,
    partialDrainAuthorized: true,
    pods: [pod("pg", { terminationGracePeriodSeconds: 1800 })],
  });
  assertEquals(plan.verdict, "partial");
});

Deno.test("planDrain() refuses an unreplicated pod even with partial drain authorised (never forced)", () => {
  const plan = planDrain({
    ...base,
    partialDrainAuthorized: true,
    pods: [pod("bare", { owner: undefined })],
  });
  assertEquals(plan.verdict, "refused");
  assertEquals(plan.evict, []);
  assertEquals(plan.blockers[0]?.reason, "UnreplicatedPod");
});
