/**
 * A controller carries the journal epoch it started in (engine/executor/run_plan.ts
 * `executionDeps`): when the epoch changes under it (a journal restore, which a recovery admin
 * records as a recovery entry and exit), its next commitment is refused `EpochSuperseded` and
 * nothing more reaches the cluster. Only a new process, which reads the new epoch, may act
 * (docs/operation-model.md §2.8). tools/mutants/epoch.json names the mutant this test kills.
 */
import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import type { Journal } from "../../../src/ports/journal.ts";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { CairnError } from "../../../src/domain/errors.ts";
import type { ExecutorDeps } from "../../../src/engine/executor/deps.ts";
import { takeOverStale } from "../../../src/engine/executor/step_loop.ts";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";
import { approvedPlan, committed, counterIds, T0 } from "../../_helpers/journal_world.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";

const ADMIN = { identity: "test-admin", role: "recovery-admin" as const };

/** Mints a new epoch as a restore does: recovery entered, every scope released, recovery left. */
async function restoreEpoch(j: Journal, nowMs: number): Promise<string> {
  const epoch = await j.enterRecoveryMode(ADMIN, "journal restored from a backup", nowMs);
  for (const op of await j.listOperations()) {
    await j.releaseRecoveryScope(op.machine, ADMIN, nowMs).catch(() => undefined);
  }
  await j.exitRecoveryMode(ADMIN, nowMs);
  return epoch;
}

Deno.test("executor: a controller started before a journal restore is refused its next commitment and sends nothing", async () => {
  const raw = await openJournal({ url: ":memory:", ids: counterIds("e"), nowMs: 0 });
  const seen: { restored?: { before: string; after: string }; sent?: string } = {};
  // Right after the first node's operation completes (between the two node steps), the journal
  // is restored: the epoch changes under the running controller.
  const transition: Journal["transition"] = async (input) => {
    const r = await raw.transition(input);
    if (input.to === "completed" && !seen.restored) {
      const before = (await raw.installation()).epoch;
      const after = await restoreEpoch(raw, input.nowMs);
      seen.restored = { before, after };
      seen.sent = JSON.stringify(counters());
    }
    return r;
  };
  const journal = new Proxy(raw, {
    get(target, prop) {
      if (prop === "transition") return transition;
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  const w = await startInprocWorld({ nodes: ["worker-1", "worker-2"], journal });
  /** Everything cairn sent that changes the cluster, counted at the twin. */
  const counters = () => ({
    talosMutating: w.twin.talos.stats.totalMutating,
    kubeMutating: w.twin.kube.stats.mutating,
    evictions: w.twin.kube.stats.evictions.accepted,
  });
  try {
    const out = await w.run();
    assert(seen.restored, "the restore happened between the node steps");
    assert(seen.restored.before !== seen.restored.after, "the restore minted a new epoch");
    assertEquals(out.state, "halted");
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "completed", "CompletionObserved"],
      ["worker-2", "not-committed", "EpochSuperseded"],
    ]);
    const refused = out.nodes[1]!;
    assert(refused.detail?.includes(seen.restored.before), refused.detail);
    const ops = await w.operations();
    assertEquals(ops.map((d) => d.operation.machine), ["worker-1"], "worker-2 has no operation");
    assertEquals(JSON.stringify(counters()), seen.sent, "nothing was sent after the restore");
    assertEquals(w.twin.cluster.nodes.get("worker-2")!.installsSinceBoot, 0);
  } finally {
    await w.close();
  }
});

Deno.test("executor: a takeover refused because the controller's epoch is superseded stops the run (EpochSuperseded), never a lost race", async () => {
  const j = await openJournal({ url: ":memory:", ids: counterIds("k"), nowMs: T0 });
  try {
    const plan = await approvedPlan(j);
    await committed(j, { plan: plan.digest, owner: "ctl_dead" });
    const started = (await j.installation()).epoch;
    // A recovery entry (a journal restore's) takes the live operation into the new epoch.
    const current = await j.enterRecoveryMode(ADMIN, "journal restored from a backup", T0 + 5000);
    const deps = {
      journal: j,
      epoch: started,
      owner: "ctl_b",
      clock: { now: () => T0 + 6000, sleep: () => Promise.resolve() },
      log: new MemoryLogger(),
    } as unknown as ExecutorDeps;
    await rejects(takeOverStale(deps, { digest: plan.digest }), (e: unknown) => {
      assert(e instanceof CairnError && e.reason === "EpochSuperseded", String(e));
      assert(e.message.includes(started) && e.message.includes(current), e.message);
      return true;
    });
    const ops = await j.listOperations();
    assertEquals(ops.map((o) => o.owner), [ADMIN.identity], "nothing was taken over");
  } finally {
    await j.close();
  }
});
