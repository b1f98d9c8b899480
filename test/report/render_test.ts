import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { renderExecutionReport } from "../../src/report/render_execution.ts";
import { renderPreviewReport } from "../../src/report/render_preview.ts";
import type { Reason } from "../../src/domain/reasons.ts";
import type { ExecutionReportModel, PreviewReportModel } from "../../src/report/model.ts";
import { SAFEGUARDS } from "../../src/domain/safeguards/table.ts";
import { executionVerdict } from "../../src/domain/safeguards/verdict.ts";
import { checkMarkdown } from "./_markdown_check.ts";
import { executionModel, HOSTILE, previewModel } from "./_fixtures.ts";

const GOLDEN = new URL("./golden/", import.meta.url);

async function golden(name: string, actual: string): Promise<void> {
  const file = new URL(name, GOLDEN);
  if (Deno.env.get("UPDATE_GOLDEN") === "1") {
    await Deno.writeTextFile(file, actual);
    return;
  }
  const expected = await Deno.readTextFile(file);
  assertEquals(actual, expected, `${name} differs; rerun with UPDATE_GOLDEN=1 if intended`);
}

Deno.test("renderPreviewReport() matches its golden file and is well formed", async () => {
  const md = renderPreviewReport(previewModel());
  assertEquals(checkMarkdown(md), []);
  await golden("preview.md.golden", md);
});

Deno.test("renderExecutionReport() matches its golden file and is well formed", async () => {
  const md = renderExecutionReport(executionModel());
  assertEquals(checkMarkdown(md), []);
  await golden("execution.md.golden", md);
});

Deno.test("reports are byte-identical when re-rendered from an equal model", () => {
  const a = renderExecutionReport(executionModel());
  const b = renderExecutionReport(structuredClone(executionModel()));
  assertEquals(a, b);
  assertEquals(
    renderPreviewReport(previewModel()),
    renderPreviewReport(structuredClone(previewModel())),
  );
});

Deno.test("the verdict comes first, before any other section", () => {
  const exec = renderExecutionReport(executionModel()).split("\n");
  ok(exec[0]!.startsWith("# Execution report: talos-v1.14.2"));
  ok(exec[2]!.startsWith("**Verdict: UNRESOLVED"), exec[2]);
  const prev = renderPreviewReport({ ...previewModel(), verdict: "refused" }).split("\n");
  ok(prev[2]!.startsWith("**Verdict: REFUSED"), prev[2]);
});

Deno.test("every safeguard row of the safety model appears with its placement and verdict", () => {
  const md = renderExecutionReport(executionModel());
  for (const [i, s] of SAFEGUARDS.entries()) {
    const line = md.split("\n").find((l) => l.startsWith(`| ${i + 1} | `));
    ok(line, `row ${i + 1} missing`);
    ok(line.includes(`| ${s.placement.join("/")} |`), line);
  }
  ok(md.includes("| not applicable |"));
  ok(md.includes("| **unreadable** |"));
});

Deno.test("a safeguard without a recorded result is shown as not evaluated, never as passing", () => {
  const m = executionModel();
  const md = renderExecutionReport({ ...m, safeguards: m.safeguards.slice(1) });
  const first = md.split("\n").find((l) => l.startsWith("| 1 | "))!;
  ok(first.includes("**not evaluated**"), first);
  ok(md.includes("1 not evaluated"));
});

Deno.test("unaccounted attempts and the journal head are visible in the execution report", () => {
  const md = renderExecutionReport(executionModel());
  ok(md.includes("| lost | 1 | **1** |"), "response-class summary counts it");
  ok(md.includes(`Journal head: \`${executionModel().journal.headHash}\` after 412 events.`));
  ok(md.includes("| Attempts | 21 (1 unaccounted) |"));
});

