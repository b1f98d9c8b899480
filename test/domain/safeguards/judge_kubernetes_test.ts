import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { judgeKubernetesExecution } from "../../../src/domain/safeguards/judge_kubernetes.ts";
import type {
  RecordedKubernetesCheck,
  RecordedOperation,
  RecordedPlan,
} from "../../../src/domain/safeguards/recorded.ts";

const PASS = { verdict: "pass", evidence: "ok", reasons: [] } as const;

function check(step: string | null, over: Partial<RecordedKubernetesCheck> = {}) {
  return {
    step,
    verdict: "pass",
    writes: 0,
    uniformOs: PASS,
    skew: PASS,
    ownership: PASS,
    ...over,
  } as RecordedKubernetesCheck;
}

function op(step: string, createdAtMs: number, pullAtMs = createdAtMs + 1): RecordedOperation {
  const attempt = (phase: string, at: number) => ({
    number: 1,
    phase,
    evidenceId: "e",
    sentAtMs: at,
    transportDeadlineMs: at + 10,
    verificationDeadlineMs: at + 20,
    response: { class: "accepted", atMs: at + 1 },
    accountedBy: "response",
  });
  return {
    id: `op-${step}`,
    step,
    machine: step.split("/")[0]!,
    state: "completed",
    createdAtMs,
    phases: [{ phase: "component-observed", kind: "fact", atMs: createdAtMs + 5, detail: {} }],
    attempts: [attempt("pull", pullAtMs), attempt("component-config", createdAtMs + 2)],
    observations: [{
      id: "o",
      purpose: "completion",
      basis: 9,
      digest: "d",
      observedAtMs: createdAtMs + 6,
      summary: "",
    }],
  };
}

function record(
  checks: { atMs: number; k: RecordedKubernetesCheck }[],
  ops: RecordedOperation[],
): RecordedPlan {
  return {
    plan: { approvedAtMs: 0, steps: [], kind: "KubernetesUpgrade" },
    operations: ops,
    healthRounds: [],
    slot: [],
    dispatchChecks: checks.map((c) => ({
      atMs: c.atMs,
      node: null,
      installers: [],
      kubernetes: c.k,
    })),
  };
}

function verdicts(r: RecordedPlan) {
  return Object.fromEntries(judgeKubernetesExecution(r).map((x) => [x.id, x.verdict]));
}

const STEP = "cp-1/k8s/kube-apiserver";

Deno.test("rows 23–26 pass when the rollout and every commitment were checked, writing nothing", () => {
  const v = verdicts(
    record([{ atMs: 10, k: check(null) }, { atMs: 20, k: check(STEP) }], [op(STEP, 30)]),
  );
  assertEquals(
    [
      v["KubernetesAfterUniformOs"],
      v["KubernetesSkewChecked"],
      v["BootstrapOwnershipChecked"],
      v["DryRunWithoutPrePull"],
    ],
    ["pass", "pass", "pass", "pass"],
  );
  assertEquals(v["SchematicPreserved"], "not-applicable");
});

Deno.test("an operation committed without a check of its own step fails the rows", () => {
  const v = verdicts(record([{ atMs: 10, k: check(null) }], [op(STEP, 30)]));
  assertEquals(v["BootstrapOwnershipChecked"], "fail");
});

Deno.test("a refusing check fails its row, a holding one leaves it unreadable, none leaves it unevaluated", () => {
  const refused = check(STEP, {
    verdict: "refused",
    ownership: { verdict: "refused", evidence: "overlap", reasons: ["BootstrapOwnershipOverlap"] },
  });
  const held = check(STEP, {
    verdict: "held",
    skew: { verdict: "held", evidence: "unread", reasons: ["KubernetesEvidenceUnreadable"] },
  });
  const v = verdicts(
    record([{ atMs: 10, k: check(null) }, { atMs: 20, k: refused }, { atMs: 21, k: held }], []),
  );
  assertEquals([v["BootstrapOwnershipChecked"], v["KubernetesSkewChecked"]], [
    "fail",
    "unreadable",
  ]);
  const none = verdicts(record([], []));
  assertEquals(none["KubernetesAfterUniformOs"], "not-evaluated");
  assertEquals(none["DryRunWithoutPrePull"], "not-evaluated");
});

Deno.test("row 26 fails on a check that wrote, and on a pre-pull sent before the check", () => {
  const wrote = verdicts(record([{ atMs: 10, k: check(null, { writes: 1 }) }], []));
  assertEquals(wrote["DryRunWithoutPrePull"], "fail");
  const early = judgeKubernetesExecution(
    record([{ atMs: 10, k: check(null) }, { atMs: 20, k: check(STEP) }], [op(STEP, 30, 5)]),
  ).find((r) => r.id === "DryRunWithoutPrePull")!;
  assertEquals(early.verdict, "fail");
  assert(early.evidence.includes("before the Kubernetes check"));
});
