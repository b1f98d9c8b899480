/**
 * The journal-derived rows over a real recorded twin rollout, and the same record with one fact
 * removed or changed: each guard must turn its row away from `pass`.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import {
  type ExecutionRecord,
  judgeExecution,
} from "../../../src/domain/safeguards/judge_execution.ts";
import type { RowResult } from "../../../src/domain/safeguards/result.ts";
import type { SafeguardId } from "../../../src/domain/safeguards/table.ts";
import type { OperationHistory, PlanHistory } from "../../../src/ports/journal_history.ts";
import { HOPS, recorded } from "../../report/_rollout_history.ts";

async function base(): Promise<PlanHistory> {
  return (await recorded()).history;
}

function judge(h: PlanHistory): Map<SafeguardId, RowResult> {
  const rec: ExecutionRecord = { ...h, hops: HOPS };
  return new Map(judgeExecution(rec).map((r) => [r.id, r]));
}

function verdictOf(h: PlanHistory, id: SafeguardId): string {
  return judge(h).get(id)!.verdict;
}

/** The history with operation `machine` changed by `f`. */
function withOp(
  h: PlanHistory,
  machine: string,
  f: (o: OperationHistory) => OperationHistory,
): PlanHistory {
  return { ...h, operations: h.operations.map((o) => o.machine === machine ? f(o) : o) };
}

function opId(h: PlanHistory, machine: string): string {
  return h.operations.find((o) => o.machine === machine)!.id;
}

Deno.test("the recorded rollout passes every journal-derived row on its records, and names the unbound readers", async () => {
  const rows = judge(await base());
  for (
    const id of [
      "NodeIdentityBound",
      "SchematicPreserved",
      "PreviewReadOnly",
      "RolloutOrdered",
      "SingleRolloutSlot",
      "HealthReadFreshEachRound",
      "CallsBoundedByRemainingTime",
      "ClusterGate",
      "DisruptionBudgetsAudited",
      "WorkloadsReady",
      "DatabaseOperatorReady",
      "PhasesRecordedSeparately",
      "PostconditionsThenOwnedUncordon",
      "PostGateBeforeNextNode",
      "InstallerImageExists",
    ] as const
  ) assertEquals([id, rows.get(id)?.verdict], [id, "pass"]);
  for (const id of ["ObjectStoreAndBrokerHealthy", "MetricsAndMqttHealthy"] as const) {
    assertEquals(rows.get(id)?.verdict, "not-evaluated");
    // The recorded rollout's policy bound no row-17/18 reader: the row names the readers.
    assert(/^no (object-store-endpoint|metrics-storage) /.test(rows.get(id)!.evidence));
  }
  assert(rows.get("DisruptionBudgetsAudited")!.evidence.includes("drain-feasible"));
  assert(rows.get("DatabaseOperatorReady")!.evidence.includes("cnpg-instances-ready"));
});

Deno.test("without operations nothing passes: journal rows are not evaluated", async () => {
  const h = await base();
  const rows = judgeExecution({ ...h, operations: [], healthRounds: [], slot: [], hops: HOPS });
  assert(rows.every((r) => r.verdict === "not-evaluated"), JSON.stringify(rows));
});

Deno.test("row 13 fails when the gate round before a commitment is missing or did not pass", async () => {
  const h = await base();
  const w2 = h.operations.find((o) => o.machine === "worker-2")!;
  const w1 = h.operations.find((o) => o.machine === "worker-1")!;
  const before = (r: PlanHistory["healthRounds"][number]) =>
    r.purpose === "gate" && r.operationId === null && r.finishedAtMs <= w2.createdAtMs &&
    r.finishedAtMs > w1.createdAtMs;
  assert(h.healthRounds.some(before), "the record has a gate before worker-2");
  const removed = { ...h, healthRounds: h.healthRounds.filter((r) => !before(r)) };
  assertEquals(verdictOf(removed, "ClusterGate"), "fail");
  assert(judge(removed).get("ClusterGate")!.evidence.includes("worker-2"));
  const failing = {
    ...h,
    healthRounds: h.healthRounds.map((r) => before(r) ? { ...r, verdict: "fail" as const } : r),
  };
  assertEquals(verdictOf(failing, "ClusterGate"), "fail");
});

