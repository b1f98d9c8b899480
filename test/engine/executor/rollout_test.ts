import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { startTwinWorld } from "../../_helpers/twin_world.ts";

Deno.test("runRollout() upgrades the 7-node home-ops twin node by node to completion", async () => {
  const w = await startTwinWorld();
  try {
    const out = await w.run();
    assertEquals(out.nodes.map((n) => `${n.node}:${n.state}`), [
      "worker-1:completed",
      "worker-2:completed",
      "worker-3:completed",
      "worker-4:completed",
      "cp-1:completed",
      "cp-2:completed",
      "cp-3:completed",
    ]);
    assertEquals(out.state, "completed");
    for (const name of ["worker-1", "cp-3"]) {
      const n = await w.control.node(name);
      assertEquals(n.runningVersion, "v1.14.2");
      assertEquals(n.installsSinceBoot, 0);
    }
    const stats = await w.control.stats();
    assertEquals(
      stats.talos.mutating["LifecycleService/Upgrade"] ??
        stats.talos.mutating["/machine.LifecycleService/Upgrade"],
      7,
    );
    // Every attempt has an intent before it and a response after it, in order.
    for (const op of await w.journal.listOperations()) {
      assertEquals(op.state, "completed");
      const d = (await w.journal.showOperation(op.id))!;
      assert(
        d.attempts.every((a) => a.accountedBy === "response" && a.responseClass === "accepted"),
      );
      const phases = d.attempts.map((a) => a.phase);
      assertEquals(phases, ["pull", "install", "cordon", "drain", "reboot", "uncordon"]);
    }
    assertEquals((await w.journal.verifyChain()).ok, true);
  } finally {
    await w.stop();
  }
});
