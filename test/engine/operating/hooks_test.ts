/**
 * Node hooks on the in-process twin: each hook Job is a journaled mutation (intent, attempt,
 * response) with its observed completion as the phase's fact; a failing pre hook holds the node
 * before anything touches it (no pull, no cordon) and its post hook still runs; both appear in the
 * execution report with their Job's outcome.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";
import { inprocReport } from "../../_helpers/inproc_report.ts";
import { JOBS } from "../../../src/engine/operating/hooks.ts";

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

function hookFacts(phases: ReadonlyArray<{ phase: string; kind: string; detail: string }>) {
  return phases.filter((p) => p.kind === "fact" && p.phase.endsWith("-hook"))
    .map((p) => JSON.parse(p.detail) as Record<string, unknown>)
    .map((d) => [d["stage"], d["hook"], d["outcome"]]);
}

Deno.test("hooks run around each node step as journaled mutations with their Job's completion", async () => {
  const w = await startInprocWorld({ nodes: ["worker-1", "worker-2"], editPlan: (t) => t + HOOKS });
  try {
    const out = await w.run();
    assertEquals(out.state, "completed");
    for (const op of await w.operations()) {
      const phases = op.attempts.map((a) => a.phase);
      // The pre hook's attempt comes first, the post hook's after the uncordon.
      assertEquals(phases[0], "pre-hook");
      assertEquals(phases.at(-1), "post-hook");
      assertEquals(phases.indexOf("post-hook"), phases.lastIndexOf("uncordon") + 1);
      assert(op.attempts.every((a) => a.responseClass === "accepted"));
      assertEquals(hookFacts(op.phases), [
        ["pre", "ceph-noout", "succeeded"],
        ["post", "ceph-noout", "succeeded"],
      ]);
    }
    const jobs = await w.twin.kube.listObjects(JOBS, { namespace: "rook-ceph" });
    assertEquals(jobs.items.length, 4);
    const commands = jobs.items.map((j) =>
      // deno-lint-ignore no-explicit-any
      ((j as any).spec.template.spec.containers[0].command as string[]).join(" ")
    ).sort();
    assertEquals(commands, [
      "ceph osd set noout",
      "ceph osd set noout",
      "ceph osd unset noout",
      "ceph osd unset noout",
    ]);
  } finally {
    await w.close();
  }
});

Deno.test("a failing pre hook holds the node before cordon; its post hook still runs; the report shows both", async () => {
  const w = await startInprocWorld({
    nodes: ["worker-1", "worker-2"],
    editPlan: (t) => t + HOOKS,
    faults: [{ kind: "job-fails", point: "kube.job", target: "ceph-noout" }],
  });
  try {
    const out = await w.run();
    assertEquals(out.state, "halted");
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "unresolved", "HookFailed"],
    ]);
    const [op] = await w.operations();
    // Nothing but the two hook Jobs was sent: no pull, no install, no cordon.
    assertEquals(op!.attempts.map((a) => [a.phase, a.responseClass]), [
      ["pre-hook", "accepted"],
      ["post-hook", "accepted"],
    ]);
    assertEquals(hookFacts(op!.phases), [
      ["pre", "ceph-noout", "failed"],
      ["post", "ceph-noout", "succeeded"],
    ]);
    const node = await w.twin.kube.getNode("worker-1");
    assertEquals(node?.unschedulable, false);
    assertEquals(w.twin.talos.stats.totalMutating, 0);
    const report = await inprocReport(w, out);
    assert(report.includes("## Node hooks"), report);
    assert(
      /\| `worker-1` \| pre \| `ceph-noout` \| `rook-ceph\/cairn-ceph-noout-pre-[0-9a-f]+` \| \*\*failed\*\* \| Failed: BackoffLimitExceeded/
        .test(report),
      report,
    );
    assert(
      /\| `worker-1` \| post \| `ceph-noout` \| `rook-ceph\/cairn-ceph-noout-post-[0-9a-f]+` \| succeeded \| Complete/
        .test(report),
      report,
    );
  } finally {
    await w.close();
  }
});

Deno.test("a hook Job that never finishes is unresolved at its deadline, never a pass", async () => {
  const w = await startInprocWorld({
    nodes: ["worker-1"],
    editPlan: (t) => t + HOOKS,
    faults: [{ kind: "job-hangs", point: "kube.job", target: "ceph-noout" }],
  });
  try {
    const out = await w.run();
    assertEquals(out.nodes.map((n) => [n.state, n.reason]), [["unresolved", "HookUnresolved"]]);
    const [op] = await w.operations();
    assertEquals(hookFacts(op!.phases), [
      ["pre", "ceph-noout", "unresolved"],
      ["post", "ceph-noout", "succeeded"],
    ]);
  } finally {
    await w.close();
  }
});