Deno.test("row 13 with commitments in one millisecond: each needs a passing gate round of its own", async () => {
  const h = await base();
  const w1 = h.operations.find((o) => o.machine === "worker-1")!;
  const w2 = h.operations.find((o) => o.machine === "worker-2")!;
  const t = w1.createdAtMs;
  const gate2 = (r: PlanHistory["healthRounds"][number]) =>
    r.purpose === "gate" && r.operationId === null && r.finishedAtMs <= w2.createdAtMs &&
    r.finishedAtMs > w1.createdAtMs;
  // worker-2 committed in worker-1's millisecond, its gate round finished then too.
  const tied: PlanHistory = {
    ...withOp(h, "worker-2", (o) => ({ ...o, createdAtMs: t })),
    healthRounds: h.healthRounds.map((r) =>
      gate2(r) ? { ...r, startedAtMs: t, finishedAtMs: t } : r
    ),
  };
  assertEquals(verdictOf(tied, "ClusterGate"), "pass");
  // One gate round for the two commitments of that millisecond: the second had none.
  const own = new Set(h.healthRounds.filter(gate2).map((r) => r.id));
  const withoutOwn = { ...tied, healthRounds: tied.healthRounds.filter((r) => !own.has(r.id)) };
  assertEquals(verdictOf(withoutOwn, "ClusterGate"), "fail");
  assert(judge(withoutOwn).get("ClusterGate")!.evidence.includes("worker-2"));
});

Deno.test("row 22 fails when the next node was committed without a passing post-gate or with an attempt unaccounted", async () => {
  const h = await base();
  const id = opId(h, "worker-3");
  const noPostGate = {
    ...h,
    healthRounds: h.healthRounds.filter((r) =>
      !(r.operationId === id && r.purpose === "post-gate")
    ),
  };
  assertEquals(verdictOf(noPostGate, "PostGateBeforeNextNode"), "fail");
  const failed = {
    ...h,
    healthRounds: h.healthRounds.map((r) =>
      r.operationId === id && r.purpose === "post-gate" ? { ...r, verdict: "fail" as const } : r
    ),
  };
  assertEquals(verdictOf(failed, "PostGateBeforeNextNode"), "fail");
  const open = withOp(h, "worker-3", (o) => ({
    ...o,
    attempts: o.attempts.map((a) => a.phase === "reboot" ? { ...a, accountedBy: null } : a),
  }));
  assertEquals(verdictOf(open, "PostGateBeforeNextNode"), "fail");
});

Deno.test("row 6 fails when an operation was committed while another still held the cluster's slot", async () => {
  const h = await base();
  const w3 = h.slot.find((s) => s.machine === "worker-3")!;
  const late = {
    ...h,
    slot: h.slot.map((s) =>
      s.machine === "worker-2" ? { ...s, releasedAtMs: w3.heldFromMs + 1 } : s
    ),
  };
  assertEquals(verdictOf(late, "SingleRolloutSlot"), "fail");
  const neverReleased = {
    ...h,
    slot: h.slot.map((s) => s.machine === "worker-2" ? { ...s, releasedAtMs: null } : s),
  };
  assertEquals(verdictOf(neverReleased, "SingleRolloutSlot"), "fail");
  // Another plan's operation on the same cluster counts too: the slot is the cluster's.
  const foreign = {
    ...h,
    slot: [...h.slot, {
      operationId: "op_other",
      planDigest: "f".repeat(64),
      machine: "cp-9",
      heldFromMs: w3.heldFromMs + 1000,
      releasedAtMs: null,
    }],
  };
  assertEquals(verdictOf(foreign, "SingleRolloutSlot"), "fail");
});

Deno.test("row 1 fails when an attempt's identity observation is missing, of another identity, or after the send", async () => {
  const h = await base();
  const swap = (f: (o: OperationHistory["observations"][number]) => object) =>
    withOp(h, "cp-1", (o) => ({
      ...o,
      observations: o.observations.map((x) =>
        x.id === o.attempts[2]!.evidenceId ? { ...x, ...f(x) } : x
      ),
    }));
  assertEquals(verdictOf(swap(() => ({ digest: "0".repeat(64) })), "NodeIdentityBound"), "fail");
  assertEquals(verdictOf(swap(() => ({ id: "obs_gone" })), "NodeIdentityBound"), "fail");
  assertEquals(
    verdictOf(swap((x) => ({ observedAtMs: x.observedAtMs + 3_600_000 })), "NodeIdentityBound"),
    "fail",
  );
  assertEquals(verdictOf(swap(() => ({ purpose: "health" })), "NodeIdentityBound"), "fail");
  // The same identity digest but another machine (UUID) than the commitment bound fails.
  const other = "machine=00000000-0000-0000-0000-000000000000 node=cp-1 address=10.5.0.9";
  assertEquals(verdictOf(swap(() => ({ machineIdentity: other })), "NodeIdentityBound"), "fail");
  // An identity observation that names no machine seen on both sides proves nothing.
  const unnamed = withOp(h, "cp-1", (o) => ({
    ...o,
    observations: o.observations.map((x) => {
      const { machineIdentity: _m, ...rest } = x;
      return rest;
    }),
  }));
  assertEquals(verdictOf(unnamed, "NodeIdentityBound"), "not-evaluated");
});

