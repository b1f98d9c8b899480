/**
 * An in-process crash campaign over the journal write points that lie outside a transaction
 * (`*:after-commit`: the commitment, each attempt, a takeover): at each, the controller dies (its
 * run never resumes) and a successor with a new owner starts on the same journal and cluster.
 * After each run: no node received a second install or a second reboot, every operation with an
 * unaccounted attempt is `unresolved`, nothing was uncordoned that the operation did not cordon,
 * and no node after the interrupted one was started or sent anything. The successor resumes the
 * step and completes the rollout exactly where a fresh reading decides what was in flight
 * (docs/recovery.md#resume-after-a-takeover); everywhere else it stays `unresolved`. The socket-level campaign (crash_campaign_test.ts) kills a
 * real process at every write point, transactions included; this one runs in seconds.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";

const NODES = ["worker-1", "worker-2"];
const AFTER_COMMIT = /:after-commit$/;

/** Runs the rollout, the first controller dying at the `target`-th after-commit point (0 = never). */
async function crashAt(target: number) {
  let seen = 0;
  let died = false;
  const w = await startInprocWorld({
    nodes: NODES,
    writePoint: (name) => {
      if (died || !AFTER_COMMIT.test(name) || ++seen !== target) return Promise.resolve();
      died = true;
      return new Promise<void>(() => {});
    },
  });
  const first = w.run({ owner: "ctl_a" });
  // The first controller moves virtual time itself; only let the event loop turn until it ends.
  let finished = false;
  void first.then(() => (finished = true));
  while (!died && !finished) await new Promise((r) => setTimeout(r, 0));
  const second = died ? await w.run({ owner: "ctl_b" }) : undefined;
  return { w, seen, died, second };
}

Deno.test("crash campaign (in process): the controller dies at every after-commit write point; its successor never repeats a mutation", async () => {
  const clean = await crashAt(0);
  const points = clean.seen;
  await clean.w.close();
  // A commitment and six attempts per node.
  assertEquals(points, 7 * NODES.length);
  const completedAt: number[] = [];
  for (let k = 1; k <= points; k++) {
    const { w, died, second } = await crashAt(k);
    try {
      assert(died, `point ${k} was reached`);
      for (const node of NODES) {
        const m = w.twin.talos.stats.byNode[node] ?? {};
        assert((m["LifecycleService/Upgrade"] ?? 0) <= 1, `point ${k}: ${node} installed twice`);
        assert((m["MachineService/Reboot"] ?? 0) <= 1, `point ${k}: ${node} rebooted twice`);
      }
      const ops = await w.operations();
      for (const d of ops) {
        if (d.attempts.some((a) => a.accountedBy === null)) {
          assertEquals(d.operation.state, "unresolved", `point ${k}: unaccounted attempt`);
        }
        const cordoned = d.phases.some((p) =>
          p.phase === "cordon" && p.kind === "fact" &&
          p.detail.includes('"cordonedByOperation":true')
        );
        const uncordoned = d.attempts.some((a) => a.phase === "uncordon");
        assert(!uncordoned || cordoned, `point ${k}: uncordon without its own cordon`);
      }
      // One node at a time, in plan order: nothing starts after a node that did not complete.
      const states = NODES.map((n) => ops.find((d) => d.operation.machine === n)?.operation.state);
      const found = states.findIndex((st) => st !== "completed");
      const open = found < 0 ? NODES.length : found;
      assert(states.slice(open + 1).every((st) => st === undefined), `point ${k}: ${states}`);
      const later = NODES.slice(open + 1).flatMap((n) =>
        Object.keys(w.twin.talos.stats.byNode[n] ?? {}).filter((x) => /Pull|Upgrade|Reboot/.test(x))
      );
      assertEquals(later, [], `point ${k}: a later node was sent a mutation`);
      // Resume is not rerun: the successor continues the step only when a fresh reading decides
      // what was in flight (nothing sent yet after a commitment; a drain whose pods are still
      // there); a Talos call, a cordon whose precondition still holds or an uncordon stays
      // unresolved, nothing sent.
      assert(second !== undefined, `point ${k}: no successor`);
      if (second.state === "completed") {
        completedAt.push(k);
        for (const node of NODES) {
          const m = w.twin.talos.stats.byNode[node] ?? {};
          assertEquals(m["LifecycleService/Upgrade"], 1, `point ${k}: ${node} installed once`);
          assertEquals(m["MachineService/Reboot"], 1, `point ${k}: ${node} rebooted once`);
        }
      } else {
        const halted = second.nodes.find((n) => n.state !== "completed")!;
        assertEquals(
          [halted.state, halted.reason],
          ["unresolved", "ResumeUndecided"],
          `point ${k}`,
        );
      }
    } finally {
      await w.close();
    }
  }
  // Per node: after its commitment (nothing in flight) and after its drain's attempt (the pods
  // read still on the node) the successor completes the rollout.
  assertEquals(completedAt, [1, 5, 8, 12]);
});
