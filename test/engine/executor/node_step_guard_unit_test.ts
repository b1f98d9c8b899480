/**
 * The node step's own guards, in process (the twin's models, a libSQL `:memory:` journal):
 * what is never committed at the preflight, and what is never uncordoned or completed without
 * a passing verification.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import type { ClusterDescription } from "../../../src/sim/cluster_description.ts";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";

/** The cluster with worker-1 already running `version`. */
const worker1At = (version: string) => (d: ClusterDescription): ClusterDescription => ({
  ...d,
  spec: {
    ...d.spec,
    nodes: d.spec.nodes.map((n) => n.name === "worker-1" ? { ...n, talosVersion: version } : n),
  },
});

for (
  const [version, reason] of [
    ["v1.13.8", "NodeVersionUnexpected"],
    ["v1.14.2", "TargetReachedOutOfBand"],
  ] as const
) {
  Deno.test(`node step (in process): a node at ${version} is not committed (${reason}); nothing is sent to it`, async () => {
    const w = await startInprocWorld({ nodes: ["worker-1"], editCluster: worker1At(version) });
    try {
      const out = await w.run();
      assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
        ["worker-1", "not-committed", reason],
      ]);
      assertEquals(await w.journal.listOperations(), []);
      const m = w.twin.talos.stats.mutating;
      assertEquals(
        [
          m["ImageService/Pull"] ?? 0,
          m["LifecycleService/Upgrade"] ?? 0,
          m["MachineService/Reboot"] ?? 0,
        ],
        [0, 0, 0],
      );
      assertEquals(w.twin.kube.stats.byVerb["patch"] ?? 0, 0);
    } finally {
      await w.close();
    }
  });
}

Deno.test("node step (in process): a node whose verification never passes stays cordoned and is not completed", async () => {
  const w = await startInprocWorld({
    nodes: ["worker-1"],
    editPlan: (text) => {
      const long = "verify: { transportSeconds: 60, verificationSeconds: 1200 }";
      if (!text.includes(long)) throw new Error("the plan's verify deadline moved");
      return text.replace(long, "verify: { transportSeconds: 60, verificationSeconds: 300 }");
    },
    // The kubelet stays unhealthy for two hours after the reboot: far past the verify window.
    faults: [{
      kind: "service-unhealthy",
      point: "talos.service",
      target: "worker-1",
      params: { service: "kubelet", durationMs: 2 * 3_600_000 },
    }],
  });
  try {
    const out = await w.run();
    const [step] = out.nodes;
    assert(step && step.state !== "completed", JSON.stringify(step));
    const node = w.twin.store.get(w.twin.controllers.nodes, "", "worker-1")!;
    assertEquals((node.spec as { unschedulable?: boolean }).unschedulable, true);
    const [op] = await w.operations();
    assert(!op!.phases.some((p) => p.phase === "uncordon"), "an uncordon was recorded");
    assert(op!.operation.state !== "completed");
  } finally {
    await w.close();
  }
});