Deno.test("row 1 with no attempt: held by an identity refusal before the first send, else not evaluated", async () => {
  const h = await base();
  const none: PlanHistory = { ...h, operations: h.operations.map((o) => ({ ...o, attempts: [] })) };
  assertEquals(verdictOf(none, "NodeIdentityBound"), "not-evaluated");
  const refusedWith = (reason: string) =>
    withOp(none, "worker-1", (o) => ({
      ...o,
      observations: [...o.observations, {
        id: "obs_refused",
        purpose: "evidence" as const,
        operationId: o.id,
        basis: 1_000_000,
        revision: 1_000_000,
        digest: `${reason}:worker-1 at 10.5.0.6 is now machine …`,
        objectUid: "",
        resourceVersion: "",
        observedAtMs: o.createdAtMs + 1,
        summary: reason,
      }],
    }));
  const held = judge(refusedWith("MachineIdentityMismatch")).get("NodeIdentityBound")!;
  assertEquals(held.verdict, "pass");
  assert(held.evidence.includes("worker-1"), held.evidence);
  assertEquals(
    verdictOf(refusedWith("MachineIdentityUnreadable"), "NodeIdentityBound"),
    "not-evaluated",
  );
});

Deno.test("row 2 fails on a boot with another schematic or a completion that is not the bound postcondition", async () => {
  const h = await base();
  const boot = withOp(h, "worker-4", (o) => ({
    ...o,
    phases: o.phases.map((p) =>
      p.phase === "boot-observed" ? { ...p, detail: { ...p.detail, schematic: "a".repeat(64) } } : p
    ),
  }));
  assertEquals(verdictOf(boot, "SchematicPreserved"), "fail");
  const completion = withOp(h, "worker-4", (o) => ({
    ...o,
    observations: o.observations.map((x) =>
      x.purpose === "completion" ? { ...x, digest: "b".repeat(64) } : x
    ),
  }));
  assertEquals(verdictOf(completion, "SchematicPreserved"), "fail");
});

Deno.test("row 11 fails on a round that passed over a failing result, read outside its window, or skipped a binding", async () => {
  const h = await base();
  const target = h.healthRounds.findIndex((r) => r.purpose === "post-gate" && r.verdict === "pass");
  const edit = (f: (r: PlanHistory["healthRounds"][number]) => object) => ({
    ...h,
    healthRounds: h.healthRounds.map((r, k) => k === target ? { ...r, ...f(r) } : r),
  });
  const passedOverFail = edit((r) => ({
    results: r.results.map((x, k) => k === 0 ? { ...x, outcome: "fail" } : x),
  }));
  assertEquals(verdictOf(passedOverFail, "HealthReadFreshEachRound"), "fail");
  const carried = edit((r) => ({
    results: r.results.map((x, k) => k === 0 ? { ...x, observedAtMs: r.startedAtMs - 60_000 } : x),
  }));
  assertEquals(verdictOf(carried, "HealthReadFreshEachRound"), "fail");
  const skipped = edit((r) => ({
    results: r.results.filter((x) => x.binding !== "drain-feasible"),
  }));
  assertEquals(verdictOf(skipped, "HealthReadFreshEachRound"), "fail");
});

Deno.test("row 12 fails on an accounting response after the verification deadline or inconsistent deadlines", async () => {
  const h = await base();
  const late = withOp(h, "cp-2", (o) => ({
    ...o,
    attempts: o.attempts.map((a, k) =>
      k === 0 ? { ...a, response: { ...a.response!, atMs: a.verificationDeadlineMs + 1 } } : a
    ),
  }));
  assertEquals(verdictOf(late, "CallsBoundedByRemainingTime"), "fail");
  const swapped = withOp(h, "cp-2", (o) => ({
    ...o,
    attempts: o.attempts.map((a, k) =>
      k === 0 ? { ...a, verificationDeadlineMs: a.transportDeadlineMs - 1 } : a
    ),
  }));
  assertEquals(verdictOf(swapped, "CallsBoundedByRemainingTime"), "fail");
});