function hostileExecution(): ExecutionReportModel {
  const m = executionModel();
  const h = (i: number) => HOSTILE[i % HOSTILE.length]!;
  return {
    ...m,
    plan: {
      ...m.plan,
      name: h(0),
      kind: h(1),
      cluster: h(2),
      author: h(3),
      branch: h(4),
      signers: m.plan.signers.map((s, i) => ({
        ...s,
        principal: h(i + 5),
        keyFingerprint: h(i + 6),
      })),
    },
    reasons: [{ reason: h(1) as Reason, message: h(2), where: h(3) }],
    safeguards: m.safeguards.map((s, i) => ({ ...s, evidence: h(i), reason: h(i + 1) })),
    sourceChecks: m.sourceChecks.map((c, i) => ({
      ...c,
      repository: h(i),
      path: h(i + 2),
      revision: h(i + 3),
    })),
    nodes: m.nodes.map((n, i) => ({ ...n, node: h(i), note: h(i + 1) })),
    attempts: m.attempts.map((a, i) => ({ ...a, node: h(i), detail: h(i + 2) })),
    healthRounds: m.healthRounds.map((r, i) => ({
      ...r,
      id: h(i),
      node: h(i + 3),
      verdict: "fail",
      results: r.results.map((x, j) => ({
        ...x,
        binding: h(j),
        evidence: h(j + 1),
        reason: h(j + 2),
      })),
    })),
    recoveries: m.recoveries.map((r) => ({
      ...r,
      decision: h(0),
      actor: h(1),
      evidence: h(2),
      node: h(7),
    })),
    extraCaveats: [...HOSTILE],
  };
}

