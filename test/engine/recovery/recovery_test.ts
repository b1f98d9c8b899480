import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import type { AttemptRecord, OperationRecord } from "../../../src/ports/journal.ts";
import {
  accountDecision,
  classification,
  classifyRefusal,
  drainFactsOf,
  parsePhases,
  type RecoveryFacts,
  settleWindow,
  uncordonRefusal,
} from "../../../src/engine/recovery/recovery.ts";

const T = Date.UTC(2026, 11, 1, 9);

const op: OperationRecord = {
  id: "op_1",
  planDigest: "d".repeat(64),
  step: "worker-2/0",
  machine: "worker-2",
  cluster: "home-ops",
  state: "unresolved",
  owner: "ctl",
  ownerGen: 1,
  ownerEpoch: "ep_1",
  attemptsUsed: 2,
  safeRetryRevision: null,
  createdAtMs: T,
};

function attempt(over: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    id: "att_reboot",
    operationId: op.id,
    number: 2,
    phase: "reboot",
    requestDigest: "r",
    route: "apid:node",
    ownerGen: 1,
    ownerEpoch: "ep_1",
    evidenceId: "obs_1",
    sentAtMs: T,
    transportDeadlineMs: T + 60_000,
    verificationDeadlineMs: T + 900_000,
    classRevision: null,
    responseClass: "transport-failure",
    accountedBy: null,
    accountedRevision: null,
    ...over,
  };
}

const cordonFact = (owned: boolean) =>
  parsePhases([{
    phase: "cordon",
    kind: "fact",
    atMs: T,
    detail: JSON.stringify({ priorUnschedulable: !owned, cordonedByOperation: owned }),
  }]);

function facts(over: Partial<RecoveryFacts> = {}): RecoveryFacts {
  return {
    operation: op,
    ownerSinceMs: T,
    attempts: [attempt()],
    phases: cordonFact(true),
    machineReadsMs: [],
    planRecovery: ["uncordonOwnedCordon"],
    settleFloorMs: 30_000,
    nowMs: T + 600_000,
    ...over,
  };
}

Deno.test("settleWindow() starts at the latest of deadline, takeover and first read after the deadline", () => {
  const base = { attempt: attempt(), settleFloorMs: 30_000, machineReadsMs: [T + 10_000] };
  // Not taken over, no read since the deadline: the floor cannot start yet.
  const none = settleWindow({ ...base, operation: op, ownerSinceMs: T });
  assertEquals(none.endsAtMs, undefined);
  assertEquals(none.missing.length, 2);
  const taken = { ...op, ownerGen: 2, owner: "recover:carol" };
  const w = settleWindow({
    ...base,
    operation: taken,
    ownerSinceMs: T + 300_000,
    machineReadsMs: [T + 10_000, T + 400_000, T + 200_000],
  });
  // First read after the deadline at +200 s, takeover at +300 s: the later one starts it.
  assertEquals(w.endsAtMs, T + 300_000 + 30_000);
  const stopped = settleWindow({
    ...base,
    operation: op,
    ownerSinceMs: T,
    executorStoppedAtMs: T + 500_000,
    machineReadsMs: [T + 70_000],
  });
  assertEquals(stopped.endsAtMs, T + 530_000);
});

Deno.test("accountDecision() names the time the settle floor ends and is possible only after it", () => {
  const taken = { ...op, ownerGen: 2 };
  const f = facts({ operation: taken, ownerSinceMs: T + 600_000, machineReadsMs: [T + 600_000] });
  const before = accountDecision(f, attempt());
  assertEquals([before.possible, before.possibleAfterMs], [false, T + 630_000]);
  assert(before.why.includes("2026-12-01T09:10:30.000Z"), before.why);
  const after = accountDecision({ ...f, nowMs: T + 630_000 }, attempt());
  assertEquals(after.possible, true);
});

Deno.test("uncordonRefusal() allows only an operation-owned cordon the plan authorises", () => {
  assertEquals(uncordonRefusal(facts()), undefined);
  assert(/does not bind/.test(uncordonRefusal(facts({ planRecovery: [] }))!));
  assert(
    /not cordoned by this operation/.test(uncordonRefusal(facts({ phases: cordonFact(false) }))!),
  );
  assert(/never cordoned/.test(uncordonRefusal(facts({ phases: [] }))!));
  const lifted = [
    ...cordonFact(true),
    ...parsePhases([{
      phase: "uncordon",
      kind: "fact",
      atMs: T,
      detail: '{"decision":"uncordoned"}',
    }]),
  ];
  assert(/already lifted/.test(uncordonRefusal(facts({ phases: lifted }))!));
  const done = { ...op, state: "completed" as const };
  assert(/completed/.test(uncordonRefusal(facts({ operation: done }))!));
});