Deno.test("row 21 fails when an uncordon undid a cordon the operation did not record as its own", async () => {
  const h = await base();
  const foreign = withOp(h, "worker-1", (o) => ({
    ...o,
    phases: o.phases.map((p) =>
      p.phase === "cordon" && p.kind === "fact"
        ? { ...p, detail: { ...p.detail, cordonedByOperation: false } }
        : p
    ),
  }));
  assertEquals(verdictOf(foreign, "PostconditionsThenOwnedUncordon"), "fail");
});

Deno.test("rows 14-16 follow their bindings by reader: a failing deciding round fails the row, a missing reader names itself", async () => {
  const h = await base();
  const pdbFails = {
    ...h,
    healthRounds: h.healthRounds.map((r) =>
      r.purpose === "gate"
        ? {
          ...r,
          results: r.results.map((x) =>
            x.reader === "pdb-feasibility" ? { ...x, outcome: "fail" as const } : x
          ),
        }
        : r
    ),
  };
  assertEquals(verdictOf(pdbFails, "DisruptionBudgetsAudited"), "fail");
  const noWorkloads = {
    ...h,
    healthRounds: h.healthRounds.map((r) => ({
      ...r,
      results: r.results.filter((x) => x.reader !== "workloads"),
    })),
  };
  const w = judge(noWorkloads).get("WorkloadsReady")!;
  assertEquals(w.verdict, "not-evaluated");
  assert(w.evidence.includes("workloads"), w.evidence);
  const unlabelled = {
    ...h,
    healthRounds: h.healthRounds.map((r) => ({
      ...r,
      results: r.results.map((x) => ({ ...x, reader: null })),
    })),
  };
  assertEquals(verdictOf(unlabelled, "DatabaseOperatorReady"), "not-evaluated");
  // A kube-object reader over another API group (Ceph) never evaluates the database row.
  const cephOnly = {
    ...h,
    healthRounds: h.healthRounds.map((r) => ({
      ...r,
      results: r.results.filter((x) => !(x.reader ?? "").includes("postgresql.cnpg.io")),
    })),
  };
  assertEquals(verdictOf(cephOnly, "DatabaseOperatorReady"), "not-evaluated");
});

Deno.test("row 4 at execution fails when a commitment precedes the plan's recorded approval", async () => {
  const h = await base();
  const first = h.operations[0]!;
  const late = { ...h, plan: { ...h.plan, approvedAtMs: first.createdAtMs + 1 } };
  assertEquals(verdictOf(late, "PreviewReadOnly"), "fail");
  const never = { ...h, plan: { ...h.plan, approvedAtMs: null } };
  assertEquals(verdictOf(never, "PreviewReadOnly"), "fail");
});

Deno.test("row 10 passes only on a dispatch check before each commitment that resolved the installer to its pinned digest", async () => {
  const h = await base();
  const pinned = h.dispatchChecks[0]!.installers[0]!.pinned;
  const resolvedAs = (digest: string | null, verdict: string, reason: string | null = null) => ({
    ...h,
    dispatchChecks: h.dispatchChecks.map((d) => ({
      ...d,
      installers: d.installers.map((i) => ({
        ...i,
        verdict,
        reason,
        digest,
        indexDigest: null,
        registry: "twin",
      })),
    })),
  });
  // Without a registry every hop is recorded as not resolved.
  const none = judge(resolvedAs(null, "not-evaluated")).get("InstallerImageExists")!;
  assertEquals(none.verdict, "not-evaluated");
  assert(none.evidence.startsWith("installer not resolved"), none.evidence);
  assertEquals(verdictOf(resolvedAs(pinned, "pass"), "InstallerImageExists"), "pass");
  assertEquals(
    verdictOf(
      resolvedAs("sha256:" + "e".repeat(64), "fail", "InstallerDigestMismatch"),
      "InstallerImageExists",
    ),
    "fail",
  );
  assertEquals(
    verdictOf(resolvedAs(null, "unreadable", "RegistryUnreadable"), "InstallerImageExists"),
    "unreadable",
  );
  // A recorded "pass" without the pinned digest is not a resolution.
  assertEquals(
    verdictOf(resolvedAs("sha256:" + "e".repeat(64), "pass"), "InstallerImageExists"),
    "not-evaluated",
  );
  // A commitment with no dispatch check of its own is not covered by one for another node.
  const onlyFirst = {
    ...resolvedAs(pinned, "pass"),
    dispatchChecks: resolvedAs(pinned, "pass").dispatchChecks.map((d) =>
      d.node === null || d.node === "worker-1" ? d : { ...d, node: "another-node" }
    ),
  };
  assertEquals(verdictOf(onlyFirst, "InstallerImageExists"), "not-evaluated");
});
