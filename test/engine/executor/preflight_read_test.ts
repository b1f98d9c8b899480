/**
 * The node step's first read, the running Talos version before anything is committed
 * (engine/executor/node_step.ts `runningVersion`), against apid refusing it: one refused read is
 * read again on the next poll and the node goes on; a node still unreadable at the end of the
 * verify transport window is not committed (`NodeUnreadable`) and nothing is sent to it.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import type { Fault } from "../../../src/sim/faults.ts";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";
import { counterIds } from "../../_helpers/journal_world.ts";

/** worker-1's Version reads failing as `kind` says, `count` of them. */
const failing = (kind: Fault["kind"], count: number): Fault => ({
  kind,
  point: "talos.Version",
  target: "worker-1",
  count,
});

/**
 * Runs worker-1's step with `faults` armed right after the plan-level dispatch check, so the
 * first Talos version read they meet is the step's own, before its commitment.
 */
async function runWith(faults: Fault[]) {
  const raw = await openJournal({ url: ":memory:", ids: counterIds("p"), nowMs: 0 });
  let arm = () => {};
  const journal = new Proxy(raw, {
    get(target, prop) {
      if (prop === "recordDispatchCheck") {
        return async (input: Parameters<Journal["recordDispatchCheck"]>[0]) => {
          const seq = await raw.recordDispatchCheck(input);
          arm();
          arm = () => {};
          return seq;
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  const w = await startInprocWorld({ nodes: ["worker-1"], journal });
  arm = () => faults.forEach((f) => w.twin.faults.arm(f));
  try {
    const started = w.twin.clock.now();
    const out = await w.run();
    return {
      nodes: out.nodes.map((n) => [n.node, n.state, n.reason]),
      detail: out.nodes[0]?.detail ?? "",
      operations: (await w.operations()).length,
      mutating: w.twin.talos.stats.totalMutating + w.twin.kube.stats.mutating,
      failed: w.twin.faults.fired.length,
      elapsedMs: w.twin.clock.now() - started,
      transportMs: w.bound.plan.spec.phases.deadlines.verify.transportSeconds * 1000,
    };
  } finally {
    await w.close();
    await raw.close();
  }
}

Deno.test("preflight: a Talos version read that failed (deadline exceeded) is read again on the next poll; the node completes", async () => {
  const r = await runWith([failing("deadline-exceeded", 1)]);
  assertEquals(r.failed, 1, "the step's first version read failed");
  assertEquals(r.nodes, [["worker-1", "completed", "CompletionObserved"]]);
});

Deno.test("preflight: apid refusing every version read past the client's own retries holds the node one poll, then it completes", async () => {
  // The client retries an UNAVAILABLE read three times at once; the fourth read is the next poll's.
  const r = await runWith([failing("unavailable", 3)]);
  assertEquals(r.failed, 3);
  assertEquals(r.nodes, [["worker-1", "completed", "CompletionObserved"]]);
});

for (const kind of ["unavailable", "lose-response"] as const) {
  Deno.test(`preflight: a Talos version still unreadable (${kind}) at the end of the transport window is NodeUnreadable, nothing committed or sent`, async () => {
    const r = await runWith([failing(kind, 1_000_000)]);
    assertEquals(r.nodes, [["worker-1", "not-committed", "NodeUnreadable"]]);
    assertEquals([r.operations, r.mutating], [0, 0]);
    assert(r.failed > 1, `read again within the window (${r.failed} failed reads)`);
    // It waited out the window, never beyond it (each read bounded by what is left of it).
    assert(r.elapsedMs <= r.transportMs, `${r.elapsedMs} ms > the window's ${r.transportMs} ms`);
    assert(r.detail.length > 0, "the last read's error is the outcome's detail");
  });
}