Deno.test("classifyRefusal() needs an unresolved operation with every attempt accounted", () => {
  assert(/unaccounted/.test(classifyRefusal(facts())!));
  assert(/no-attempt cancellation/.test(classifyRefusal(facts({ attempts: [] }))!));
  const accounted = [attempt({ accountedBy: "recovery" })];
  assertEquals(classifyRefusal(facts({ attempts: accounted })), undefined);
  const verifying = { ...op, state: "verifying" as const };
  assert(/verifying/.test(classifyRefusal(facts({ operation: verifying, attempts: accounted }))!));
});

Deno.test("classification() completes on a match, fails on a readable contradiction, else stays unresolved", () => {
  assertEquals(classification({ reading: "established" }), "completed");
  assertEquals(classification({ reading: "contradicted" }), "failed");
  assertEquals(classification({ reading: "unreadable" }), "unresolved");
});

Deno.test("drainFactsOf() keeps accepted evictions and the pods left at the bound with their grace deadlines", () => {
  const d = drainFactsOf(parsePhases([
    { phase: "drain", kind: "fact", atMs: T, detail: '{"evict":"db/pg-0","outcome":"accepted"}' },
    { phase: "drain", kind: "fact", atMs: T, detail: '{"evict":"db/pg-1","outcome":"blocked"}' },
    {
      phase: "drain",
      kind: "fact",
      atMs: T,
      detail: JSON.stringify({
        boundReached: true,
        remaining: [{ pod: "db/pg-0", graceDeadlineMs: T + 5 }],
      }),
    },
  ]))!;
  assertEquals(d.evicted, ["db/pg-0"]);
  assertEquals(d.refused, ["db/pg-1"]);
  assertEquals([d.boundReached, d.remaining], [true, [{ pod: "db/pg-0", graceDeadlineMs: T + 5 }]]);
});

Deno.test("uncordonRefusal() refuses a cordon fact unless it says both: not cordoned before, cordoned by this operation", () => {
  const fact = (detail: Record<string, unknown>) =>
    parsePhases([{ phase: "cordon", kind: "fact", atMs: T, detail: JSON.stringify(detail) }]);
  // Facts that contradict themselves (a hand on the journal, an older writer) decide nothing in
  // the operation's favour: only both halves together make the cordon the operation's own.
  for (
    const detail of [
      { priorUnschedulable: true, cordonedByOperation: true },
      { priorUnschedulable: false, cordonedByOperation: false },
      { priorUnschedulable: false, cordonedByOperation: "true" },
      { priorUnschedulable: false, cordonedByOperation: 1 },
      { priorUnschedulable: false },
    ]
  ) {
    const why = uncordonRefusal(facts({ phases: fact(detail) }));
    assert(why !== undefined, `uncordon allowed on ${JSON.stringify(detail)}`);
  }
  assertEquals(
    uncordonRefusal(facts({
      phases: fact({ priorUnschedulable: false, cordonedByOperation: true }),
    })),
    undefined,
  );
});

Deno.test("accountDecision() is not possible while the attempt's executor is neither stopped nor taken over", () => {
  // A read after the transport deadline alone does not start the floor: the executor that sent
  // the attempt may still be waiting on it.
  const live = accountDecision(
    facts({ machineReadsMs: [T + 120_000], nowMs: T + 3_600_000 }),
    attempt(),
  );
  assertEquals(live.possible, false);
  assertEquals(live.possibleAfterMs, T + 3_600_000 + 30_000);
});

Deno.test("settleWindow() counts a takeover in a new epoch at the same generation as a takeover", () => {
  const restored = { ...op, ownerGen: 1, ownerEpoch: "ep_2" };
  const w = settleWindow({
    attempt: attempt(),
    operation: restored,
    ownerSinceMs: T + 200_000,
    machineReadsMs: [T + 120_000],
    settleFloorMs: 30_000,
  });
  assertEquals([w.endsAtMs, w.missing], [T + 200_000 + 30_000, []]);
});
