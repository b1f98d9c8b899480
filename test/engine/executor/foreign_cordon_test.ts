/**
 * docs/recovery.md#cordon-provenance on the twin: a node someone else cordons before cairn's cordon
 * phase is recorded as not ours, is never cordoned or uncordoned by cairn, and stays cordoned.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { createClientNodeKube } from "../../../src/adapters/kube/client_node_kube.ts";
import { operationOf, phaseRecords, sent, startScenario } from "../../_helpers/scenario_world.ts";

Deno.test("a node an operator cordons while cairn installs is never cordoned nor uncordoned by cairn", async () => {
  const s = await startScenario({ nodes: ["worker-1"] });
  try {
    // The operator's `kubectl cordon` (its own field manager) lands after the gate passed and
    // the install finished, before cairn's cordon phase reads the node.
    const operator = await createClientNodeKube({
      kubeconfigPath: s.twin.kubeconfigPath!,
      fieldManager: "kubectl-cordon",
    });
    const talos = s.cluster.talos;
    const upgrade = talos.upgrade.bind(talos);
    let cordonedAtMs: number | undefined;
    talos.upgrade = async (...args: Parameters<typeof upgrade>) => {
      const r = await upgrade(...args);
      const node = await operator.getNode("worker-1");
      assertEquals((await operator.cordon("worker-1", node!.resourceVersion)).kind, "applied");
      cordonedAtMs = s.clock.now();
      await s.control.resetStats();
      return r;
    };

    await s.run();
    assert(cordonedAtMs !== undefined, "the install ran");
    const d = await operationOf(s, "worker-1");
    const cordon = phaseRecords(d, "cordon", "fact")[0]!;
    assertEquals([cordon["priorUnschedulable"], cordon["cordonedByOperation"]], [true, false]);
    assertEquals(d.attempts.filter((a) => a.phase === "cordon" || a.phase === "uncordon"), []);
    const x = await sent(s);
    assertEquals(x.kubeByVerb["patch"] ?? 0, 0, "cairn sent no cordon or uncordon patch");
    assertEquals((await s.cluster.kube.getNode("worker-1"))?.unschedulable, true);
  } finally {
    await s.stop();
  }
});
