/**
 * The journal's typed read models over real journals (libSQL and PostgreSQL, whose plan history is
 * read in one REPEATABLE READ snapshot): what a report and status read of a
 * plan comes back typed and complete (operations with phases, attempts, responses, observations
 * and transitions; health rounds with per-binding results and reader labels; refusals; evidence
 * and dispatch checks; slot holdings with their release), with no table or column names.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { openJournal } from "../../../src/adapters/journal/by_url.ts";
import {
  approvedPlan,
  APPROVER,
  attemptInput,
  committed,
  CONTROLLER,
  counterIds,
  observe,
  T0,
} from "../../_helpers/journal_world.ts";
import {
  type JournalStoreKind,
  LIBSQL_MEMORY,
  postgresStore,
} from "../../_helpers/journal_stores.ts";
import { sharedPostgres } from "../../_helpers/postgres.ts";

const STORES: readonly JournalStoreKind[] = [LIBSQL_MEMORY, postgresStore(await sharedPostgres())];

for (const store of STORES) {
  const journal = async () =>
    await openJournal({ url: (await store.fresh()).url, ids: counterIds("h"), nowMs: T0 });

  Deno.test(`${store.name}: planHistory() returns a plan's operations with their phases, attempts, responses, observations and transitions`, async () => {
    const j = await journal();
    try {
      const plan = await approvedPlan(j);
      const { op, token, evidence } = await committed(j, { plan: plan.digest, at: T0 + 2000 });
      await j.recordPhase({
        operationId: op.id,
        token,
        phase: "install",
        kind: "intent",
        detail: { rpc: "LifecycleService.Upgrade" },
        nowMs: T0 + 2500,
      });
      const att = await j.beginAttempt(attemptInput(op.id, token, evidence, T0 + 3000));
      assert(att.ok);
      await j.recordResponse({
        attemptId: att.attempt.id,
        token,
        responseClass: "accepted",
        detail: "exit 0",
        nowMs: T0 + 4000,
      });
      await j.recordHealthRound({
        cluster: "home-ops",
        operationId: op.id,
        purpose: "post-gate",
        startedAtMs: T0 + 5000,
        finishedAtMs: T0 + 5000,
        results: [{
          binding: "drain-feasible",
          reader: "pdb-feasibility",
          outcome: "pass",
          reason: "HealthCheckPassed",
          objectUid: "pdb-1",
          objectRef: "PodDisruptionBudget apps/web",
          resourceVersion: "7",
          observedAtMs: T0 + 5000,
        }],
      });
      const done = await observe(j, {
        machine: "worker-1",
        purpose: "completion",
        digest: "v1.14.2",
        at: T0 + 6000,
        plan: plan.digest,
        op: op.id,
      });
      await j.transition({
        operationId: op.id,
        token,
        to: "verifying",
        reason: "sent",
        nowMs: T0 + 6500,
      });
      await j.transition({
        operationId: op.id,
        token,
        to: "completed",
        observationId: done.id,
        reason: "postconditions hold",
        nowMs: T0 + 7000,
      });

      const h = (await j.planHistory(plan.digest))!;
      assertEquals([h.plan.name, h.plan.approvedAtMs], ["talos-v1.14.2", T0 + 1000]);
      assertEquals(h.plan.steps.map((s) => s.machine), ["worker-1", "worker-2"]);
      const o = h.operations[0]!;
      assertEquals([o.machine, o.state, o.createdAtMs, o.ownerSinceMs], [
        "worker-1",
        "completed",
        T0 + 2000,
        T0 + 2000,
      ]);
      assertEquals(o.phases.map((p) => [p.phase, p.kind, p.detail]), [[
        "install",
        "intent",
        { rpc: "LifecycleService.Upgrade" },
      ]]);
      assertEquals(
        o.attempts.map((a) => [a.phase, a.evidenceId, a.response?.class, a.accountedBy]),
        [
          ["install", evidence, "accepted", "response"],
        ],
      );
      assertEquals(o.observations.map((x) => x.purpose), ["evidence", "completion"]);
      assertEquals(o.transitions.map((t) => t.to), ["verifying", "completed"]);
      assertEquals(h.healthRounds.map((r) => [r.purpose, r.operationId, r.verdict]), [
        ["post-gate", op.id, "pass"],
      ]);
      assertEquals(h.healthRounds[0]!.results[0], {
        binding: "drain-feasible",
        reader: "pdb-feasibility",
        outcome: "pass",
        reason: "HealthCheckPassed",
        objectUid: "pdb-1",
        objectRef: "PodDisruptionBudget apps/web",
        resourceVersion: "7",
        observedAtMs: T0 + 5000,
      });
      // The slot was held from the commitment until the move to `completed`.
      assertEquals(h.slot.map((s) => [s.machine, s.heldFromMs, s.releasedAtMs]), [
        ["worker-1", T0 + 2000, T0 + 7000],
      ]);
      assertEquals((await j.machineObservations("worker-1")).length, 2);
      assertEquals((await j.listPlans()).map((p) => p.digest), [plan.digest]);
      assertEquals(await j.nameBindings(), [{ name: "talos-v1.14.2", digest: plan.digest }]);
      assertEquals(await j.planHistory("0".repeat(64)), undefined);
    } finally {
      await j.close();
    }
  });

  Deno.test(`${store.name}: planHistory() carries the plan's refusals, evidence and dispatch checks, and every slot holding of its cluster`, async () => {
    const j = await journal();
    try {
      const plan = await approvedPlan(j);
      const { op } = await committed(j, { plan: plan.digest, at: T0 + 2000 });
      // A second commitment while worker-1 holds the slot is refused, and recorded.
      const ev = await observe(j, { machine: "worker-2", at: T0 + 3000, plan: plan.digest });
      const { epoch } = await j.installation();
      const r = await j.commit({
        planDigest: plan.digest,
        step: "worker-2/0",
        evidenceId: ev.id,
        owner: "cairn-a",
        epoch,
        nowMs: T0 + 3000,
      });
      assert(!r.ok);
      await j.recordEvidenceCheck({
        planDigest: plan.digest,
        manifestPath: "evidence/upgrade-order.yaml",
        manifestSha256: "e".repeat(64),
        verdict: "pass",
        detail: { sources: 3 },
        actor: APPROVER,
        nowMs: T0 + 1500,
      });
      await j.recordDispatchCheck({
        planDigest: plan.digest,
        node: "worker-1",
        verdict: "pass",
        detail: {
          installers: [{
            hop: 0,
            reference: "factory.talos.dev/metal-installer/x:v1.14.2",
            pinned: "sha256:" + "a".repeat(64),
            platform: "linux/amd64",
            verdict: "pass",
            reason: null,
            digest: "sha256:" + "a".repeat(64),
            indexDigest: null,
            registry: "twin",
          }],
        },
        actor: CONTROLLER,
        nowMs: T0 + 1900,
      });
      const h = (await j.planHistory(plan.digest))!;
      assertEquals(h.refusals.map((x) => [x.transaction, x.cause, x.step]), [
        ["commitment", "slot-held", "worker-2/0"],
      ]);
      assertEquals(h.evidenceChecks.map((e) => [e.manifestPath, e.verdict, e.detail]), [
        ["evidence/upgrade-order.yaml", "pass", { sources: 3 }],
      ]);
      assertEquals(h.dispatchChecks.map((d) => [d.node, d.verdict, d.installers[0]?.digest]), [
        ["worker-1", "pass", "sha256:" + "a".repeat(64)],
      ]);
      assertEquals(h.slot.map((s) => [s.operationId, s.releasedAtMs]), [[op.id, null]]);
    } finally {
      await j.close();
    }
  });
}
