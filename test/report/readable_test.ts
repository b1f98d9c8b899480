/**
 * An execution report a reviewer reads in a minute: the verdict and what needs attention first,
 * health rounds summarised per binding with failures explained, one gantt bar per phase group,
 * and the bulk folded into `<details>`.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { renderExecutionReport } from "../../src/report/render_execution.ts";
import type { ExecutionReportModel, HealthRound } from "../../src/report/model.ts";
import { checkMarkdown } from "./_markdown_check.ts";
import { executionModel, T0 } from "./_fixtures.ts";

/** Lines a reader sees without opening any `<details>`. */
function visibleLines(md: string): string[] {
  let depth = 0;
  return md.split("\n").filter((l) => {
    if (l === "<details>") depth++;
    const shown = depth === 0;
    if (l === "</details>") depth--;
    return shown;
  });
}

function sectionOf(md: string, heading: string): string {
  const start = md.indexOf(`\n## ${heading}\n`);
  ok(start >= 0, `section ${heading} missing`);
  const end = md.indexOf("\n## ", start + 1);
  return md.slice(start, end < 0 ? undefined : end);
}

function healthRound(
  id: string,
  purpose: HealthRound["purpose"],
  node: string,
  at: number,
  failing: readonly string[],
): HealthRound {
  const bindings = ["nodes-ready", "workloads-ready", "drain-feasible"];
  return {
    id,
    purpose,
    node,
    startedAt: at,
    endedAt: at + 1_000,
    verdict: failing.length ? "fail" : "pass",
    results: bindings.flatMap((b) =>
      [1, 2].map((k) => ({
        binding: b,
        verdict: failing.includes(b) ? ("fail" as const) : ("pass" as const),
        ...(failing.includes(b) ? { reason: "WorkloadNotReady" } : {}),
        evidence: `Deployment apps/web-${k} rv 1${k}`,
      }))
    ),
  };
}

/** A completed rollout whose worker-1 post-gate failed twice, then passed 30 s later. */
function completedWithHeldPostGate(): ExecutionReportModel {
  const m = executionModel();
  const nodes = m.nodes.map((n) => ({ ...n, state: "completed" as const }));
  return {
    ...m,
    outcome: "completed",
    verdict: "completed",
    gaps: { failed: [], unevaluated: [] },
    reasons: [],
    nodes,
    attempts: m.attempts.map((a) => ({
      ...a,
      responseClass: "accepted",
      accountedBy: "response",
    })),
    healthRounds: [
      healthRound("hr_gate", "gate", "worker-1", T0, []),
      healthRound("hr_pg1", "post-gate", "worker-1", T0 + 600_000, ["workloads-ready"]),
      healthRound("hr_pg2", "post-gate", "worker-1", T0 + 615_000, ["workloads-ready"]),
      healthRound("hr_pg3", "post-gate", "worker-1", T0 + 630_000, []),
    ],
  };
}

Deno.test("the report opens with the verdict, then what needs attention, before any detail", () => {
  const md = renderExecutionReport(executionModel());
  const heads = md.split("\n").filter((l) => l.startsWith("## "));
  assertEquals(heads[0], "## Needs attention");
  const verdictAt = md.indexOf("**Verdict: ");
  ok(verdictAt >= 0 && verdictAt < md.indexOf("## Needs attention"));
  const attention = sectionOf(md, "Needs attention");
  // The fixture leaves one node unresolved in reboot with its attempt unaccounted.
  const unresolved = executionModel().nodes.find((n) => n.state === "unresolved")!;
  ok(attention.includes(`Node \`${unresolved.node}\` **unresolved**`), attention);
  ok(/Attempt \d+ \(reboot\) on `[^`]+` \*\*unaccounted\*\*/.test(attention), attention);
  // Every row that did not pass is named there.
  const m = executionModel();
  for (const g of [...m.gaps.failed, ...m.gaps.unevaluated]) {
    ok(attention.includes(`Row ${g.number} \`${g.id}\``), `row ${g.number} missing`);
  }
});

Deno.test("a clean completed report says nothing needs attention", () => {
  const m = completedWithHeldPostGate();
  const md = renderExecutionReport({ ...m, healthRounds: m.healthRounds.slice(0, 1) });
  ok(sectionOf(md, "Needs attention").includes("_Nothing: every applicable row passed"));
});

Deno.test("failed rounds inside a COMPLETED report are explained: which binding, why, what next", () => {
  const md = renderExecutionReport(completedWithHeldPostGate());
  ok(md.includes("**Verdict: COMPLETED:"), md.slice(0, 300));
  const health = sectionOf(md, "Health rounds");
  ok(
    health.includes(
      "- post-gate on `worker-1`: 2 rounds did not pass from 2026-10-20T09:10:00Z " +
        "(workloads-ready failed (`WorkloadNotReady`, reading 2 objects)); " +
        "the post-gate held 30.0s, then passed at 2026-10-20T09:10:30Z.",
    ),
    health,
  );
  ok(sectionOf(md, "Needs attention").includes("1 run of health rounds did not pass and then"));
});

Deno.test("a run of failing rounds that never passed again is flagged first", () => {
  const m = completedWithHeldPostGate();
  const md = renderExecutionReport({ ...m, healthRounds: m.healthRounds.slice(0, 3) });
  ok(
    sectionOf(md, "Needs attention").includes(
      "- Health post-gate on `worker-1`: **no passing round followed** 2 that did not pass",
    ),
    md,
  );
  ok(sectionOf(md, "Health rounds").includes("**no passing post-gate round followed**"));
});

Deno.test("health rounds: one line per binding, the per-round detail folded", () => {
  const md = renderExecutionReport(completedWithHeldPostGate());
  const health = sectionOf(md, "Health rounds");
  ok(
    health.includes(
      "| workloads-ready | 4 | 2 | **2** | 0 | pass (post-gate on `worker-1`, 2026-10-20T09:10:30Z) |",
    ),
    health,
  );
  ok(health.includes("| nodes-ready | 4 | 4 | 0 | 0 |"), health);
  // Round ids appear only inside the fold.
  const visible = visibleLines(health).join("\n");
  ok(!visible.includes("hr_pg1"), visible);
  ok(health.includes("`hr_pg1`"));
});

Deno.test("the gantt chart has one bar per node phase group, not one per phase", () => {
  const m = completedWithHeldPostGate();
  const md = renderExecutionReport(m);
  const chart = md.slice(md.indexOf("```mermaid"), md.indexOf("```", md.indexOf("```mermaid") + 3));
  const bars = chart.split("\n").filter((l) => / :.*t\d+, /.test(l));
  const phases = m.nodes.reduce((n, x) => n + x.phases.length, 0);
  ok(bars.length <= m.nodes.length * 5 && bars.length < phases, `${bars.length} bars`);
  for (const b of bars) ok(/^\s+(prepare|install|drain|reboot|verify) :/.test(b), b);
});

Deno.test("a 7-node report reads in a minute: under 20 KB and 200 visible lines, well formed", () => {
  for (const m of [executionModel(), completedWithHeldPostGate()]) {
    const md = renderExecutionReport(m);
    assertEquals(checkMarkdown(md), []);
    ok(new TextEncoder().encode(md).length < 20_000, `${md.length} bytes`);
    ok(visibleLines(md).length < 200, `${visibleLines(md).length} visible lines`);
  }
});
