import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import {
  ROW_VERDICTS,
  type RowResult,
  type RowVerdict,
} from "../../../src/domain/safeguards/result.ts";
import { SAFEGUARDS } from "../../../src/domain/safeguards/table.ts";
import {
  executionVerdict,
  isPlanPlaced,
  type OperationsOutcome,
  operationsOutcome,
  previewVerdict,
} from "../../../src/domain/safeguards/verdict.ts";
import { seededRandom } from "../../../src/sim/seeded_random.ts";

const OUTCOMES: readonly OperationsOutcome[] = [
  "running",
  "held",
  "completed",
  "failed",
  "unresolved",
  "rejected",
  "cancelled",
];

/** Every row gets a verdict drawn from `pool`; seeded, so every run sees the same 2 000 cases. */
function randomRows(next: () => number, pool: readonly RowVerdict[]): RowResult[] {
  return SAFEGUARDS.map((s) => ({
    id: s.id,
    verdict: pool[Math.floor(next() * pool.length)]!,
    evidence: "e",
  }));
}

function pools(next: () => number): readonly RowVerdict[] {
  // Mostly-passing tables are where a lenient headline would hide a gap.
  const r = next();
  return r < 0.3
    ? ["pass", "not-applicable"]
    : r < 0.8
    ? ["pass", "pass", "pass", "pass", "not-applicable", ROW_VERDICTS[Math.floor(next() * 5)]!]
    : ROW_VERDICTS;
}

Deno.test("an execution is COMPLETED only when every operation completed and every applicable row passed (2 000 seeded tables)", () => {
  const next = seededRandom(11);
  for (let i = 0; i < 2000; i++) {
    const rows = randomRows(next, pools(next));
    const outcome = OUTCOMES[Math.floor(next() * OUTCOMES.length)]!;
    const { verdict, gaps } = executionVerdict(outcome, rows);
    const bad = rows.filter((r) => r.verdict !== "pass" && r.verdict !== "not-applicable");
    const failed = rows.filter((r) => r.verdict === "fail");
    assertEquals(verdict === "completed", outcome === "completed" && bad.length === 0);
    if (outcome !== "completed") assertEquals(verdict, outcome);
    if (outcome === "completed" && failed.length) assertEquals(verdict, "safeguard-failed");
    if (outcome === "completed" && bad.length && !failed.length) {
      assertEquals(verdict, "unverified");
    }
    // The gaps name exactly the rows in the way, failures apart.
    assertEquals(gaps.failed.map((g) => g.id), failed.map((r) => r.id));
    assertEquals(
      gaps.unevaluated.map((g) => g.id),
      bad.filter((r) => r.verdict !== "fail").map((r) => r.id),
    );
  }
});

Deno.test("a preview is READY only when every P-placed row passed; rows placed only at E/O never decide it (2 000 seeded tables)", () => {
  const next = seededRandom(12);
  for (let i = 0; i < 2000; i++) {
    const rows = randomRows(next, pools(next));
    const base = (["ready", "refused", "held"] as const)[Math.floor(next() * 3)]!;
    const { verdict, gaps } = previewVerdict(base, rows);
    const badP = rows.filter((r) =>
      isPlanPlaced(r.id) && r.verdict !== "pass" && r.verdict !== "not-applicable"
    );
    assertEquals(verdict === "ready", base === "ready" && badP.length === 0);
    if (base !== "ready") assertEquals(verdict, base);
    else if (badP.length) assertEquals(verdict, "not-ready");
    assertEquals(
      [...gaps.failed, ...gaps.unevaluated].map((g) => g.id).sort(),
      badP.map((r) => r.id).sort(),
    );
  }
});

Deno.test("one FAIL row among passes changes a completed execution's verdict and is named", () => {
  const rows = SAFEGUARDS.map((s): RowResult => ({
    id: s.id,
    verdict: s.id === "SingleRolloutSlot" ? "fail" : "pass",
    evidence: "e",
  }));
  const v = executionVerdict("completed", rows);
  assertEquals(v.verdict, "safeguard-failed");
  assertEquals(v.gaps.failed.map((g) => [g.number, g.id]), [[6, "SingleRolloutSlot"]]);
});

Deno.test("a not-evaluated E-only row does not hold a preview; a not-evaluated P row does", () => {
  const base = SAFEGUARDS.map((s): RowResult => ({ id: s.id, verdict: "pass", evidence: "e" }));
  const eOnly = base.map((r) =>
    r.id === "SingleRolloutSlot" ? { ...r, verdict: "not-evaluated" as const } : r
  );
  assertEquals(previewVerdict("ready", eOnly).verdict, "ready");
  const pRow = base.map((r) =>
    r.id === "InstallerImageExists" ? { ...r, verdict: "not-evaluated" as const } : r
  );
  const v = previewVerdict("ready", pRow);
  assertEquals(v.verdict, "not-ready");
  assert(v.gaps.unevaluated.some((g) => g.number === 10));
});

Deno.test("operationsOutcome(): any unresolved operation makes the whole unresolved; a halt before a commitment is held, not failed", () => {
  assertEquals(operationsOutcome(["completed", "unresolved", "failed"]), "unresolved");
  assertEquals(operationsOutcome(["completed", "failed"]), "failed");
  assertEquals(operationsOutcome(["completed", "completed"]), "completed");
  assertEquals(operationsOutcome([]), "running");
  assertEquals(operationsOutcome(["completed", "pending"], "halted"), "held");
  assertEquals(operationsOutcome(["completed", "pending"], "refused"), "refused");
  assertEquals(operationsOutcome(["completed", "pending"]), "running");
});
