/**
 * docs/recovery.md#the-recovery-table, row by row on the twin: the rows where a node step must stop
 * (no commitment, unresolved, failed). Each asserts the operation state, the phase facts and
 * attempts in the journal, and what was — above all, what was not — sent next.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { TAKEOVER_OWNER } from "../../../src/app/rehearsal.ts";
import { operationOf, phaseRecords, sent, startScenario } from "../../_helpers/scenario_world.ts";

const TWO = ["worker-1", "worker-2"];

Deno.test("preflight refusal: a failing gate creates no operation and sends nothing", async () => {
  const s = await startScenario({ nodes: TWO });
  try {
    // Another node's kubelet is unhealthy: the fresh gate round fails before any commitment.
    await s.control.setNode("cp-2", { services: { kubelet: { healthy: false } } });
    const out = await s.run();
    assertEquals(out.state, "halted");
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "not-committed", "GateFailed"],
    ]);
    assertEquals(await s.journal.listOperations(), []);
    const x = await sent(s);
    assertEquals([x.talosMutating, x.kubeMutating], [0, 0]);
  } finally {
    await s.stop();
  }
});

Deno.test("takeover after commitment, before the first attempt: unresolved, nothing sent", async () => {
  const s = await startScenario({ nodes: TWO, faults: ["takeover-before-attempt"] });
  try {
    const out = await s.run();
    assertEquals(out.state, "halted");
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "unresolved", "AttemptRefused"],
    ]);
    const d = await operationOf(s, "worker-1");
    assertEquals(d.operation.state, "unresolved");
    assertEquals(d.operation.owner, TAKEOVER_OWNER);
    assertEquals(d.attempts, []);
    // The intent was written before the attempt transaction was refused; nothing went out.
    assertEquals(d.phases.map((p) => `${p.phase}/${p.kind}`), ["pull/intent"]);
    assert(d.events.some((e) => e.kind === "ownership"));
    assert(d.events.some((e) => e.kind === "refusal"));
    const x = await sent(s);
    assertEquals([x.talosMutating, x.kubeMutating], [0, 0]);
    assertEquals((await s.journal.listOperations()).length, 1, "rollout halted at worker-1");
  } finally {
    await s.stop();
  }
});

Deno.test("installed, drain timed out, cordoned: unresolved with facts kept, no reinstall, no uncordon", async () => {
  const s = await startScenario({ nodes: TWO, faults: ["drain-timeout"] });
  try {
    const out = await s.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "unresolved", "DrainIncomplete"],
    ]);
    const d = await operationOf(s, "worker-1");
    assertEquals(d.operation.state, "unresolved");
    assertEquals(
      d.attempts.map((a) => `${a.phase}:${a.responseClass}:${a.accountedBy}`),
      [
        "pull:accepted:response",
        "install:accepted:response",
        "cordon:accepted:response",
        "drain:target-error:response",
      ],
    );
    assertEquals(phaseRecords(d, "cordon", "fact")[0]?.["cordonedByOperation"], true);
    const bound = phaseRecords(d, "drain", "fact").find((f) => f["boundReached"] === true);
    const remaining = bound?.["remaining"] as Array<{ pod: string }>;
    assertEquals(remaining.length, 1);
    const blocked = phaseRecords(d, "drain", "fact").filter((f) =>
      f["outcome"] === "blocked" && f["evict"] === remaining[0]!.pod
    );
    assert(blocked.length > 10, "the refused eviction was retried (never forced) until the bound");
    // The installation is kept (new default slot, fallback intact) and the node stays cordoned.
    const n = await s.control.node("worker-1");
    assertEquals([n.runningVersion, n.defaultEntry?.version, n.installsSinceBoot], [
      "v1.13.9",
      "v1.14.2",
      1,
    ]);
    assertEquals((await s.cluster.kube.getNode("worker-1"))?.unschedulable, true);
    // Running again resumes nothing: no reinstall, no uncordon to make preflight green.
    const before = await sent(s);
    const again = await s.run();
    assertEquals(again.nodes.map((x) => x.reason), ["OperationExists"]);
    const after = await sent(s);
    assertEquals([after.install, after.reboot, after.kubeByVerb["patch"]], [1, 0, 1]);
    assertEquals(after.talosMutating, before.talosMutating);
    assertEquals(after.kubeMutating, before.kubeMutating);
  } finally {
    await s.stop();
  }
});

Deno.test("installed, drain refused by planning, cordoned: unresolved, no eviction sent", async () => {
  // A drain bound below the database's 300 s grace, without a reviewed partial-drain entry.
  const s = await startScenario({
    edit: (doc) => doc.setIn(["spec", "phases", "drainTimeoutSeconds"], 120),
  });
  try {
    const out = await s.run();
    assertEquals(out.nodes.map((n) => [n.state, n.reason]), [["unresolved", "DrainPlanRefused"]]);
    const d = await operationOf(s, "worker-1");
    assertEquals(d.attempts.map((a) => a.phase), ["pull", "install", "cordon"]);
    const planned = phaseRecords(d, "drain", "fact")[0]!;
    assertEquals(planned["verdict"], "refused");
    assert(String(planned["blockers"]).includes("GraceExceedsDrainBound:300s"));
    const x = await sent(s);
    assertEquals([x.install, x.reboot, x.kubeByVerb["evict"] ?? 0, x.kubeByVerb["patch"]], [
      1,
      0,
      0,
      1,
    ]);
    assertEquals((await s.cluster.kube.getNode("worker-1"))?.unschedulable, true);
  } finally {
    await s.stop();
  }
});

Deno.test("reboot response lost: unresolved even after the node comes back at the target", async () => {
  const s = await startScenario({ nodes: TWO, faults: ["reboot-response-lost"] });
  try {
    const out = await s.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "unresolved", "RebootResponseLost"],
    ]);
    const d = await operationOf(s, "worker-1");
    const reboot = d.attempts.find((a) => a.phase === "reboot")!;
    assertEquals([reboot.responseClass, reboot.accountedBy], ["transport-failure", null]);
    // The reboot landed: the node boots the target version…
    await s.control.advance(900_000);
    const n = await s.control.node("worker-1");
    assertEquals([n.stage, n.runningVersion], ["running", "v1.14.2"]);
    // …and still nothing completes it or moves on: the lost request is not accounted.
    const again = await s.run();
    assertEquals(again.state, "halted");
    assertEquals(again.nodes.map((x) => x.reason), ["OperationExists"]);
    assertEquals((await operationOf(s, "worker-1")).operation.state, "unresolved");
    const x = await sent(s);
    assertEquals([x.install, x.reboot, x.kubeByVerb["patch"]], [1, 1, 1], "no uncordon");
    const w2 = Object.keys((await s.control.stats()).talos.byNode["worker-2"] ?? {});
    assert(w2.every((m) => /Version|ServiceList/.test(m)), `worker-2 only read: ${w2}`);
  } finally {
    await s.stop();
  }
});

Deno.test("install response lost while the installer holds the lock: exactly one install, unresolved", async () => {
  const s = await startScenario({ faults: ["install-lock-held"] });
  try {
    const out = await s.run();
    assertEquals(out.nodes.map((n) => [n.state, n.reason]), [[
      "unresolved",
      "InstallResponseLost",
    ]]);
    const d = await operationOf(s, "worker-1");
    assertEquals(d.attempts.map((a) => `${a.phase}:${a.responseClass}:${a.accountedBy}`), [
      "pull:accepted:response",
      "install:lost:null",
    ]);
    assert((await s.control.node("worker-1")).installLocked, "the installer still runs");
    await s.control.advance(900_000);
    await s.run();
    const n = await s.control.node("worker-1");
    assertEquals([n.installsSinceBoot, n.runningVersion, n.fallbackEntry?.version], [
      1,
      "v1.13.9",
      "v1.13.9",
    ]);
    const x = await sent(s);
    assertEquals([x.install, x.reboot, x.kubeMutating], [1, 0, 0]);
  } finally {
    await s.stop();
  }
});

Deno.test("boots the old version after a completed install: failed, never reinstalled", async () => {
  const s = await startScenario({ nodes: TWO, faults: ["boots-old-version"] });
  try {
    const out = await s.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "failed", "BootedOtherVersion"],
    ]);
    const d = await operationOf(s, "worker-1");
    assertEquals(d.operation.state, "failed");
    assert(d.attempts.every((a) => a.accountedBy === "response" && a.responseClass === "accepted"));
    assertEquals(d.attempts.map((a) => a.phase), ["pull", "install", "cordon", "drain", "reboot"]);
    assertEquals(phaseRecords(d, "boot-observed", "fact")[0]?.["version"], "v1.13.9");
    const n = await s.control.node("worker-1");
    assertEquals(n.runningVersion, "v1.13.9");
    assert(n.bootedSlot !== n.defaultSlot, "booted the fallback slot");
    const again = await s.run();
    assertEquals(again.nodes.map((x) => x.reason), ["OperationExists"]);
    const x = await sent(s);
    assertEquals([x.install, x.reboot, x.kubeByVerb["patch"]], [1, 1, 1]);
    assertEquals((await s.cluster.kube.getNode("worker-1"))?.unschedulable, true);
  } finally {
    await s.stop();
  }
});
