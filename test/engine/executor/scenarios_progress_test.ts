/**
 * docs/recovery.md#the-recovery-table, on the twin: the rows where the step keeps waiting or goes
 * on (completed with every attempt accounted, slow drain with remaining pods recorded, a service
 * check failing before the deadline) and the deadline variant that fails.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import type { OperationDetail } from "../../../src/ports/journal.ts";
import { operationOf, phaseRecords, sent, startScenario } from "../../_helpers/scenario_world.ts";

function verifyRounds(d: OperationDetail) {
  return d.events.filter((e) => e.kind === "health-round").map((e) => ({
    seq: e.seq,
    atMs: e.atMs,
    ...(JSON.parse(e.body) as { purpose: string; verdict: string }),
  })).filter((r) => r.purpose === "verify");
}

Deno.test("completed: every attempt accounted, completion observed after the last accounting", async () => {
  const s = await startScenario();
  try {
    const out = await s.run();
    assertEquals(out.nodes.map((n) => [n.state, n.reason]), [["completed", "CompletionObserved"]]);
    const d = await operationOf(s, "worker-1");
    assertEquals(d.attempts.map((a) => `${a.phase}:${a.responseClass}:${a.accountedBy}`), [
      "pull:accepted:response",
      "install:accepted:response",
      "cordon:accepted:response",
      "drain:accepted:response",
      "reboot:accepted:response",
      "uncordon:accepted:response",
    ]);
    const kinds = d.events.map((e) => e.kind);
    const lastResponse = kinds.lastIndexOf("response");
    const completed = d.events.findIndex((e) =>
      e.kind === "transition" && e.body.includes("completed")
    );
    assert(lastResponse >= 0 && completed > lastResponse, "completion after the last accounting");
    assert(
      kinds.slice(lastResponse, completed).includes("observation"),
      "a completion observation between the last accounting and the transition",
    );
    const x = await sent(s);
    assertEquals([x.pull, x.install, x.reboot, x.kubeByVerb["patch"]], [1, 1, 1, 2]);
    assertEquals((await s.cluster.kube.getNode("worker-1"))?.unschedulable, false);
  } finally {
    await s.stop();
  }
});

Deno.test("slow termination within the bound: evictions recorded with grace deadlines, drain completes", async () => {
  const s = await startScenario({ faults: ["drain-slow-termination"] });
  try {
    const out = await s.run();
    assertEquals(out.nodes.map((n) => n.state), ["completed"], JSON.stringify(out.nodes));
    const d = await operationOf(s, "worker-1");
    const accepted = phaseRecords(d, "drain", "fact").filter((f) => f["outcome"] === "accepted");
    assert(accepted.length >= 3);
    assert(accepted.every((f) => typeof f["graceDeadlineMs"] === "number"));
    const drain = d.attempts.find((a) => a.phase === "drain")!;
    const responded = d.events.find((e) => e.kind === "response" && e.body.includes(drain.id))!;
    // Pods ran their whole grace period (30 s at least) before the drain counted as done.
    assert(responded.atMs - drain.sentAtMs >= 30_000, `${responded.atMs - drain.sentAtMs} ms`);
    assertEquals(drain.responseClass, "accepted");
  } finally {
    await s.stop();
  }
});

Deno.test("drain partly complete under a reviewed partial-drain entry: remaining pods and grace deadlines recorded", async () => {
  const s = await startScenario({
    faults: ["drain-slow-termination"],
    edit: (doc) => {
      doc.setIn(["spec", "phases", "drainTimeoutSeconds"], 120);
      doc.addIn(["spec", "recovery"], {
        action: "partialDrain",
        reviewedBy: "bob@example.com",
        maxRemainingPods: 1,
        justification: "the database primary finishes its shutdown during the reboot window",
      });
    },
  });
  try {
    const out = await s.run();
    const d = await operationOf(s, "worker-1");
    const facts = phaseRecords(d, "drain", "fact");
    assertEquals(facts[0]?.["verdict"], "partial");
    const bound = facts.find((f) => f["boundReached"] === true)!;
    const remaining = bound["remaining"] as Array<
      { pod: string; terminating: boolean; graceDeadlineMs: number | null }
    >;
    assertEquals(remaining.map((r) => [r.pod, r.terminating]), [["database/postgres18-1", true]]);
    const evicted = facts.find((f) =>
      f["evict"] === "database/postgres18-1" && f["outcome"] === "accepted"
    )!;
    assertEquals(remaining[0]!.graceDeadlineMs, evicted["graceDeadlineMs"]);
    const drain = d.attempts.find((a) => a.phase === "drain")!;
    assertEquals(drain.responseClass, "accepted");
    assert(remaining[0]!.graceDeadlineMs! > drain.sentAtMs + 120_000, "grace outlasts the bound");
    assertEquals(out.nodes.map((n) => n.state), ["completed"]);
  } finally {
    await s.stop();
  }
});

Deno.test("service check failing before the deadline: keeps verifying, does not advance, then completes", async () => {
  const s = await startScenario({
    nodes: ["worker-1", "worker-2"],
    faults: ["service-check-failing"],
  });
  try {
    const out = await s.run();
    assertEquals(out.nodes.map((n) => n.state), ["completed", "completed"]);
    const d = await operationOf(s, "worker-1");
    const rounds = verifyRounds(d);
    const failing = rounds.filter((r) => r.verdict === "fail");
    assert(failing.length >= 2, "verification went on while the check failed");
    const uncordon = d.attempts.find((a) => a.phase === "uncordon")!;
    const bootAt = d.phases.find((p) => p.phase === "boot-observed")!.atMs;
    // kubelet is unhealthy for 600 s after boot: nothing advanced before it recovered.
    assert(uncordon.sentAtMs >= bootAt + 600_000 - 5_000, `${uncordon.sentAtMs - bootAt} ms`);
    const lastFail = failing[failing.length - 1]!;
    assert(d.events.find((e) => e.kind === "attempt" && e.seq > lastFail.seq), "uncordon after");
    const w2 = await operationOf(s, "worker-2");
    assert(w2.operation.createdAtMs > uncordon.sentAtMs, "the next node waited");
  } finally {
    await s.stop();
  }
});

Deno.test("service check still failing at the verification deadline: failed, the cordon is left", async () => {
  const s = await startScenario({
    nodes: ["worker-1", "worker-2"],
    faults: ["service-check-failing-past-deadline"],
  });
  try {
    const out = await s.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "failed", "VerificationHealthFailed"],
    ]);
    const d = await operationOf(s, "worker-1");
    assertEquals(d.operation.state, "failed");
    assert(d.attempts.every((a) => a.accountedBy === "response"));
    const rounds = verifyRounds(d);
    assert(rounds.every((r) => r.verdict === "fail"));
    assert(rounds[rounds.length - 1]!.atMs - rounds[0]!.atMs >= 1_200_000 - 60_000);
    const x = await sent(s);
    assertEquals([x.install, x.reboot, x.kubeByVerb["patch"]], [1, 1, 1], "no uncordon");
    assertEquals((await s.journal.listOperations()).length, 1, "rollout halted at worker-1");
  } finally {
    await s.stop();
  }
});
