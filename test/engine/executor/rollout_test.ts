import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { startTwinWorld } from "../../_helpers/twin_world.ts";
import type { OperationMilestone } from "../../../src/engine/executor/deps.ts";

Deno.test("runRollout() upgrades the 7-node home-ops twin node by node to completion", async () => {
  const w = await startTwinWorld();
  try {
    const milestones: OperationMilestone[] = [];
    const responses: string[] = [];
    const rounds: string[] = [];
    const out = await w.run({
      observer: {
        onOperationState: (m) => milestones.push(m),
        onAttemptResponse: (a) => responses.push(`${a.phase}:${a.responseClass}`),
        onHealthRound: (r) => rounds.push(`${r.purpose}:${r.verdict}`),
      },
    });
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
    // The executor tells its observer each milestone, in journal order, after it is recorded:
    // per node committed, a state after each of the six responses, verifying, completed.
    for (const op of await w.journal.listOperations()) {
      const seen = milestones.filter((m) => m.operationId === op.id);
      assert(seen.every((m) => m.node === op.machine));
      assertEquals(seen.length, 9, op.machine);
      assertEquals(seen[0]!.state, "committed");
      assertEquals(seen.slice(-2).map((m) => m.state), ["verifying", "completed"]);
    }
    assertEquals(responses.length, 7 * 6);
    assert(responses.every((r) => r.endsWith(":accepted")));
    // Rounds repeat until they pass (verification while the node reboots, the gates while the
    // cluster settles); every node passed its post-gate once.
    assertEquals(rounds.filter((r) => r === "post-gate:pass").length, 7);
    for (const purpose of ["gate", "verify", "post-gate"]) {
      assert(rounds.some((r) => r.startsWith(`${purpose}:`)), purpose);
    }
  } finally {
    await w.stop();
  }
});