function assertInert(md: string): void {
  assertEquals(checkMarkdown(md), []);
  for (const line of md.split("\n")) {
    ok(!/^#+ (injected|hijack)/.test(line), `injected heading: ${line}`);
    ok(!/^\s*section (evil|hijack)/.test(line), `injected gantt section: ${line}`);
  }
  ok(!/(?<!\\)\]\(/.test(md), "no live link or image syntax");
  ok(!/<(img|script)/i.test(md), "no raw HTML from input");
  ok(!/https?:\/\/evil/.test(md), "no bare autolink");
  ok(
    !/(?<!&#)@everyone|(?<![&\\])\$x\$/.test(md.replaceAll("&#64;everyone", "")),
    "no mention/math",
  );
  ok(!/[\u202e\u200b]/.test(md), "no bidi or zero-width characters");
}

Deno.test("hostile names from the cluster or the plan render inert in the execution report", () => {
  const md = renderExecutionReport(hostileExecution());
  assertInert(md);
  ok(md.includes("&lt;img src=x onerror=alert(1)&gt;"), "the hostile text stays readable");
  ok(md.includes("&#124; evil &#124; row &#124;"));
});

Deno.test("hostile names render inert in the preview report", () => {
  const m = previewModel();
  const model: PreviewReportModel = {
    ...m,
    plan: { ...m.plan, name: HOSTILE[2]!, author: HOSTILE[0]! },
    rollout: HOSTILE.map((node) => ({ node, role: "worker", from: HOSTILE[1]!, to: HOSTILE[3]! })),
    writes: { count: 0, evidence: HOSTILE[5]! },
    extraCaveats: [...HOSTILE],
  };
  assertInert(renderPreviewReport(model));
});

Deno.test("a 500-node execution report stays under 400 KB, well formed, and renders fast", () => {
  const model = executionModel(500);
  const started = performance.now();
  const md = renderExecutionReport(model);
  const took = performance.now() - started;
  const bytes = new TextEncoder().encode(md).length;
  ok(bytes < 400 * 1024, `${bytes} bytes`);
  ok(took < 1000, `${took.toFixed(0)} ms`);
  assertEquals(checkMarkdown(md), []);
  const bars = md.split("\n").filter((l) => /^ {4}\S.* :.*t\d+, /.test(l));
  ok(bars.length <= 100, `${bars.length} gantt bars`);
  ok(md.includes("| `cp-3` | controlplane | **unresolved** |"), "the unresolved node is listed");
  ok(md.includes("more nodes not shown"));
  ok(md.includes("more attempts not shown"));
  ok(
    md.includes("more rounds not shown (1 of them need attention)") ||
      md.includes("more rounds not shown"),
  );
  ok(md.includes("| lost | 1 | **1** |"));
});

Deno.test("every read pinned source says where its bytes came from; the summary says when not from the named upstream", () => {
  const m = previewModel();
  const [fetched] = m.sourceChecks;
  const standIn = {
    ...fetched!,
    path: "pkg/other.go",
    provenance: {
      kind: "local-stand-in" as const,
      repository: fetched!.repository,
      revision: fetched!.revision,
    },
  };
  const { provenance: _recorded, ...unrecorded } = { ...fetched!, path: "pkg/third.go" };
  const md = renderPreviewReport({ ...m, sourceChecks: [fetched!, standIn, unrecorded] });
  ok(
    md.includes(
      "3 of 3 pinned sources match their recorded SHA-256; the bytes came: 1 fetched from their " +
        "named upstream, 1 from local stand-ins, 1 from cache entries of unrecorded origin.",
    ),
  );
  ok(
    md.includes("| pass | local stand-in: a repository on this machine replaced siderolabs/talos"),
  );
  ok(md.includes("| pass | cache entry; where its bytes came from was not recorded |"));
  const onlyFetched = renderPreviewReport({ ...m, sourceChecks: [fetched!] });
  ok(onlyFetched.includes("1 of 1 pinned sources match their recorded SHA-256.\n"));
});

Deno.test("the execution headline follows the rows: completed operations with a FAIL row are SAFEGUARD FAILED naming the row", () => {
  const m = executionModel();
  const rows = m.safeguards.map((s) =>
    s.id === "SingleRolloutSlot"
      ? { ...s, verdict: "fail" as const, evidence: "cp-1 committed while worker-4 held the slot" }
      : s.verdict === "unreadable"
      ? { ...s, verdict: "pass" as const }
      : s
  );
  const md = renderExecutionReport({
    ...m,
    outcome: "completed",
    ...executionVerdict("completed", rows),
    safeguards: rows,
  });
  ok(
    md.includes(
      "**Verdict: SAFEGUARD FAILED: every node step completed, but the journal shows a safeguard " +
        "that did not hold: row 6 failed.**",
    ),
    md.slice(0, 400),
  );
  ok(
    md.includes(
      "- Row 6 `SingleRolloutSlot` **FAIL**: cp-1 committed while worker-4 held the slot",
    ),
  );
  const clean = rows.map((s) =>
    s.id === "SingleRolloutSlot" ? { ...s, verdict: "pass" as const } : s
  );
  const ok7 = renderExecutionReport({
    ...m,
    outcome: "completed",
    ...executionVerdict("completed", clean),
    safeguards: clean,
  });
  ok(ok7.includes("**Verdict: COMPLETED: every node step is accounted for"), ok7.slice(0, 300));
});

Deno.test("a preview shows rows placed only at execution as judged at execution, and still marks an unevaluated P row", () => {
  const m = previewModel();
  const rows = m.safeguards.map((s) =>
    s.id === "SingleRolloutSlot" || s.id === "InstallerImageExists"
      ? { ...s, verdict: "not-evaluated" as const, evidence: "e" }
      : s
  );
  const md = renderPreviewReport({ ...m, safeguards: rows });
  ok(
    md.includes(
      "| 6 | One node at a time under one cluster rollout slot and machine scope | E | at execution | e |",
    ),
  );
  ok(
    md.includes(
      "| 10 | Installer image exists for the exact platform; no fallback tag | P/E | **not evaluated** | e |",
    ),
  );
  ok(
    /: 21 pass, 1 judged at execution, 1 not evaluated, 1 unreadable, 2 not applicable\./.test(md),
    md.slice(md.indexOf("## Safeguards"), md.indexOf("## Safeguards") + 200),
  );
  // An execution report never calls a row "at execution": there every row is judged.
  const ex = renderExecutionReport({ ...executionModel(), safeguards: rows });
  ok(!ex.includes("| at execution |"));
});
