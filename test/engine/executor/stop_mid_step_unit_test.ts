/**
 * An operator's stop (SIGINT/SIGTERM) in the middle of a committed step (docs/recovery.md): a stop
 * is not evidence. The drain in flight is not recorded as a transport failure — it stays
 * unaccounted (evictions already accepted go on; more may land) — the operation is recorded
 * `unresolved` with the stop as its reason, and the next run takes it over and resumes it.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";

Deno.test("a stop mid-drain leaves the drain's attempt unaccounted, records the operator's stop, and the next run resumes", async () => {
  const probe = await startInprocWorld({ nodes: ["worker-1"] });
  const pods = (await probe.twin.kube.listPods("worker-1")).items
    .filter((p) => !p.daemonSet && !p.mirror && p.owner !== undefined);
  await probe.close();
  // Pods that run their whole grace period keep the drain waiting after their evictions.
  const w = await startInprocWorld({
    nodes: ["worker-1"],
    faults: pods.map((p) => ({
      kind: "ignore-sigterm" as const,
      point: "kube.pod",
      target: p.name,
    })),
  });
  try {
    const stop = new AbortController();
    const out = await w.run({
      signal: stop.signal,
      observer: {
        // The cordon answered: the drain starts next; the operator presses Ctrl-C 5 s into it.
        onAttemptResponse: (a) => {
          if (a.phase === "cordon") {
            w.twin.sim.schedule(5_000, () => stop.abort(new Error("received SIGINT")));
          }
        },
      },
    });
    assertEquals(out.state, "stopped");
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "stopped", "StoppedByOperator"],
    ]);
    assert(/stopped by the operator \(received SIGINT\)/.test(out.nodes[0]!.detail));
    assert(/left unaccounted: drain attempt \d+;/.test(out.nodes[0]!.detail), out.nodes[0]!.detail);
    const [d] = await w.operations();
    // No response for the drain: it was neither answered nor a transport failure.
    assertEquals(d!.attempts.slice(-2).map((a) => [a.phase, a.responseClass, a.accountedBy]), [
      ["cordon", "accepted", "response"],
      ["drain", null, null],
    ]);
    assertEquals(d!.operation.state, "unresolved");
    const moved = d!.events.filter((e) => e.kind === "transition")
      .map((e) => String(JSON.parse(e.body)["reason"] ?? ""));
    assert(
      moved.some((r) => r.startsWith("StoppedByOperator: the run was stopped by the operator")),
      moved.join(" | "),
    );
    // The next run (another controller instance) takes it over and resumes it from the journal.
    const again = await w.run({ owner: "ctl_next" });
    assertEquals(
      again.nodes.map((n) => [n.node, n.state]),
      [["worker-1", "completed"]],
      JSON.stringify(again.nodes),
    );
  } finally {
    await w.close();
  }
});
