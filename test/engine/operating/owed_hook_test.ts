/**
 * "A post hook always runs when its pre hook was attempted", through a lost response: the step's
 * own post hook cannot go out (the journal admits nothing more while an attempt is unaccounted),
 * so it stays OWED in the journal — shown by `cairn status` and the execution report — and is sent
 * exactly once as soon as the operation is settled (accounted and classified by the recovery
 * rules), before anything else on that node; then the rollout continues.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { classifyWithBoundPolicy } from "../../../src/app/recover_wiring.ts";
import { buildStatus, statusText } from "../../../src/cli/status.ts";
import { JOBS } from "../../../src/engine/operating/hooks.ts";
import { accountAttempt } from "../../../src/engine/recovery/recover_decisions.ts";
import { uncordonOwned } from "../../../src/engine/recovery/recover_uncordon.ts";
import { inprocReport } from "../../_helpers/inproc_report.ts";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";
import { ROOT } from "../../_helpers/twin_world.ts";

const IMAGE = "quay.io/ceph/ceph:v19@sha256:" + "a".repeat(64);
const HOOKS = `  hooks:
    - name: ceph-noout
      namespace: rook-ceph
      image: ${IMAGE}
      timeoutSeconds: 300
      pre:
        command: [ceph, osd, set, noout]
      post:
        command: [ceph, osd, unset, noout]
`;

type Job = { metadata: { name: string; annotations?: Record<string, string> }; spec: unknown };

Deno.test("a post hook owed after a lost reboot response is shown while the scope is held, sent once after the operation is settled, then the rollout continues", async () => {
  const w = await startInprocWorld({
    nodes: ["worker-1", "worker-2"],
    editPlan: (t) => t + HOOKS,
    faults: [{ kind: "lose-response", point: "talos.Reboot", target: "worker-1" }],
  });
  try {
    const jobs = async () =>
      (await w.twin.kube.listObjects(JOBS, { namespace: "rook-ceph" })).items as unknown as Job[];
    const first = await w.run();
    assertEquals(first.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "unresolved", "RebootResponseLost"],
    ]);
    const opId = first.nodes[0]!.operationId!;
    const [op] = await w.operations();
    // The step's own post hook was refused by the journal: the reboot's attempt is unaccounted.
    const facts = op!.phases.filter((p) => p.kind === "fact" && p.phase.endsWith("-hook"))
      .map((p) => JSON.parse(p.detail) as Record<string, unknown>)
      .map((d) => [d["stage"], d["outcome"]]);
    assertEquals(facts, [["pre", "succeeded"], ["post", "not-sent"]]);
    assertEquals((await jobs()).map((j) => j.metadata.name.includes("-pre-")), [true]);
    assertEquals((await w.journal.hookObligations([opId])).map((o) => [o.hook, o.state]), [
      ["ceph-noout", "owed"],
    ]);

    // Status and the report show the owed post hook while the scope is held.
    const status = await buildStatus(w.journal, w.twin.clock.now());
    assertEquals(status.owedHooks?.map((h) => [h.operationId, h.machine, h.hook, h.state]), [
      [opId, "worker-1", "ceph-noout", "owed"],
    ]);
    assert(/post hook ceph-noout owed since/.test(statusText(status)), statusText(status));
    const held = await inprocReport(w, first);
    assert(
      /\| `worker-1` \| post \(owed\) \| `ceph-noout` \| +\| \*\*post hook owed\*\* \|/.test(held),
      held,
    );

    // A rerun while the operation is unresolved sends nothing: its scope is still held.
    const again = await w.run();
    assertEquals(again.nodes.map((n) => [n.node, n.reason]), [["worker-1", "OperationExists"]]);
    assertEquals((await jobs()).length, 1);
    const stoppedAt = w.twin.clock.now();

    // The reboot landed; after the settle floor a recovery-admin accounts the lost attempt and the
    // operation is classified on a completion observation.
    await w.twin.time.advanceTo(w.twin.clock.now() + 900_000);
    const cluster = {
      kube: w.twin.kube,
      talos: w.twin.talos,
      clock: w.twin.clock,
      callTimeoutMs: (ms: number) => ms,
    };
    const reboot = op!.attempts.find((a) => a.phase === "reboot")!;
    const account = () =>
      accountAttempt(w.journal, cluster, {
        operationId: opId,
        attemptId: reboot.id,
        actor: "carol@example.com",
        evidence: "worker-1 rebooted into v1.14.2 (boot id changed)",
        settleFloorMs: 30_000,
        executorStoppedAtMs: stoppedAt,
      });
    // The first recovery read starts the settle floor; the decision comes after it.
    await account().then(() => assert(false, "accounted before the settle floor"), () => {});
    await w.twin.time.advanceTo(w.twin.clock.now() + 31_000);
    await account();
    // The operation's own cordon is lifted by the recovery action the plan authorises.
    await uncordonOwned(w.journal, cluster, { operationId: opId, actor: "carol@example.com" });
    // Classified as `cairn recover --classify` classifies it, on a completion observation.
    const classified = await classifyWithBoundPolicy(w.journal, cluster, {
      clock: w.twin.clock,
      timeoutClock: w.twin.timeoutClock,
      wrap: (p) => p,
      callTimeoutMs: (ms) => ms,
    }, {
      operationId: opId,
      actor: "carol@example.com",
      policyPath: join(ROOT, "policies/home-ops.yaml"),
      writeLog: () => {},
    });
    assertEquals(classified.state, "completed");

    // Settled, the obligation is still owed: nothing has sent it yet.
    assertEquals((await w.journal.hookObligations([opId])).map((o) => o.state), ["owed"]);

    // The rollout sends it first, then goes on to worker-2.
    const resumed = await w.run();
    assertEquals(resumed.state, "completed");
    assertEquals(resumed.nodes.map((n) => [n.node, n.state]), [
      ["worker-1", "completed"],
      ["worker-2", "completed"],
    ]);
    const [ob] = await w.journal.hookObligations([opId]);
    assertEquals([ob!.state, ob!.outcome], ["discharged", "succeeded"]);
    const forW1 = (await jobs()).filter((j) =>
      j.metadata.annotations?.["cairn.dev/operation"] === opId
    );
    assertEquals(forW1.map((j) => j.metadata.name.includes("-post-")).sort(), [false, true]);
    // Before anything else on the cluster's next node: worker-2 was committed after it.
    const w2 = (await w.operations()).find((o) => o.operation.machine === "worker-2")!;
    assert(ob!.dischargedAtMs! <= w2.operation.createdAtMs);
    assert(!(await buildStatus(w.journal, w.twin.clock.now())).owedHooks);
    const report = await inprocReport(w, resumed);
    assert(
      /\| `worker-1` \| post \(owed\) \| `ceph-noout` \| `rook-ceph\/cairn-ceph-noout-post-[0-9a-f]+` \| succeeded \|/
        .test(report),
      report,
    );

    // Exactly once: another run sends nothing more.
    const count = (await jobs()).length;
    assertEquals((await w.run()).state, "completed");
    assertEquals((await jobs()).length, count);
    assertEquals(count, 4, "pre and owed post for worker-1, pre and post for worker-2");
  } finally {
    await w.close();
  }
});
