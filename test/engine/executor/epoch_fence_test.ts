/**
 * A controller carries the journal epoch it started in (engine/executor/run_plan.ts
 * `executionDeps`): when the epoch changes under it (a journal restore, which a recovery admin
 * records as a recovery entry and exit), its next act is refused `EpochSuperseded` (a commitment
 * or takeover by its token, a health round, observation or dispatch check by the epoch it
 * carries) and nothing more reaches the cluster or the journal. Only a new process, which reads
 * the new epoch, may act (docs/operation-model.md §2.8). tools/mutants/epoch.json names the
 * mutants these tests kill.
 */
import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import type { Journal } from "../../../src/ports/journal.ts";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { CairnError } from "../../../src/domain/errors.ts";
import type { ExecutorDeps } from "../../../src/engine/executor/deps.ts";
import { takeOverStale } from "../../../src/engine/executor/step_loop.ts";
import type { RolloutOutcome } from "../../../src/engine/executor/rollout.ts";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";
import { approvedPlan, committed, counterIds, T0 } from "../../_helpers/journal_world.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";

const ADMIN = { identity: "test-admin", role: "recovery-admin" as const };
const NODES = ["worker-1", "worker-2"];

/** Mints a new epoch as a restore does: recovery entered, every scope released, recovery left. */
async function restoreEpoch(j: Journal, nowMs: number): Promise<string> {
  const epoch = await j.enterRecoveryMode(ADMIN, "journal restored from a backup", nowMs);
  // Every machine the journal knows (an operation's, or one only observed) has a scope.
  const machines = new Set([...(await j.listOperations()).map((op) => op.machine), ...NODES]);
  for (const machine of machines) {
    await j.releaseRecoveryScope(machine, ADMIN, nowMs).catch(() => undefined);
  }
  // A scope a live operation holds keeps the journal in recovery mode (cairn recover's work).
  await j.exitRecoveryMode(ADMIN, nowMs).catch(() => undefined);
  return epoch;
}

/** A journal call as the table below names it: `method(machine/purpose)` and the like. */
function label(method: string, input: unknown): string {
  const x = (input ?? {}) as Record<string, unknown>;
  const what = typeof input === "string"
    ? input
    : x["machine"] && x["purpose"]
    ? `${x["machine"]}/${x["purpose"]}`
    : x["purpose"] ?? x["node"] ?? x["to"] ?? "";
  return `${method}(${String(what)})`;
}

/**
 * Runs two workers with the journal restored right after the `nth` call named `after`
 * (`label`), or, given several names, right after the last of them (each its first call: acts
 * that run side by side come in either order): returns the first act the journal refused, how
 * the run ended, and what was sent and recorded after the restore.
 */
async function restoredAfter(after: string | readonly string[], nth: number) {
  const raw = await openJournal({ url: ":memory:", ids: counterIds("t"), nowMs: 0 });
  let seen = 0;
  const awaited = new Set(typeof after === "string" ? [] : after);
  const isTheMoment = (name: string) => {
    if (typeof after === "string") return name === after && ++seen === nth;
    return awaited.delete(name) && awaited.size === 0;
  };
  const state: {
    before?: string;
    after?: string;
    sent?: string;
    refused?: string;
    head?: number;
  } = {};
  const journal = new Proxy(raw, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof v !== "function") return v;
      return async (...args: unknown[]) => {
        const name = label(String(prop), args[0]);
        const r = await Promise.resolve(v.apply(target, args)).catch((e: unknown) => {
          if (e instanceof CairnError && e.reason === "EpochSuperseded") state.refused ??= name;
          throw e;
        });
        if (isTheMoment(name)) {
          state.before = (await raw.installation()).epoch;
          state.after = await restoreEpoch(raw, 0);
          state.sent = JSON.stringify(counters());
          state.head = (await raw.events()).at(-1)!.seq;
        }
        return r;
      };
    },
  }) as Journal;
  const w = await startInprocWorld({ nodes: NODES, journal });
  const counters = () => ({
    talosMutating: w.twin.talos.stats.totalMutating,
    kubeMutating: w.twin.kube.stats.mutating,
    evictions: w.twin.kube.stats.evictions.accepted,
  });
  try {
    const end = await w.run().then((out) => out, (e: unknown) => e);
    return {
      ...state,
      end,
      sentSince: state.sent === JSON.stringify(counters()) ? "nothing" : "something",
      recordedSince: (await raw.events(state.head)).map((e) => e.kind),
      operations: (await w.operations()).map((d) => [d.operation.machine, d.operation.state]),
      worker2Installs: w.twin.cluster.nodes.get("worker-2")!.installsSinceBoot,
    };
  } finally {
    await w.close();
  }
}

