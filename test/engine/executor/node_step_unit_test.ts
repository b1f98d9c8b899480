/**
 * The executor's node step against the twin's own models in process (`src/sim/inproc/`) and a
 * libSQL `:memory:` journal: the same executor, adapters' error mapping and journal as the
 * twin-backed scenarios, without sockets or child processes (each test runs in well under a
 * second of CPU; `bench/inproc_rollout_bench.ts` measures a 7-node rollout).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";
import { assertIntentAttemptResponse } from "../../_helpers/journal_order.ts";

const FULL = ["pull", "install", "cordon", "drain", "reboot", "uncordon"];

Deno.test("node step (in process): a clean 1-node rollout completes with intent → attempt → response in order", async () => {
  const w = await startInprocWorld({ nodes: ["worker-1"] });
  try {
    const out = await w.run();
    assertEquals(out.state, "completed");
    assertEquals(out.nodes.map((n) => `${n.node}:${n.state}:${n.reason}`), [
      "worker-1:completed:CompletionObserved",
    ]);
    const [d] = await w.operations();
    assertEquals(d!.operation.state, "completed");
    assertEquals(d!.attempts.map((a) => a.phase), FULL);
    assert(
      d!.attempts.every((a) => a.accountedBy === "response" && a.responseClass === "accepted"),
    );
    assertIntentAttemptResponse(d!);
    const n = w.twin.cluster.nodes.get("worker-1")!;
    assertEquals([n.runningVersion, n.installsSinceBoot, n.stage], ["v1.14.2", 0, "running"]);
    assertEquals(w.twin.talos.stats.mutating, {
      "ImageService/Pull": 1,
      "LifecycleService/Upgrade": 1,
      "MachineService/Reboot": 1,
    });
    assertEquals((await w.journal.verifyChain()).ok, true);
  } finally {
    await w.close();
  }
});

Deno.test("node step (in process): a clean 7-node rollout completes node by node, every attempt answered in order", async () => {
  const w = await startInprocWorld();
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
    for (const d of await w.operations()) {
      assertEquals(d.operation.state, "completed");
      assertEquals(d.attempts.map((a) => a.phase), FULL);
      assertIntentAttemptResponse(d);
    }
    // One node disrupted at a time: each reboot is sent after the previous node completed.
    const ops = await w.operations();
    const byPlanOrder = out.nodes.map((n) => ops.find((d) => d.operation.machine === n.node)!);
    for (let i = 1; i < byPlanOrder.length; i++) {
      const prevDone = byPlanOrder[i - 1]!.events.findLast((e) => e.kind === "transition")!;
      const firstAttempt = byPlanOrder[i]!.attempts[0]!;
      assert(firstAttempt.sentAtMs >= prevDone.atMs, `${byPlanOrder[i]!.operation.machine} waits`);
    }
    for (const n of w.twin.cluster.nodes.values()) {
      assertEquals([n.name, n.runningVersion, n.installsSinceBoot], [n.name, "v1.14.2", 0]);
    }
    assertEquals(w.twin.talos.stats.mutating["LifecycleService/Upgrade"], 7);
    assertEquals((await w.journal.verifyChain()).ok, true);
  } finally {
    await w.close();
  }
});

Deno.test("node step (in process): the same seed gives the same journal, byte for byte (hash-chain head)", async () => {
  const heads: string[] = [];
  for (const seed of [7, 7, 8]) {
    const w = await startInprocWorld({ nodes: ["worker-1", "cp-1"], seed });
    try {
      assertEquals((await w.run()).state, "completed");
      const chain = await w.journal.verifyChain();
      assert(chain.ok);
      heads.push(chain.head);
    } finally {
      await w.close();
    }
  }
  assertEquals(heads[0], heads[1], "a run is a function of its seed");
  assert(heads[0] !== heads[2], "another seed (other boot IDs) gives another timeline");
});
