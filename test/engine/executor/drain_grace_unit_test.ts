/**
 * docs/recovery.md#drain-deadlines-are-planned, "never force": the drain evicts through the
 * Eviction API with the pod's own grace period. Pods that ignore SIGTERM run their whole grace
 * period, and the drain waits for them.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";

Deno.test("node step (in process): evicted pods that ignore SIGTERM keep their whole grace period; the drain waits them out", async () => {
  const probe = await startInprocWorld({ nodes: ["worker-1"] });
  const pods = (await probe.twin.kube.listPods("worker-1")).items
    .filter((p) => !p.daemonSet && !p.mirror && p.owner !== undefined);
  await probe.close();
  const w = await startInprocWorld({
    nodes: ["worker-1"],
    faults: pods.map((p) => ({
      kind: "ignore-sigterm" as const,
      point: "kube.pod",
      target: p.name,
    })),
  });
  try {
    const out = await w.run();
    assertEquals(out.nodes.map((n) => n.state), ["completed"], JSON.stringify(out.nodes));
    const d = (await w.operations()).find((x) => x.operation.machine === "worker-1")!;
    const accepted = d.phases.filter((p) => p.phase === "drain" && p.kind === "fact")
      .map((p) => JSON.parse(p.detail) as Record<string, unknown>)
      .filter((f) => f["outcome"] === "accepted");
    assert(accepted.length >= 1, "something was evicted");
    const longest = Math.max(...pods.map((p) => p.terminationGracePeriodSeconds));
    assert(longest >= 30, `a pod with a real grace period (${longest} s)`);
    const drain = d.attempts.find((a) => a.phase === "drain")!;
    const responded = d.events.find((e) => e.kind === "response" && e.body.includes(drain.id))!;
    assert(
      responded.atMs - drain.sentAtMs >= longest * 1000,
      `drain answered after ${
        responded.atMs - drain.sentAtMs
      } ms; the longest grace is ${longest} s`,
    );
  } finally {
    await w.close();
  }
});