Deno.test("executor: a controller started before a journal restore is refused its next act (the gate round), records nothing more and sends nothing", async () => {
  // Right after the first node's operation completes (between the two node steps), the journal
  // is restored: the epoch changes under the running controller. The first act after it is the
  // gate round before worker-2, which carries no owner token: it carries the epoch the controller
  // started in, and the journal refuses it.
  const r = await restoredAfter("transition(completed)", 1);
  assert(r.before && r.after, "the restore happened between the node steps");
  assert(r.before !== r.after, "the restore minted a new epoch");
  assertEquals(r.refused, "recordHealthRound(gate)");
  assert(r.end instanceof CairnError && r.end.reason === "EpochSuperseded", String(r.end));
  assert(r.end.message.includes(r.before), r.end.message);
  assertEquals(r.operations, [["worker-1", "completed"]], "worker-2 has no operation");
  assertEquals(r.sentSince, "nothing");
  // Nothing after the recovery exit: no round, observation or dispatch check of the old epoch.
  assertEquals(r.recordedSince, []);
  assertEquals(r.worker2Installs, 0);
});

Deno.test("executor: a controller whose epoch changed right after the commitment's evidence read is refused the commitment (not-committed, EpochSuperseded)", async () => {
  // Right after worker-2's dispatch check and its commitment evidence (read side by side, recorded
  // in either order) are both recorded: the commitment is the next act.
  const r = await restoredAfter(
    ["recordDispatchCheck(worker-2)", "recordObservation(worker-2/evidence)"],
    1,
  );
  assert(r.before, "the restore happened before worker-2's commitment");
  assert(!(r.end instanceof Error), String(r.end));
  const out = r.end as RolloutOutcome;
  assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
    ["worker-1", "completed", "CompletionObserved"],
    ["worker-2", "not-committed", "EpochSuperseded"],
  ]);
  assert(out.nodes[1]!.detail?.includes(r.before), out.nodes[1]!.detail);
  assertEquals(r.operations, [["worker-1", "completed"]], "worker-2 has no operation");
  assertEquals(r.worker2Installs, 0);
});

// Each act a controller records without an owner token, as the first act after a restore: the
// epoch it carries is refused, the run stops (EpochSuperseded) and nothing more is recorded. The
// dispatch check and the commitment's evidence are read side by side, so after the observation
// starts either may be recorded first.
const CHECK_OR_EVIDENCE = "recordDispatchCheck(worker-2) or recordObservation(worker-2/evidence)";
for (
  const [after, nth, refused] of [
    ["transition(verifying)", 1, "recordHealthRound(post-gate)"],
    ["recordHealthRound(post-gate)", 2, "startObservation(worker-1)"],
    ["startObservation(worker-1)", 8, "recordObservation(worker-1/completion)"],
    ["recordHealthRound(gate)", 2, "startObservation(worker-2)"],
    ["startObservation(worker-2)", 1, CHECK_OR_EVIDENCE],
  ] as const
) {
  Deno.test(`executor: restored right after ${after} #${nth}, the fenced controller's ${refused} is refused and it records nothing more`, async () => {
    const r = await restoredAfter(after, nth);
    assert(r.before, `no ${nth}th ${after}`);
    assert(refused.split(" or ").includes(r.refused ?? ""), `${r.refused} refused first`);
    assert(r.end instanceof CairnError && r.end.reason === "EpochSuperseded", String(r.end));
    assert(r.end.message.includes(r.before), r.end.message);
    assertEquals(r.sentSince, "nothing");
    assertEquals(r.recordedSince, []);
  });
}

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
