import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import {
  judgePreview,
  judgeRunningSchematics,
} from "../../../src/domain/safeguards/judge_preview.ts";
import { judgePlanChecks } from "../../../src/domain/safeguards/judge_plan.ts";

const A = "a".repeat(64), B = "b".repeat(64);

Deno.test("row 2 at preview: known running schematics kept by intermediate hops pass; unknown is unreadable; a replaced one fails", () => {
  const nodes = [{ node: "w1", schematic: A }, { node: "w2", schematic: A }];
  assertEquals(judgeRunningSchematics([{ to: "v1.14.2", schematic: B }], nodes).verdict, "pass");
  const twoHops = [{ to: "v1.13.10", schematic: A }, { to: "v1.14.2", schematic: B }];
  assertEquals(judgeRunningSchematics(twoHops, nodes).verdict, "pass");
  const replacing = [{ to: "v1.13.10", schematic: B }, { to: "v1.14.2", schematic: B }];
  const r = judgeRunningSchematics(replacing, nodes);
  assertEquals(r.verdict, "fail");
  assert(r.evidence.includes("w1") && r.evidence.includes("v1.13.10"), r.evidence);
  assertEquals(
    judgeRunningSchematics(twoHops, [...nodes, { node: "cp1", schematic: undefined }]).verdict,
    "unreadable",
  );
});

Deno.test("judgePreview() passes the read-only row only on a guard count of 0, and names a missing count", () => {
  const base = { connected: true, rounds: [] };
  const row = (p: Parameters<typeof judgePreview>[0]) =>
    judgePreview(p).find((r) => r.id === "PreviewReadOnly")!;
  assertEquals(row({ ...base, writes: { count: 0, evidence: "guard: 0" } }).verdict, "pass");
  const refused = row({ ...base, writes: { count: 1, evidence: "guard: 1" } });
  assertEquals([refused.verdict, refused.reason], ["fail", "PreviewWriteRefused"]);
  assertEquals(row(base).verdict, "unreadable");
});

Deno.test("judgePreview() marks rows placed only at E/O as judged during execution, never as passing", () => {
  const rows = judgePreview({ connected: true, rounds: [], writes: { count: 0, evidence: "e" } });
  for (const id of ["SingleRolloutSlot", "PostGateBeforeNextNode", "CallsBoundedByRemainingTime"]) {
    const r = rows.find((x) => x.id === id)!;
    assertEquals(r.verdict, "not-evaluated", id);
    assert(r.evidence.includes("during execution"), r.evidence);
  }
});

Deno.test("plan-check rows pass only when the checks ran and found none of their reasons", () => {
  assertEquals(judgePlanChecks(undefined, new Set()), []);
  const rows = new Map(
    judgePlanChecks("TalosUpgrade", new Set(["SkippedMinor"])).map((r) => [r.id, r]),
  );
  assertEquals(rows.get("NoDowngradeNoSkippedMinor")?.verdict, "fail");
  assertEquals(rows.get("NoDowngradeNoSkippedMinor")?.reason, "SkippedMinor");
  assertEquals(rows.get("LatestPatchBeforeMinor")?.verdict, "pass");
  assertEquals(rows.get("KubernetesSkewChecked")?.verdict, "not-applicable");
  const k8s = judgePlanChecks("KubernetesUpgrade", new Set());
  assert(
    !k8s.some((r) => r.verdict === "not-applicable"),
    "Kubernetes rows apply to a KubernetesUpgrade",
  );
});

Deno.test("judgePreview(): nothing read from a cluster that is not the plan's passes a row (identity, health)", () => {
  const record = {
    connected: true,
    rounds: [{
      verdict: "pass" as const,
      results: [{ binding: "workloads-ready", reader: "workloads", outcome: "pass" as const }],
    }],
    live: [{ id: "NodeIdentityBound" as const, verdict: "pass" as const, evidence: "7 node(s)" }],
    writes: { count: 0, evidence: "guard: 0" },
  };
  const of = (rows: ReturnType<typeof judgePreview>, id: string) => rows.find((r) => r.id === id)!;
  const same = judgePreview(record);
  assertEquals(
    [of(same, "NodeIdentityBound").verdict, of(same, "WorkloadsReady").verdict],
    ["pass", "pass"],
  );
  const other = judgePreview({ ...record, otherCluster: "the cluster reports home-ops" });
  for (const id of ["NodeIdentityBound", "WorkloadsReady"]) {
    assertEquals(of(other, id).verdict, "not-evaluated", id);
    assert(of(other, id).evidence.includes("not the plan's (the cluster reports home-ops)"));
  }
  // The guard's count is about this preview's calls, whichever cluster answered.
  assertEquals(of(other, "PreviewReadOnly").verdict, "pass");
});
